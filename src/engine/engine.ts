/**
 * The insitu engine: one project's host, document index, resources and builtins, with a
 * result cache and the reverse dependency index. Build-tool agnostic (no Vite import).
 *
 * Contract:
 * - `InsituEngine.create(options)` loads `insitu.toml` (see `readProjectConfig`; defaults when
 *   there is none), builds the document index, and starts the host with the builtins and the
 *   scheme resolvers plugged into `host.resource.get`. With `cache` (default) the index starts
 *   from its snapshot in `paths.state`, keyed by this package's version (document-index.ts);
 *   events on that file and its temporary files are ignored by `affected()`.
 * - `renderDocument(path, text, query?)` regenerates a managed document (see render-document.ts);
 *   `transformModule(path, code, rule, query?)` runs a transform on a whole module with the
 *   rule's options plus `content`. Both record the result's dependencies for `affected()` under
 *   the OWNER `<project-relative path>[?<query>]` — one record per module id, so a second id of
 *   the same file (`README.md?raw` beside `README.md`) never erases another's record; a re-run
 *   replaces that owner's previous dependencies, a failure keeps what it read. Results are
 *   cached per owner by input text, except a failed one (one whose failures all ran out of their
 *   time is kept: its inputs changing renders it again); a document's result is also served
 *   for its own output text (regeneration is idempotent), so rendering a file the plugin just
 *   wrote back runs no job. A change that arrives while a job runs and touches what it read
 *   makes it run again, so a result never misses an edit.
 * - Below the owner cache, every job (region, materialization, module transform) goes through
 *   the job memo (job-memo.ts, its invalidation rules in its header): a render re-runs only
 *   the jobs whose inputs changed and splices the others' memoized output (`JobResult.reused`),
 *   so a prose edit runs no job. A render that reused every job on an unchanged input returns
 *   the previous result object itself (early cutoff); `DocumentResult.outputHash` hashes the
 *   output. `stats` counts jobs run and reused since the start. With `cache` (default) job
 *   results persist in `<folder of paths.state>/jobs.db` (job-store.ts), written by
 *   `persistCache()` (a build calls it once its modules are loaded, off the path to its end) and
 *   on `close()`, with the index's snapshot (written at start too, unless `snapshotAtStart` is false).
 * - A project with SQL models gets the query sandbox's first process at its start (booting while
 *   the index is read), except a one-shot build that reuses its job store, and, with
 *   `deferQueryProcess`, a start whose index is as its snapshot left it and whose job store holds
 *   this config's results: those start one at their first query, or at `startQueryProcess()`.
 * - `affected(events)` refreshes the document index with the events, detects git metadata
 *   changes, marks every owner whose result may change (and the jobs whose dependencies the
 *   events touch) for a re-render, and returns those owners (`ownerFile(owner)` is the owner's
 *   project-relative file). When the index's rows kept their paths and changed only some
 *   columns, a document that would be affected only as a reader of the index, and none of whose
 *   jobs (as of its last render) can read one of those columns (job-memo.ts, rule 2), is not
 *   one (nor is a document whose own row changed, as before): a prose edit does not re-check
 *   every list of titles. Events on the job store's own files are ignored. Owners `except`
 *   accepts are neither marked nor returned (a document's own owners when the event is the
 *   echo of its own write-back). `lastOutputHash(owner)` survives it, for early cutoff: the
 *   hash of the text the owner was last rendered to, or last sent an update for
 *   (`noteOutputSent`), whichever came later.
 * - `mayBeAffected(events)`: the fallback when handling an event failed (`LiveSync.fallback`,
 *   for the dev server and the command line's watch): the same marking and return without
 *   refreshing the index, every reader of the index taken as affected (whether its rows changed
 *   is unknown). It throws once the engine is closed, as `affected()` does.
 * - `runRecords` (read-only outside the engine; see run-records.ts) records each owner's last
 *   run (jobs, provider, time, dependencies, diagnostics), each request served from the
 *   cache, and why `affected()` selected it: the file events or the git change.
 * - `regionStates(file, text, result)`: each region's state against what its inputs generate
 *   (region-states.ts); with `generations`, stale regions say which inputs changed and bodies
 *   edited by hand are told apart (generations.ts).
 * - `abort(reason)` makes every job in flight and every later one reject with `reason` at
 *   once (not cached, no diagnostics), without waiting for extensions. `close()` stops the
 *   extensions, writes the job store and closes the index; idempotent.
 */
