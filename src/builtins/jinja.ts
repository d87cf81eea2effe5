/**
 * The builtin `jinja` renderer (SPEC §8), plus `createJinjaEnvironment`, the same configured
 * environment on its own. Templates render on engine.ts (Jinja2 3.1 semantics, the Python
 * implementation's environment); SQL models use the same engine with their own options.
 *
 * Contract:
 * - `render({ template, params, value, location })` renders template `template` (default
 *   `@insitu/table`) with context `rows` (= `rowsOf(value)`), `params` (default `{}`), `this`
 *   (the Location) and `value`, and returns the output right-trimmed.
 * - Template names: `@insitu/<x>` is a builtin (`BUILTIN_TEMPLATES`; else
 *   `unknown builtin template: @insitu/<x>`); any other name is a file under `templatesDir`
 *   (`template escapes templates directory: <name>` when `..`, an absolute path or a symlink
 *   leads outside; `template not found: <name>` when there is no such file). Both not-found
 *   messages add `; did you mean <name>?` when a template's name is close (template-names.ts).
 *   Included, imported and extended names resolve the same way.
 * - Dependencies: `fs:file:<path relative to root>` (POSIX) of the template file and of every
 *   file it includes/imports/extends during the render; none for builtins.
 * - Errors raised while compiling or rendering are rethrown as
 *   `template <name>: <reason> (line <n>, column <c>)` (the column of the tag that failed;
 *   `(<included> line <n>, ...)` when it is in an included file; the reason is Jinja2's, e.g.
 *   `'missing' is undefined`). Every error thrown by `render` is a `JinjaTemplateError`
 *   carrying the dependencies known so far (a missing file's own `fs:file:` included), so
 *   callers can watch them and retry, and, for an error in a template file, that file and line
 *   as its `position` (documents/error-positions.ts).
 * - Environment: Jinja2 with StrictUndefined, `trim_blocks`, `lstrip_blocks`,
 *   `keep_trailing_newline`, autoescape off, filters `relative_to`, `json`, `tojson` and every
 *   stock filter, test and global. Template files are checked on every render (edits show up
 *   on the next one) and read again when their stat changed (InsituTemplateLoader); their
 *   compiled form is cached by content.
 *
 * Stringification (SPEC §11): `{{ x }}` prints as Jinja prints, Python's `str()`: `None`,
 * `True`, `False`, `2.0`, `[None, True]`, `{'k': 1}`. Only the builtin templates' cells and
 * items show null empty and booleans `true`/`false` (their `insitu_cells` / `insitu_item`
 * filters, SPEC §8).
 *
 * Decisions where SPEC is silent (as the Python implementation does, unless noted):
 * - `rowsOf(null)` is `[{value: null}]` (null is a scalar; Python's `_value_rows` does this).
 * - `@insitu/table` cells follow the header keys (first row's) in order; a missing key is an
 *   empty cell (Python prints each row's own values positionally). A cell prints null empty,
 *   booleans `true`/`false`, numbers as Python prints them, lists and objects as JSON text,
 *   with `|` as `\|` and line breaks as spaces.
 * - `@insitu/list`: `- x` for a `{value: x}` row, else `- <JSON text of the row>`; line
 *   breaks as spaces; `_No rows._` when empty (Python prints the row's repr).
 */
import fs from 'node:fs'
import path from 'node:path'
import { readConfinedFile } from '../documents/confined-files.js'
import { RACY_WINDOW_NS } from '../documents/document-index.js'
import { withPosition } from '../documents/error-positions.js'
import { isBelowFolder, toPosixPath, toPosixRelative } from '../documents/project-paths.js'
import { isPlainObject } from '../protocol/object-guards.js'
import type { Location } from '../protocol/schemas.js'
import { didYouMean } from '../values/did-you-mean.js'
import { pythonJsonDumps, pythonJsonText } from '../values/python-json.js'
import { describeDuration } from '../sandbox/process-pool.js'
import {
  TemplateRuntimeError,
  TemplateTimeoutError,
  createJinjaEngine,
  errorPosition,
  type JinjaEngine,
  type TemplateLoader,
} from '../jinja/engine.js'
import { toPythonJson } from '../jinja/json.js'
import { dictFind, dictKeys } from '../jinja/dict.js'
import { DictBase, Markup, pyStr } from '../jinja/values.js'
import { templateNames } from './template-names.js'
import { realPathSync } from '../documents/real-path.js'

