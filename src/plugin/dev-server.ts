/**
 * The dev server's side of the plugin: what a file event updates, write-back through the live
 * sync, git reloads, restarts, and the browser-facing extras.
 *
 * Contract:
 * - `configure(server)` (configureServer): the inspector (`/__insitu/`) and browser-diagnostics
 *   middlewares, errors printed once, the server's `DevFailures` (dev-failures.ts: a failing
 *   document stays served; its failures are printed once, sent to the overlay and the browser
 *   console, and cleared when fixed; an engine that cannot start is told the same way), the close hook (as soon as closing starts, the engine's
 *   start and jobs are aborted and it stops; the close resolves once extensions are gone), the
 *   Vite 5 watcher for creates and deletes, and a watch on a broken config above the root.
 * - `buildStart(context)`: the engine starts in the background (modules insitu does not manage
 *   are served at once; managed ones wait for it); its validators run once per engine; a start
 *   failure is logged once (diagnostics.ts).
 * - Once an engine has started (`prepare`, before any module is served): a `LiveSync` in the
 *   core's disk mode (src/sync/live-sync.ts; in 'check' and 'none' nothing is ever written);
 *   file events seen while it started reach its index; the server watches the project root and
 *   extension folders outside Vite's root; one log line per plugin-caused update and warnings
 *   to the browser; the git metadata watcher is ready (a commit right after the first page load
 *   is seen); in write mode every stale document is written back, in the background; a query
 *   process the engine's start left for later (its index as its snapshot left it) starts
 *   `QUERY_PROCESS_AFTER_MS` after the start, or at once when files changed while it started.
 * - `hotUpdate` / `handleHotUpdate` (Vite 6+ per environment / Vite 5): one `ChangePlan` per file
 *   event, shared by every environment. The hook is ordered `post` (plugin.ts): it sees what Vite
 *   and the other plugins' hooks gave (VitePress 2 adds a page's own module on each event of its
 *   file), and only hooks ordered `post` themselves (Astro's `astro:hmr-reload`) see what it
 *   returns. The modules to update are those (none of the event's own file, nor their
 *   importers, when the plan says `suppressOwn`: the echo of the plugin's own write, or a save
 *   already handled, `withoutEchoedFile`; never the graph node of a file only the affected
 *   owners' modules watch and nothing ever transformed, so an early cutoff sends nothing:
 *   `noteServed` records what was) plus every module of each planned owner's file, each of those
 *   invalidated first as a changed file's are (a request of it in flight, which read the inputs
 *   before the change, is not kept: Vite counts only such a plain invalidation, not its HMR
 *   update's). A change of `insitu.toml`, an extension manifest or an extension's program
 *   restarts the server instead, once such events pause, naming the files that really changed
 *   (`insitu: <file> changed, restarting server`; an editor's temporary file renamed over the
 *   file is not named: `ServerRestarts`).
 * - A change no watcher event told: Vite's watcher reports nothing of an edit made in a server's
 *   first moments, after the index read the file and before the watcher watched it (issue #38:
 *   measured up to a second at 10,000 files; any work blocking the event loop while the watcher
 *   sets up widens it). `DISK_CHECKS_MS` after the engine's start, the index is compared with
 *   the disk (`DocumentIndex.diskChangeSteps`, in steps that let requests run between them:
 *   documents whose bytes changed, paths created or gone; not what changed in the last
 *   `UNSETTLED_MS`, whose event may be on its way) and each difference is emitted on Vite's
 *   watcher (`change`, `add`, `unlink`, and `all`, as chokidar does), so Vite and every plugin
 *   handle it as any change. Files only a region reads (an include) are read on a page's
 *   request, as Vite reads its modules, and are not compared.
 * - A managed document the user edited is rendered in the background once its event is planned
 *   (`renderEditedDocument`; in write mode the plan's sync renders it), so a failure the edit
 *   causes is told when it happens, not at the page's next request.
 * - A plan that fails (`LiveSync.changed` throws: the index refresh, say) is logged once per event
 *   with the file, and the event still updates every owner that may read the file
 *   (`LiveSync.fallback`: the dependency graph alone, the index's readers included, decided as
 *   any change's owners); when even that fails, every module is invalidated and every page
 *   reloaded (`failedPlan`). No page is left showing what the file held before, silently.
 * - A change Vite's watcher dropped inside its 50 ms throttle (one guard per server,
 *   dropped-changes.ts, closed with that server), or a racing save the live sync put back into
 *   place, is emitted on Vite's watcher as a `change`, so Vite and every plugin handle it as usual.
 * - Git changes and Vite 5's creates and deletes reload the planned owners' modules in every
 *   module graph (vite-compat.ts). A server without HMR (`server.hmr: false`, as Astro's content
 *   sync makes) runs no hot-update hook: its watcher's events are planned the same way (write
 *   mode keeps writing), and the owners' modules are invalidated for the next request.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { HotUpdateOptions, Plugin, ViteDevServer } from 'vite'
import { type InsituEngine, ownerFile, ownerQuery } from '../engine/engine.js'
import { renderText } from '../sync/sync-document.js'
import { readBounded } from '../documents/input-limits.js'
import type { FileEventType } from '../engine/dependency-graph.js'
import { isInsideFolder } from '../documents/project-paths.js'
import { guardDroppedChanges } from '../sync/dropped-changes.js'
import { type GitWatcher, watchEngineGit } from '../sync/git-watcher.js'
import { type ChangePlan, LiveSync } from '../sync/live-sync.js'
import { answerReadyClients, CLIENT_PATH, clientMiddleware, clientScriptTag, connectBrowserDiagnostics } from './browser-diagnostics.js'
import { DevFailures } from './dev-failures.js'
import { logEngineStartError, messageOf, PluginStoppedError, printErrorsOnce, type ReportingContext, reportValidation } from './diagnostics.js'
import { INSPECTOR_PATH, inspectorMiddleware } from './inspector-page.js'
import { isSkippedId, moduleFile, moduleKey } from './module-ids.js'
import { PLUGIN_NAME } from './options.js'
import { isClosing, type PluginCore } from './plugin-core.js'
import { isRestartTrigger, ServerRestarts } from '../sync/restart-triggers.js'
import { onServerClosing } from './server-close.js'
import { logPluginUpdates } from './update-log.js'
import {
  browserChannel,
  type DevModule,
  type DevModuleGraph,
  devModuleGraphs,
  hasEnvironmentHotUpdate,
  hasHotUpdates,
  reloadEveryPage,
  watchFileEvents,
} from './vite-compat.js'

type HandleHotUpdate = Extract<Plugin['handleHotUpdate'], (...args: never[]) => unknown>
type HmrContext = Parameters<HandleHotUpdate>[0]
type HotUpdateEnvironment = { moduleGraph: Pick<DevModuleGraph, 'getModulesByFile' | 'invalidateModule'> }
/**
 * What one file event came to: its `ChangePlan` (a failed plan's fallback included, see
 * `failedPlan`), `'reloaded'` (every page was reloaded instead: the hooks send nothing more),
 * or undefined (the engine is not running, or stopping: Vite's own update goes ahead).
 */
