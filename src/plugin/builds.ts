/**
 * Builds: `vite build`, build watch, plain Rollup. What happens at `buildStart` and `buildEnd`
 * in each disk mode (src/sync/disk-mode.ts).
 *
 * Contract:
 * - A bad project config fails `buildStart` with its file:line.
 * - Plain build, disk mode 'none', no watch: nothing happens before modules load; the engine
 *   (index, extension handshakes) starts while the bundler resolves, managed modules wait for
 *   it, and its start error or validators' errors fail the build at `buildEnd`, before any
 *   output is written. The documents its index reads are served from that read until
 *   `buildEnd` (plugin-core.ts `keepIndexedReads`).
 * - Otherwise `buildStart` awaits the engine (a start error fails the build), then:
 *   'check': nothing is written; any stale region or front-matter materialization fails the
 *   build with `insitu check failed:` and the report (`path:line region <id> is stale` and a
 *   diff, sync-project.ts); 'write': every managed document on disk is made current before any
 *   module loads (loaders that read Markdown from disk see what transform serves; a failed
 *   document fails the build), logging `insitu: wrote <n> of <m> documents`;
 *   build watch: the watchers of build-watch.ts start and its wake file is watched; in write
 *   mode the bundler does not watch the managed documents (`watchExclusions`), the
 *   plugin's watcher does, so a change costs one rebuild, its writes none;
 *   validators run once per engine (errors fail the build). A build that does not watch then
 *   forgets what the sync's renders of documents without jobs left in the engine
 *   (`forgetDocumentsWithoutJobs`): it serves those as they are without asking the engine.
 * - At `buildEnd` of a build that is not watching, every module is loaded: the job results are
 *   written to the persistent cache in the next turn of the event loop, while the bundler renders
 *   its output (issue #17), so that `closeBundle` has nothing left to write.
 */
import path from 'node:path'
import { listProjectFiles } from '../documents/project-files.js'
import { toPosixPath } from '../host/config.js'
import type { InsituEngine } from '../engine/engine.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { formatSyncReport, syncProject, writtenSummary } from '../sync/sync-project.js'
import { BuildWatch } from './build-watch.js'
import { exactPathsPattern } from './exact-paths-pattern.js'
import { engineStartError, PluginStoppedError, type ReportingContext, reportError, reportValidation } from './diagnostics.js'
import type { PluginCore } from './plugin-core.js'
import { loadProjectScope } from './project-scope.js'

export interface BuildContext extends ReportingContext {
  error(error: string | (Error & { id?: string })): never
  addWatchFile(id: string): void
  meta: { watchMode: boolean }
}

type BackgroundStart = { engine: InsituEngine; diagnostics: Diagnostic[] } | { failure: unknown }

export class BuildSession {
  readonly watch: BuildWatch
  /** A plain build: the engine starting in the background, and its validators' diagnostics. */
  private backgroundStart: Promise<BackgroundStart> | undefined

  constructor(private readonly core: PluginCore) {
    this.watch = new BuildWatch(() => core.logger)
    core.lifecycle.onStop(() => this.watch.stop())
  }

