/**
 * `insitu(options)`: the Vite (and Rollup) plugin's entry: its options and hook table, and the
 * choice of the runtime that runs the hooks (plugin-runtime.ts). Importing it loads none of the
 * engine: a dev server, build watch and Rollup watch load the in-process runtime (in-process.ts)
 * with `import()` when their config is resolved (or at Rollup's `buildStart`); a build that does
 * not watch runs it in a process of its own (build-process.ts; issue #38).
 *
 * Contract:
 * - The options are checked here, when `vite.config` calls `insitu()` (options.ts).
 * - The runtime is chosen per run: at `config` and `configResolved` by Vite's command and
 *   `build.watch` (a dev server or a watching build: in-process; a build: the build process),
 *   and at `buildStart` when no config hook ran (plain Rollup: `this.meta.watchMode`). One
 *   plugin object may serve several runs (Astro: a content-sync dev server, then its builds).
 *   Dev-server and watch hooks go to the in-process runtime, the others to the run's.
 * - One hook object (Rollup ignores `apply`, and `enforce: 'pre'` must hold for every hook); each
 *   hook delegates in a line. The hook filters are the ones every runtime relies on.
 * - `buildApp` (Vite 8's `vite build`) prints the user's errors without Rolldown's stack frames
 *   (build-errors.ts), for either runtime: errors crossing from the build process stay the user's.
 */
import path from 'node:path'
import type { Plugin, ResolvedConfig } from 'vite'
import { quietUserErrors } from './build-errors.js'
import { BuildProcessRuntime } from './build-process.js'
import { NON_TEXT_QUERY, RAW_QUERY, SKIPPED_IDS, TRANSFORM_SKIPPED_IDS } from './module-ids.js'
import { type InsituOptions, PLUGIN_NAME, resolveOptions } from './options.js'
import type { PluginRuntime } from './plugin-runtime.js'
import { isUserError } from './user-errors.js'

type Handler<K extends keyof Plugin> = Extract<NonNullable<Plugin[K]>, { handler: unknown }>['handler']

export function insitu(userOptions: InsituOptions = {}): Plugin {
  const options = resolveOptions(userOptions)
  let inProcess: PluginRuntime | undefined
  let buildProcess: BuildProcessRuntime | undefined
  /** The runtime of the run under way. */
  let runtime: PluginRuntime | undefined

  const loadInProcess = async (): Promise<PluginRuntime> => {
    inProcess ??= (await import('./in-process.js')).createInProcessRuntime(options)
    return inProcess
  }
  const inBuildProcess = (): PluginRuntime => (buildProcess ??= new BuildProcessRuntime(options))
  const choose = async (oneShotBuild: boolean): Promise<PluginRuntime> => {
    runtime = oneShotBuild ? inBuildProcess() : await loadInProcess()
    return runtime
  }

  return {
    name: PLUGIN_NAME,
    enforce: 'pre',

    async config(config, env) {
      const run = await choose(env.command === 'build' && !config.build?.watch)
      return run.config(config, env)
    },

    async configResolved(config: ResolvedConfig) {
      const run = await choose(config.command === 'build' && !config.build.watch)
      run.configResolved(config)
    },

    configureServer(server) {
      inProcess?.configureServer(server)
    },

    buildApp: {
      order: 'pre',
      async handler(builder) {
        quietUserErrors(builder, isUserError)
      },
    },

    transformIndexHtml() {
      return inProcess?.transformIndexHtml()
    },

    async buildStart() {
      // Plain Rollup calls no config hook; a watching build never runs in the build process.
      if (!runtime || (this.meta.watchMode && runtime === buildProcess)) await choose(!this.meta.watchMode)
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
        return inProcess?.hotUpdate(this.environment, update) as ReturnType<Handler<'hotUpdate'>>
      },
    },

    /** Vite 5 only (Vite 6+ calls `hotUpdate` instead). */
    handleHotUpdate: {
      order: 'post',
      handler(context) {
        return inProcess?.handleHotUpdate(context)
      },
    },

    watchChange(id, change) {
      runtime?.watchChange(id, change.event)
    },

    buildEnd(error) {
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
      return inProcess?.closeServer()
    },

    closeBundle() {
      return runtime?.closeBundle(this)
    },

    closeWatcher() {
      return inProcess?.closeWatcher()
    },
  }
}

