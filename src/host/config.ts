/**
 * Project config `insitu.toml` (SPEC §5): finding it, parsing it, validating it.
 *
 * Contract:
 * - `findProjectConfig(startDir)` walks up from `startDir` to the filesystem root and returns the
 *   absolute (POSIX) path of the first `insitu.toml` file, or `null`.
 * - `parseProjectConfig(text, file)` / `loadProjectConfig(file)` return a `ProjectConfig`: the TOML
 *   keys exactly as written (snake_case), every SPEC default filled in, plus `root` (absolute POSIX
 *   folder of the config file) and `file` (absolute POSIX path of the config file). A missing table
 *   gets all of its defaults; a given `exclude` replaces the default list (no merging).
 * - Every table rejects unknown keys. `[paths]` entries must be project-relative without `..`.
 *   `[[extensions]] path` is not restricted (an extension may live outside the project).
 * - Every failure is a `ConfigError` whose message starts with the file path *as given*:
 *   TOML syntax `<file>:<line>:<column>: <reason>` (line/column also set as fields); unsafe keys
 *   (`__proto__`, `constructor`) are syntax errors; schema errors
 *   `<file>:<line>:<column>: <key.path>: <problem>` (`must be <= 10000`, `must be a string`,
 *   `unknown key foo`, `is required`, ...), placed at the key the first problem is about (an
 *   unknown key itself; a missing key's nearest written table; see toml-positions.ts); SPEC rule
 *   messages appear unprefixed by a key path: `<file>:2:1: extension requires exactly one of path or source`.
 * - Shared with manifest.ts: `ConfigError`, `parseTomlFile` (= `parseTomlTable` + `validateToml`),
 *   `readTomlText`, `ruleIssue`, `isJsonObject`. `toPosixPath` is re-exported from
 *   documents/project-paths.ts.
 */
import fs from 'node:fs'
import path from 'node:path'
import { parse as parseToml, TomlError } from 'smol-toml'
import { z } from 'zod'
import { isRootedPath, toPosixPath } from '../documents/project-paths.js'
import { issuePathText, valueAtPath } from '../protocol/issue-paths.js'
import { isPlainObject } from '../protocol/object-guards.js'
import { tomlKeyPosition } from './toml-positions.js'

export const PROJECT_CONFIG_FILE = 'insitu.toml'

/** A config or manifest problem; `file` is the path as given to the parser. */
export class ConfigError extends Error {
  override name = 'ConfigError'
  readonly file: string
  readonly line: number | undefined
  readonly column: number | undefined
  constructor(message: string, options: { file: string; line?: number; column?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.file = options.file
    this.line = options.line
    this.column = options.column
  }
}

export { toPosixPath }

/** Parse TOML text, mapping syntax errors (and unsafe keys) to `<file>:<line>:<column>: <reason>`. */
export function parseTomlTable(text: string, file: string): Record<string, unknown> {
  try {
    return parseToml(text, { unsafeKeyBehaviour: 'throw' }) as Record<string, unknown>
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.replace(/^Invalid TOML document: /, '').split('\n\n')[0] ?? error.message
      throw new ConfigError(`${file}:${error.line}:${error.column}: ${reason}`, {
        file,
        line: error.line,
        column: error.column,
        cause: error,
      })
    }
    throw error
  }
}

/**
 * TOML text of `file` parsed and validated with `schema` (errors as `parseTomlTable` and
 * `validateToml` throw them), with the file's absolute POSIX path.
 */
export function parseTomlFile<S extends z.ZodType>(
  schema: S,
  text: string,
  file: string,
): { value: z.output<S>; absolute: string } {
  const value = validateToml(schema, parseTomlTable(text, file), file, text)
  return { value, absolute: toPosixPath(path.resolve(file)) }
}

/** The text of `file`; an unreadable file is a `ConfigError` `<file>: cannot read <what>: <reason>`. */
export function readTomlText(file: string, what: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError(`${file}: cannot read ${what}: ${(error as Error).message}`, { file, cause: error })
  }
}

