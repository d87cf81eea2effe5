/**
 * The builtin `jinja` renderer (SPEC §8) on nunjucks, plus `createJinjaEnvironment`, the same
 * configured environment on its own. SQL models do not use it: sql-models.ts builds its own
 * plain nunjucks environment, which renders as stock nunjucks does.
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
 * - Dependencies: `fs:file:<path relative to root>` (POSIX) of the template file and of every
 *   file it includes/imports/extends during the render; none for builtins.
 * - Errors raised while compiling or rendering are rethrown as
 *   `template <name>: <reason> (line <n>, column <c>)` (the position when nunjucks has one;
 *   `(<included> line <n>, ...)` when it is in an included file). Every error thrown by
 *   `render` is a `JinjaTemplateError` carrying the dependencies known so far (a missing
 *   file's own `fs:file:` included), so callers can watch them and retry.
 * - Environment: `trimBlocks` + `lstripBlocks` (sources normalized by `normalizeJinjaSource`
 *   so comments and line breaks behave as in Jinja), autoescape off, file templates never
 *   cached (edits show up on the next render), filters `relative_to`, `json`, `tojson`.
 *
 * Stringification (SPEC §10; documented for the README): `{{ x }}` prints null as empty,
 * booleans as `true`/`false`, numbers as JavaScript prints them, and arrays / plain objects
 * as JSON text (`[1, "a"]`, `{"k": null}`: Python separators, key order kept, non-ASCII kept)
 * where Jinja would print Python reprs (`None`, `True`, `{'k': None}`).
 * Undefined: printing an undefined variable or a missing attribute is an error
 * (`attempted to output an undefined value`), as with Jinja's StrictUndefined; unlike Jinja,
 * testing (`{% if missing %}`) or looping over an undefined name is not an error.
 * To get both "null prints empty" and "undefined is an error", our templates run with their
 * own copy of nunjucks' runtime whose `ensureDefined` (the check `throwOnUndefined` compiles
 * into every `{{ }}`) rejects undefined only and stringifies arrays/objects. Every template
 * our environment hands out (`getTemplate`, hence `render`, include, import, extends; and
 * `renderString`) calls its compiled root with that runtime; blocks and macros receive it from
 * there. nunjucks' shared runtime is never modified: other nunjucks users in the process
 * (SQL models included) render as stock nunjucks does. A `new nunjucks.Template(src, env)`
 * built outside this module does not get the policy.
 *
 * Decisions where SPEC is silent (as the Python implementation does, unless noted):
 * - `rowsOf(null)` is `[{value: null}]` (null is a scalar; Python's `_value_rows` does this).
 * - `@insitu/table` cells follow the header keys (first row's) in order; a missing key is an
 *   empty cell (Python prints each row's own values positionally). Cells print as `{{ }}`
 *   does (above), with `|` as `\|` and line breaks as spaces.
 * - `@insitu/list`: `- x` for a `{value: x}` row, else `- <JSON text of the row>`; line
 *   breaks as spaces; `_No rows._` when empty (Python prints the row's repr).
 * - In nunjucks an empty array is truthy: templates must test `rows | length`, not `rows`.
 */
import fs from 'node:fs'
import path from 'node:path'
import nunjucks from 'nunjucks'
import { readConfinedFile } from '../documents/confined-files.js'
import { isBelowFolder, toPosixPath, toPosixRelative } from '../documents/project-paths.js'
import { isPlainObject } from '../protocol/object-guards.js'
import type { Location } from '../protocol/schemas.js'
import { normalizeJinjaSource } from './jinja-source.js'
import { templateNames } from './template-names.js'
import { didYouMean } from '../values/did-you-mean.js'
import { jinjaToJson, pythonJsonDumps, pythonJsonText } from '../values/python-json.js'

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

