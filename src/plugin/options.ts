/**
 * The plugin's options, resolved and validated in one place.
 *
 * Contract: `resolveOptions(user)` returns `ResolvedOptions` with every default filled, or
 * throws an `Error` whose message names the option (`vite-plugin-insitu: option "timeout"
 * must be a positive integer (got -1)`), so a bad `vite.config` fails at config time. A module
 * rule's `options` hold values a region's options can hold (strings, numbers, booleans, null,
 * bigints, Dates, arrays and plain objects of them; `undefined`, which an extension receives as
 * JSON sends it), so that they mean the same to a builtin, to an extension (sent as JSON) and to
 * a build's engine process (sent with V8's serialization); anything else (a function, a Map, a class instance, a cycle) fails
 * naming its path (`option "modules[0].options.format" must be … (got a function)`).
 */

export interface ModuleRule {
  /** gitignore-style patterns (relative to the insitu root) of the modules this rule transforms. */
  include: string | string[]
  /** gitignore-style patterns of modules to leave alone. @default [] */
  exclude?: string | string[]
  /** The transform capability (builtin or extension) that turns the module into JavaScript. */
  transform: string
  /**
   * Options passed to the transform, besides `content` (the module's code): strings, numbers,
   * booleans, null, Dates, arrays and plain objects of them, as a region's options.
   * @default {}
   */
  options?: Record<string, unknown>
}