import fs from 'node:fs'
import path from 'node:path'
import { errorDependencies } from '../documents/dependency-errors.js'
import { bodyOffsetOf } from '../documents/frontmatter.js'
import { type Region, scanRegions } from '../documents/regions.js'
import { DocumentIndex, type DocumentIndexOptions, type ProjectionChange } from '../documents/document-index.js'
import { rebuildInWorker, worthAThread } from '../documents/rebuild-in-worker.js'
import { projectRelativePath, toPosixPath } from '../documents/project-paths.js'
import { loadSqlModels, type SqlModels } from '../documents/sql-models.js'
import { ProcessPool } from '../sandbox/process-pool.js'
import { ensureStateFolder, pluginStateFiles, removeOldPluginCaches } from '../documents/state-folder.js'
import { createBuiltins } from '../builtins/index.js'
import {
  findProjectConfig,
  loadProjectConfig,
  PROJECT_CONFIG_FILE,
  parseProjectConfig,
  type ProjectConfig,
} from '../host/config.js'
import { type HostOptions, InsituHost } from '../host/host.js'
import type { HostLogger } from '../host/process.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { gitMetadataPaths, isGitMetadataPath } from '../resources/git.js'
import { createResourceResolver } from '../resources/resolver.js'
import { DependencyGraph, type FileEvent, type ProjectionChanges } from './dependency-graph.js'
import { type DocumentResult, describeFailure, isTimeout, locationOf, providerOf, renderDocument } from './render-document.js'
import { createJobMemo, recordQueries, recordReads } from './job-memo-setup.js'
import { hashText, pluginVersion } from './dependency-fingerprints.js'
import { type JobMemo, type JobStats, outsideJobs, type RowChange } from './job-memo.js'
import type { Generations } from './generations.js'
import { type BodySince, type RegionReport, regionStates } from './region-states.js'
import { documentRun, moduleRun, RunRecords } from './run-records.js'

export interface EngineOptions {
  /** Folder to start looking for `insitu.toml` from (or the project root when there is none). */
  root: string
  /** Use this config instead of looking for `insitu.toml`. */
  config?: ProjectConfig
  /** Override `[sources] include` (which files are managed documents). */
  include?: readonly string[]
  /** Override `[sources] exclude`. */
  exclude?: readonly string[]
  /**
   * Keep a persistent cache in the plugin's folder of the project's state folder
   * (`<folder of paths.state>/vite-plugin-insitu/`, state-folder.ts; `paths.state` itself is the
   * Python implementation's index, never touched): the document index snapshot `index.db`, so the
   * next start re-reads only the files whose mtime or size changed, and job results in `jobs.db`,
   * each validated against the current inputs before reuse (see job-memo.ts). `false`:
   * everything in memory, nothing written.
   * @default true
   */
  cache?: boolean
  /** @deprecated Use `cache` (an alias; `cache` wins when both are given). */
  persistIndex?: boolean
  /** Aborting it stops a start still waiting for extension handshakes (see `HostOptions.signal`). */
  signal?: AbortSignal
  /** Told of every document the index reads and parses (`DocumentIndexOptions.onDocumentRead`). */
  onDocumentRead?: DocumentIndexOptions['onDocumentRead']
  /**
   * Locate the repository's metadata files at start (`gitPaths`: `HEAD`, refs, the index), which
   * `isGitMetadata` and the git watcher need. A one-shot build hears no file events and skips it
   * (`gitPaths` is then null): one `git` process less, whose spawn blocks the thread for a few ms.
   * @default true
   */
  gitMetadata?: boolean
  /**
   * Write the index's snapshot right after its first scan (false: at `persistCache()` or
   * `close()`, which a build reaches once its modules are loaded: off its critical path).
   * @default true
   */
  snapshotAtStart?: boolean
  /**
   * Run the index's first full scan in a worker thread (documents/rebuild-in-worker.ts), so this
   * thread goes on meanwhile (a dev server binds its port and its watcher scans the project); the
   * rows, snapshot and warnings are those of a scan here, and any failure there makes the scan
   * run here instead (failing as it always did). Not with `onDocumentRead`.
   * @default false
   */
  indexInWorker?: boolean
  /**
   * Milliseconds after which the query sandbox's last process ends when left idle
   * (`DocumentIndexOptions.queryProcessIdleMs`): a one-shot build gives its memory back.
   * @default undefined (it stays until the engine closes)
   */
  queryProcessIdleMs?: number
  /**
   * A start that finds the index as its snapshot left it (`DocumentIndex.matchesSnapshot`), with
   * a job store of this config and plugin to serve from, leaves the query sandbox's first process
   * for later: it starts at the first query, or at `startQueryProcess()`. Such a start's first
   * renders are served from results recorded against those rows, without querying, and a
   * process booting beside a dev server's own start slows it (issue #38: 29 ms of 468 at 1,000
   * documents). Any other start starts it as without the option (before the index is read) when
   * there is no snapshot or no job store, once the index is read when documents changed
   * meanwhile, once its extensions are up when the job store is of another config.
   * @default false
   */
  deferQueryProcess?: boolean
  python?: string
  /** Milliseconds an extension may take to answer one request. @default 30000 */
  timeoutMs?: number
  /**
   * Milliseconds one of the project's SQL queries or template renders may run before its job
   * fails (`<model file>: the query ran longer than 30 s`): queries run in the query sandbox
   * (documents/query-sandbox.ts), where they can be stopped.
   * @default `timeoutMs`
   */
  renderTimeoutMs?: number
  logger?: HostLogger
  enableExtension?: HostOptions['enableExtension']
  /**
   * Record which inputs generated each region body (generations.ts, kept in the job store with
   * `cache`), so that `regionStates` can tell a stale body (and which inputs changed) from one
   * edited by hand. Every host records them: a body written by a dev server in write mode
   * and then opened in an editor must be known as generated.
   * @default true
   */
  generations?: boolean
}

export interface ModuleRule {
  /** The transform capability to run on the module. */
  transform: string
  /** Options passed to the transform, besides `content`. */
  options?: Record<string, unknown>
}

