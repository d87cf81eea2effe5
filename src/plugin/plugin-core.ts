/**
 * What one `insitu()` call knows for its whole life, shared by the dev server, builds and the
 * document hooks: the resolved options, the disk mode, the logger, the project scope and the
 * engine's lifecycle.
 *
 * Contract:
 * - `disk` is `diskMode(options)`, decided once here (src/sync/disk-mode.ts: `check` wins over
 *   `write` in every server and build): "may this process write?" is `core.disk === 'write'`.
 * - `projectScope()`: the project config and module matchers, read once per resolved config
 *   (`configResolved`; plain Rollup: on first use), never throwing (project-scope.ts).
 * - `lifecycle` creates the engine from the scope and options (an unreadable config fails the
 *   start with its file:line; such files are remembered in `failedConfigFiles`, whose edits
 *   restart a dev server).
 * - `engineFor(context)`: the engine for a hook, failing the hook with the start error
 *   (`ERR_CLOSED_SERVER` is rethrown as is: Vite drops such requests quietly).
 * - `serving`: set while a dev server that configured the plugin is open (its hooks then run in
 *   dev mode); cleared when that server closes, so a plugin object reused by a build afterwards
 *   (Astro: a content-sync dev server, then `vite build`) runs its hooks as a build's.
 * - `keepsServingFailures`: the one place that decides what a failing job (template, SQL,
 *   extension, options, a region that does not parse) or an engine that cannot start does to its
 *   document's module: a dev server keeps serving the document (the failed region with its last
 *   good body, the failure told by dev-failures.ts); every build (plain, watch, Rollup), like
 *   `check`, `sync` and `INSITU_CHECK` on the command line, fails on it (issue #34).
 * - `keepIndexedReads()` (a plain build, before it starts the engine) until `dropIndexedReads()`
 *   (its `buildEnd`): the documents the engine's index reads while it starts are kept, text and
 *   job-free verdict, and `indexedRead(file)` hands them to `load` (issue #17: a cold build read
 *   and parsed every document twice). A build serves the text its index was built from. The
 *   texts are kept as UTF-8 bytes, outside V8's heap: a site's pages held through the bundling
 *   would raise the heap V8 lets grow before its next full collection (several times what it
 *   holds live then; issue #38), for a `?raw` import that most sites never make.
 * - `oneShotBuild` (set by a build's `buildStart`: it does not watch): its engine locates no git
 *   metadata (`EngineOptions.gitMetadata`: nothing hears file events there).
 */
import path from 'node:path'
import type { ResolvedConfig } from 'vite'
import { InsituEngine } from '../engine/engine.js'
import { isJobFreeRead } from '../engine/job-free.js'
import { ConfigError, toPosixPath } from '../host/config.js'
import { type DiskMode, diskMode } from '../sync/disk-mode.js'
import { engineStartError, type ReportingContext } from './diagnostics.js'
import { consoleLogger, type PluginLogger, viteLogger } from './plugin-logger.js'
import { EngineLifecycle } from './engine-lifecycle.js'
import { PLUGIN_NAME, type ResolvedOptions } from './options.js'
import { loadProjectScope, type ProjectScope } from './project-scope.js'

export class PluginCore {
  readonly disk: DiskMode
  readonly lifecycle: EngineLifecycle
  logger: PluginLogger = consoleLogger
  /** Vite's absolute output folder (never watched in build watch mode). */
  outDir: string | undefined
  /** Config or manifest files whose errors stopped the engine from starting (editing one restarts the dev server). */
  readonly failedConfigFiles = new Set<string>()
  serving = false
  private scope: ProjectScope | undefined
  private viteRoot: string | undefined
  /** Project-relative path → a document the starting engine's index read (`keepIndexedReads`). */
  private indexedReads: Map<string, KeptRead> | undefined
  /** The build starting now does not watch (builds.ts sets it at `buildStart`; a dev server never does). */
  oneShotBuild = false

  constructor(readonly options: ResolvedOptions) {
    this.disk = diskMode(options)
    this.lifecycle = new EngineLifecycle(
      (signal) => this.createEngine(signal),
      (message) => this.logger.error(`${PLUGIN_NAME}: ${message}`),
    )
  }

  projectScope(): ProjectScope {
    this.scope ??= loadProjectScope(this.options, this.viteRoot ?? process.cwd())
    return this.scope
  }