type EventPlan = ChangePlan | 'reloaded' | undefined

/**
 * Milliseconds after the engine's start at which its index is compared with the disk: once Vite's
 * watcher has surely set up (edits up to about a second into a start at 10,000 files went
 * unreported), and again later for a start slowed down by a busy machine; each time leaving out
 * what changed in the last `UNSETTLED_MS`.
 */
const DISK_CHECKS_MS = [2_000, 6_000]

/** A file modified this recently is left to the watcher's event, which may be on its way (not told twice). */
const UNSETTLED_MS = 1_000

/**
 * Milliseconds after the engine's start at which a query process its start left for later
 * (`EngineOptions.deferQueryProcess`) starts: after a dev server's first response at 1,000
 * documents (about 0.5 s from the process's start here), long before a user's first edit.
 */
const QUERY_PROCESS_AFTER_MS = 1_000

export class DevServerSession {
  private server: ViteDevServer | undefined
  private liveSync: LiveSync | undefined
  private gitWatcher: GitWatcher | undefined
  /** File events seen while the engine starts (its index may have been walked before them). */
  private eventsWhileStarting: { type: FileEventType; file: string }[] = []
  /** One plan per file event, shared by the environments `hotUpdate` runs for. */
  private readonly eventPlans = new Map<string, Promise<EventPlan>>()
  /** Announces and runs restarts once a trigger's events settle (restart-triggers.ts). */
  private restarts: ServerRestarts | undefined
  /**
   * Every module id this plugin's `transform` was called for: a served module, never a node
   * that only stands for a watched file (`withoutWatchNodes`; Vite clears a module's transform result
   * before the hot-update hooks run, so the graph cannot tell the two apart then).
   */
  private readonly servedIds = new Set<string>()
  /** Per served file (absolute POSIX), the query of the first id served: a background render renders as that id. */
  private readonly servedQueries = new Map<string, string>()
  /** How this server tells failing documents (dev-failures.ts); one per configured server. */
  private failures: DevFailures | undefined
  /** The pending comparisons of the index with the disk (see the contract). */
  private diskChecks: NodeJS.Timeout[] = []
  /** Cancels the pending start of the query process a start left for later (`startQueryProcessLater`). */
  private cancelQueryProcessStart: (() => void) | undefined