export interface ModuleResult {
  path: string
  code: string
  dependencies: string[]
  diagnostics: Diagnostic[]
}

export interface AffectedResult {
  /** Project-relative paths of documents and modules whose results may change. */
  owners: string[]
  projectionChanged: boolean
  gitChanged: boolean
}

/** What the index makes of no project event (none, or git metadata only). */
const INDEX_UNCHANGED: ProjectionChange = { projectionChanged: false, documentsChanged: false, entriesChanged: false, changedColumns: undefined }
/** What `mayBeAffected` takes of project events the index was not told of: anything may have changed. */
const INDEX_UNKNOWN: ProjectionChange = { projectionChanged: true, documentsChanged: true, entriesChanged: true, changedColumns: undefined }

/** Changes seen while one job runs (see `runTracked`). */
interface ChangeLog {
  events: FileEvent[]
  documents: boolean
  entries: boolean
  git: boolean
}

const NO_PROJECTION_CHANGE = { documents: false, entries: false, git: false }

/** How many times a job re-runs because its inputs changed while it ran. */
const MAX_RERUNS = 2

interface Cached<T> {
  hash: string
  result: T
  /** A dependency changed: render again (the result is kept for the early cutoff). */
  stale: boolean
  /** `processEpoch()` when it was computed. */
  processes: string
}

export class InsituEngine {
  readonly graph = new DependencyGraph()
  private readonly documentCache = new Map<string, Cached<DocumentResult>>()
  /**
   * Each document owner's job keys in the job memo, as of its last render (`dropUnreadChanges`);
   * renders that overlapped leave the keys of each (which text a page shows is not known here).
   */
  private readonly documentJobs = new Map<string, { keys: ReadonlySet<string>; renders: number }>()
  private readonly moduleCache = new Map<string, Cached<ModuleResult>>()
  private readonly inFlight = new Set<ChangeLog>()
  /** Hash of the text each document owner was last rendered to (kept across invalidation, for early cutoff). */
  private readonly lastOutputs = new Map<string, string>()
  /** Per document (project-relative path), each job's last output without failure (`<target>:<id>`; render-document.ts `lastGood`). */
  private readonly lastGoodOutputs = new Map<string, Map<string, { content: string | null; value: unknown }>>()
  readonly runRecords = new RunRecords()
  private closing: Promise<void> | undefined
  private aborted: Error | undefined

  private constructor(
    readonly config: ProjectConfig,
    readonly host: InsituHost,
    readonly index: DocumentIndex,
    /** Absolute git metadata paths (HEAD, refs, packed-refs, index), or null without a repository. */
    readonly gitPaths: readonly string[] | null,
    private readonly memo: JobMemo,
    /** Absolute POSIX path of the index snapshot (`cache`), or null. */
    private readonly statePath: string | null,
  ) {}

  /** The query sandbox's first process was left for later (`deferQueryProcess`) and has not been asked for since. */
  private queryProcessDeferred = false

  /**
   * Starts the query sandbox's first process, with its copy of the rows, when the start left it
   * for later (`deferQueryProcess`); a process a query started meanwhile is only brought up to
   * date; otherwise nothing. A dev server calls it once its own start is over, so that an edit's
   * first query does not wait for a process to boot.
   */
  startQueryProcess(): void {
    if (!this.queryProcessDeferred) return
    this.queryProcessDeferred = false
    this.index.prepareQueries('copy')
  }

  /** The bodies each region was generated with (generations.ts), or undefined when not recorded. */
  get generations(): Generations | undefined {
    return this.memo.generations
  }

  /** Jobs run and reused since the engine started (regions, materializations, module transforms), and query checks patched by path. */
  get stats(): Readonly<JobStats> {
    return this.memo.stats
  }