  /** The scope if it has been read (no read as a side effect). */
  get loadedScope(): ProjectScope | undefined {
    return this.scope
  }

  configResolved(config: ResolvedConfig): void {
    this.viteRoot = config.root
    this.outDir = path.resolve(config.root, config.build.outDir)
    this.logger = viteLogger(config.logger)
    // Read once per resolved config (a restarted dev server resolves it again: edits apply).
    this.scope = loadProjectScope(this.options, config.root)
    this.failedConfigFiles.clear()
  }

  /** See the contract: a dev server keeps a document with a failing job served; builds fail. */
  get keepsServingFailures(): boolean {
    return this.serving
  }

  keepIndexedReads(): void {
    this.indexedReads ??= new Map()
  }

  dropIndexedReads(): void {
    this.indexedReads = undefined
  }

  /** The document at `file` as the engine's index read it while starting (see the header), if kept. */
  indexedRead(file: string): IndexedRead | undefined {
    const reads = this.indexedReads
    if (reads === undefined || reads.size === 0) return undefined
    const relPath = this.projectScope().relativePath(file)
    const kept = relPath === null ? undefined : reads.get(relPath)
    return kept && { text: kept.bytes.toString('utf8'), jobFree: kept.jobFree }
  }

  async engineFor(context: ReportingContext): Promise<InsituEngine> {
    try {
      return await this.lifecycle.start()
    } catch (error) {
      if (isClosing(error)) throw error // Vite drops the request quietly
      return context.error(engineStartError(error))
    }
  }

  private async createEngine(signal: AbortSignal): Promise<InsituEngine> {
    const project = this.projectScope()
    if (project.error) throw project.error
    const { options } = this
    try {
      return await InsituEngine.create({
        root: project.root,
        config: project.config,
        include: options.include,
        exclude: options.exclude,
        cache: options.cache,
        python: options.python,
        timeoutMs: options.timeout,
        renderTimeoutMs: options.renderTimeout,
        logger: { info: (m) => this.logger.info(m), warn: (m) => this.logger.warn(m), error: (m) => this.logger.error(m) },
        enableExtension: (name) => options.extensions[name],
        signal,
        // Only for a plain build that keeps them: the index then reads every document (see the option).
        onDocumentRead:
          this.indexedReads && ((relPath, read) => this.indexedReads?.set(relPath, { bytes: Buffer.from(read.text, 'utf8'), jobFree: isJobFreeRead(read) })),
        // A build that does not watch hears no file events: no git metadata.
        gitMetadata: this.serving || !this.oneShotBuild,
        // Its index snapshot is written with the job results, once its modules are loaded (builds.ts).
        snapshotAtStart: this.serving || !this.oneShotBuild,
        // A dev server's first scan runs on another core while Vite binds its port and its
        // watcher scans the project (the first request awaits the engine).
        indexInWorker: this.serving,
        // A dev server whose index is as its snapshot left it serves its first pages from stored
        // results: its query process starts once the server's own start is over (dev-server.ts).
        deferQueryProcess: this.serving,
        // A build that does not watch may never query again once its modules are loaded: the
        // query process ends when left idle (a docs tool's page rendering runs without it).
        queryProcessIdleMs: this.serving || !this.oneShotBuild ? undefined : ONE_SHOT_QUERY_IDLE_MS,
      })
    } catch (error) {
      if (error instanceof ConfigError) this.failedConfigFiles.add(toPosixPath(path.resolve(error.file)))
      throw error
    }
  }
}

/** A document as the starting engine's index read it: its text, and whether it holds no job (job-free.ts). */
export interface IndexedRead {
  text: string
  jobFree: boolean
}

/** An `IndexedRead` as kept: its text as UTF-8 (the decoded text is valid Unicode: it round-trips, a BOM too). */
interface KeptRead {
  bytes: Buffer
  jobFree: boolean
}

/** Whether `error` is the server closing (Vite's `ERR_CLOSED_SERVER`: an outdated request, not a failure). */
export function isClosing(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_CLOSED_SERVER'
}

/** Milliseconds a one-shot build's query process is kept without a query (`EngineOptions.queryProcessIdleMs`). */
const ONE_SHOT_QUERY_IDLE_MS = 1000