/** Issues from `rule(...)` carry this marker so the formatter prints them without a key path. */
const RULE = 'insitu.rule'

/** A cross-field SPEC rule failure: printed as `<file>: <message>`. */
export function ruleIssue(message: string, issuePath: PropertyKey[] = []) {
  return { code: 'custom' as const, message, path: issuePath, params: { [RULE]: true } }
}

/**
 * Validate a parsed TOML table, throwing a `ConfigError` whose message names file and key path;
 * given the `source` text, also the line and column of the first issue's key
 * (`<file>:<line>:<column>: <key.path>: <problem>`, also set as fields).
 */
export function validateToml<S extends z.ZodType>(schema: S, value: unknown, file: string, source?: string): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const issues = formatTomlIssues(result.error.issues, value)
  const first = result.error.issues[0]
  const at = source === undefined || !first ? null : tomlKeyPosition(source, issueKeyPath(first))
  if (!at) throw new ConfigError(`${file}: ${issues}`, { file })
  throw new ConfigError(`${file}:${at.line}:${at.column}: ${issues}`, { file, line: at.line, column: at.column })
}

/** The key an issue is about: its path, and for unknown keys the first of them. */
function issueKeyPath(issue: z.core.$ZodIssue): (string | number)[] {
  const keyPath = issue.path.filter((key): key is string | number => typeof key !== 'symbol')
  return issue.code === 'unrecognized_keys' && issue.keys[0] !== undefined ? [...keyPath, issue.keys[0]] : keyPath
}

/** `watch.debounce_ms: must be <= 10000; unknown key foo` (all issues, `; `-separated). */
export function formatTomlIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string {
  return issues.map((issue) => formatIssue(issue, input)).join('; ')
}

function formatIssue(issue: z.core.$ZodIssue, input: unknown): string {
  const key = issuePathText(issue.path)
  if (issue.code === 'custom' && (issue.params as Record<string, unknown> | undefined)?.[RULE]) return issue.message
  let problem: string
  switch (issue.code) {
    case 'unrecognized_keys':
      problem = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`
      break
    case 'invalid_type':
      problem = valueAtPath(input, issue.path) === undefined ? 'is required' : `must be ${describeType(issue.expected)}`
      break
    case 'too_big':
      problem =
        issue.origin === 'array' || issue.origin === 'string'
          ? `must have at most ${String(issue.maximum)} ${issue.origin === 'array' ? 'items' : 'characters'}`
          : `must be ${issue.inclusive === false ? '<' : '<='} ${String(issue.maximum)}`
      break
    case 'too_small':
      if ((issue.origin === 'array' || issue.origin === 'string') && Number(issue.minimum) === 1) {
        problem = 'must not be empty'
      } else if (issue.origin === 'array' || issue.origin === 'string') {
        problem = `must have at least ${String(issue.minimum)} ${issue.origin === 'array' ? 'items' : 'characters'}`
      } else {
        problem = `must be ${issue.inclusive === false ? '>' : '>='} ${String(issue.minimum)}`
      }
      break
    case 'invalid_value':
      problem =
        issue.values.length === 1
          ? `must be ${JSON.stringify(issue.values[0])}`
          : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`
      break
    default:
      problem = issue.message
  }
  return key ? `${key}: ${problem}` : problem
}

function describeType(expected: string): string {
  switch (expected) {
    case 'int':
      return 'an integer'
    case 'object':
    case 'record':
      return 'a table'
    case 'array':
      return 'an array'
    default:
      return `a ${expected}`
  }
}

/** First non-JSON spot (a TOML date, inf/nan) inside `value`, as a relative path; `null` when all JSON. */
function nonJsonAt(value: unknown, at: PropertyKey[] = []): PropertyKey[] | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return null
  if (typeof value === 'number') return Number.isFinite(value) ? null : at
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const bad = nonJsonAt(item, [...at, index])
      if (bad) return bad
    }
    return null
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      const bad = nonJsonAt(item, [...at, key])
      if (bad) return bad
    }
    return null
  }
  return at
}