  static async create(options: EngineOptions): Promise<InsituEngine> {
    const config = options.config ?? readProjectConfig(options.root)
    const sources = {
      ...config.sources,
      include: [...(options.include ?? config.sources.include)],
      exclude: [...(options.exclude ?? config.sources.exclude)],
    }
    const effective: ProjectConfig = { ...config, sources }
    const root = config.root
    const stateFiles = pluginStateFiles(root, config.paths.state)
    // Caches an older plugin version kept where the Python implementation reads (issue #15).
    for (const removed of removeOldPluginCaches(stateFiles)) {
      options.logger?.info(`insitu: removed ${removed}, a cache of an older vite-plugin-insitu (its caches now live in ${path.relative(root, stateFiles.cacheFolder).split(path.sep).join('/')}/)`)
    }
    const cache = options.cache ?? options.persistIndex ?? true
    const statePath = cache ? stateFiles.index : undefined
    const indexOptions: DocumentIndexOptions = {
      root,
      include: sources.include,
      exclude: sources.exclude,
      respectGitignore: sources.respect_gitignore,
      statePath,
      cacheKey: `vite-plugin-insitu ${pluginVersion()}`,
      warn: (message) => options.logger?.warn(message),
      onDocumentRead: options.onDocumentRead,
      queryTimeoutMs: options.renderTimeoutMs ?? options.timeoutMs ?? 30_000,
      queryProcessIdleMs: options.queryProcessIdleMs,
    }
    const persist = options.snapshotAtStart !== false
    const jobStore = cache && fs.existsSync(stateFiles.jobs)
    // A start that may serve its first renders without querying (`deferQueryProcess`): whether
    // it does is known once the index is read; until then no process starts ahead.
    const mayDefer = options.deferQueryProcess === true && jobStore && statePath !== undefined && fs.existsSync(statePath)
    // A dev server: git's metadata is located while the index's first scan runs in a worker
    // thread (null: scanned here below).
    const gitPathsEarly = options.indexInWorker && options.gitMetadata !== false ? gitMetadataPaths(root).catch(() => null) : undefined
    const scanned = options.indexInWorker
      ? await scanInWorker(indexOptions, { persist, modelsDir: config.paths.models, startQueries: !mayDefer, signal: options.signal })
      : null
    const index = scanned?.index ?? new DocumentIndex(indexOptions)
    let queriesDeferred = false
    try {
      const models = scanned?.models ?? loadSqlModels(root, config.paths.models)
      // A project with SQL models will query: the sandbox's first process starts while the index
      // is read. A one-shot build with a job store usually reuses every query's rows: it starts
      // one at its first query, if it has one.
      const reusesJobs = options.snapshotAtStart === false && jobStore
      const queries = models.names().length > 0 && !reusesJobs
      if (queries && !scanned && !mayDefer) index.prepareQueries('process')
      if (!scanned) index.rebuild({ persist })
      queriesDeferred = queries && mayDefer && index.matchesSnapshot
      // Its copy of the rows loads while extensions start and the first pages are transformed.
      if (queries && !queriesDeferred) index.prepareQueries('copy')
      const resolverContext = { root, exclude: sources.exclude, respectGitignore: sources.respect_gitignore, models }
      // Jobs read through recording views: the memo fingerprints what each job saw.
      let memo: JobMemo | undefined
      const recordingIndex = recordQueries(
        index,
        (sql, params, rows, hash) => memo?.recordQuery(sql, params, rows, hash),
        (sql, params) => memo?.takeCheckedRows(sql, params),
      )
      const recorded = recordReads(createResourceResolver({ ...resolverContext, index: recordingIndex }), (identifier, location, read) =>
        memo?.recordRead(identifier, location, read),
      )
      // Reads through the host are told apart by their location, not by the async context (job-memo.ts).
      const resolve: typeof recorded = (identifier, location, trace) => outsideJobs(() => recorded(identifier, location, trace))
      const builtins = createBuiltins({
        root,
        templatesDir: path.join(root, config.paths.templates),
        index: recordingIndex,
        models: () => models,
        renderTimeoutMs: index.queryTimeoutMs,
        sandbox: () => index.sandbox,
      })
      const [host, gitPaths] = await Promise.all([
        InsituHost.start({
          config: effective,
          resolve,
          builtins,
          python: options.python,
          timeoutMs: options.timeoutMs,
          logger: options.logger,
          enableExtension: options.enableExtension,
          onExtensionInvoke: (name) => memo?.recordExtension(name),
          signal: options.signal,
        }),
        options.gitMetadata === false ? null : (gitPathsEarly ?? gitMetadataPaths(root).catch(() => null)),
      ])
      memo = createJobMemo({
        config: effective,
        host,
        python: options.python,
        resolve: createResourceResolver({ ...resolverContext, index }),
        query: (sql, params) => index.runQuery(sql, params),
        evaluate: (sql, params) => index.query(sql, params),
        indexState: () => index.stateId,
        documentsState: () => index.documentsState,
        jobStoreFile: cache ? stateFiles.jobs : null,
        logger: options.logger,
        generations: options.generations ?? true,
      })
      // Results of another config or plugin are not served: the first renders will query.
      if (queriesDeferred && !memo.storeHoldsEntries) {
        queriesDeferred = false
        index.prepareQueries('copy')
      }
      const engine = new InsituEngine(effective, host, index, gitPaths, memo, statePath === undefined ? null : toPosixPath(statePath))
      engine.queryProcessDeferred = queriesDeferred
      return engine
    } catch (error) {
      index.close()
      throw error
    }
  }

  get root(): string {
    return this.config.root
  }

  /** Project-relative POSIX path of an absolute or relative path, or null when outside the root. */
  relativePath(file: string): string | null {
    return projectRelativePath(this.root, file)
  }

  isDocument(file: string): boolean {
    const relative = this.relativePath(file)
    return relative !== null && this.index.isDocument(relative)
  }