export function createJinjaRenderer(options: JinjaRendererOptions): {
  render(input: RenderInput): RenderOutput
} {
  const { environment, loader } = buildEnvironment(options.templatesDir)
  return {
    render(input) {
      const name = input.template || DEFAULT_TEMPLATE
      const dependencyOf = (file: string) => `fs:file:${toPosixRelative(options.root, file)}`
      let mainPath: string
      try {
        // Resolve first so name errors are reported as they are, not as render errors.
        mainPath = loader.pathOf(name)
      } catch (error) {
        const candidate = loader.candidate(name)
        const message = error instanceof Error ? error.message : String(error)
        throw new JinjaTemplateError(message, candidate ? [dependencyOf(candidate)] : [], error)
      }
      loader.loaded.clear()
      let output: string
      try {
        const template = environment.getTemplate(name, true)
        output = template.render({
          rows: rowsOf(input.value),
          params: input.params ?? {},
          this: input.location,
          value: input.value,
        })
      } catch (error) {
        const dependencies = [...loader.loaded].map(dependencyOf)
        throw new JinjaTemplateError(templateMessage(name, mainPath, loader.display, error), dependencies, error)
      }
      const dependencies = [...loader.loaded].map(dependencyOf)
      return { content: output.trimEnd(), dependencies }
    },
  }
}

/**
 * A template that could not be found or rendered. `dependencies` are the template files the
 * attempt read (or would read, for a missing file), so a caller can watch them and retry.
 */
export class JinjaTemplateError extends Error {
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
 * A nunjucks environment configured as SPEC §8 says (strict undefined output, trim/lstrip
 * blocks, no autoescape, the insitu filters). Templates load from `loaderRoot` (confined,
 * uncached, normalized) and `@insitu/*` builtins; `relative_to` resolves against it.
 */
export function createJinjaEnvironment(loaderRoot?: string): nunjucks.Environment {
  return buildEnvironment(loaderRoot).environment
}

function buildEnvironment(loaderRoot?: string): {
  environment: nunjucks.Environment
  loader: InsituTemplateLoader
} {
  const loader = new InsituTemplateLoader(loaderRoot)
  const environment = new InsituEnvironment(loader, {
    autoescape: false,
    throwOnUndefined: true,
    trimBlocks: true,
    lstripBlocks: true,
  })
  const base = loaderRoot ?? path.sep
  environment.addFilter('relative_to', (value: unknown, directory?: unknown) =>
    relativeTo(base, value, directory),
  )
  environment.addFilter('json', (value: unknown) => pythonJsonDumps(value))
  environment.addFilter('tojson', (value: unknown, ...args: unknown[]) =>
    jinjaToJson(value, tojsonIndent(args)),
  )
  environment.addFilter('insitu_keys', (row: unknown) => (isPlainObject(row) ? Object.keys(row) : []))
  environment.addFilter('insitu_rule', (keys: unknown[]) => keys.map(() => '---'))
  environment.addFilter('insitu_cells', (source: unknown, keys?: unknown[]) =>
    keys === undefined
      ? (source as unknown[]).map(tableCell)
      : keys.map((key) => tableCell(isPlainObject(source) ? source[String(key)] : undefined)),
  )
  environment.addFilter('insitu_item', (row: unknown) => listItem(row))
  return { environment, loader }
}

/** Jinja's `relative_to(path, dir)`: `os.path.relpath(base/path, base/dir)` as POSIX. */
function relativeTo(base: string, value: unknown, directory: unknown): string {
  if (typeof value !== 'string') throw new TypeError('relative_to expects a path string')
  const from = typeof directory === 'string' && directory !== '' ? directory : '.'
  const root = toPosixPath(base)
  const relative = path.posix.relative(
    path.posix.resolve(root, toPosixPath(from)),
    path.posix.resolve(root, toPosixPath(value)),
  )
  return relative === '' ? '.' : relative
}

/** `tojson(2)`, `tojson(indent=2)` (nunjucks passes keywords as a trailing object). */
function tojsonIndent(args: unknown[]): number | string | null {
  let positional = args
  let keywords: Record<string, unknown> = {}
  const last = args[args.length - 1]
  if (isPlainObject(last) && last.__keywords === true) {
    positional = args.slice(0, -1)
    keywords = last
  }
  for (const key of Object.keys(keywords)) {
    if (key !== '__keywords' && key !== 'indent') {
      throw new TypeError(`tojson() got an unexpected keyword argument '${key}'`)
    }
  }
  if (positional.length > 1) throw new TypeError('tojson() takes at most 1 argument (indent)')
  const indent = 'indent' in keywords ? keywords.indent : positional[0]
  if (indent === undefined || indent === null) return null
  if (typeof indent === 'number' || typeof indent === 'string') return indent
  throw new TypeError('tojson() indent must be a number or a string')
}

/** Text of one value in a table cell or list item: null empty, objects as JSON text. */
function plainText(value: unknown): string {
  if (value === null || value === undefined) return ''
  if (typeof value === 'object') return pythonJsonText(value)
  return String(value)
}

function tableCell(value: unknown): string {
  return plainText(value).replace(/\r\n|\r|\n/g, ' ').replaceAll('|', '\\|')
}

/** A `{value: x}` row shows x; any other row its JSON text. */
function listItem(row: unknown): string {
  const keys = isPlainObject(row) ? Object.keys(row) : []
  const shown = isPlainObject(row) && keys.length === 1 && keys[0] === 'value' ? row.value : row
  return plainText(shown).replace(/\r\n|\r|\n/g, ' ')
}

/**
 * Serves `@insitu/*` builtins and files under `directory` (normalized, never cached) and
 * records every file it served in `loaded`.
 */
class InsituTemplateLoader extends nunjucks.Loader implements nunjucks.ILoader {
  readonly loaded = new Set<string>()

