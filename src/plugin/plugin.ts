/**
 * `insitu(options)`: the Vite (and Rollup) plugin's entry: its options and hook table, and the
 * choice of the runtime that runs the hooks (plugin-runtime.ts). Importing it loads none of the
 * engine: a dev server, build watch and Rollup watch load the in-process runtime (in-process.ts,
 * through runtime-module.ts) at their `config` hook (or at Rollup's `buildStart`); a build that
 * does not watch runs it in a process of its own (build-process.ts, imported then; issue #38).
 *
 * Contract:
 * - The options are checked here, when `vite.config` calls `insitu()` (options.ts).
 * - The runtime is chosen per run: at `config` and `configResolved` by Vite's command,
 *   `build.watch` and `server` (a dev server or a watching build: in-process; a build that does
 *   not watch, or a server that watches no file and sends no hot update, as Astro's content
 *   sync creates: the build process, unless the `buildProcess` option is false), and at
 *   `buildStart` when no config hook ran (plain Rollup: `this.meta.watchMode`). One plugin
 *   object may serve several runs (Astro: its content sync, then its builds); every hook goes to
 *   the runtime of the run under way.
 * - One hook object (Rollup ignores `apply`, and `enforce: 'pre'` must hold for every hook); each
 *   hook delegates in a line. The hook filters are the ones every runtime relies on.
 * - `buildApp` (Vite 8's `vite build`) prints the user's errors without Rolldown's stack frames
 *   (build-errors.ts), for either runtime: errors crossing from the build process stay the user's.
 * - At `buildEnd` (a dev server's close, each build's end) the runtime's code cache is saved
 *   when it was not used (runtime-module.ts).
 */
import path from 'node:path'
import type { Plugin, ResolvedConfig } from 'vite'
import { quietUserErrors } from './build-errors.js'
import type { BuildProcessRuntime } from './build-process.js'
import { NON_TEXT_QUERY, RAW_QUERY, SKIPPED_IDS, TRANSFORM_SKIPPED_IDS } from './module-ids.js'
import { type InsituOptions, PLUGIN_NAME, resolveOptions } from './options.js'
import type { PluginRuntime } from './plugin-runtime.js'
import { loadRuntimeModule, saveRuntimeCodeCache } from './runtime-module.js'
import { isUserError } from './user-errors.js'

type Handler<K extends keyof Plugin> = Extract<NonNullable<Plugin[K]>, { handler: unknown }>['handler']

export function insitu(userOptions: InsituOptions = {}): Plugin {
  const options = resolveOptions(userOptions)
  let inProcess: PluginRuntime | undefined
  let buildProcess: BuildProcessRuntime | undefined
  /** The runtime of the run under way. */
  let runtime: PluginRuntime | undefined
  /** A config hook chose it (Vite); else `buildStart` chooses (plain Rollup). */
  let chosenByConfig = false

  const loadInProcess = async (): Promise<PluginRuntime> => {
    inProcess ??= (await loadRuntimeModule()).createInProcessRuntime(options)
    return inProcess
  }
  // Imported when a run needs it: a dev server's entry loads neither it nor the scope matchers under it.
  const inBuildProcess = async (): Promise<PluginRuntime> => (buildProcess ??= new (await import('./build-process.js')).BuildProcessRuntime(options))
  const choose = async (oneShot: boolean): Promise<PluginRuntime> => {
    runtime = oneShot && options.buildProcess ? await inBuildProcess() : await loadInProcess()
    return runtime
  }

  return {
    name: PLUGIN_NAME,
    enforce: 'pre',

    async config(config, env) {
      chosenByConfig = true
      const run = await choose(isOneShot(env.command, config.build?.watch, config.server))
      return run.config(config, env)
    },

    async configResolved(config: ResolvedConfig) {
      const run = await choose(isOneShot(config.command, config.build.watch, config.server))
      run.configResolved(config)
    },

    configureServer(server) {
      runtime?.configureServer(server)
    },

    buildApp: {
      order: 'pre',
      async handler(builder) {
        quietUserErrors(builder, isUserError)
      },
    },

    transformIndexHtml() {
      return runtime?.transformIndexHtml()
    },

    async buildStart() {
      // Plain Rollup calls no config hook: `rollup()` or `rollup.watch()` decides.
      if (!chosenByConfig) await choose(!this.meta.watchMode)
      return runtime!.buildStart(this)
    },

    load: {
      filter: { id: { include: RAW_QUERY, exclude: SKIPPED_IDS } },
      handler(id) {
        return (runtime?.load(this, id) ?? null) as ReturnType<Handler<'load'>>
      },
    },

    transform: {
      order: 'pre',
      // Never called for ?raw, ?url… (JS or URLs, not Markdown): no per-module crossing into JS.
      // Vite's own client module passes too: a dev server loads the browser client with it.
      filter: { id: { exclude: [...TRANSFORM_SKIPPED_IDS, NON_TEXT_QUERY] } },
      handler(code, id, transformOptions) {
        return (runtime?.transform(this, code, id, transformOptions) ?? null) as ReturnType<Handler<'transform'>>
      },
    },

    hotUpdate: {
      // After the other plugins' hooks (but those ordered `post` too): the modules they add for
      // a file (VitePress 2 adds a page's own module on each event of its file) are decided by
      // the plan too, so the echo of a write-back sends nothing, whoever added the page.
      order: 'post',
      handler(update) {
        return runtime?.hotUpdate(this.environment, update) as ReturnType<Handler<'hotUpdate'>>
      },
    },

    /** Vite 5 only (Vite 6+ calls `hotUpdate` instead). */
    handleHotUpdate: {
      order: 'post',
      handler(context) {
        return runtime?.handleHotUpdate(context)
      },
    },

    watchChange(id, change) {
      runtime?.watchChange(id, change.event)
    },

    buildEnd(error) {
      // A run has done its usual work: what V8 compiled of the runtime serves the next start.
      saveRuntimeCodeCache()
      return runtime?.buildEnd(this, error)
    },

    renderStart(outputOptions) {
      // Rollup names its output only now: what it writes there is no change of the project's.
      const output = outputOptions.dir ?? (outputOptions.file ? path.dirname(outputOptions.file) : undefined)
      runtime?.renderStart(output)
    },

    shouldTransformCachedModule({ id }) {
      return runtime?.shouldTransformCachedModule(id) ?? null
    },

    closeServer() {
      return runtime?.closeServer()
    },

    closeBundle() {
      return runtime?.closeBundle(this)
    },

    closeWatcher() {
      return runtime?.closeWatcher()
    },
  }
}

/**
 * Whether a run serves its modules once (its runtime in a build process): a build that does not
 * watch, or a server that watches no file and sends no hot update (Astro's content sync, which
 * only loads modules before its build: `hmr: false`, `watch: { ignored: ['**'] }`; or
 * `watch: null`). `server` as the config hook or the resolved config has it.
 */
function isOneShot(command: 'build' | 'serve', buildWatch: unknown, server: { watch?: unknown; hmr?: unknown } | undefined): boolean {
  if (command === 'build') return !buildWatch
  return server?.hmr === false && watchesNothing(server.watch)
}

function watchesNothing(watch: unknown): boolean {
  if (watch === null) return true
  const ignored = (watch as { ignored?: unknown } | undefined)?.ignored
  return ignored === '**' || (Array.isArray(ignored) && ignored.includes('**'))
}