  /**
   * `prefetch`: rendered ahead of any request (the dev server's early cutoff, a write-back), so
   * the next request served from the cache delivers this run: the run records keep its reason.
   */
  async renderDocument(file: string, text: string, query = '', options: { prefetch?: boolean; lastGood?: boolean } = {}): Promise<DocumentResult> {
    const relPath = this.requireRelative(file)
    const owner = ownerOf(relPath, query)
    const hash = hashText(text)
    const cached = this.documentCache.get(owner)
    const processes = this.processEpoch()
    if (cached && !cached.stale && cached.processes === processes) {
      const hit = cached.hash === hash ? cached.result : cached.result.outputHash === hash ? unchangedResult(cached.result) : null
      // A result with last good bodies is for serving: a render to write gets this text's own output.
      if (hit && !(options.lastGood === false && cached.result.lastGoodApplied)) {
        if (!options.prefetch) this.runRecords.cached(owner)
        return hit
      }
    }
    const startedAt = RunRecords.now()
    // Another text of a document rendered before (written back, or no watcher told us): jobs
    // that read the document itself must not be served unchecked.
    if (cached && cached.hash !== hash) this.memo.noteChanges([{ type: 'update', path: relPath }], NO_PROJECTION_CHANGE)
    let jobKeys: string[] = []
    const rendersBefore = this.documentJobs.get(owner)?.renders ?? 0
    const result = await this.runTracked(owner, async () => {
      jobKeys = []
      // What is written to disk never gets a last good body (only generated output of this text).
      const good = options.lastGood === false ? undefined : this.lastGoodOutputs.get(relPath)
      const rendered = await renderDocument(this.host, relPath, text, (job, invoke) => this.memo.run(job, invoke, jobKeys), {
        lastGood: (job) => good?.get(`${job.target}:${job.id}`),
      })
      this.noteGoodOutputs(relPath, rendered)
      const failedJobs = rendered.jobs.filter((j) => j.error !== null)
      return {
        result: rendered,
        dependencies: rendered.dependencies,
        // Failures that are out-of-time are kept until an input changes: every request of the
        // page would spend the budget again (a crash or an error may be transient: not kept).
        failed: failedJobs.some((j) => j.timedOut !== true),
        timedOut: failedJobs.some((j) => j.timedOut === true),
      }
    })
    this.noteDocumentJobs(owner, jobKeys, rendersBefore)
    let rendered = result.value
    rendered.outputHash = hashText(rendered.text)
    // Early cutoff: every job reused on the same input gives the very same result object.
    if (cached?.hash === hash && cached.result.text === rendered.text && rendered.jobs.every((j) => j.reused)) {
      rendered = cached.result
    }
    this.lastOutputs.set(owner, rendered.outputHash!)
    const provider = (kind: string) => providerOf(this.host, kind)
    this.runRecords.ran(owner, documentRun(relPath, startedAt, hash, rendered.outputHash!, rendered, provider), options.prefetch)
    // A failure may be transient (a crash): never serve it again from the cache (one out of time
    // is kept until an input changes: see `run` above).
    if (result.cacheable) this.documentCache.set(owner, { hash, result: rendered, stale: false, processes })
    else this.documentCache.delete(owner)
    return rendered
  }

  /**
   * Each region of `text` (the text `result` was rendered from; `bodySince`: since when each
   * region's body has been as it is) with its state: current, failed, stale and why, or edited by hand (region-states.ts;
   * the reasons need `generations`).
   */
  async regionStates(file: string, text: string, result: DocumentResult, bodySince: BodySince): Promise<RegionReport[]> {
    const relPath = this.requireRelative(file)
    let regions: Region[]
    try {
      regions = text.includes('insitu:') ? scanRegions(text, bodyOffsetOf(text)).regions : []
    } catch {
      return [] // past the region limit: the render's own diagnostic says so
    }
    return regionStates({ generations: this.memo.generations, changedSince: (generation) => this.memo.changedSince(generation) }, relPath, regions, text, result, bodySince)
  }

  async transformModule(file: string, code: string, rule: ModuleRule, query = ''): Promise<ModuleResult> {
    const relPath = this.requireRelative(file)
    const owner = ownerOf(relPath, query)
    const hash = hashText(`${rule.transform}\u0000${JSON.stringify(rule.options ?? {})}\u0000${code}`)
    const cached = this.moduleCache.get(owner)
    const processes = this.processEpoch()
    if (cached && !cached.stale && cached.processes === processes && cached.hash === hash) {
      this.runRecords.cached(owner)
      return cached.result
    }
    this.moduleCache.delete(owner)
    const startedAt = RunRecords.now()
    const record = (outcome: Parameters<typeof moduleRun>[4]) =>
      this.runRecords.ran(owner, moduleRun(relPath, startedAt, hash, rule.transform, outcome, (kind) => providerOf(this.host, kind), hashText))
    const options = { ...rule.options, content: code }
    const location = locationOf(relPath)
    const job = { target: 'module' as const, kind: rule.transform, provider: providerOf(this.host, rule.transform), options, location }
    const result = await this.runTracked(owner, async () => {
      let invocation
      try {
        ;({ outcome: invocation } = await this.memo.run(job, async () => {
          const transformed = await this.host.transform(rule.transform, options, location)
          if (transformed.content === null) throw new Error(`transform ${rule.transform} returned no content`)
          return transformed
        }))
      } catch (error) {
        // What it read before failing is still watched: creating a missing input re-runs it.
        this.graph.set(owner, errorDependencies(error))
        const failure = new Error(describeFailure(this.host, rule.transform, relPath, error), { cause: error })
        if (!this.aborted) record({ error: failure })
        throw failure
      }
      const module: ModuleResult = {
        path: relPath,
        code: invocation.content ?? '',
        dependencies: invocation.dependencies,
        diagnostics: invocation.diagnostics.map((d) => ({ ...d, path: d.path ?? relPath })),
      }
      return { result: module, dependencies: module.dependencies, failed: false }
    })
    record(result.value)
    if (result.cacheable) this.moduleCache.set(owner, { hash, result: result.value, stale: false, processes })
    return result.value
  }