  async buildStart(context: BuildContext): Promise<void> {
    const { core } = this
    const project = core.projectScope()
    if (project.error) return context.error(engineStartError(project.error))
    core.oneShotBuild = !context.meta.watchMode
    if (core.disk === 'none' && !context.meta.watchMode) {
      core.keepIndexedReads() // load serves the documents the index reads now (plugin-core.ts)
      this.backgroundStart = core.lifecycle.start().then(
        async (engine) => ({ engine, diagnostics: (await core.lifecycle.validateOnce(engine)) ?? [] }),
        (failure: unknown) => ({ failure }),
      )
      return
    }
    let engine: InsituEngine
    try {
      engine = await core.lifecycle.start()
    } catch (error) {
      return context.error(engineStartError(error))
    }
    if (core.disk === 'check') {
      const report = await syncProject(engine, { write: false, explain: true })
      if (report.stale > 0 || report.failed > 0) return context.error(reportError(`insitu check failed:\n${formatSyncReport(report, 'check')}`))
    } else if (core.disk === 'write') {
      // In build watch the writes are recorded, so that their echoes wake nothing (build-watch.ts).
      const report = await syncProject(engine, { write: true, selfWrites: context.meta.watchMode ? this.watch.selfWrites : undefined })
      if (report.failed > 0) return context.error(reportError(`insitu sync failed:\n${formatSyncReport(report, 'sync')}`))
      if (report.written > 0) core.logger.info(`insitu: ${writtenSummary(report)}`)
    }
    // A build that does not watch never asks the engine for a document without jobs again
    // (serve-document.ts, the cheap path): their results from the sync would be kept for nothing.
    if (core.disk !== 'none' && !context.meta.watchMode) engine.forgetDocumentsWithoutJobs()
    if (context.meta.watchMode) {
      // The bundler cannot see new files in folders it does not watch, nor git: wake it.
      await this.watch.start(engine, core.outDir)
      context.addWatchFile(this.watch.wakeFile!)
    }
    const validation = core.lifecycle.validateOnce(engine)
    if (validation) reportValidation(context, await validation, core.logger, engine.root, { failOnError: true })
  }

  /**
   * `vite build --watch` in write mode (the `config` hook, given Vite's root): the managed
   * documents go to `build.watch.exclude`, because each document the plugin writes at
   * `buildStart` would otherwise start a second rebuild (issue #14.5: the bundler's watcher sees
   * the write, and neither Rollup nor Rolldown lets a plugin take a change back). The plugin's
   * own watcher reports their edits instead (build-watch.ts), ignoring its own writes. Null when
   * there is nothing to exclude. The list is made once, when the config is resolved: the first
   * write of a document created later still costs one more rebuild. Plain `rollup.watch()` fixes
   * its watch filter before any plugin hook runs: there a written document still costs a second
   * rebuild.
   */
  watchExclusions(viteRoot: string): { build: { watch: { exclude: RegExp[] } } } | null {
    const { core } = this
    if (core.disk !== 'write') return null
    const project = loadProjectScope(core.options, viteRoot)
    if (project.error || !project.config) return null
    const documents = listProjectFiles(project.root, {
      exclude: project.config.sources.exclude,
      respectGitignore: project.config.sources.respect_gitignore,
    })
      .map((relPath) => path.join(project.root, relPath))
      .filter((file) => project.isManaged(file))
    if (documents.length === 0) return null
    this.watch.ownDocuments(documents)
    // Both separators: bundlers test module ids with `/` (on Windows too), `path.join` gives `\`.
    return { build: { watch: { exclude: [exactPathsPattern([...new Set([...documents, ...documents.map(toPosixPath)])])] } } }
  }

  async buildEnd(context: BuildContext, error: Error | undefined): Promise<void> {
    const pending = this.backgroundStart
    this.backgroundStart = undefined
    this.core.dropIndexedReads()
    const outcome = pending ? await pending : undefined
    if (!context.meta.watchMode) this.persistSoon()
    if (!outcome) return
    if (error) return // the build failed already (a managed module reported the same start error)
    if ('failure' in outcome) {
      if (!(outcome.failure instanceof PluginStoppedError)) context.error(engineStartError(outcome.failure))
      return
    }
    reportValidation(context, outcome.diagnostics, this.core.logger, outcome.engine.root, { failOnError: true })
  }

  /** The job store's writes, in the next turn (the bundler renders meanwhile), off the build's path to its end. */
  private persistSoon(): void {
    const engine = this.core.lifecycle.current
    if (!engine) return
    setImmediate(() => {
      try {
        engine.persistCache()
      } catch {
        // the store reports its own failures (one warning) and turns itself off
      }
    })
  }
}