  constructor(private readonly core: PluginCore) {
    core.lifecycle.onStart((engine) => this.prepare(engine))
    core.lifecycle.onStop(async () => {
      for (const timer of this.diskChecks.splice(0)) clearTimeout(timer)
      this.cancelQueryProcessStart?.()
      this.liveSync?.close()
      await this.gitWatcher?.close()
      this.liveSync = undefined
      this.gitWatcher = undefined
      this.eventsWhileStarting = []
    })
  }

  configure(dev: ViteDevServer): void {
    this.server = dev
    this.core.serving = true
    const { lifecycle } = this.core
    this.restarts?.cancel()
    this.restarts = new ServerRestarts({
      root: dev.config.root,
      restart: () => dev.restart(),
      log: (message) => this.core.logger.info(message),
      error: (message) => this.core.logger.error(`${PLUGIN_NAME}: ${message}`),
    })
    printErrorsOnce(dev)
    const failures = new DevFailures({ send: (payload) => browserChannel(dev).send(payload) }, this.core.logger, {
      // Write mode: a document's failure is told at the lines of the file written (its echo's render).
      deferRewrites: this.core.disk === 'write',
    })
    this.failures = failures
    // "Why did this re-run?" and the browser's diagnostics client (inspector-page.ts, browser-diagnostics.ts).
    dev.middlewares.use(CLIENT_PATH, clientMiddleware(() => dev.config.base))
    dev.middlewares.use(INSPECTOR_PATH, inspectorMiddleware(() => lifecycle.current))
    answerReadyClients(dev.ws, () => lifecycle.current, (client) => failures.answerReady(client))
    // As soon as closing starts (every Vite major, restarts too): fail the jobs in flight at
    // once, then stop the extensions; the close resolves once they are gone.
    // Vite's watcher drops a second change of a path within its 50 ms throttle, for good: report
    // such a change all the same, so Vite and every plugin handle it (dropped-changes.ts). One
    // guard per server, closed with it (a restart configures the next server before this one closes).
    const watchOptions = dev.config.server.watch
    const dropped = guardDroppedChanges((file) => dev.watcher.emit('change', file), {
      pollIntervalMs: watchOptions?.usePolling ? (watchOptions.interval ?? 100) : 0,
    })
    onServerClosing(dev, async (reason) => {
      dropped.close()
      this.restarts?.cancel()
      lifecycle.abort(reason)
      try {
        await lifecycle.stop()
      } finally {
        // The same plugin object may build next (Astro runs a dev server to sync its content
        // collections, then `vite build`): once its server is closed, its hooks are a build's.
        if (this.server === dev) {
          this.server = undefined
          this.core.serving = false
        }
      }
    })
    // A config above Vite's root that could not be read: watch it, so fixing it restarts the server.
    const scope = this.core.loadedScope
    if (scope?.error && !isInsideFolder(dev.config.root, scope.configFile)) dev.watcher.add(scope.configFile)
    dev.watcher.on('change', (file: string, stats?: fs.Stats) => dropped.reported(path.resolve(file), stats))
    if (lifecycle.current) this.watchServer(dev, lifecycle.current)
    // Vite 5's `handleHotUpdate` sees updates only: creates and deletes come from the watcher.
    // Without HMR no hot-update hook runs at all: every event does (vite-compat.ts).
    const fromWatcher = !hasHotUpdates(dev) ? (['create', 'update', 'delete'] as const) : !hasEnvironmentHotUpdate(dev) ? (['create', 'delete'] as const) : []
    if (fromWatcher.length > 0) {
      watchFileEvents(
        dev,
        (type, file) => {
          const plan = this.fileEvent(type, file, Date.now())
          if (plan === 'restart') return
          plan
            .then((planned) => (planned && planned !== 'reloaded' ? this.reloadOwners(dev, planned.owners) : undefined))
            .catch((error: unknown) => {
              this.core.logger.error(`${PLUGIN_NAME}: reloading modules after ${path.basename(file)} changed failed: ${messageOf(error)}`)
            })
        },
        fromWatcher,
      )
    }
  }

