/**
 * `insitu(options)`: the Vite (and Rollup) plugin. An adapter only: Vite/Rollup hooks in,
 * engine calls out.
 *
 * Contract:
 * - Managed documents (`include`/`exclude`, default insitu.toml's `[sources]`) are
 *   regenerated in `transform` (enforce `pre`, with a source map) and served regenerated for
 *   `?raw` imports in `load`; module rules run a transform capability on whole modules.
 * - Every result's dependencies drive watching (DESIGN.md's table): existing `fs:file:`
 *   files through `addWatchFile` (never a missing path); create/delete of files a glob or a
 *   folder covers, documents the index reads, and file dependencies through `hotUpdate`,
 *   which returns the affected modules so Vite propagates the update (the engine's cache is
 *   cleared first); git metadata through a watcher of our own (Vite ignores `.git`), live
 *   before the first module is served, that reloads the affected modules in every
 *   environment; in build watch mode, `watchChange` marks affected modules so
 *   `shouldTransformCachedModule` re-runs them, and what the bundler cannot see (files
 *   created or deleted in folders it does not watch, git metadata) goes through watchers of
 *   our own that mark the affected modules and wake the bundler (build-watcher.ts).
 * - The project config is read once, synchronously, at `configResolved` (plain Rollup: on
 *   first use), with the `root` option exactly that folder, else the nearest `insitu.toml`
 *   walking up from Vite's root; modules that are neither managed documents nor matched by a
 *   module rule are rejected before the engine (and its extensions' handshakes) is awaited.
 *   A bad config does not fail `configResolved`: it fails `buildStart` of a build, and in dev
 *   is logged and fails every managed module, with the file:line of the problem.
 * - Dev: a change of `insitu.toml`, an extension manifest or a file inside an extension
 *   folder restarts the server (`insitu: <file> changed, restarting server`).
 * - Dev: `/__insitu/` shows the engine's run records (inspector-page.ts); each plugin-caused
 *   update logs one line (update-log.ts); warnings and info reach the browser console through
 *   a client injected with `transformIndexHtml` (browser-diagnostics.ts).
 * - Diagnostics: errors fail the module with file:line, warnings go to `this.warn`.
 *   Validators run once per engine start, at `buildStart`: warnings `this.warn`, info the
 *   logger, errors fail a build and are logged by the dev server (which keeps serving). A
 *   plain build (no check, write or watch) does not wait at `buildStart`: the engine starts
 *   while the bundler resolves, and its start error or validators are reported at `buildEnd`,
 *   before any output is written.
 * - Lifecycle: the engine (and its extension processes) starts at `buildStart` or on first
 *   use and is reused across rebuilds; it stops at `closeServer`, `closeBundle` (when not
 *   watching) or `closeWatcher`, idempotently.
 * - Paths: Vite's module files and ids are POSIX (`C:/…` on Windows); module file paths the
 *   plugin builds or compares are absolute POSIX too.
 */
import fs from 'node:fs'
import path from 'node:path'
import MagicString from 'magic-string'
import type { Plugin, ViteDevServer } from 'vite'
import type { DocumentResult } from '../engine/render-document.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { InsituEngine, type AffectedResult, ownerFile, ownerQuery } from '../engine/engine.js'
import { createPathMatcher } from '../documents/project-files.js'
import { isInsideFolder } from '../documents/project-paths.js'
import { ConfigError, toPosixPath } from '../host/config.js'
import {
  engineStartError,
  locatedError,
  logEngineStartError,
  messageOf,
  type PluginLogger,
  PluginStoppedError,
  printErrorsOnce,
  type ReportingContext,
  reportDiagnostics,
  reportValidation,
} from './diagnostics.js'
import { type BuildWatcher, startBuildWatcher } from './build-watcher.js'
import { answerReadyClients, CLIENT_PATH, clientMiddleware, clientScriptTag, connectBrowserDiagnostics } from './browser-diagnostics.js'
import { INSPECTOR_PATH, inspectorMiddleware } from './inspector-page.js'
import { logPluginUpdates } from './update-log.js'
import { type GitWatcher, watchGitMetadata } from './git-watcher.js'
import { type InsituOptions, PLUGIN_NAME, resolveOptions } from './options.js'
import { loadProjectScope, type ProjectScope } from './project-scope.js'
import { cleanId, isSkippedId, moduleFile, moduleKey, NON_TEXT_QUERY, RAW_QUERY, SKIPPED_IDS } from './module-ids.js'
import { isRestartTrigger } from './restart-triggers.js'
import { devModuleGraphs, type DevModule, hasEnvironmentHotUpdate, watchCreateAndDelete } from './vite-compat.js'
import { onServerClosing } from './server-close.js'
import { watchTargets } from './watch-targets.js'
import { formatSyncReport, syncProject } from '../sync/sync-project.js'
import { renderText } from '../sync/sync-document.js'
import { type ChangePlan, DevUpdates } from './dev-updates.js'

