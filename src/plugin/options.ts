/**
 * The plugin's options, resolved and validated in one place.
 *
 * Contract: `resolveOptions(user)` returns `ResolvedOptions` with every default filled, or
 * throws an `Error` whose message names the option (`vite-plugin-insitu: option "timeout"
 * must be a positive integer (got -1)`), so a bad `vite.config` fails at config time.
 */

export interface ModuleRule {
  /** gitignore-style patterns (relative to the insitu root) of the modules this rule transforms. */
  include: string | string[]
  /** gitignore-style patterns of modules to leave alone. @default [] */
  exclude?: string | string[]
  /** The transform capability (builtin or extension) that turns the module into JavaScript. */
  transform: string
  /** Options passed to the transform, besides `content` (the module's code). @default {} */
  options?: Record<string, unknown>
}

export interface InsituOptions {
  /**
   * The insitu project: the folder holding `insitu.toml` (or where it would be), relative to
   * Vite's root. When given, it is used exactly: no folder above it is searched.
   * @default the nearest folder holding `insitu.toml`, walking up from Vite's root; else Vite's root
   */
  root?: string
  /**
   * Which modules are managed documents: gitignore-style patterns relative to the insitu root.
   * @default `[sources] include` of insitu.toml (`["**\/*.md"]`)
   */
  include?: string | string[]
  /**
   * Modules that are never managed documents: gitignore-style patterns relative to the insitu root.
   * @default `[sources] exclude` of insitu.toml
   */
  exclude?: string | string[]
  /**
   * Rules that run a transform capability on whole modules (e.g. `*.csv` to JavaScript).
   * @default []
   */
  modules?: ModuleRule[]
  /**
   * Milliseconds an extension may take to answer one request.
   * @default 30000
   */
  timeout?: number
  /**
   * Milliseconds one SQL model's query or one template's render may run before its job fails
   * (`insitu/models/forever.sql: the query ran longer than 30 s`). Queries run in other
   * processes, so one that never ends is stopped and holds neither the dev server nor other pages.
   * @default the `timeout` option (30000)
   */
  renderTimeout?: number
  /**
   * The Python interpreter that replaces `{python}` in extension commands.
   * @default 'python3'
   */
  python?: string
  /**
   * Turn extensions on or off by manifest name, over `enabled` in insitu.toml:
   * `{ 'acme/slow': false, 'acme/draft': true }`. Extensions not listed follow insitu.toml.
   * @default {}
   */
  extensions?: Record<string, boolean>
  /**
   * Persistent cache in the plugin's own folder of the project's state folder (the folder of
   * insitu.toml's `paths.state`): `.insitu/vite-plugin-insitu/`, which holds its own `.gitignore`.
   * The document index snapshot (`index.db`) lets a start re-read only the files whose mtime or
   * size changed; job results are kept in `jobs.db`. `paths.state` itself (`.insitu/index.db`) is
   * the Python implementation's index and is never touched.
   * `false` keeps everything in memory and writes nothing.
   * @default true
   */
  cache?: boolean
  /**
   * @deprecated Use `cache`; this is an alias of it (`cache` wins when both are given).
   */
  persistIndex?: boolean
  /**
   * Check mode: nothing is ever written, by any server or build (`check` wins over `write`
   * everywhere, dev servers included), and `vite build` (and Rollup) fail when any region or
   * front-matter materialization of a managed document is stale on disk, listing each as
   * `path:line region <id> is stale` with a short diff. For CI.
   * @default process.env.INSITU_CHECK === '1'
   */
  check?: boolean
  /**
   * Write mode: keep the managed documents themselves current on disk, for every tool that
   * reads Markdown from disk rather than through Vite (Astro, VitePress search and
   * `createContentLoader`, GitHub's rendering of the repository). The dev server writes a
   * document back at start and whenever a dependency changes its regenerated text; `vite build`
   * and Rollup sync every managed document at `buildStart`, before any module loads. Writes are
   * atomic, never lose or miss a save that races them, and happen only when the bytes differ.
   * `check` wins: with `check` on, nothing is written.
   * @default false
   */
  write?: boolean
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
}

export const PLUGIN_NAME = 'vite-plugin-insitu'

const KNOWN = new Set(['root', 'include', 'exclude', 'modules', 'timeout', 'renderTimeout', 'python', 'extensions', 'cache', 'persistIndex', 'check', 'write'])

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
  }
}