  /**
   * Run one owner's job and record its dependencies. A change that arrives while the job runs
   * cannot select the owner through the graph yet (its new edges are not recorded): such
   * events are logged, and when they touch the new dependencies the job runs again (at most
   * `MAX_RERUNS` times, never one that ran out of its time; a result that is still racing is
   * returned but not cached).
   */
  private async runTracked<T>(
    owner: string,
    run: () => Promise<{ result: T; dependencies: readonly string[]; failed: boolean; timedOut?: boolean }>,
  ): Promise<{ value: T; cacheable: boolean }> {
    if (this.aborted) throw this.aborted
    for (let attempt = 0; ; attempt++) {
      const log: ChangeLog = { events: [], documents: false, entries: false, git: false }
      this.inFlight.add(log)
      let outcome: { result: T; dependencies: readonly string[]; failed: boolean; timedOut?: boolean } | undefined
      let failure: unknown
      try {
        outcome = await run()
        this.graph.set(owner, outcome.dependencies)
      } catch (error) {
        failure = error // `run` recorded what the failed job depended on
      } finally {
        this.inFlight.delete(log)
      }
      const stale =
        (log.events.length > 0 || log.documents || log.entries || log.git) &&
        this.graph.affected(log.events, log).has(owner)
      // Failed by `abort()` (or raced with it): the closing is the news, never cached.
      if (this.aborted) throw this.aborted
      // Out of time, it would be again: a change meanwhile is no reason to spend a budget twice.
      const timedOut = outcome ? outcome.timedOut === true : isTimeout(failure)
      if (stale && attempt < MAX_RERUNS && !timedOut) continue
      if (!outcome) throw failure
      return { value: outcome.result, cacheable: !stale && !outcome.failed }
    }
  }

  /** Remember each job's output that did not fail, for a later render in which it fails (render-document.ts `lastGood`). */
  private noteGoodOutputs(relPath: string, rendered: DocumentResult): void {
    let good = this.lastGoodOutputs.get(relPath)
    for (const job of rendered.jobs) {
      if (job.error !== null) continue
      if (!good) this.lastGoodOutputs.set(relPath, (good = new Map()))
      good.set(`${job.target}:${job.id}`, { content: job.content, value: job.value })
    }
  }

  /**
   * Hash (`hashText`) of the text a document owner was last rendered to, or undefined when it
   * never was. Survives `affected()`: compare a fresh render with it to skip an update (early cutoff).
   */
  lastOutputHash(owner: string): string | undefined {
    return this.lastOutputs.get(owner)
  }

  /**
   * The host sent `owner`'s modules an update for output `hash`: their next fetch renders that
   * text (or a newer one, recorded then), so `lastOutputHash` answers it from now on. Undefined:
   * what they show is unknown (an update that was not sent after all): the next change updates them.
   */
  noteOutputSent(owner: string, hash: string | undefined): void {
    if (hash === undefined) this.lastOutputs.delete(owner)
    else this.lastOutputs.set(owner, hash)
  }

  /**
   * Forget an owner's cached result (its dependencies stay until it is rendered again). Its
   * jobs stay in the job memo, which judges them by their own dependencies.
   */
  invalidate(owner: string): void {
    const document = this.documentCache.get(owner)
    if (document) document.stale = true
    this.moduleCache.delete(owner)
  }

  /** Forget every owner of a file entirely (e.g. the file was deleted): each id's record and cache. */
  forget(file: string): void {
    const relPath = this.relativePath(file)
    if (relPath === null) return
    const owners = new Set<string>()
    for (const owner of [
      ...this.documentCache.keys(),
      ...this.moduleCache.keys(),
      ...this.graph.owners(),
      ...this.documentJobs.keys(),
      ...this.lastOutputs.keys(),
      ...this.runRecords.owners(),
    ]) {
      if (ownerFile(owner) === relPath) owners.add(owner)
    }
    for (const owner of owners) this.forgetOwner(owner)
    this.lastGoodOutputs.delete(relPath)
  }

  /** What the engine keeps for one owner: its cached result, dependencies, jobs, last output and run record. */
  private forgetOwner(owner: string): void {
    this.documentCache.delete(owner)
    this.moduleCache.delete(owner)
    this.graph.delete(owner)
    this.documentJobs.delete(owner)
    this.lastOutputs.delete(owner)
    this.runRecords.forget(owner)
  }

  /**
   * Forget what rendering documents that hold no job left behind (their cached results, run
   * records and empty dependency lists), as `forget` does: for a one-shot build, which after
   * its sync at `buildStart` serves such documents as they are without asking the engine
   * (serve-document.ts, the cheap path): otherwise heap kept for nothing through its bundling
   * (issue #38). A document rendered later is rendered again.
   */
  forgetDocumentsWithoutJobs(): void {
    for (const [owner, cached] of this.documentCache) {
      if (cached.result.jobs.length === 0 && cached.result.diagnostics.length === 0) this.forgetOwner(owner)
    }
  }