  /** The browser-diagnostics client tag (dev only). */
  clientTags(): ReturnType<typeof clientScriptTag>[] | undefined {
    return this.server ? [clientScriptTag()] : undefined
  }

  buildStart(context: ReportingContext): void {
    const { lifecycle, logger } = this.core
    lifecycle
      .start()
      .then(
        (engine) =>
          lifecycle.validateOnce(engine)?.then((diagnostics) => {
            // Stopped meanwhile (closed, restarted): its validators' failures are no news.
            if (lifecycle.current === engine) reportValidation(context, diagnostics, logger, engine.root, { failOnError: false })
          }),
        (error: unknown) => {
          if (error instanceof PluginStoppedError || isClosing(error)) return
          logEngineStartError(logger, error)
          this.failures?.reportStartFailure(error)
        },
      )
      .catch((error: unknown) => logger.error(`${PLUGIN_NAME}: validation failed: ${messageOf(error)}`))
  }

  /** A document was served as it is because the engine could not start (serve-document.ts): show why. */
  startFailed(error: unknown): void {
    if (error instanceof PluginStoppedError || isClosing(error)) return
    this.failures?.reportStartFailure(error)
  }

  /** `transform` was called for `id` (see `servedIds`). */
  noteServed(id: string): void {
    this.servedIds.add(id)
    this.noteLoaded(id)
  }

  /** `load` was called for `id` (a `?raw` document): its query is the one a background render uses. */
  noteLoaded(id: string): void {
    const file = moduleKey(id)
    if (!this.servedQueries.has(file)) this.servedQueries.set(file, ownerQuery(id))
  }

  /** Whether `text` is what the plugin's last write of `file` replaced (transform still serves it as Markdown). */
  replacedText(file: string, text: string): boolean {
    return this.liveSync?.replacedText(file, text) ?? false
  }

  async hotUpdate(environment: HotUpdateEnvironment, update: HotUpdateOptions): Promise<DevModule[] | undefined> {
    const planned = this.fileEvent(update.type, update.file, update.timestamp)
    if (planned === 'restart') return []
    const plan = await planned
    if (!plan) return
    if (plan === 'reloaded') return []
    return this.modulesToUpdate<DevModule>(update.file, update.modules, plan, environment.moduleGraph)
  }

  /** Vite 5 only (Vite 6+ calls `hotUpdate` instead): updates; creates and deletes come from the watcher. */
  async handleHotUpdate(context: HmrContext): Promise<HmrContext['modules'] | undefined> {
    const planned = this.fileEvent('update', context.file, context.timestamp)
    if (planned === 'restart') return []
    const plan = await planned
    if (!plan) return
    if (plan === 'reloaded') return []
    type Module = HmrContext['modules'][number]
    const graph = devModuleGraphs(context.server)[0]!
    return this.modulesToUpdate<Module>(context.file, context.modules, plan, {
      getModulesByFile: (file) => graph.getModulesByFile(file) as Set<Module> | undefined,
      invalidateModule: (module) => graph.invalidateModule(module),
    })
  }