/** A TOML table holding only JSON values (no dates, inf or nan), returned as a plain JSON object. */
export const isJsonObject = z
  .custom<Record<string, unknown>>(isPlainObject, { message: 'must be a table' })
  .superRefine((value, ctx) => {
    const bad = nonJsonAt(value)
    if (bad) ctx.addIssue({ code: 'custom', message: 'must be a JSON value (no dates, inf or nan)', path: bad })
  })
  // smol-toml tables have a null prototype; hand out plain JSON objects (deep-equal to runtime JSON).
  .transform((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>)

// ---------------------------------------------------------------------------------------------
// insitu.toml schema

export const DEFAULT_EXCLUDE: readonly string[] = [
  '.git/**',
  '.insitu/**',
  '.venv/**',
  '.pytest_cache/**',
  '.ruff_cache/**',
  '.pyrefly/**',
  '**/__pycache__/**',
  'dist/**',
  'site/**',
  'node_modules/**',
]

/** Project-relative, not absolute, no `..` segment (either separator). */
export function isInsideProject(p: string): boolean {
  if (isRootedPath(p)) return false
  return !p.replaceAll('\\', '/').split('/').includes('..')
}

const ProjectPath = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    if (!isInsideProject(p)) ctx.addIssue(ruleIssue(`path must remain inside the project: ${p}`))
  })

const SourcesConfig = z.strictObject({
  include: z.array(z.string()).default(['**/*.md']),
  respect_gitignore: z.boolean().default(true),
  exclude: z.array(z.string()).default(() => [...DEFAULT_EXCLUDE]),
})

const PathsConfig = z.strictObject({
  models: ProjectPath.default('insitu/models'),
  templates: ProjectPath.default('insitu/templates'),
  state: ProjectPath.default('.insitu/index.db'),
})

const WatchConfig = z.strictObject({
  debounce_ms: z.int().min(0).max(10000).default(25),
  step_ms: z.int().min(1).max(10000).default(5),
})

const ExtensionEntry = z
  .strictObject({
    path: z.string().min(1).optional(),
    source: z.string().min(1).optional(),
    enabled: z.boolean().default(true),
    allow_replace: z.array(z.string()).default([]),
  })
  .superRefine((entry, ctx) => {
    if ((entry.path === undefined) === (entry.source === undefined)) {
      ctx.addIssue(ruleIssue('extension requires exactly one of path or source'))
    }
  })
  .transform((entry) => ({
    path: entry.path ?? null,
    source: entry.source ?? null,
    enabled: entry.enabled,
    allow_replace: entry.allow_replace,
  }))

export const ProjectConfigSchema = z.strictObject({
  version: z.literal(1).default(1),
  sources: SourcesConfig.prefault({}),
  paths: PathsConfig.prefault({}),
  watch: WatchConfig.prefault({}),
  extensions: z.array(ExtensionEntry).default([]),
})

export type ExtensionEntry = z.output<typeof ExtensionEntry>
export type ProjectConfig = z.output<typeof ProjectConfigSchema> & {
  /** Absolute POSIX folder holding `insitu.toml` (the project root). */
  root: string
  /** Absolute POSIX path of `insitu.toml`. */
  file: string
}

export function parseProjectConfig(text: string, file: string): ProjectConfig {
  const { value, absolute } = parseTomlFile(ProjectConfigSchema, text, file)
  return { ...value, root: path.posix.dirname(absolute), file: absolute }
}

export function loadProjectConfig(file: string): ProjectConfig {
  return parseProjectConfig(readTomlText(file, 'project config'), file)
}

/** Walk up from `startDir` to the filesystem root; absolute POSIX path of the first `insitu.toml`. */
export function findProjectConfig(startDir: string): string | null {
  let dir = path.resolve(startDir)
  for (;;) {
    const candidate = path.join(dir, PROJECT_CONFIG_FILE)
    try {
      if (fs.statSync(candidate).isFile()) return toPosixPath(candidate)
    } catch {
      // not here; keep walking
    }
    const parent = path.dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}