  /**
   * Which owners the file events may affect. `events` carry absolute or project-relative
   * paths; git metadata paths may lie outside the project root. Owners `except` accepts are
   * neither invalidated nor returned (e.g. a document's own owners when the event is the
   * document being written back with the very text they render to).
   */
  affected(
    events: readonly { type: FileEvent['type']; path: string; directory?: boolean }[],
    except?: (owner: string) => boolean,
  ): AffectedResult {
    const { projectEvents, gitChanged } = this.classifyEvents(events)
    const changes = projectEvents.length > 0 ? this.index.refresh(projectEvents) : INDEX_UNCHANGED
    return this.select(projectEvents, gitChanged, changes, except)
  }

  /**
   * The fallback of `affected()` when a file event could not be handled (the index refresh, or
   * what the caller did next, threw): every owner that may depend on the events' paths, from
   * the dependency graph alone. The document index is not refreshed, and whether its rows
   * changed is unknown, so every reader of the index (`index:documents`, `index:entries`,
   * `sql:model:*`) is taken as affected too. Each owner is invalidated, and the jobs the events
   * touch made suspect, as `affected()` does: their next render reads their inputs again.
   */
  mayBeAffected(events: readonly { type: FileEvent['type']; path: string; directory?: boolean }[]): AffectedResult {
    if (this.closing) throw new Error('the engine is closed')
    const { projectEvents, gitChanged } = this.classifyEvents(events)
    return this.select(projectEvents, gitChanged, projectEvents.length > 0 ? INDEX_UNKNOWN : INDEX_UNCHANGED)
  }

  /** The events on project files (the job store's and the index snapshot's own files left out), and whether git metadata changed. */
  private classifyEvents(events: readonly { type: FileEvent['type']; path: string; directory?: boolean }[]): {
    projectEvents: FileEvent[]
    gitChanged: boolean
  } {
    const projectEvents: FileEvent[] = []
    let gitChanged = false
    for (const event of events) {
      const absolute = toPosixPath(path.resolve(this.root, event.path))
      if (this.memo.isStoreFile(absolute) || this.isStateFile(absolute)) continue
      if (this.isGitMetadata(absolute)) {
        gitChanged = true
        continue
      }
      const relPath = this.relativePath(absolute)
      if (relPath !== null) projectEvents.push({ type: event.type, path: relPath, directory: event.directory })
    }
    return { projectEvents, gitChanged }
  }

  /** `affected()` once the index knows the events: the owners marked, invalidated and returned. */
  private select(
    projectEvents: FileEvent[],
    gitChanged: boolean,
    { projectionChanged, documentsChanged, entriesChanged, changedColumns, changedPaths, changedRows }: ProjectionChange,
    except?: (owner: string) => boolean,
  ): AffectedResult {
    for (const log of this.inFlight) {
      for (const event of projectEvents) log.events.push(event) // no spread: batches can be huge
      log.documents ||= documentsChanged
      log.entries ||= entriesChanged
      log.git ||= gitChanged
    }
    const changes = { documents: documentsChanged, entries: entriesChanged, git: gitChanged }
    this.memo.noteChanges(projectEvents, { ...changes, columns: changedColumns, paths: changedPaths, rows: changedRows })
    const owners = this.graph.affected(projectEvents, changes)
    if (documentsChanged && !entriesChanged && changedColumns && changedPaths) this.dropUnreadChanges(owners, projectEvents, changes, { columns: changedColumns, paths: changedPaths, rows: changedRows })
    if (except) for (const owner of owners) if (except(owner)) owners.delete(owner)
    for (const owner of owners) this.invalidate(owner)
    this.runRecords.selected(owners, projectEvents, gitChanged, (some, git) => this.graph.affected(some, { documents: false, git }))
    return { owners: [...owners].sort(), projectionChanged, gitChanged }
  }

  /** A render's job keys; another render of the owner that finished meanwhile keeps its keys too. */
  private noteDocumentJobs(owner: string, keys: readonly string[], rendersBefore: number): void {
    const known = this.documentJobs.get(owner)
    const overlapped = known !== undefined && known.renders !== rendersBefore
    const merged = overlapped ? new Set([...known.keys, ...keys]) : new Set(keys)
    this.documentJobs.set(owner, { keys: merged, renders: (known?.renders ?? 0) + 1 })
  }

  /**
   * Rows that kept their paths (`changedPaths`) changed only `columns`: a document affected only
   * as a reader of the index (not through its files, and whose own row did not change), none of
   * whose jobs (of its last render) can read one of those columns of one of those rows (the job
   * memo's rule 2: a query naming none of them, or one whose WHERE keeps none of the rows, such
   * as a folder index's `parent = :insitu_dir`), renders as before: it is not affected (issue
   * #17: a prose edit re-checked every document with a sql region a page had loaded, a title
   * edit every folder index).
   */
  private dropUnreadChanges(
    owners: Set<string>,
    events: readonly FileEvent[],
    changes: ProjectionChanges,
    change: RowChange,
  ): void {
    const byTheirFiles = this.graph.affected(events, { ...changes, documents: false })
    for (const owner of owners) {
      if (byTheirFiles.has(owner) || change.paths.has(ownerFile(owner))) continue
      const jobs = this.documentJobs.get(owner)
      if (jobs !== undefined && !this.memo.jobsMayReadChange(jobs.keys, change)) owners.delete(owner)
    }
  }