  /** Once per started engine, before anything is served (see the contract). */
  private async prepare(engine: InsituEngine): Promise<void> {
    const dev = this.server
    if (!dev) return
    const { logger } = this.core
    this.liveSync = new LiveSync(engine, {
      disk: this.core.disk,
      logger,
      prefix: PLUGIN_NAME,
      // A racing save put back into place: Vite and every plugin handle it as any change.
      onMissedChange: (file) => dev.watcher.emit('change', path.resolve(file)),
      onSynced: (document) => this.failures?.settled(document.path, document),
    })
    // Changes made while it started: the index learns them before anything is served.
    const early = this.eventsWhileStarting.splice(0)
    if (early.length > 0) {
      // What changed meanwhile will likely be queried for: no later start of the query process.
      engine.startQueryProcess()
      try {
        engine.affected(early.map((event) => ({ type: event.type, path: event.file })))
      } catch (error) {
        logger.error(`${PLUGIN_NAME}: changes made while insitu started could not be processed: ${messageOf(error)}`)
      }
    }
    this.watchServer(dev, engine)
    this.checkDiskLater(dev, engine)
    this.startQueryProcessLater(engine)
    // Serve nothing before git changes can be seen (a commit right after the first page load).
    await this.gitWatcher?.ready
    // Write mode: bring every document on disk up to date, in the background (modules are
    // served current by transform meanwhile; disk readers get a watcher event per write).
    const live = this.liveSync
    live.syncAll().catch((error: unknown) => {
      if (!this.core.lifecycle.isStopping) logger.error(`${PLUGIN_NAME}: writing documents back failed: ${messageOf(error)}`)
    })
  }

  /**
   * A start that left the query sandbox's process for later (`EngineOptions.deferQueryProcess`:
   * its first pages need no query, and a process booting beside Vite's own start slows it): it
   * starts `QUERY_PROCESS_AFTER_MS` after the engine's start, so that an edit's first query does
   * not wait for one to boot. A query before then starts one itself. (Vite's watcher's `ready`
   * is no later signal: it is told before the engine starts even at 1,000 documents, while Vite
   * still works towards the first response.)
   */
  private startQueryProcessLater(engine: InsituEngine): void {
    this.cancelQueryProcessStart?.()
    const timer = setTimeout(() => {
      this.cancelQueryProcessStart = undefined
      if (this.core.lifecycle.current === engine && !this.core.lifecycle.isStopping) engine.startQueryProcess()
    }, QUERY_PROCESS_AFTER_MS)
    timer.unref()
    this.cancelQueryProcessStart = () => {
      clearTimeout(timer)
      this.cancelQueryProcessStart = undefined
    }
  }

  /** Compares the index with the disk `DISK_CHECKS_MS` after the start; each difference goes to Vite's watcher (see the contract). */
  private checkDiskLater(dev: ViteDevServer, engine: InsituEngine): void {
    for (const delay of DISK_CHECKS_MS) {
      const timer = setTimeout(() => {
        this.diskChecks = this.diskChecks.filter((pending) => pending !== timer)
        this.checkDisk(dev, engine).catch((error: unknown) => {
          if (this.core.lifecycle.current === engine && !this.core.lifecycle.isStopping) {
            this.core.logger.error(`${PLUGIN_NAME}: comparing the document index with the disk failed: ${messageOf(error)}`)
          }
        })
      }, delay)
      timer.unref()
      this.diskChecks.push(timer)
    }
  }

  /** One comparison, in steps that let requests and events run between them (`diskChangeSteps`). */
  private async checkDisk(dev: ViteDevServer, engine: InsituEngine): Promise<void> {
    const live = () => this.core.lifecycle.current === engine && !this.core.lifecycle.isStopping
    if (!live()) return
    const steps = engine.index.diskChangeSteps({ settledBeforeMs: Date.now() - UNSETTLED_MS })
    let step = steps.next()
    while (!step.done) {
      await new Promise((resolve) => setImmediate(resolve))
      if (!live()) return
      step = steps.next()
    }
    for (const event of step.value) {
      // As chokidar reports a change: the event, then `all` (what listeners of every event hear).
      const name = event.type === 'create' ? 'add' : event.type === 'delete' ? 'unlink' : 'change'
      const file = path.resolve(engine.root, event.path)
      dev.watcher.emit(name, file)
      dev.watcher.emit('all', name, file)
    }
  }