export { jinjaToJson, pythonJsonDumps } from '../values/python-json.js'

export interface JinjaRendererOptions {
  /** Absolute path of the project's templates directory (`paths.templates`). */
  templatesDir: string
  /** Absolute project root; dependencies are relative to it. */
  root: string
}

export interface RenderInput {
  /** Template name. @default '@insitu/table' */
  template?: string
  /** The renderer's `params` option. @default {} */
  params?: Record<string, unknown>
  /** The value to render (e.g. the rows of a resource). */
  value: unknown
  /** The document's Location, exposed as `this`. */
  location: Location
}

export interface RenderOutput {
  content: string
  dependencies: string[]
}

export const DEFAULT_TEMPLATE = '@insitu/table'
const BUILTIN_PREFIX = '@insitu/'

export const BUILTIN_TEMPLATES: Record<string, string> = {
  '@insitu/table': `{% if rows | length %}
{% set keys = rows[0] | insitu_keys %}
| {{ keys | insitu_cells | join(" | ") }} |
| {{ keys | insitu_rule | join(" | ") }} |
{% for row in rows %}
| {{ row | insitu_cells(keys) | join(" | ") }} |
{% endfor %}
{% else %}
_No rows._
{% endif %}
`,
  '@insitu/list': `{% for row in rows %}
- {{ row | insitu_item }}
{% else %}
_No rows._
{% endfor %}
`,
  '@insitu/json': `\`\`\`json
{{ value | tojson(indent=2) }}
\`\`\`
`,
}

/**
 * The renderer's view of a value as rows: a list keeps its object items and wraps any other
 * item as `{value: item}`; an object is one row; anything else (a scalar, null included, as
 * in the Python implementation) is `[{value: x}]`.
 */
export function rowsOf(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.map((item) => (isPlainObject(item) ? item : { value: item }))
  if (isPlainObject(value)) return [value]
  return [{ value }]
}

/** Bounds of one render: a `performance.now()` deadline, and the budget its message names. */
export interface RenderBounds {
  deadline?: number
  budgetMs?: number
}

export function createJinjaRenderer(options: JinjaRendererOptions): {
  render(input: RenderInput, bounds?: RenderBounds): RenderOutput
} {
  const loader = new InsituTemplateLoader(options.templatesDir)
  const engine = buildEngine(loader, options.templatesDir)
  const dependencyOf = (file: string) => `fs:file:${toPosixRelative(options.root, file)}`
  return {
    render(input, bounds = {}) {
      const name = input.template || DEFAULT_TEMPLATE
      loader.startRender()
      try {
        return renderLocated(name, input, bounds)
      } finally {
        loader.endRender()
      }
    },
  }

  function renderLocated(name: string, input: RenderInput, bounds: RenderBounds): RenderOutput {
    try {
      // Resolve first so name errors are reported as they are, not as render errors.
      loader.locate(name)
    } catch (error) {
      const candidate = loader.candidate(name)
      const message = error instanceof Error ? error.message : String(error)
      throw new JinjaTemplateError(message, candidate ? [dependencyOf(candidate)] : [], error)
    }
    loader.loaded.clear()
    let output: string
    try {
      output = engine.render(
        name,
        {
          rows: rowsOf(input.value),
          // Copies: a template may change a dict it is given (`update`, `setdefault`; a key a
          // plain object cannot hold makes it a template dict in place), and the job's location
          // and options are the engine's own (memo keys, generations, other jobs of the document).
          params: plainCopy(input.params ?? {}),
          this: { ...input.location },
          value: input.value,
        },
        { deadline: bounds.deadline },
      )
    } catch (error) {
      const dependencies = [...loader.loaded].map(dependencyOf)
      const failure = new JinjaTemplateError(templateMessage(name, error, bounds.budgetMs), dependencies, error)
      if (error instanceof TemplateTimeoutError) failure.timedOut = true
      // The overlay and `File:` line point at the template file and line (issue #18).
      const at = errorPosition(error)
      const file = at && !at.templateName.startsWith(BUILTIN_PREFIX) ? loader.candidate(at.templateName) : undefined
      if (at && file) withPosition(failure, { path: toPosixRelative(options.root, file), line: at.line, column: at.column ?? null })
      throw failure
    }
    const dependencies = [...loader.loaded].map(dependencyOf)
    return { content: output.trimEnd(), dependencies }
  }
}