  /** The index snapshot or one of its temporary files: insitu's own writes, never an input. */
  private isStateFile(absolutePosix: string): boolean {
    if (this.statePath === null) return false
    return absolutePosix === this.statePath || (absolutePosix.startsWith(`${this.statePath}.`) && absolutePosix.endsWith('.tmp'))
  }

  isGitMetadata(absolutePath: string): boolean {
    if (!this.gitPaths) return false
    const posix = toPosixPath(absolutePath)
    return this.gitPaths.some((p) => {
      const dir = path.posix.dirname(p)
      return (posix === p || posix.startsWith(`${p}/`)) && isGitMetadataPath(dir, posix)
    })
  }

  /**
   * Fail every job in flight and every later one with `reason` at once (their extension
   * requests are dropped, nothing is cached), e.g. because the dev server is closing.
   */
  abort(reason: Error): void {
    this.aborted ??= reason
    this.host.abortInFlight(this.aborted)
  }

  /** Write the job results not yet in the persistent store (nothing when there is none or nothing new). */
  persistCache(): void {
    if (this.closing) return
    // The index first: its snapshot makes the state folder with the `.gitignore` (state-folder.ts).
    this.index.persist()
    this.memo.flush()
  }

  close(): Promise<void> {
    this.closing ??= Promise.all([this.host.close(), this.index.closeQueries()]).then(
      () => this.closeStores(),
      (error: unknown) => {
        this.closeStores()
        throw error
      },
    )
    return this.closing
  }

  private closeStores(): void {
    this.memo.stampDocumentsStates() // while the index can still say
    this.index.close() // first, as in persistCache
    this.memo.close()
  }

  /** The extension processes running now: a restarted one makes every cached result suspect. */
  private processEpoch(): string {
    return JSON.stringify([...this.host.pids()])
  }

  private requireRelative(file: string): string {
    const relPath = this.relativePath(file)
    if (relPath === null) throw new Error(`not inside the insitu project ${this.root}: ${file}`)
    return relPath
  }
}

/**
 * The project config: `insitu.toml` in `root`, else (when `searchParents`) the nearest one
 * above it, else the defaults with `root` as the project root.
 */
export function readProjectConfig(root: string, searchParents = true): ProjectConfig {
  const here = path.join(path.resolve(root), PROJECT_CONFIG_FILE)
  const file = searchParents ? findProjectConfig(root) : fs.existsSync(here) ? here : null
  if (file) return loadProjectConfig(file)
  return parseProjectConfig('', here)
}

/** The owner key of one module id: the project-relative file, plus `?query` when the id has one. */
export function ownerOf(relPath: string, query = ''): string {
  const bare = query.replace(/^\?/, '')
  return bare === '' ? relPath : `${relPath}?${bare}`
}

/** The project-relative file of an owner key. */
export function ownerFile(owner: string): string {
  const query = owner.indexOf('?')
  return query < 0 ? owner : owner.slice(0, query)
}

/** The query of an owner key (or of a module id: the same `file?query` shape), without `?` (`''` for none). */
export function ownerQuery(owner: string): string {
  const query = owner.indexOf('?')
  return query < 0 ? '' : owner.slice(query + 1)
}

/** The result of rendering a document's own output again: the same text, nothing to edit. */
function unchangedResult(result: DocumentResult): DocumentResult {
  return { ...result, edits: [], changed: false }
}

/** The hash `lastOutputHash` compares with. */
export { hashText }

/**
 * `EngineOptions.indexInWorker`: the index's first scan in a worker thread
 * (documents/rebuild-in-worker.ts) while the query sandbox's first process boots (a project with
 * SQL models, unless `startQueries` is false) and this thread goes on. Null when anything is
 * unusual (the models do not load, the thread does not give the rows): the start then runs here, in its usual order, and meets
 * the same errors. The state folder is made first, as a scan here makes it at once: a dev
 * server's watcher, starting its own scan, does not report it as a change (its `.gitignore`
 * would make the index scan everything again); a failure is the snapshot's to warn about.
 */
async function scanInWorker(
  indexOptions: DocumentIndexOptions,
  run: { persist: boolean; modelsDir: string; /** Start the sandbox's first process now (false: `deferQueryProcess` may leave it for later). */ startQueries: boolean; signal?: AbortSignal },
): Promise<{ index: DocumentIndex; models: SqlModels } | null> {
  // A small project is scanned here (no thread, and no process started for nothing).
  if (indexOptions.onDocumentRead || !worthAThread(indexOptions)) return null
  let models: SqlModels
  try {
    models = loadSqlModels(indexOptions.root, run.modelsDir)
  } catch {
    return null
  }
  if (run.persist && indexOptions.statePath !== undefined) {
    try {
      ensureStateFolder(path.dirname(indexOptions.statePath), indexOptions.root)
    } catch {
      // told by the snapshot's write
    }
  }
  const sandbox = models.names().length > 0 ? new ProcessPool() : undefined
  if (run.startQueries) sandbox?.prepare()
  let index: DocumentIndex | null = null
  try {
    // Worth a thread: asked above.
    index = await rebuildInWorker({ ...indexOptions, sandbox }, { persist: run.persist, signal: run.signal, always: true })
  } finally {
    if (!index) void sandbox?.close()
  }
  return index ? { index, models } : null
}