  constructor(private readonly directory: string | undefined) {
    super()
  }

  getSource(name: string): nunjucks.LoaderSource {
    const located = this.locate(name)
    if (located.builtin !== undefined) {
      return { src: normalizeJinjaSource(located.builtin), path: name, noCache: false }
    }
    // Read through a descriptor verified to lie inside the directory (no check-then-read race).
    const read = readConfinedFile(fs.realpathSync(this.directory!), located.file)
    if (read.kind === 'outside') throw new Error(`template escapes templates directory: ${name}`)
    if (read.kind !== 'file') throw new Error(`template not found: ${name}${didYouMean(name, templateNames(this.directory))}`)
    const source = read.bytes.toString('utf8')
    this.loaded.add(located.file)
    return { src: normalizeJinjaSource(source), path: located.file, noCache: true }
  }

  /** The path nunjucks reports for a (valid) template name. */
  pathOf(name: string): string {
    const located = this.locate(name)
    return located.file ?? name
  }

  /** The file a non-builtin name would be, when it stays inside the directory. */
  candidate(name: string): string | undefined {
    if (name.startsWith(BUILTIN_PREFIX) || this.directory === undefined) return undefined
    const file = path.resolve(this.directory, name)
    return isBelowFolder(this.directory, file) ? file : undefined
  }

  /** A served path as a template name (relative to the directory when inside it). */
  readonly display = (file: string): string =>
    this.directory !== undefined && path.isAbsolute(file) && isBelowFolder(this.directory, file)
      ? toPosixRelative(this.directory, file)
      : file