/**
 * A template that could not be found or rendered. `dependencies` are the template files the
 * attempt read (or would read, for a missing file), so a caller can watch them and retry.
 */
export class JinjaTemplateError extends Error {
  /** The render ran out of its time (`RenderBounds.deadline`). */
  timedOut = false

  constructor(
    message: string,
    readonly dependencies: string[],
    cause?: unknown,
  ) {
    super(message, { cause })
    this.name = 'JinjaTemplateError'
  }
}

/**
 * A Jinja environment configured as SPEC §8 says (see the header). Templates load from
 * `loaderRoot` (confined, checked on every render: InsituTemplateLoader) and `@insitu/*`
 * builtins; `relative_to` resolves against it.
 */
export function createJinjaEnvironment(loaderRoot?: string): JinjaEngine {
  return buildEngine(new InsituTemplateLoader(loaderRoot), loaderRoot)
}

function buildEngine(loader: TemplateLoader, loaderRoot: string | undefined): JinjaEngine {
  const base = loaderRoot ?? path.sep
  return createJinjaEngine({
    loader,
    filters: {
      relative_to: (value, args, kwargs) => relativeTo(base, hostText(value), hostText(args[0] ?? kwargs.dir ?? kwargs.directory)),
      json: (value) => pythonJsonDumps(toPythonJson(value)),
      insitu_keys: (row) => (isPlainObject(row) ? Object.keys(row) : row instanceof DictBase ? dictKeys(row) : []),
      insitu_rule: (keys) => (keys as unknown[]).map(() => '---'),
      insitu_cells: (source, args) => {
        const keys = args[0] as unknown[] | undefined
        return keys === undefined
          ? (source as unknown[]).map(tableCell)
          : keys.map((key) => tableCell(isPlainObject(source) ? source[String(key)] : source instanceof DictBase ? dictFind(source, key) : undefined))
      },
      insitu_item: (row) => listItem(row),
    },
  })
}

/** Jinja's `relative_to(path, dir)`: `os.path.relpath(base/path, base/dir)` as POSIX. */
export function relativeTo(base: string, value: unknown, directory: unknown): string {
  if (typeof value !== 'string') throw new TemplateRuntimeError('relative_to expects a path string', 'TypeError')
  const from = typeof directory === 'string' && directory !== '' ? directory : '.'
  const fast = relativeOfNormalPaths(value, from === '.' ? '' : from)
  if (fast !== undefined) return fast
  const root = toPosixPath(base)
  const relative = path.posix.relative(
    path.posix.resolve(root, toPosixPath(from)),
    path.posix.resolve(root, toPosixPath(value)),
  )
  return relative === '' ? '.' : relative
}

/** A segment that needs resolving (or a backslash, which toPosixPath would turn into `/`). */
const NOT_NORMAL = /(^|\/)\.{1,2}(\/|$)|\/\/|\\|^\/|\/$/

/**
 * `relative_to` of two normalized relative paths (no `.`, `..`, empty segments or absolute
 * start: what rows and `this.directory` hold) without resolving them against the base: the
 * same result, much cheaper in a loop over thousands of rows. Undefined for other paths.
 */
function relativeOfNormalPaths(value: string, directory: string): string | undefined {
  if (value === '' || NOT_NORMAL.test(value) || (directory !== '' && NOT_NORMAL.test(directory))) return undefined
  if (directory === '') return value
  if (value.startsWith(directory) && value[directory.length] === '/') return value.slice(directory.length + 1)
  const to = value.split('/')
  const from = directory.split('/')
  let common = 0
  while (common < to.length && common < from.length && to[common] === from[common]) common++
  const up = from.length - common
  const rest = to.slice(common)
  const parts = [...Array<string>(up).fill('..'), ...rest]
  return parts.length === 0 ? '.' : parts.join('/')
}