  private watchServer(dev: ViteDevServer, engine: InsituEngine): void {
    if (!isInsideFolder(dev.config.root, engine.root)) dev.watcher.add(engine.root)
    // Extension programs outside the watched folders: their edits restart the server too.
    for (const { manifest } of engine.host.extensions) {
      if (!isInsideFolder(dev.config.root, manifest.dir) && !isInsideFolder(engine.root, manifest.dir)) dev.watcher.add(manifest.dir)
    }
    const { logger } = this.core
    // One line per plugin-caused update, and warnings/info to the browser (update-log.ts, browser-diagnostics.ts).
    // Failures are told once each, with their frame, by dev-failures.ts (not as update lines).
    logPluginUpdates(engine, { info: (line) => logger.info(line), error: (line) => logger.error(line) }, { failures: false })
    connectBrowserDiagnostics(dev.ws, engine)
    this.failures?.clearStartFailure()
    this.failures?.connect(engine)
    if (this.gitWatcher) return
    this.gitWatcher = watchEngineGit(
      engine,
      (affected) => {
        const live = this.liveSync
        if (!live || affected.owners.length === 0) return
        live
          .updatesFor(affected, { file: null, depth: 0 })
          .then((plan) => this.reloadOwners(dev, plan.owners))
          .catch((error: unknown) => logger.error(`${PLUGIN_NAME}: reloading modules after a git change failed: ${messageOf(error)}`))
      },
      (message) => logger.error(`${PLUGIN_NAME}: ${message}`),
    )
  }

  /**
   * Changes that arrive outside `hotUpdate`: reload the owners' modules in every environment
   * (invalidated first, see `modulesToUpdate`; without HMR that is all: the next request gets
   * them fresh).
   */
  private async reloadOwners(dev: ViteDevServer, owners: readonly string[]): Promise<void> {
    const engine = this.core.lifecycle.current
    if (!engine) return
    const files = new Set(owners.map((owner) => moduleFile(engine.root, ownerFile(owner))))
    const hot = hasHotUpdates(dev)
    for (const graph of devModuleGraphs(dev)) {
      for (const file of files) {
        const modules = [...(graph.getModulesByFile(file) ?? [])]
        for (const module of modules) {
          graph.invalidateModule(module)
          if (!hot) continue
          // A module another module of the same file imports (`docs/a.md`, the watch file of
          // `docs/a.md?raw`) is reloaded through that one: reloading both sends two updates.
          if (![...(module.importers ?? [])].some((importer) => modules.includes(importer))) await graph.reloadModule(module)
        }
      }
    }
  }

  /**
   * One file event, however it reaches the plugin (`hotUpdate` once per environment, Vite 5's
   * `handleHotUpdate` or watcher): planned once per event. `'restart'` when the event restarts
   * the server, undefined when the engine is not running.
   */
  private fileEvent(type: FileEventType, file: string, timestamp: number): 'restart' | Promise<EventPlan> {
    if (this.server && this.restartFor(type, file)) return 'restart'
    const key = `${type}\u0000${file}\u0000${timestamp}`
    let plan = this.eventPlans.get(key)
    if (!plan) {
      const live = this.liveSync
      // A failure is logged, and its fallback planned, once per event, however many environments await the plan.
      plan = live ? live.changed(type, file).catch((error: unknown) => this.failedPlan(live, type, file, error)) : Promise.resolve(undefined)
      // Not started yet: nothing is served, but the index must not miss the change.
      if (!live && this.core.lifecycle.starting) this.eventsWhileStarting.push({ type, file })
      this.eventPlans.set(key, plan)
      if (type !== 'delete') void plan.then((planned) => this.renderEditedDocument(file, planned))
      else {
        const relPath = this.core.lifecycle.current?.relativePath(file)
        if (relPath) this.failures?.forget(relPath)
      }
      // Every environment runs within the same event loop turn sequence; keep the map small.
      setTimeout(() => this.eventPlans.delete(key), 10_000).unref()
    }
    return plan
  }