export interface InsituOptions {
  /**
   * The insitu project: the folder holding `insitu.toml` (or where it would be), relative to
   * Vite's root. When given, it is the project folder exactly: its own `insitu.toml` is used (the
   * defaults when it has none), and no folder above it is searched.
   * @default the nearest folder holding `insitu.toml`, walking up from Vite's root; else Vite's root
   */
  root?: string
  /**
   * Which modules are managed documents: gitignore-style patterns relative to the insitu root.
   * The same selection feeds the document index that SQL models query.
   * @default `[sources] include` of `insitu.toml` (`["**\/*.md"]`)
   */
  include?: string | string[]
  /**
   * Modules that are never managed documents: gitignore-style patterns relative to the insitu root.
   * @default `[sources] exclude` of `insitu.toml` (`.git/**`, `.insitu/**`, `node_modules/**`, `dist/**`, …)
   */
  exclude?: string | string[]
  /**
   * Rules that run a transform capability on whole modules, e.g. turning `*.csv` into
   * JavaScript with an extension. The transform receives the rule's `options` plus `content`
   * (the module's code) and the module's Location; the content it returns replaces the module.
   * @default []
   * @example
   * ```ts
   * insitu({ modules: [{ include: 'data/*.csv', transform: 'csv_module' }] })
   * ```
   */
  modules?: ModuleRule[]
  /**
   * Milliseconds an extension may take to answer one request; past it, the request fails with
   * an error naming the method, the extension and the limit.
   * @default 30000
   */
  timeout?: number
  /**
   * Milliseconds one SQL model's query or one template's render may run before its job fails:
   * `transform sql failed in open: insitu/models/forever.sql: the query ran longer than 30 s`, or
   * `template slow.md.j2: the render ran longer than 30 s (line 3, column 1)`.
   *
   * Queries run in separate processes with a copy of the document index, where a query that never
   * ends (a recursive CTE without an end) is stopped by ending its process; a template renders in
   * the plugin's process for at most 250 ms and, when it takes longer, again in such a process
   * with what is left of its time (and, for the next 30 s, that template's renders go there at
   * once). So neither holds the dev server: other pages are served meanwhile. Up to three
   * runaways at once keep a process of their own each and the queries of other pages go to a
   * fourth; more wait their turn. A document whose only failures ran out of their time is not
   * rendered again until one of its inputs changes (every request would otherwise wait the
   * budget).
   * @default the `timeout` option (30000)
   */
  renderTimeout?: number
  /**
   * The Python interpreter that replaces `{python}` in extension commands: a name looked up on
   * PATH (`python3.12`), or a path; a relative path is taken from the insitu project's root (the
   * folder of `insitu.toml`), not from the extension's folder the command runs in, so
   * `'.venv/bin/python'` runs the project's virtual environment. (`{node}` is always the Node
   * binary running Vite.)
   * @default 'python3'
   */
  python?: string
  /**
   * Turn extensions on or off by manifest name, over `enabled` in `insitu.toml`:
   * `{ 'acme/slow': false, 'acme/draft': true }` (`true` also starts an extension whose entry
   * says `enabled = false`). Extensions not listed follow `insitu.toml`.
   * @default {}
   */
  extensions?: Record<string, boolean>
  /**
   * Keep a persistent cache, so a start re-reads only the documents that changed since the last
   * run and reuses the results of jobs whose inputs are unchanged. It lives in the plugin's own
   * folder of the project's state folder, `.insitu/vite-plugin-insitu/` by default (`index.db`,
   * the document index snapshot, and `jobs.db`, the job results), which is git-ignored; the dev
   * server, `vite build` and the command line share it (`--no-cache` turns it off there). The
   * Python implementation's own index in the state folder (`.insitu/index.db`) is never created,
   * written or deleted. A cache that is corrupt, foreign or from another version is ignored and
   * rebuilt; a changed input never serves an old result. `false`: everything stays in memory and
   * nothing is written. In CI, keep `.insitu/vite-plugin-insitu/` between runs (not all of
   * `.insitu/`, which may hold committed extensions).
   *
   * See [Caching in docs/internals/caching.md](../internals/caching.md) for what is stored, when
   * it is written and a CI cache step.
   * @default true
   */
  cache?: boolean
  /**
   * @deprecated An alias of `cache`, kept for existing configs (`cache` wins when both are
   * given). Note that `cache` defaults to `true`, where `persistIndex` defaulted to `false`.
   */
  persistIndex?: boolean
  /**
   * Check mode, for CI: no server or build writes anything, and `vite build` (and Rollup) fails
   * when any region or front-matter materialization of a managed document is stale on disk (or
   * its job fails), listing each as `path:line region <id> is stale` with a short diff. A dev
   * server in check mode serves current text. `check` wins over `write`: with both on, nothing is
   * written. `INSITU_CHECK=1` in the environment turns it on when the config does not set
   * `check`.
   *
   * See [Check mode in docs/guide/write-and-check.md](../guide/write-and-check.md#check-mode) for
   * the report, Astro's builds and CI.
   * @default `true` when the environment has `INSITU_CHECK=1`, else `false`
   */
  check?: boolean
  /**
   * Write mode: keep the Markdown files themselves current on disk, not only what Vite serves.
   * Turn it on whenever something reads the documents from disk rather than through Vite's
   * module pipeline: Astro (its Markdown pages and content collections load files themselves),
   * VitePress local search and `createContentLoader`, `<!--@include-->` partials, dynamic routes,
   * and GitHub's rendering of the repository. The dev server writes a document back at start and
   * whenever a dependency changes its regenerated text; `vite build` and Rollup sync every managed
   * document at `buildStart`, before any module loads. Writes are atomic, never lose or miss a
   * save that races them, and happen only when the bytes differ. `check` wins: with `check` on,
   * nothing is written.
   * @default false
   */
  write?: boolean
  /**
   * Run the engine of a build that does not watch (`vite build`, `vitepress build`, `astro
   * build`, Rollup's `rollup()`) in a Node process of its own beside the bundler, which ends once
   * every module is loaded: the build's own process then holds none of the engine, which keeps a
   * docs tool's peak memory (while it renders the pages, after the bundling) that of the tool
   * alone. The process's start (Node and the engine's code, about 0.1–0.2 s on a small machine)
   * comes before the first document with regions: `false` runs the engine in the build's
   * process, a little faster for a small project whose build takes well under a second. Dev
   * servers and watching builds always run it in their own process.
   *
   * See [Where the engine of a build runs in docs/internals/architecture.md](../internals/architecture.md#where-the-engine-of-a-build-runs).
   * @default true
   */
  buildProcess?: boolean
}

export interface ResolvedModuleRule {
  include: string[]
  exclude: string[]
  transform: string
  options: Record<string, unknown>
}

export interface ResolvedOptions {
  root: string | undefined
  include: string[] | undefined
  exclude: string[] | undefined
  modules: ResolvedModuleRule[]
  timeout: number
  renderTimeout: number
  python: string
  extensions: Record<string, boolean>
  cache: boolean
  check: boolean
  write: boolean
  buildProcess: boolean
}

export const PLUGIN_NAME = 'vite-plugin-insitu'

const KNOWN = new Set(['root', 'include', 'exclude', 'modules', 'timeout', 'renderTimeout', 'python', 'extensions', 'cache', 'persistIndex', 'check', 'write', 'buildProcess'])

function fail(option: string, expected: string, value: unknown): never {
  let shown: string
  try {
    shown = JSON.stringify(value) ?? String(value)
  } catch {
    shown = String(value)
  }
  throw new Error(`${PLUGIN_NAME}: option "${option}" must be ${expected} (got ${shown})`)
}

function patterns(option: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string' || p === '')) {
    fail(option, 'a non-empty string or an array of non-empty strings', value)
  }
  return list as string[]
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** What a module rule's option value may be (see the contract). */
const OPTION_VALUE = 'a string, number, boolean, null, Date, array or plain object of them'