  /** Resolves a template name or throws the SPEC's error for it. */
  locate(name: string): { builtin: string; file?: never } | { builtin?: never; file: string } {
    if (name.startsWith(BUILTIN_PREFIX)) {
      const builtin = BUILTIN_TEMPLATES[name]
      if (builtin === undefined) throw new Error(`unknown builtin template: ${name}${didYouMean(name, Object.keys(BUILTIN_TEMPLATES))}`)
      return { builtin }
    }
    if (this.directory === undefined) throw new Error(`template not found: ${name}`)
    const file = path.resolve(this.directory, name)
    if (!isBelowFolder(this.directory, file)) {
      throw new Error(`template escapes templates directory: ${name}`)
    }
    let real: string
    try {
      real = fs.realpathSync(file)
      if (!fs.statSync(real).isFile()) throw new Error('not a file')
    } catch {
      // `; did you mean tasks.md.j2?`: the nearest template file (issue #18).
      throw new Error(`template not found: ${name}${didYouMean(name, templateNames(this.directory))}`)
    }
    if (!isBelowFolder(fs.realpathSync(this.directory), real)) {
      throw new Error(`template escapes templates directory: ${name}`)
    }
    return { file }
  }
}

/**
 * `template <name>: <reason> (line <n>, column <c>)` from a nunjucks error; when the error
 * happened in an included template, the position names it (`(<included> line <n>, ...)`).
 */
function templateMessage(
  name: string,
  mainPath: string,
  display: (file: string) => string,
  error: unknown,
): string {
  const raw = error instanceof Error ? error.message : String(error)
  // nunjucks prefixes `(<path>) [Line n, Column c]\n  ` for the template that failed, then
  // `(<path>)\n  ` (after `Template render error: `) for each template it unwinds through.
  const header = /^(?:Template render error: )?\(([^\n]*?)\)(?: \[Line (\d+)(?:, Column (\d+))?\])?$/
  let position = ''
  let reasonStart = 0
  const lines = raw.split('\n')
  for (const [index, line] of lines.entries()) {
    const match = header.exec(line.trim())
    if (!match) {
      reasonStart = index
      break
    }
    reasonStart = index + 1
    const [, file = '', lineno, colno] = match
    if (lineno !== undefined) {
      const where = file === mainPath ? '' : `${display(file)} `
      position = ` (${where}line ${lineno}${colno !== undefined ? `, column ${colno}` : ''})`
    }
  }
  const reason = lines.slice(reasonStart).join('\n').trim().replace(/^(?:Template render error: |Error: )+/, '')
  return `template ${name}: ${reason || raw}${position}`
}

/** The parts of nunjucks' runtime object this module relies on. */
interface NunjucksRuntime {
  ensureDefined: (value: unknown, lineno: number, colno: number) => unknown
}

/** A compiled template's root function, as nunjucks calls it. */
type RootRenderFunction = (env: unknown, context: unknown, frame: unknown, runtime: unknown, cb: unknown) => unknown

function insituEnsureDefined(value: unknown, lineno: number, colno: number): unknown {
  if (value === undefined) {
    throw new nunjucks.lib.TemplateError('attempted to output an undefined value', lineno + 1, colno + 1)
  }
  if (Array.isArray(value) || isPlainObject(value)) {
    return pythonJsonText(value)
  }
  return value
}

/** nunjucks' runtime with our output policy; everything else inherited (same identities). */
const INSITU_RUNTIME: NunjucksRuntime = Object.assign(
  Object.create((nunjucks as unknown as { runtime: NunjucksRuntime }).runtime) as NunjucksRuntime,
  { ensureDefined: insituEnsureDefined },
)

const adoptedTemplates = new WeakSet<object>()

/**
 * Makes `template` run with `INSITU_RUNTIME`: its `rootRenderFunc` (set when it compiles,
 * now or later, and called by `render`, `getExported` and a child's `extends`) becomes a
 * wrapper passing our runtime instead of the one it is called with.
 */
function adoptTemplate<T>(template: T): T {
  if (typeof template !== 'object' || template === null || adoptedTemplates.has(template)) return template
  adoptedTemplates.add(template)
  const wrap = (compiled: RootRenderFunction | undefined): RootRenderFunction | undefined =>
    typeof compiled === 'function'
      ? (env, context, frame, _runtime, cb) => compiled(env, context, frame, INSITU_RUNTIME, cb)
      : compiled
  let root = wrap((template as { rootRenderFunc?: RootRenderFunction }).rootRenderFunc)
  Object.defineProperty(template, 'rootRenderFunc', {
    configurable: true,
    enumerable: true,
    get: () => root,
    set: (compiled: RootRenderFunction | undefined) => {
      root = wrap(compiled)
    },
  })
  return template
}

type Callback = (error: unknown, result: unknown) => unknown

/** A nunjucks Environment whose templates all run with `INSITU_RUNTIME` (see the header). */
class InsituEnvironment extends nunjucks.Environment {
  // getTemplate(name, eagerCompile?, parentName?, ignoreMissing?, cb?): the callback may sit at
  // any position after the name (nunjucks shifts the arguments).
  override getTemplate(...args: unknown[]): never {
    const adoptingArgs = args.map((arg) =>
      typeof arg === 'function'
        ? (error: unknown, template: unknown) => (arg as Callback)(error, adoptTemplate(template))
        : arg,
    )
    const getTemplate = nunjucks.Environment.prototype.getTemplate as (...a: unknown[]) => unknown
    return adoptTemplate(getTemplate.apply(this, adoptingArgs)) as never
  }

  // renderString(src, ctx, opts?, cb?), as nunjucks' own but with an adopted template.
  override renderString(...args: unknown[]): never {
    const [source, context, options, callback] = args
    const templatePath = isPlainObject(options) && typeof options.path === 'string' ? options.path : undefined
    const template = adoptTemplate(new nunjucks.Template(source as string, this, templatePath))
    const render = template.render as (...a: unknown[]) => unknown
    return render.call(template, context, typeof options === 'function' ? options : callback) as never
  }
}