  /**
   * A managed document the user edited, which a page requested before, is rendered now, in the
   * background, as the id it was requested as, not at the page's next request: a failure it
   * causes is told when it happens (dev-failures.ts), browser open or not, and the request that
   * follows is served from the cache. Not in write mode (the plan synced it already: its failures
   * are told with the sync), not for the echo of a write, not while stopping.
   */
  private renderEditedDocument(file: string, planned: EventPlan): void {
    const engine = this.core.lifecycle.current
    if (!engine || !planned || planned === 'reloaded' || planned.suppressOwn || this.core.disk === 'write') return
    if (this.core.lifecycle.isStopping || !engine.isDocument(file)) return
    // Rendered as a module id a page requested (no record appears for an id nobody did).
    const query = this.servedQueries.get(moduleKey(file))
    if (query === undefined) return
    setImmediate(() => {
      if (this.core.lifecycle.current !== engine || this.core.lifecycle.isStopping) return
      let text: string
      try {
        // Over the document limit: never read (its request says why: serve-document.ts).
        const bytes = readBounded(file)
        if (typeof bytes === 'number') return
        text = bytes.toString('utf8')
      } catch {
        return // gone meanwhile: its delete event follows
      }
      // Its run record tells any failure; an error here (stopping, say) is the request's to meet.
      renderText(engine, file, text, query, { prefetch: true }).catch(() => {})
    })
  }

  /**
   * A change that could not be planned (`LiveSync.changed` threw: the index refresh, a write-back,
   * anything outside a document's own diagnostics) must still reach the pages: for a file only
   * documents read (an included file, a task a SQL model reads) Vite has no module, so Vite's own
   * update alone sent nothing, and the documents kept what the file held before until the next
   * change. Logged once per event, with the file and what is done instead:
   * - the fallback plan (`LiveSync.fallback`): every owner `engine.mayBeAffected` finds (from
   *   the dependency graph alone; every reader of the index too, since whether its rows changed
   *   is unknown), decided as any change's owners (rendered, written back in write mode, early
   *   cutoff), then updated as any plan's (`modulesToUpdate`, `reloadOwners`: invalidated
   *   first), with Vite's own modules of the event. An index whose refresh threw keeps its rows
   *   from before: its readers render from those, and, their text unchanged, get no update;
   * - when even that throws: every module of every graph invalidated and every page that has
   *   Vite's client reloaded (`'reloaded'`: the hooks send nothing more for the event).
   * While stopping, or for the live sync of an engine a restart replaced: nothing more (Vite's
   * own update goes ahead).
   */
  private async failedPlan(live: LiveSync, type: FileEventType, file: string, error: unknown): Promise<EventPlan> {
    // Stopping, or the plan of a live sync a restart has replaced: nothing more.
    const current = () => !this.core.lifecycle.isStopping && this.liveSync === live
    if (!current()) return undefined
    const failure = `${PLUGIN_NAME}: handling the change of ${file} failed: ${messageOf(error)}`
    try {
      const plan = await live.fallback(type, file)
      if (current()) this.core.logger.error(`${failure}; updating every document that may read it`)
      return plan
    } catch (fallbackError) {
      if (!current()) return undefined
      this.core.logger.error(`${failure}; reloading every page (the documents that may read it are unknown: ${messageOf(fallbackError)})`)
      if (this.server) reloadEveryPage(this.server)
      return 'reloaded'
    }
  }