interface WatchContext extends ReportingContext {
  addWatchFile(id: string): void
  meta?: { watchMode?: boolean }
}

export function insitu(userOptions: InsituOptions = {}): Plugin {
  const options = resolveOptions(userOptions)
  let viteRoot: string | undefined
  let logger: PluginLogger = consoleLogger
  let server: ViteDevServer | undefined
  let scope: ProjectScope | undefined
  let starting: Promise<InsituEngine> | undefined
  /** Aborts the engine start in progress (a close must not wait for a hanging handshake). */
  let startAbort: AbortController | undefined
  let engine: InsituEngine | undefined
  let gitWatcher: GitWatcher | undefined
  let buildWatcher: BuildWatcher | undefined
  /** Vite's absolute output folder (never watched in build watch mode). */
  let outDir: string | undefined
  let stopping: Promise<void> | undefined
  /** The engine whose validators have run (once per engine start). */
  let validated: InsituEngine | undefined
  let restarting: Promise<void> | undefined
  /** Config or manifest files whose errors stopped the engine from starting (editing one restarts the dev server). */
  const failedConfigFiles = new Set<string>()
  /** Dev: what to update for each change (early cutoff, write mode); one per engine. */
  let devUpdates: DevUpdates | undefined
  /** A plain build: the engine starting in the background and its validators' diagnostics, reported at `buildEnd`. */
  let backgroundStart: Promise<{ current: InsituEngine; diagnostics: Diagnostic[] } | { failure: unknown }> | undefined
  /** Dev: file events seen while the engine starts (its index may have been walked before them). */
  let eventsWhileStarting: { type: 'create' | 'update' | 'delete'; file: string }[] = []
  /** One plan per file event, shared by the environments `hotUpdate` runs for. */
  const eventPlans = new Map<string, Promise<ChangePlan | undefined>>()
  /** Build watch: when `watchChange` last reported each absolute path (the bundler saw it). */
  const reportedByBundler = new Map<string, number>()
  /** Build watch: modules (absolute POSIX files) whose cached transform must be redone (until they are transformed). */
  const staleModules = new Set<string>()

  /** The project config and module matchers, read once (plain Rollup: on first use). */
  const projectScope = (): ProjectScope => {
    scope ??= loadProjectScope(options, viteRoot ?? process.cwd())
    return scope
  }

  const createEngine = async (): Promise<InsituEngine> => {
    const project = projectScope()
    if (project.error) throw project.error
    try {
      return await InsituEngine.create({
        root: project.root,
        config: project.config,
        include: options.include,
        exclude: options.exclude,
        cache: options.cache,
        python: options.python,
        timeoutMs: options.timeout,
        logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m) },
        enableExtension: (name) => options.extensions[name],
        signal: startAbort?.signal,
      })
    } catch (error) {
      if (error instanceof ConfigError) failedConfigFiles.add(toPosixPath(path.resolve(error.file)))
      throw error
    }
  }

  const start = (): Promise<InsituEngine> => {
    if (stopping) return Promise.reject(new PluginStoppedError())
    if (!starting) startAbort = new AbortController()
    starting ??= createEngine().then(async (created) => {
      engine = created
      if (stopping) {
        void created.close().catch((error: unknown) => logger.error(`${PLUGIN_NAME}: ${messageOf(error)}`))
        throw new PluginStoppedError()
      }
      if (server) {
        const updates = new DevUpdates(created, { write: options.write, logger, prefix: PLUGIN_NAME })
        devUpdates = updates
        // Changes made while it started: the index learns them before anything is served.
        const early = eventsWhileStarting.splice(0)
        if (early.length > 0) {
          try {
            created.affected(early.map((event) => ({ type: event.type, path: event.file })))
          } catch (error) {
            logger.error(`${PLUGIN_NAME}: changes made while insitu started could not be processed: ${messageOf(error)}`)
          }
        }
        watchServer(server, created)
        // Serve nothing before git changes can be seen (a commit right after the first page load).
        await gitWatcher?.ready
        // Write mode: bring every document on disk up to date, in the background (modules are
        // served current by transform meanwhile; disk readers get a watcher event per write).
        if (options.write) {
          updates.syncAll().catch((error: unknown) => {
            if (!stopping) logger.error(`${PLUGIN_NAME}: writing documents back failed: ${messageOf(error)}`)
          })
        }
      }
      return created
    })
    return starting
  }

  /**
   * Stop the engine and the git watcher. Idempotent while it runs; once done, the next
   * `start()` starts afresh (Vite reuses an inline plugin object across server restarts).
   */
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await Promise.all([gitWatcher?.close(), buildWatcher?.close()])
      const running = starting ? await starting.catch(() => undefined) : undefined
      await running?.close()
    })().finally(() => {
      starting = undefined
      startAbort = undefined
      eventsWhileStarting = []
      engine = undefined
      devUpdates = undefined
      gitWatcher = undefined
      buildWatcher = undefined
      stopping = undefined
    })
    return stopping
  }

  const watchServer = (dev: ViteDevServer, current: InsituEngine): void => {
    if (!isInsideFolder(dev.config.root, current.root)) dev.watcher.add(current.root)
    // Extension programs outside the watched folders: their edits restart the server too.
    for (const { manifest } of current.host.extensions) {
      if (!isInsideFolder(dev.config.root, manifest.dir) && !isInsideFolder(current.root, manifest.dir)) dev.watcher.add(manifest.dir)
    }
    // One line per plugin-caused update, and warnings/info to the browser (update-log.ts, browser-diagnostics.ts).
    logPluginUpdates(current, (line) => logger.info(line))
    connectBrowserDiagnostics(dev.ws, current)
    watchGit(current, (affected) => {
      const updates = devUpdates
      if (!updates || affected.owners.length === 0) return
      updates
        .settle(affected, { file: null, depth: 0 })
        .then((plan) => reloadOwners(dev, plan.owners))
        .catch((error: unknown) => {
          logger.error(`${PLUGIN_NAME}: reloading modules after a git change failed: ${messageOf(error)}`)
        })
    })
  }

  /**
   * The git metadata watcher (Vite's and the bundlers' watchers ignore `.git`): each change
   * goes through `affected()`, then to `onAffected` (dev: reload the modules; build watch:
   * mark them stale and wake the bundler). Errors are logged, never thrown.
   */
  const watchGit = (current: InsituEngine, onAffected: (affected: AffectedResult) => void): void => {
    if (!current.gitPaths || gitWatcher) return
    gitWatcher = watchGitMetadata(
      current.gitPaths,
      (file) => current.isGitMetadata(file),
      (files) => {
        try {
          onAffected(current.affected(files.map((file) => ({ type: 'update' as const, path: file }))))
        } catch (error) {
          logger.error(`${PLUGIN_NAME}: a git change could not be processed: ${messageOf(error)}`)
        }
      },
      current.config.watch.debounce_ms,
      (error) => logger.error(`${PLUGIN_NAME}: git metadata watcher: ${error.message}`),
    )
  }

  /** Build watch: mark the affected modules stale; true when there are any. */
  const markStale = (current: InsituEngine, { owners }: AffectedResult): boolean => {
    for (const owner of owners) staleModules.add(moduleFile(current.root, ownerFile(owner)))
    return owners.length > 0
  }

  /** Build watch: our own watchers for what the bundler's cannot see (see build-watcher.ts). */
  const watchBuild = async (current: InsituEngine): Promise<void> => {
    if (buildWatcher) return
    const onError = (error: Error) => logger.error(`${PLUGIN_NAME}: build watcher: ${error.message}`)
    const watcher = startBuildWatcher({
      root: current.root,
      isExcluded: createPathMatcher(current.config.sources.exclude),
      ignoredDirs: outDir ? [outDir] : [],
      // What the bundler watches reaches watchChange too: handle each change once.
      onChange: (events) => markStale(current, current.affected(events.filter((event) => !seenByBundler(event.path)))),
      debounceMs: current.config.watch.debounce_ms,
      onError,
    })
    buildWatcher = watcher
    watchGit(current, (affected) => {
      if (markStale(current, affected)) watcher.wake()
    })
    await Promise.all([watcher.ready, gitWatcher?.ready])
  }

  /** Changes that arrive outside `hotUpdate`: reload the owners' modules in every environment. */
  const reloadOwners = async (dev: ViteDevServer, owners: readonly string[]): Promise<void> => {
    const current = engine
    if (!current) return
    const files = new Set(owners.map((owner) => moduleFile(current.root, ownerFile(owner))))
    for (const graph of devModuleGraphs(dev)) {
      for (const file of files) {
        for (const module of graph.getModulesByFile(file) ?? []) await graph.reloadModule(module)
      }
    }
  }

  /**
   * One file event, however it reaches the plugin (`hotUpdate` once per environment, Vite 5's
   * `handleHotUpdate` or watcher): planned once per event (dev-updates.ts). `'restart'` when
   * the event restarts the server, undefined when the engine is not running.
   */
  const fileEvent = (type: 'create' | 'update' | 'delete', file: string, timestamp: number): 'restart' | Promise<ChangePlan | undefined> => {
    if (server && restartFor(server, file)) return 'restart'
    const key = `${type}\u0000${file}\u0000${timestamp}`
    let plan = eventPlans.get(key)
    if (!plan) {
      // A failure is logged once per event, however many environments await the plan.
      plan = devUpdates ? devUpdates.changed(type, file).catch((error: unknown) => failedPlan(file, error)) : Promise.resolve(undefined)
      // Not started yet: nothing is served, but the index must not miss the change.
      if (!devUpdates && starting && !stopping) eventsWhileStarting.push({ type, file })
      eventPlans.set(key, plan)
      // Every environment runs within the same event loop turn sequence; keep the map small.
      setTimeout(() => eventPlans.delete(key), 10_000).unref()
    }
    return plan
  }

  /**
   * The modules to update for an event: Vite's own (none when the plan suppresses them: the
   * echo of the plugin's own write) plus every module of each planned owner's file;
   * undefined (Vite's own, untouched) when the plan adds nothing.
   */
  const modulesToUpdate = <M extends DevModule>(
    own: readonly M[],
    plan: ChangePlan,
    getModulesByFile: (file: string) => Set<M> | undefined,
  ): M[] | undefined => {
    const current = engine
    if (!current || (plan.owners.length === 0 && !plan.suppressOwn)) return undefined
    const modules = new Set(plan.suppressOwn ? [] : own)
    for (const owner of plan.owners) {
      for (const module of getModulesByFile(moduleFile(current.root, ownerFile(owner))) ?? []) modules.add(module)
    }
    return [...modules]
  }

  /**
   * Dev: restart the server when `file` is the project config, an extension manifest or an
   * extension's program. True when it is (the change is then the restart's business).
   */
  const restartFor = (dev: ViteDevServer, file: string): boolean => {
    const project = scope
    if (!project) return false
    const triggers = {
      configFiles: [project.configFile, ...failedConfigFiles],
      root: project.root,
      extensions: engine?.host.extensions.map((e) => e.manifest) ?? [],
    }
    if (!isRestartTrigger(file, triggers)) return false
    if (!restarting) {
      logger.info(`insitu: ${path.posix.relative(toPosixPath(dev.config.root), toPosixPath(path.resolve(file)))} changed, restarting server`)
      restarting = dev
        .restart()
        .catch((error: unknown) => logger.error(`${PLUGIN_NAME}: server restart failed: ${messageOf(error)}`))
        .finally(() => {
          restarting = undefined
        })
    }
    return true
  }

  /** Whether the current run watches files (dev, or a build in watch mode): else addWatchFile is wasted work. */
  const watching = (context: WatchContext): boolean => server !== undefined || context.meta?.watchMode === true

  const recordWatchFiles = (context: WatchContext, current: InsituEngine, dependencies: readonly string[]): void => {
    if (!watching(context)) return
    const buildWatch = !server
    for (const dependency of dependencies) {
      for (const file of watchTargets(current, dependency, buildWatch)) if (fs.existsSync(file)) context.addWatchFile(file)
    }
  }

  /**
   * Build watch: whether `watchChange` already reported `file` (so the bundler rebuilds for it
   * anyway). Our own watcher reports a little later (see build-watcher.ts): a change the bundler
   * also saw is handled once; one it missed (a folder it stopped watching, a watcher not ready
   * yet) is still handled. At worst a change costs one extra rebuild, never a missed one.
   */
  const seenByBundler = (file: string): boolean => {
    const at = reportedByBundler.get(path.resolve(file))
    return at !== undefined && Date.now() - at < BUNDLER_REPORT_WINDOW_MS
  }

  /** Render a document's text as served (a BOM kept, see renderText), recording watch files and reporting diagnostics. */
  const renderManaged = async (
    context: WatchContext,
    current: InsituEngine,
    file: string,
    code: string,
    query: string,
  ): Promise<{ result: DocumentResult; text: string; edits: DocumentResult['edits'] }> => {
    const rendered = await renderText(current, file, code, query)
    recordWatchFiles(context, current, rendered.result.dependencies)
    reportDiagnostics(context, file, rendered.result.diagnostics, logger, current.root)
    return rendered
  }

  /** A change that could not be planned: logged, and Vite's own update goes ahead. */
  const failedPlan = (file: string, error: unknown): undefined => {
    if (!stopping) logger.error(`${PLUGIN_NAME}: handling the change of ${file} failed: ${messageOf(error)}`)
    return undefined
  }

  const startFor = async (context: ReportingContext): Promise<InsituEngine> => {
    try {
      return await start()
    } catch (error) {
      if (isClosing(error)) throw error // Vite drops the request quietly
      return context.error(engineStartError(error))
    }
  }

  return {
    name: PLUGIN_NAME,
    enforce: 'pre',

    configResolved(config) {
      viteRoot = config.root
      outDir = path.resolve(config.root, config.build.outDir)
      const vite = config.logger
      logger = {
        info: (m) => vite.info(m, { timestamp: true }),
        warn: (m) => vite.warn(m, { timestamp: true }),
        error: (m, error) => vite.error(m, { timestamp: true, error }),
      }
      // Read once per resolved config (a restarted dev server resolves it again: edits apply).
      scope = loadProjectScope(options, config.root)
      failedConfigFiles.clear()
    },

    configureServer(dev) {
      server = dev
      printErrorsOnce(dev)
      // "Why did this re-run?" and the browser's diagnostics client (inspector-page.ts, browser-diagnostics.ts).
      dev.middlewares.use(CLIENT_PATH, clientMiddleware(() => dev.config.base))
      dev.middlewares.use(INSPECTOR_PATH, inspectorMiddleware(() => engine))
      answerReadyClients(dev.ws, () => engine)
      // As soon as closing starts (every Vite major, restarts too): fail the jobs in flight at
      // once, then stop the extensions; the close resolves once they are gone.
      onServerClosing(dev, (reason) => {
        startAbort?.abort(reason)
        void starting?.then((current) => current.abort(reason), () => undefined)
        return stop()
      })
      // A config above Vite's root that could not be read: watch it, so fixing it restarts the server.
      if (scope?.error && !isInsideFolder(dev.config.root, scope.configFile)) dev.watcher.add(scope.configFile)
      if (engine) watchServer(dev, engine)
      if (!hasEnvironmentHotUpdate(dev)) {
        // Vite 5: `handleHotUpdate` sees updates only; creates and deletes come from the watcher.
        watchCreateAndDelete(dev, (type, file) => {
          const plan = fileEvent(type, file, Date.now())
          if (plan === 'restart') return
          plan
            .then((planned) => planned && reloadOwners(dev, planned.owners))
            .catch((error: unknown) => {
              logger.error(`${PLUGIN_NAME}: reloading modules after ${path.basename(file)} changed failed: ${messageOf(error)}`)
            })
        })
      }
    },

    transformIndexHtml() {
      // Dev only: the client printing warnings and info in the browser console.
      if (server) return [clientScriptTag()]
    },

    async buildStart() {
      if (server) {
        // Dev: start in the background, so that modules insitu does not manage are served
        // at once; managed modules wait for the engine (and fail with its start error).
        start().then(
          (current) => {
            if (validated === current) return
            validated = current
            return current.host.validate().then((diagnostics) => {
              // Stopped meanwhile (closed, restarted): its validators' failures are no news.
              if (engine === current) reportValidation(this, diagnostics, logger, current.root, { failOnError: false })
            })
          },
          (error: unknown) => {
            if (!(error instanceof PluginStoppedError) && !isClosing(error)) logEngineStartError(logger, error)
          },
        ).catch((error: unknown) => logger.error(`${PLUGIN_NAME}: validation failed: ${messageOf(error)}`))
        return
      }
      const project = projectScope()
      if (project.error) return this.error(engineStartError(project.error))
      if (!options.check && !options.write && !this.meta.watchMode) {
        // A plain build: nothing must happen before modules load, so the engine (index,
        // extension handshakes) starts while the bundler resolves; managed modules wait for
        // it, and its validators are reported at buildEnd, before any output is written.
        backgroundStart = start().then(
          async (current) => {
            if (validated === current) return { current, diagnostics: [] }
            validated = current
            return { current, diagnostics: await current.host.validate() }
          },
          (failure: unknown) => ({ failure }),
        )
        return
      }
      let current: InsituEngine
      try {
        current = await start()
      } catch (error) {
        return this.error(engineStartError(error))
      }
      if (options.check) {
        // Check mode: nothing is written; any stale region or materialization fails the build.
        const report = await syncProject(current, { write: false })
        if (report.stale > 0 || report.failed > 0) return this.error(`insitu check failed:\n${formatSyncReport(report, 'check')}`)
      } else if (options.write) {
        // Write mode: every document on disk is current before any module loads (loaders that
        // read Markdown from disk see what transform serves). A failure fails the build.
        const report = await syncProject(current, { write: true })
        if (report.failed > 0) return this.error(`insitu sync failed:\n${formatSyncReport(report, 'sync')}`)
        if (report.written > 0) logger.info(`insitu: wrote ${report.written} of ${report.documents.length} documents`)
      }
      if (this.meta.watchMode) {
        // The bundler cannot see new files in folders it does not watch, nor git: wake it.
        await watchBuild(current)
        this.addWatchFile(buildWatcher!.wakeFile)
      }
      if (validated === current) return
      validated = current
      reportValidation(this, await current.host.validate(), logger, current.root, { failOnError: true })
    },

    load: {
      filter: { id: { include: RAW_QUERY, exclude: SKIPPED_IDS } },
      async handler(id) {
        if (!RAW_QUERY.test(id) || isSkippedId(id)) return null
        const file = cleanId(id)
        if (!projectScope().isManaged(file)) return null
        const current = await startFor(this)
        if (!current.isDocument(file)) return null
        const code = await fs.promises.readFile(file, 'utf8')
        if (watching(this)) this.addWatchFile(file)
        const rendered = await renderManaged(this, current, file, code, ownerQuery(id))
        return { code: `export default ${JSON.stringify(rendered.text)}`, map: NO_SOURCE_MAP }
      },
    },

    transform: {
      order: 'pre',
      // Never called for ?raw, ?url… (JS or URLs, not Markdown): no per-module crossing into JS.
      filter: { id: { exclude: [...SKIPPED_IDS, NON_TEXT_QUERY] } },
      async handler(code, id) {
        if (isSkippedId(id) || NON_TEXT_QUERY.test(id)) return null
        const file = cleanId(id)
        const project = projectScope()
        // Cheap rejection: neither a managed document nor a module rule's, so no engine wait.
        const managed = project.isManaged(file)
        if (!managed && !project.moduleRule(file)) return null
        const current = await startFor(this)
        // Transformed now (Rollup also re-runs modules whose watch files changed): no longer stale.
        staleModules.delete(moduleKey(id))
        if (managed && current.isDocument(file)) {
          // Code another plugin's `load` produced (Astro compiles Markdown there) is not the
          // document's Markdown: leave it untouched (write mode keeps the file itself current).
          // (Or the text a write-back of this plugin replaced after Vite read it: the disk moved on.)
          if (!(await isFileText(file, code)) && !devUpdates?.replacedText(file, code)) return null
          const rendered = await renderManaged(this, current, file, code, ownerQuery(id))
          if (!rendered.result.changed) return null
          const magic = new MagicString(code)
          for (const edit of rendered.edits) {
            if (edit.start === edit.end) magic.appendLeft(edit.start, edit.text)
            else magic.overwrite(edit.start, edit.end, edit.text)
          }
          // Word-boundary mappings for ordinary documents; line mappings for large ones, where
          // the finer map costs milliseconds per update and maps nothing anyone debugs.
          const hires = code.length > LINE_MAPS_ABOVE ? false : 'boundary'
          return { code: magic.toString(), map: magic.generateMap({ hires, source: file, includeContent: true }) }
        }
        const rule = project.moduleRule(file)
        if (!rule) return null
        let result
        try {
          result = await current.transformModule(file, code, { transform: rule.transform, options: rule.options }, ownerQuery(id))
        } catch (error) {
          if (isClosing(error)) throw error // Vite drops the request quietly
          return this.error(locatedError((error as Error).message, { file, line: 1, column: 0 }))
        }
        recordWatchFiles(this, current, result.dependencies)
        reportDiagnostics(this, file, result.diagnostics, logger, current.root)
        return { code: result.code, map: NO_SOURCE_MAP }
      },
    },

    async hotUpdate(update) {
      const planned = fileEvent(update.type, update.file, update.timestamp)
      if (planned === 'restart') return []
      const plan = await planned
      if (!plan) return
      const graph = this.environment.moduleGraph
      return modulesToUpdate(update.modules, plan, (file) => graph.getModulesByFile(file))
    },

    /** Vite 5 only (Vite 6+ calls `hotUpdate` instead): updates; creates and deletes come from the watcher. */
    async handleHotUpdate(context) {
      const dev = context.server
      const planned = fileEvent('update', context.file, context.timestamp)
      if (planned === 'restart') return []
      const plan = await planned
      if (!plan) return
      const graph = devModuleGraphs(dev)[0]!
      return modulesToUpdate(context.modules, plan, (file) => graph.getModulesByFile(file) as Set<(typeof context.modules)[number]> | undefined)
    },

    watchChange(id, change) {
      // The dev server reports changes through hotUpdate; this is for build watch and Rollup.
      if (server || !engine) return
      if (buildWatcher && path.resolve(id) === buildWatcher.wakeFile) return
      reportedByBundler.set(path.resolve(id), Date.now())
      if (reportedByBundler.size > 10_000) reportedByBundler.clear()
      const current = engine
      const type = change.event === 'create' ? 'create' : change.event === 'delete' ? 'delete' : 'update'
      if (type === 'delete') current.forget(id)
      for (const owner of current.affected([{ type, path: id }]).owners) staleModules.add(moduleFile(current.root, ownerFile(owner)))
    },

    async buildEnd(error) {
      const pending = backgroundStart
      backgroundStart = undefined
      if (!pending) return
      const outcome = await pending
      if (error) return // the build failed already (a managed module reported the same start error)
      if ('failure' in outcome) {
        if (!(outcome.failure instanceof PluginStoppedError)) this.error(engineStartError(outcome.failure))
        return
      }
      reportValidation(this, outcome.diagnostics, logger, outcome.current.root, { failOnError: true })
    },

    renderStart(outputOptions) {
      // Rollup names its output only now: what it writes there is no change of the project's.
      const output = outputOptions.dir ?? (outputOptions.file ? path.dirname(outputOptions.file) : undefined)
      if (output) buildWatcher?.ignore(output)
    },

    shouldTransformCachedModule({ id }) {
      const file = moduleKey(id)
      if (!staleModules.has(file)) return null
      staleModules.delete(file)
      return true
    },

    async closeServer() {
      await stop()
    },

    async closeBundle() {
      if (!server && !this.meta.watchMode) await stop()
    },

    async closeWatcher() {
      await stop()
    },
  }
}

/** Whether `error` is the server closing (Vite's `ERR_CLOSED_SERVER`: an outdated request, not a failure). */
function isClosing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_CLOSED_SERVER'
}

/**
 * Whether `code` is the file's own text (Vite read it from disk, no plugin's `load` replaced
 * it). A BOM Vite dropped still counts as the same text.
 */
async function isFileText(file: string, code: string): Promise<boolean> {
  let text: string
  try {
    text = await fs.promises.readFile(file, 'utf8')
  } catch {
    return false
  }
  return text === code || (text.charCodeAt(0) === 0xfeff && text.slice(1) === code)
}

/**
 * "This code has no source": with `map: null` Vite's dev server generates an identity source map
 * of the whole served module (word-boundary resolution: milliseconds for a large document on
 * every request); an empty map is what its own `?raw` loader returns.
 */
const NO_SOURCE_MAP = { mappings: '' } as const

/** Documents longer than this (UTF-16 code units) get line-level source maps. */
const LINE_MAPS_ABOVE = 64 * 1024

/** How long a `watchChange` report keeps the plugin's own watcher from handling the same path. */
const BUNDLER_REPORT_WINDOW_MS = 2_000

const consoleLogger: PluginLogger = {
  info: (m) => console.info(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
}
