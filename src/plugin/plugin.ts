/**
 * `insitu(options)`: the Vite (and Rollup) plugin. It composes; each concern is a module:
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
 * One hook object (Rollup ignores `apply`, and `enforce: 'pre'` must hold for every hook); each
 * hook delegates in a line or two. Paths: Vite's module files and ids are POSIX (`C:/…` on
 * Windows); module file paths the plugin builds or compares are absolute POSIX too.
 */
import path from 'node:path'
import type { Plugin } from 'vite'
import { quietUserErrors } from './build-errors.js'
import { BuildSession } from './builds.js'
import { withInsituClient } from './browser-diagnostics.js'
import { DevServerSession } from './dev-server.js'
import { isUserError } from './diagnostics.js'
import { NON_TEXT_QUERY, RAW_QUERY, SKIPPED_IDS, TRANSFORM_SKIPPED_IDS, VITE_CLIENT_MODULE } from './module-ids.js'
import { type InsituOptions, PLUGIN_NAME, resolveOptions } from './options.js'
import { PluginCore } from './plugin-core.js'
import { DocumentServer } from './serve-document.js'

export function insitu(userOptions: InsituOptions = {}): Plugin {
  const core = new PluginCore(resolveOptions(userOptions))
  const dev = new DevServerSession(core)
  const builds = new BuildSession(core)
  const documents = new DocumentServer(core, {
    transformed: (id) => builds.watch.transformed(id),
    missingFile: (file) => builds.watch.watchMissing(file),
    startFailed: (error) => dev.startFailed(error),
    replacedText: (file, code) => dev.replacedText(file, code),
  })

  return {
    name: PLUGIN_NAME,
    enforce: 'pre',

    config(config, env) {
      // `vite build --watch` in write mode: the bundler must not watch the documents the plugin writes.
      if (env.command !== 'build' || !config.build?.watch) return null
      return builds.watchExclusions(path.resolve(config.root ?? process.cwd()))
    },

    configResolved(config) {
      core.configResolved(config)
    },

    configureServer(server) {
      dev.configure(server)
    },

    buildApp: {
      // Vite 8's `vite build`: print the user's errors without Rolldown's stack frames (build-errors.ts).
      order: 'pre',
      async handler(builder) {
        quietUserErrors(builder, isUserError)
      },
    },

    transformIndexHtml() {
      return dev.clientTags()
    },

    async buildStart() {
      if (core.serving) return dev.buildStart(this)
      return builds.buildStart(this)
    },

    load: {
      filter: { id: { include: RAW_QUERY, exclude: SKIPPED_IDS } },
      handler(id) {
        if (core.serving) dev.noteLoaded(id)
        return documents.load(this, id)
      },
    },

    transform: {
      order: 'pre',
      // Never called for ?raw, ?url… (JS or URLs, not Markdown): no per-module crossing into JS.
      // Vite's own client module passes too: a dev server loads the browser client with it.
      filter: { id: { exclude: [...TRANSFORM_SKIPPED_IDS, NON_TEXT_QUERY] } },
      handler(code, id, options) {
        if (core.serving && VITE_CLIENT_MODULE.test(id)) return options?.ssr ? null : withInsituClient(code)
        if (core.serving) dev.noteServed(id)
        return documents.transform(this, code, id) as ReturnType<Extract<Plugin['transform'], { handler: unknown }>['handler']>
      },
    },

    hotUpdate: {
      // After the other plugins' hooks (but those ordered `post` too): the modules they add for
      // a file (VitePress 2 adds a page's own module on each event of its file) are decided by
      // the plan too, so the echo of a write-back sends nothing, whoever added the page.
      order: 'post',
      handler(update) {
        return dev.hotUpdate(this.environment, update) as ReturnType<Extract<Plugin['hotUpdate'], { handler: unknown }>['handler']>
      },
    },

    /** Vite 5 only (Vite 6+ calls `hotUpdate` instead). */
    handleHotUpdate: {
      order: 'post',
      handler(context) {
        return dev.handleHotUpdate(context)
      },
    },

    watchChange(id, change) {
      // The dev server reports changes through hotUpdate; this is for build watch and Rollup.
      const engine = core.lifecycle.current
      if (core.serving || !engine) return
      builds.watch.watchChange(engine, id, change.event)
    },

    buildEnd(error) {
      return builds.buildEnd(this, error)
    },

    renderStart(outputOptions) {
      // Rollup names its output only now: what it writes there is no change of the project's.
      const output = outputOptions.dir ?? (outputOptions.file ? path.dirname(outputOptions.file) : undefined)
      if (output) builds.watch.ignoreOutput(output)
    },

    shouldTransformCachedModule({ id }) {
      return builds.watch.shouldTransform(id)
    },

    closeServer() {
      return core.lifecycle.stop()
    },

    closeBundle() {
      if (!core.serving && !this.meta.watchMode) return core.lifecycle.stop()
    },

    closeWatcher() {
      return core.lifecycle.stop()
    },
  }
}