  /**
   * The modules to update for an event: Vite's own (none when the plan suppresses them; never
   * a file's node that only stands for the watch the owners' modules put on it, see
   * `withoutWatchNodes`) plus every module of each planned owner's file; undefined (Vite's own,
   * untouched) when the plan changes nothing.
   */
  private modulesToUpdate<M extends DevModule>(
    file: string,
    own: readonly M[],
    plan: ChangePlan,
    graph: { getModulesByFile(file: string): Set<M> | undefined; invalidateModule(module: M): void },
  ): M[] | undefined {
    const engine = this.core.lifecycle.current
    if (!engine) return undefined
    const modulesOf = (owner: string) => graph.getModulesByFile(moduleFile(engine.root, ownerFile(owner))) ?? []
    const ownerModules = plan.affected?.owners.flatMap((owner) => [...modulesOf(owner)]) ?? []
    const kept = plan.suppressOwn
      ? withoutEchoedFile(own, file, plan.announced === true ? graph.getModulesByFile(file) : undefined)
      : withoutWatchNodes(own, ownerModules, this.servedIds)
    if (plan.owners.length === 0 && !plan.suppressOwn && kept.length === own.length) return undefined
    const modules = new Set(kept)
    for (const owner of plan.owners) {
      for (const module of modulesOf(owner)) {
        // A request of it in flight now read the inputs before this change: Vite keeps such a
        // result only when no plain invalidation came meanwhile, and the one its HMR update
        // makes does not count (Vite's own files get theirs from the watcher, before any hook).
        graph.invalidateModule(module)
        modules.add(module)
      }
    }
    return [...modules]
  }

  /**
   * Restart the server when `file` is the project config, an extension manifest or an
   * extension's program. True when it is (the change is then the restart's business).
   */
  private restartFor(type: FileEventType, file: string): boolean {
    const project = this.core.loadedScope
    if (!project) return false
    const triggers = {
      configFiles: [project.configFile, ...this.core.failedConfigFiles],
      root: project.root,
      extensions: this.core.lifecycle.current?.host.extensions.map((e) => e.manifest) ?? [],
    }
    if (!isRestartTrigger(file, triggers)) return false
    this.restarts?.note(type, file)
    return true
  }
}

/**
 * A suppressed event (the echo of the plugin's own write, or a second report of one save): `own`
 * without the file's own modules, whichever plugin added them (the hook runs last), and, when
 * `announcedModules` (the file's modules) are given because an update reached them before (the
 * change that caused the write, or the first report; `ChangePlan.announced`), without their
 * importers too: Vite's propagation took that update to them. VitePress's pages that `@include`
 * the file import its watch node, and its `vitepress:hmr-fix` adds them again on every event of
 * the file. The echo of a start-up write keeps them: nothing updated them, and they may show
 * the stale text. What other plugins added for anything else stays theirs to update.
 */
function withoutEchoedFile<M extends DevModule>(own: readonly M[], file: string, announcedModules: Set<M> | undefined): M[] {
  const importers = new Set<DevModule>()
  for (const module of announcedModules ?? []) for (const importer of module.importers ?? []) importers.add(importer)
  return own.filter((module) => module.file !== file && !importers.has(module))
}

/**
 * `own` without the nodes that only stand for a watched file: a file handed to `addWatchFile`
 * (in a dev server only a `?raw` document's own file, by `load`, as Vite's own `?raw` loader
 * does; serve-document.ts) enters Vite's graph as a node imported by the modules that watch it,
 * which Vite would update through, whatever the plan decided (an edit that leaves the
 * document's output as it was, or a second report of one save, issue #17). Such a node's id
 * is its file (no query, not a dependency's), no module of that id was ever transformed
 * (`served`: Vite clears transform results before the hooks run, so only this plugin's own
 * record tells), and every module importing it is one of `ownerModules` (the affected owners'),
 * whose updates the plan decides. Any other node (a module served on its own, one imported with
 * a query, one a module outside the plan imports) stays Vite's.
 */
function withoutWatchNodes<M extends DevModule>(own: readonly M[], ownerModules: readonly DevModule[], served: ReadonlySet<string>): M[] {
  if (ownerModules.length === 0) return [...own]
  const owners = new Set(ownerModules)
  const standsForWatch = (module: M) =>
    module.id !== undefined &&
    module.id !== null &&
    module.file !== null &&
    moduleKey(module.id) === moduleKey(module.file) &&
    !module.id.includes('?') &&
    !isSkippedId(module.id) &&
    !served.has(module.id) &&
    module.importers !== undefined &&
    module.importers.size > 0 &&
    [...module.importers].every((importer) => owners.has(importer))
  return own.filter((module) => !standsForWatch(module))
}