/** Arrays and plain objects copied all the way down; any other value as it is (PythonFloat, Date, bigint). */
function plainCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map(plainCopy) as T
  if (isPlainObject(value)) {
    const copy: Record<string, unknown> = {}
    for (const key of Object.keys(value)) Object.defineProperty(copy, key, { value: plainCopy(value[key]), writable: true, enumerable: true, configurable: true })
    return copy as T
  }
  return value
}

/** Text of one value in a table cell or list item: null empty, objects as JSON text. */
function plainText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'string') return value
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value instanceof Markup) return value.text
  if (typeof value === 'object' && (Array.isArray(value) || isPlainObject(value) || value instanceof DictBase)) {
    // A dict a template made (its keys need not be strings) is written as json.dumps writes it.
    return pythonJsonText(holdsTemplateDict(value) ? toPythonJson(value, 0, { sortKeys: false }) : value)
  }
  return pyStr(value)
}

function holdsTemplateDict(value: unknown): boolean {
  if (value instanceof DictBase) return true
  if (Array.isArray(value)) return value.some(holdsTemplateDict)
  return isPlainObject(value) && Object.values(value).some(holdsTemplateDict)
}

/** A Markup's text (Markup methods give Markup); any other value as it is. */
function hostText(value: unknown): unknown {
  return value instanceof Markup ? value.text : value
}

function tableCell(value: unknown): string {
  return plainText(value).replace(/\r\n|\r|\n/g, ' ').replaceAll('|', '\\|')
}

/** A `{value: x}` row shows x; any other row its JSON text. */
function listItem(row: unknown): string {
  const keys = isPlainObject(row) ? Object.keys(row) : row instanceof DictBase ? dictKeys(row) : []
  const shown = keys.length === 1 && keys[0] === 'value' ? (row instanceof DictBase ? dictFind(row, 'value') : (row as Record<string, unknown>).value) : row
  return plainText(shown).replace(/\r\n|\r|\n/g, ' ')
}

/** A template file as last read: its text and the stat of the descriptor it was read from. */
interface TemplateRead {
  text: string
  stat: fs.BigIntStats
  /** When the read started (ns since the epoch). */
  readNs: bigint
}

/** How many template files' texts the loader keeps. */
const KEPT_TEMPLATE_READS = 256

/**
 * Serves `@insitu/*` builtins and files under `directory` and records every file it served in
 * `loaded`. A file is checked on every load (where it resolves, that it stays inside, its stat)
 * and read again unless its stat shows the very file last read, unchanged: same device, inode,
 * size, mtime and ctime, both older than that read by the index's racy window (a write in the
 * same timestamp tick as the read cannot hide; document-index.ts `RACY_WINDOW_NS`). Edits
 * show up on the next render either way; a folder index rendered 600 times reads its template
 * once (issue #17).
 */
class InsituTemplateLoader implements TemplateLoader {
  readonly loaded = new Set<string>()
  /** Between `startRender` and `endRender`: the directory's real path, resolved once (issue #17). */
  private realDirectory: string | undefined
  /** Between `startRender` and `endRender`: each name as located (a render locates it twice). */
  private readonly locatedNames = new Map<string, Located>()
  private rendering = false
  /** Real path → the file's last read (see the class comment). */
  private readonly reads = new Map<string, TemplateRead>()

  constructor(private readonly directory: string | undefined) {}

  /** A new render: nothing loaded yet, names and the directory's real path resolved again (they may have moved). */
  startRender(): void {
    this.loaded.clear()
    this.realDirectory = undefined
    this.locatedNames.clear()
    this.rendering = true
  }

  endRender(): void {
    this.realDirectory = undefined
    this.locatedNames.clear()
    this.rendering = false
  }

  private realDirectoryPath(): string {
    if (!this.rendering) return realPathSync(this.directory!)
    this.realDirectory ??= realPathSync(this.directory!)
    return this.realDirectory
  }