/** Checks a module rule's option value, and every value inside it (see the contract). */
function checkOptionValue(option: string, value: unknown, inside: Set<object>): void {
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return
    case 'function':
    case 'symbol':
      throw optionValueError(option, `a ${typeof value}`)
  }
  if (value === null || value instanceof Date) return
  const object = value as object
  const prototype = Object.getPrototypeOf(object) as unknown
  if (!Array.isArray(object) && prototype !== Object.prototype && prototype !== null) {
    const name = (object.constructor as { name?: unknown } | undefined)?.name
    throw optionValueError(option, typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype')
  }
  if (inside.has(object)) throw optionValueError(option, 'a circular reference')
  inside.add(object)
  if (Array.isArray(object)) object.forEach((item, i) => checkOptionValue(`${option}[${i}]`, item, inside))
  else for (const [key, item] of Object.entries(object)) checkOptionValue(`${option}${propertyPath(key)}`, item, inside)
  inside.delete(object)
}

/** `.key` for an identifier, else `["a.b"]` (as JavaScript would write it). */
function propertyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

function optionValueError(option: string, got: string): Error {
  return new Error(`${PLUGIN_NAME}: option "${option}" must be ${OPTION_VALUE} (got ${got})`)
}

export function resolveOptions(user: InsituOptions = {}): ResolvedOptions {
  if (!isPlainObject(user)) fail('options', 'an object', user)
  for (const key of Object.keys(user)) {
    if (!KNOWN.has(key)) throw new Error(`${PLUGIN_NAME}: unknown option "${key}"`)
  }
  if (user.root !== undefined && (typeof user.root !== 'string' || user.root === '')) fail('root', 'a folder path', user.root)
  const timeout: unknown = user.timeout ?? 30_000
  if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout <= 0) {
    fail('timeout', 'a positive integer (milliseconds)', user.timeout)
  }
  const renderTimeout: unknown = user.renderTimeout ?? timeout
  if (typeof renderTimeout !== 'number' || !Number.isInteger(renderTimeout) || renderTimeout <= 0) {
    fail('renderTimeout', 'a positive integer (milliseconds)', user.renderTimeout)
  }
  const python = user.python ?? 'python3'
  if (typeof python !== 'string' || python === '') fail('python', 'a non-empty string', user.python)
  const extensions: unknown = user.extensions ?? {}
  if (!isPlainObject(extensions) || Object.values(extensions).some((v) => typeof v !== 'boolean')) {
    fail('extensions', 'an object mapping extension names to true or false', user.extensions)
  }
  if (user.persistIndex !== undefined && typeof user.persistIndex !== 'boolean') fail('persistIndex', 'a boolean', user.persistIndex)
  const cache = user.cache ?? user.persistIndex ?? true
  if (typeof cache !== 'boolean') fail('cache', 'a boolean', user.cache)
  const buildProcess = user.buildProcess ?? true
  if (typeof buildProcess !== 'boolean') fail('buildProcess', 'a boolean', user.buildProcess)
  const check = user.check ?? process.env.INSITU_CHECK === '1'
  if (typeof check !== 'boolean') fail('check', 'a boolean', user.check)
  const write = user.write ?? false
  if (typeof write !== 'boolean') fail('write', 'a boolean', user.write)
  const rules = user.modules ?? []
  if (!Array.isArray(rules)) fail('modules', 'an array of rules', rules)
  const modules = rules.map((rule, i): ResolvedModuleRule => {
    const at = `modules[${i}]`
    if (!isPlainObject(rule)) fail(at, 'an object { include, transform }', rule)
    for (const key of Object.keys(rule)) {
      if (!['include', 'exclude', 'transform', 'options'].includes(key)) {
        throw new Error(`${PLUGIN_NAME}: unknown option "${at}.${key}"`)
      }
    }
    const include = patterns(`${at}.include`, rule.include)
    if (!include) fail(`${at}.include`, 'a non-empty string or an array of non-empty strings', rule.include)
    if (typeof rule.transform !== 'string' || rule.transform === '') fail(`${at}.transform`, 'a transform name', rule.transform)
    if (rule.options !== undefined && !isPlainObject(rule.options)) fail(`${at}.options`, 'an object', rule.options)
    if (rule.options !== undefined) checkOptionValue(`${at}.options`, rule.options, new Set())
    return { include, exclude: patterns(`${at}.exclude`, rule.exclude) ?? [], transform: rule.transform, options: rule.options ?? {} }
  })
  return {
    root: user.root,
    include: patterns('include', user.include),
    exclude: patterns('exclude', user.exclude),
    modules,
    timeout,
    renderTimeout,
    python,
    extensions: extensions as Record<string, boolean>,
    cache,
    check,
    write,
    buildProcess,
  }
}
