/**
 * The plugin's whole runtime in the process that runs it: a dev server, build watch, Rollup
 * watch, and the build process of build-process.ts (src/build-child.ts). Loaded by plugin.ts
 * with `import()` when a run needs it, so that importing the plugin loads none of it. It composes;
 * each concern is a module:
 *
 * - plugin-core.ts: options, the disk mode (`check` wins over `write`, decided once:
 *   src/sync/disk-mode.ts), the logger, the project scope, the engine's lifecycle
 *   (engine-lifecycle.ts: started on first use or at `buildStart`, reused across rebuilds,
 *   stopped at `closeServer`, `closeBundle` when not watching, or `closeWatcher`, idempotently);
 * - serve-document.ts: `load` (`?raw` documents) and `transform` (documents, module rules),
 *   source maps, watch files, diagnostics;
 * - dev-server.ts: the dev server's file events (one plan each, the live sync's write-back and
 *   echoes, early cutoff), git reloads, restarts, the inspector and browser diagnostics;
 * - builds.ts and build-watch.ts: check and write at `buildStart`, background start of plain
 *   builds, build watch's stale modules and wake file.
 *
 * Contract: `createInProcessRuntime(options)` is a `PluginRuntime` (plugin-runtime.ts); each
 * method delegates in a line or two. `projectScope()` and `stop()` serve the build process. Paths: Vite's module files and ids are POSIX (`C:/…` on
 * Windows); module file paths the plugin builds or compares are absolute POSIX too.
 */
import path from 'node:path'
import { BuildSession } from './builds.js'
import { withInsituClient } from './browser-diagnostics.js'
import { DevServerSession } from './dev-server.js'
import { PluginStoppedError } from './diagnostics.js'
import { VITE_CLIENT_MODULE } from './module-ids.js'
import type { ResolvedOptions } from './options.js'
import { PluginCore } from './plugin-core.js'
import type { PluginRuntime } from './plugin-runtime.js'
import type { ProjectScope } from './project-scope.js'
import { DocumentServer } from './serve-document.js'

/** The runtime, and what a build process (src/build-child.ts) asks of it besides the hooks. */
export interface InProcessRuntime extends PluginRuntime {
  projectScope(): ProjectScope
  /** Stop the engine, giving up a start in progress (the build process's parent went away). */
  stop(): Promise<void>
}

export function createInProcessRuntime(options: ResolvedOptions): InProcessRuntime {
  const core = new PluginCore(options)
  const dev = new DevServerSession(core)
  const builds = new BuildSession(core)
  const documents = new DocumentServer(core, {
    transformed: (id) => builds.watch.transformed(id),
    missingFile: (file) => builds.watch.watchMissing(file),
    startFailed: (error) => dev.startFailed(error),
    replacedText: (file, code) => dev.replacedText(file, code),
  })

  return {
    config(config, env) {
      // `vite build --watch` in write mode: the bundler must not watch the documents the plugin writes.
      if (env.command !== 'build' || !config.build?.watch) return null
      return builds.watchExclusions(path.resolve(config.root ?? process.cwd()))
    },
    configResolved: (config) => core.configResolved(config),
    configureServer: (server) => dev.configure(server),
    transformIndexHtml: () => dev.clientTags(),
    async buildStart(context) {
      if (core.serving) return dev.buildStart(context)
      return builds.buildStart(context)
    },
    load(context, id) {
      if (core.serving) dev.noteLoaded(id)
      return documents.load(context, id)
    },
    transform(context, code, id, options) {
      if (core.serving && VITE_CLIENT_MODULE.test(id)) return options?.ssr ? null : withInsituClient(code)
      if (core.serving) dev.noteServed(id)
      return documents.transform(context, code, id)
    },
    hotUpdate: (environment, update) => dev.hotUpdate(environment, update),
    handleHotUpdate: (context) => dev.handleHotUpdate(context),
    watchChange(id, event) {
      // The dev server reports changes through hotUpdate; this is for build watch and Rollup.
      const engine = core.lifecycle.current
      if (core.serving || !engine) return
      builds.watch.watchChange(engine, id, event)
    },
    buildEnd: (context, error) => builds.buildEnd(context, error),
    renderStart(outputDir) {
      if (outputDir) builds.watch.ignoreOutput(outputDir)
    },
    shouldTransformCachedModule: (id) => builds.watch.shouldTransform(id),
    closeServer: () => core.lifecycle.stop(),
    closeBundle(context) {
      if (!core.serving && !context.meta.watchMode) return core.lifecycle.stop()
    },
    closeWatcher: () => core.lifecycle.stop(),
    projectScope: () => core.projectScope(),
    stop() {
      core.lifecycle.abort(new PluginStoppedError())
      return core.lifecycle.stop()
    },
  }
}