  load(name: string): { source: string } {
    const located = this.locate(name)
    if (located.builtin !== undefined) return { source: located.builtin }
    const kept = this.reads.get(located.real)
    if (kept && sameUnchangedFile(kept, located.stat)) {
      this.loaded.add(located.file)
      return { source: kept.text }
    }
    const readNs = BigInt(Date.now()) * 1_000_000n
    // Read through a descriptor verified to lie inside the directory (no check-then-read race).
    const read = readConfinedFile(this.realDirectoryPath(), located.file)
    if (read.kind === 'outside') throw new TemplateRuntimeError(`template escapes templates directory: ${name}`)
    this.loaded.add(located.file)
    if (read.kind !== 'file') throw notFound(name, this.directory)
    const text = read.bytes.toString('utf8')
    this.reads.delete(located.real)
    if (this.reads.size >= KEPT_TEMPLATE_READS) this.reads.delete(this.reads.keys().next().value as string)
    this.reads.set(located.real, { text, stat: read.stat, readNs })
    return { source: text }
  }

  /** The file a non-builtin name would be, when it stays inside the directory. */
  candidate(name: string): string | undefined {
    if (name.startsWith(BUILTIN_PREFIX) || this.directory === undefined) return undefined
    const file = path.resolve(this.directory, name)
    return isBelowFolder(this.directory, file) ? file : undefined
  }

  /** Resolves a template name or throws the SPEC's error for it. */
  locate(name: string): Located {
    const known = this.rendering ? this.locatedNames.get(name) : undefined
    if (known) return known
    const located = this.locateNow(name)
    if (this.rendering) this.locatedNames.set(name, located)
    return located
  }

  private locateNow(name: string): Located {
    if (name.startsWith(BUILTIN_PREFIX)) {
      const builtin = BUILTIN_TEMPLATES[name]
      if (builtin === undefined) {
        throw new TemplateRuntimeError(`unknown builtin template: ${name}${didYouMean(name, Object.keys(BUILTIN_TEMPLATES))}`, 'TemplateNotFound')
      }
      return { builtin }
    }
    if (this.directory === undefined) throw notFound(name)
    const file = path.resolve(this.directory, name)
    if (!isBelowFolder(this.directory, file)) {
      throw new TemplateRuntimeError(`template escapes templates directory: ${name}`)
    }
    let real: string
    let stat: fs.BigIntStats
    try {
      real = realPathSync(file)
      stat = fs.statSync(real, { bigint: true })
      if (!stat.isFile()) throw new Error('not a file')
    } catch {
      this.loaded.add(file)
      throw notFound(name, this.directory)
    }
    if (!isBelowFolder(this.realDirectoryPath(), real)) {
      throw new TemplateRuntimeError(`template escapes templates directory: ${name}`)
    }
    return { file, real, stat }
  }
}

/** A located template: a builtin's source, or a file (its path, real path and stat). */
type Located = { builtin: string; file?: never } | { builtin?: never; file: string; real: string; stat: fs.BigIntStats }

/** Whether `stat` is of the file `kept` was read from, unchanged since (see InsituTemplateLoader). */
function sameUnchangedFile(kept: TemplateRead, stat: fs.BigIntStats): boolean {
  const was = kept.stat
  return (
    (was.mtimeNs > was.ctimeNs ? was.mtimeNs : was.ctimeNs) + RACY_WINDOW_NS <= kept.readNs &&
    was.dev === stat.dev &&
    was.ino === stat.ino &&
    was.size === stat.size &&
    was.mtimeNs === stat.mtimeNs &&
    was.ctimeNs === stat.ctimeNs
  )
}

/** `template not found: <name>`, with `; did you mean tasks.md.j2?` for the nearest template file (issue #18). */
function notFound(name: string, directory?: string): TemplateRuntimeError {
  const suggestion = directory === undefined ? '' : didYouMean(name, templateNames(directory))
  return new TemplateRuntimeError(`template not found: ${name}${suggestion}`, 'TemplateNotFound')
}

/**
 * `template <name>: <reason> (line <n>, column <c>)`; when the error happened in an included
 * template, the position names it (`(<included> line <n>, ...)`).
 */
function templateMessage(name: string, error: unknown, budgetMs?: number): string {
  const reason =
    error instanceof TemplateTimeoutError
      ? `the render ran longer than ${describeDuration(budgetMs ?? error.budgetMs)}`
      : error instanceof Error
        ? error.message
        : String(error)
  const position = errorPosition(error)
  if (!position) return `template ${name}: ${reason}`
  const where = position.templateName === name ? '' : `${position.templateName} `
  const column = position.column !== undefined ? `, column ${position.column}` : ''
  return `template ${name}: ${reason} (${where}line ${position.line}${column})`
}
