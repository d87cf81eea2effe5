/**
 * The job memo: results of single jobs (a region, a front-matter materialization, a module
 * transform), reused while nothing they read changed. The persistent store (job-store.ts)
 * keeps them across runs; this module decides when a result may be served.
 *
 * Key: the job's target, capability name, base provider, options (canonical JSON) and
 * location. Around the key, each entry records the dependencies the job reported, a
 * fingerprint per dependency, the SQL queries it ran (with a hash of their rows) and the
 * extensions it involved (program fingerprint and process id).
 *
 * Invalidation rules (an entry is served only when all hold):
 * 1. Content: a dependency an event touches (`noteChanges`, through the job's own
 *    DependencyGraph record) makes the entry suspect; a suspect entry is served only when
 *    every dependency's fingerprint is still the same (`fs:file` text as read, `fs:glob` and
 *    `fs:dir` listings, `git://` values, `sql:model:` rows): a touched but identical file re-runs
 *    nothing, an edit re-runs exactly the jobs that read the file.
 * 2. Index projection: `index:documents` / `index:entries` / `sql:model:*` are fingerprinted by
 *    the rows of every query the job ran (a builtin's queries, told by the job's async context;
 *    the queries run in the query sandbox, asynchronously) or that ran for the job's location
 *    while it ran (`:insitu_path`: an extension's reads through the host; a job whose options
 *    name `insitu_path` hears every query; concurrent extension jobs of one location hear each
 *    other's: safe); a change of the index re-runs only jobs whose queries now return
 *    other rows. `sql:model:` reads are also fingerprinted as reads (rule 1). When the rows that
 *    changed kept their paths, only jobs whose recorded queries can read a column that changed
 *    (query-columns.ts; a prose edit changes `body` and `content_hash`, a title edit `title`,
 *    `frontmatter` and `content_hash`) in one of the rows that changed (query-rows.ts: a query
 *    whose WHERE requires `parent = :insitu_dir` keeps no row of another folder), or that
 *    recorded no query, are suspect; checking one
 *    re-runs only its queries that can read a column changed since their hashes were current
 *    (the others return the same rows), and a query found changed hands its rows to the job
 *    that runs next (`takeCheckedRows`), so a changed query runs once, not twice.
 * 3. Git: a git metadata change makes every `git://` reader suspect; its values decide.
 * 4. Extension identity: an extension invoked while the job ran must still run the same
 *    program (manifest, command, files) in the same process; a restarted or changed extension
 *    never serves an old result.
 * 5. Fingerprints are taken as the job reads (reads through the host at the job's location
 *    and index queries are recorded). A dependency read another way (template and model files) is fingerprinted
 *    after the job, only when the file was not modified since shortly before the job started;
 *    otherwise, and for a dependency nothing can fingerprint, the entry is kept in memory
 *    only and dropped (not validated) when it becomes suspect.
 * 6. A change arriving while the job runs that touches what it read: not stored (the caller
 *    runs it again); one arriving while a suspect entry is being validated: the job runs.
 *    Failures are never stored. Identical jobs looked up at once share one lookup and run.
 * 7. Persisted entries are served only after every fingerprint and extension program is
 *    checked against the current state (the store's header covers plugin version and config).
 *    Their queries are not re-run when the index holds the very rows their hashes were taken
 *    at (its `stateId`, kept in its snapshot: a warm start over unchanged files), nor, when
 *    only rows outside the documents changed (the same `documentsState`: a build's output
 *    appeared in `entries`, as VitePress's client build's does before its SSR build starts),
 *    those that read only the documents (query-columns.ts `queryMayReadBeyondDocuments`); a
 *    stored entry checked at another state is stored again with the new one.
 * 8. A check of a query whose rows are one `documents` row each, in path order
 *    (`pathRestrictedQuery`), whose rows an earlier check kept, runs restricted to the rows
 *    changed since (the index says which) and patches those rows in (query-patches.ts).
 * A served outcome is the memo's own object, shared by every result that reuses it: read-only.
 * With `generations`, a region job that runs (a `JobSpec` with an `id`) also records its
 * body's generation (generations.ts), whether or not its entry is stored: its fingerprints,
 * queries (their rows kept to be summarized later) and time; `changedSince(generation)` says
 * what differs now.
 * `stats` counts jobs run (invoked) and reused (served without invoking) since construction,
 * and the query checks patched by path (rule 8).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import fs from 'node:fs'
import path from 'node:path'
import type { Diagnostic, Location } from '../protocol/schemas.js'
import type { ResolveResource } from '../resources/resolver.js'
import { fsPathOf } from '../resources/identifiers.js'
import { ChangedRows } from '../documents/changed-rows.js'
import { DependencyGraph, type FileEvent, type ProjectionChanges } from './dependency-graph.js'
import { canonicalJson, fingerprintFailure, fingerprintValue, hashText, queryKey } from './dependency-fingerprints.js'
import { bodyHash, changedRows, type Generation, type Generations, regionJob, summarizeRows } from './generations.js'
import type { JobStore } from './job-store.js'
import { queryMayReadBeyondDocuments, queryMayReadColumns } from './query-columns.js'
import { patchRows } from './query-patches.js'
import { CHANGED_PATHS_PARAM, type EvaluateSql, pathRestrictedQuery, queryMayReadRows } from './query-rows.js'

export interface JobSpec {
  target: 'region' | 'frontmatter' | 'module'
  /** The capability name (a region's kind, a module rule's transform). */
  kind: string
  /** The owner of the capability's base provider (`insitu` or an extension name). */
  provider: string
  options: Record<string, unknown>
  location: Location
  /**
   * The region's id (not part of the key): with `generations`, a region job that runs records
   * the generation of its body (generations.ts).
   */
  id?: string
}

/** What a successful job computed. */
export interface JobOutcome {
  content: string | null
  value: unknown
  dependencies: string[]
  diagnostics: Diagnostic[]
}

export interface JobMemoContext {
  /** Resolve an identifier without recording it (fingerprints now). */
  resolve: ResolveResource
  /** Run one of the project's queries on the document index without recording it (in the query sandbox). */
  query(sql: string, params: Record<string, unknown>): Promise<unknown[]>
  /** Ask the document index's SQLite a question of the engine's own (the row rule's LIKE and GLOB, a cheap query restricted to changed paths: bounded, in this process). */
  evaluate(sql: string, params: Record<string, unknown>): unknown[]
  /** The document index's `stateId`: equal ids, equal rows (across processes too). */
  indexState(): string
  /** The document index's `documentsState`: equal ids, equal documents' rows (across processes too). */
  documentsState(): string
  /** The current identity of an extension, or undefined when it is gone. */
  extension(name: string): { program: string; runtime: number | undefined } | undefined
  /** Absolute project root. */
  root: string
  store: JobStore | null
  /** Record each region body's generation (the language server and the command line explain stale and hand-edited regions with them). */
  generations?: Generations
}

/** What changed since a generation (`JobMemo.changedSince`). */
export interface InputChanges {
  /** Dependencies whose fingerprints differ (`fs:file:…`, `fs:glob:…`, `git://…`). */
  dependencies: string[]
  /** Rows of its queries that changed, appeared or went, by `path` (else `row <n>`). */
  rows: string[]
  /** Queries whose rows changed but cannot be told row by row (their SQL). */
  queries: string[]
  /** Extensions now running another program, or gone. */
  extensions: string[]
}

export interface JobStats {
  jobsRun: number
  jobsReused: number
  /** Checks of a query that ran it restricted to the changed rows and patched its rows (query-patches.ts). */
  queriesPatched: number
}

interface RecordedQuery {
  sql: string
  params: Record<string, unknown>
  hash: string
}

interface ExtensionUse {
  name: string
  program: string
  runtime: number | undefined
}

/** What survives in the store. */
interface StoredEntry {
  location: Location
  outcome: JobOutcome
  fingerprints: [string, string][]
  queries: RecordedQuery[]
  extensions: { name: string; program: string }[]
  /** The index's `stateId` the query hashes were taken at (undefined: it changed meanwhile). */
  indexState?: string
  /**
   * Its `documentsState` at that `indexState`, stamped when the store is written (`flush`,
   * `close`): hashing the documents' rows is no cost for every job of a dev server's edits.
   */
  documentsState?: string
}

interface MemoEntry extends StoredEntry {
  extensions: ExtensionUse[]
  /** An event touched a dependency: check fingerprints before serving. */
  suspect: boolean
  /** How many times events touched a dependency (a validation spanning one is void). */
  touches: number
  /** Every dependency has a fingerprint (else memory only, dropped when suspect). */
  complete: boolean
  /** `indexGeneration` when the recorded query hashes were last known current (-1: unknown). */
  indexSeen: number
}

/** What one running job saw (reads of concurrent jobs at its location included). */
interface Recorder {
  /** The job's location path. */
  path: string
  startedAt: number
  reads: Map<string, string>
  queries: Map<string, RecordedQuery>
  extensions: Set<string>
  /** The rows of each query, kept only when a generation will be recorded. */
  rows: Map<string, unknown> | undefined
  events: FileEvent[]
  changes: ProjectionChanges & { entries: boolean }
}

const CONFLICT = 'conflict'
const RESOURCE = 'resource'
const QUERIES = 'queries'
/** What changed in the index's rows: columns of rows that kept their paths, those paths, and what the rows held (when known). */
export interface RowChange {
  columns: ReadonlySet<string>
  paths: ReadonlySet<string>
  rows?: ChangedRows
}

const NO_ROW_CHANGE: RowChange = { columns: new Set(), paths: new Set() }
/** How many recent index changes say which columns they changed (an entry checked before those is checked in full). */
const MAX_INDEX_CHANGES = 256
/** Rows of at most this many queries kept for patching; at most this many changed paths patched (more: the query runs in full). */
const MAX_KEPT_ROWS = 32
const MAX_PATCHED_PATHS = 64
/** A file modified this close to (or after) a job's start may differ from what the job read. */
const UNSETTLED_MS = 20

export class JobMemo {
  readonly stats: JobStats = { jobsRun: 0, jobsReused: 0, queriesPatched: 0 }
  private readonly graph = new DependencyGraph()
  private readonly entries = new Map<string, MemoEntry>()
  private readonly running = new Set<Recorder>()
  /** Running jobs by location path. */
  private readonly runningAt = new Map<string, Set<Recorder>>()
  /** Running jobs whose options may move their queries elsewhere (`insitu_path`). */
  private readonly hearingAllQueries = new Set<Recorder>()
  /** Lookups and runs in progress, by key: identical jobs share one. */
  private readonly pending = new Map<string, Promise<{ outcome: JobOutcome; reused: boolean }>>()
  /** Fingerprints and query hashes of the current state; cleared on every change. */
  private readonly current = new Map<string, Promise<string>>()
  /** Rows of queries `changedSince` ran in the current state; cleared on every change. */
  private readonly currentRows = new Map<string, Promise<unknown[] | null>>()
  /**
   * Rows a check ran whose hash differed from the entry's (its job is about to run the same
   * query): handed once to the first job that runs it before the next change (`takeCheckedRows`).
   */
  private readonly checkedRows = new Map<string, { rows: unknown[]; hash: string }>()
  /**
   * Rows of the queries checks ran that can be patched by path (`checkRows`), with the index
   * generation they were taken at, least recently run first. Never handed to a job.
   */
  private readonly lastRows = new Map<string, { rows: readonly Record<string, unknown>[]; generation: number }>()
  /** Keys stored without a `documentsState` since the last `stampDocumentsStates()`. */
  private readonly unstamped = new Set<string>()
  /** Counts `noteChanges` calls that changed something (for entries not in memory yet). */
  private generation = 0
  /** Counts changes of the index's rows; `indexChanges` says which columns of which rows the recent ones changed (null: any). */
  private indexGeneration = 0
  private readonly indexChanges: { at: number; change: RowChange | null }[] = []
  /** LIKE and GLOB of the row rule (query-rows.ts), on the index itself (recorded for no job). */
  private readonly evaluateSql: EvaluateSql = (sql, params) => {
    const [row] = this.context.evaluate(sql, params) as Record<string, unknown>[]
    return row === undefined ? undefined : Object.values(row)[0]
  }

  constructor(private readonly context: JobMemoContext) {}

  /** The job's result: from the memo when still valid, else by running `invoke`. `keys` is given the job's key. */
  async run(spec: JobSpec, invoke: () => Promise<JobOutcome>, keys?: string[]): Promise<{ outcome: JobOutcome; reused: boolean }> {
    const key = hashText(canonicalJson([spec.target, spec.kind, spec.provider, spec.options, spec.location]))
    keys?.push(key)
    const shared = this.pending.get(key)
    if (shared) {
      const { outcome } = await shared
      this.stats.jobsReused++
      return { outcome, reused: true }
    }
    const lookup = this.lookupOrRun(key, spec, invoke)
    this.pending.set(key, lookup)
    try {
      return await lookup
    } finally {
      this.pending.delete(key)
    }
  }

  private async lookupOrRun(key: string, spec: JobSpec, invoke: () => Promise<JobOutcome>): Promise<{ outcome: JobOutcome; reused: boolean }> {
    const entry = await this.validEntry(key)
    if (entry) {
      this.stats.jobsReused++
      return { outcome: entry.outcome, reused: true }
    }
    return { outcome: await this.invoke(key, spec, invoke), reused: false }
  }

  /** Reads through the host, recorded for every job running at the read's location. */
  recordRead(identifier: string, location: Location, read: { value: unknown } | { error: unknown }): void {
    const recorders = this.runningAt.get(location.path)
    if (!recorders) return
    const fingerprint = 'value' in read ? fingerprintValue(read.value) : fingerprintFailure(read.error)
    const key = readKey(identifier, location)
    for (const recorder of recorders) {
      const seen = recorder.reads.get(key)
      recorder.reads.set(key, seen === undefined || seen === fingerprint ? fingerprint : CONFLICT)
    }
  }

  /**
   * Index queries, recorded for the job that ran them when it is known (a builtin's query runs
   * in its job's async context: `jobScope`), else for the jobs running at their `:insitu_path`
   * (all when it has none: an extension's read through the host), and for every job hearing all.
   * `hash`: the rows' fingerprint when known (rows from `takeCheckedRows`).
   */
  recordQuery(sql: string, params: Record<string, unknown>, rows: unknown, hash?: string): void {
    if (this.running.size === 0) return
    const at = params.insitu_path
    const own = jobScope.getStore()
    const recorders =
      own !== undefined && this.running.has(own)
        ? [own, ...this.hearingAllQueries]
        : typeof at === 'string'
          ? [...(this.runningAt.get(at) ?? []), ...this.hearingAllQueries]
          : [...this.running]
    if (recorders.length === 0) return
    const query = { sql, params, hash: hash ?? fingerprintValue(rows) }
    const key = queryKey(sql, params)
    for (const recorder of recorders) {
      const seen = recorder.queries.get(key)
      recorder.queries.set(key, seen && seen.hash !== query.hash ? { ...query, hash: CONFLICT } : query)
      recorder.rows?.set(key, rows)
    }
  }

  /**
   * The current rows of a query a check just ran and found changed, with their fingerprint, or
   * undefined: each such result is handed out once (a job may keep or change what it gets), and
   * none survives a change (`noteChanges`), so they are always the index's current rows.
   */
  takeCheckedRows(sql: string, params: Record<string, unknown>): { rows: unknown[]; hash: string } | undefined {
    if (this.checkedRows.size === 0) return undefined
    const key = queryKey(sql, params)
    const checked = this.checkedRows.get(key)
    if (checked) this.checkedRows.delete(key)
    return checked
  }

  /** An extension was invoked: every running job may depend on it. */
  recordExtension(name: string): void {
    for (const recorder of this.running) recorder.extensions.add(name)
  }

  /** File events and projection changes: running jobs see them, touched entries become suspect. */
  noteChanges(events: readonly FileEvent[], changes: ProjectionChanges): void {
    if (events.length === 0 && !changes.documents && !changes.entries && !changes.git) return
    this.generation++
    this.current.clear()
    this.currentRows.clear()
    this.checkedRows.clear()
    if (changes.documents || changes.entries) {
      const change =
        changes.documents && !changes.entries && changes.columns && changes.paths
          ? { columns: new Set(changes.columns), paths: new Set(changes.paths), rows: changes.rows }
          : null
      this.indexChanges.push({ at: ++this.indexGeneration, change })
      if (this.indexChanges.length > MAX_INDEX_CHANGES) this.indexChanges.shift()
    }
    for (const recorder of this.running) {
      for (const event of events) recorder.events.push(event)
      recorder.changes.documents ||= changes.documents
      recorder.changes.entries ||= changes.entries ?? false
      recorder.changes.git ||= changes.git
    }
    // Rows that kept their paths and changed only in some columns: only jobs with a query that
    // can read one of those columns of one of those rows are suspect. Unknown, so suspect: a job
    // with no recorded query, and one that names a `sql:model:` dependency (its query may be
    // recorded at another location, or none).
    const rowChange = changes.documents && changes.columns && changes.paths ? { columns: changes.columns, paths: changes.paths, rows: changes.rows } : undefined
    const keys = this.graph.affected(events, rowChange ? { ...changes, documents: false } : changes)
    if (rowChange) {
      for (const key of this.graph.affected([], { documents: true, git: false })) {
        const entry = this.entries.get(key)
        if (!entry || mayReadChange(entry, rowChange, this.evaluateSql)) keys.add(key)
      }
    }
    for (const key of keys) {
      const entry = this.entries.get(key)
      if (!entry) continue
      entry.suspect = true
      entry.touches++
    }
  }

  /**
   * Whether a change of these `documents` columns in the rows of these paths (which kept their
   * paths) may change a result of the jobs `keys` name, by the rule `noteChanges` applies (rule
   * 2): true when one of them is not in memory, is suspect already, or reads the `documents`
   * view and recorded no query or a query that can read one of `columns` of one of `paths`. A
   * job that does not read the view is not affected by its rows.
   */
  jobsMayReadChange(keys: Iterable<string>, change: RowChange): boolean {
    for (const key of keys) {
      const entry = this.entries.get(key)
      if (!entry || entry.suspect) return true
      if (this.graph.readsDocuments(key) && mayReadChange(entry, change, this.evaluateSql)) return true
    }
    return false
  }

  /** The generations of region bodies, when recorded (`JobMemoContext.generations`). */
  get generations(): Generations | undefined {
    return this.context.generations
  }

  /** Whether the persistent store holds results of this config and plugin (`JobStore.holdsEntries`). */
  get storeHoldsEntries(): boolean {
    return this.context.store?.holdsEntries() ?? false
  }

  /** The persistent store's file or one of SQLite's files beside it (insitu's own writes). */
  isStoreFile(absolutePosix: string): boolean {
    return this.context.store?.isStoreFile(absolutePosix) ?? false
  }

  /** Write the persistent store's pending entries now (close writes what is left). */
  flush(): void {
    this.stampDocumentsStates()
    this.context.generations?.flush()
    this.context.store?.flush()
  }

  /** Write what is left (call `stampDocumentsStates()` first while the index is open: its entries then keep their documents' state). */
  close(): void {
    this.context.generations?.flush()
    this.context.store?.close()
  }

  /**
   * Gives the entries stored since the last call whose query hashes are of the index's current
   * state its `documentsState` (rule 7), and stores them again with it: once per write of the
   * store, not per job. Nothing when the index can no longer say (closed).
   */
  stampDocumentsStates(): void {
    if (this.unstamped.size === 0 || !this.context.store) return
    const keys = [...this.unstamped]
    this.unstamped.clear()
    let state: string
    let documents: string
    try {
      state = this.context.indexState()
      documents = this.context.documentsState()
    } catch {
      return
    }
    for (const key of keys) {
      const entry = this.entries.get(key)
      if (!entry?.complete || entry.indexState !== state) continue
      entry.documentsState = documents
      this.persist(key, entry)
    }
  }

  private async invoke(key: string, spec: JobSpec, invoke: () => Promise<JobOutcome>): Promise<JobOutcome> {
    this.drop(key)
    this.stats.jobsRun++
    const indexSeen = this.indexGeneration
    const indexState = this.context.indexState()
    const recorder: Recorder = {
      path: spec.location.path,
      startedAt: Date.now(),
      reads: new Map(),
      queries: new Map(),
      extensions: new Set(),
      rows: this.context.generations && spec.id !== undefined && spec.target === 'region' ? new Map() : undefined,
      events: [],
      changes: { documents: false, entries: false, git: false },
    }
    this.listen(recorder, canonicalJson(spec.options).includes('insitu_path'))
    let outcome: JobOutcome
    let entry: MemoEntry
    try {
      // The job's own queries (run in this process, now asynchronously: in the query sandbox)
      // are told apart from those of other jobs at its location by the async context.
      outcome = await jobScope.run(recorder, invoke)
      this.graph.set(key, outcome.dependencies)
      entry = await this.entryOf(spec, outcome, recorder, indexSeen) // still hearing changes meanwhile
      if (this.context.indexState() === indexState) entry.indexState = indexState
    } finally {
      this.stopListening(recorder)
    }
    // Every body a job generated is one (a raced or incompletely fingerprinted run's too): a
    // body the engine wrote must never look hand-edited, whatever it can tell of its inputs.
    if (recorder.rows) this.recordGeneration(spec, entry, recorder.rows)
    const { events, changes } = recorder
    const raced = (events.length > 0 || changes.documents || changes.entries || changes.git) && this.graph.affected(events, changes).has(key)
    if (raced) {
      this.graph.delete(key)
      return outcome
    }
    this.entries.set(key, entry)
    if (entry.complete) this.persist(key, entry)
    return outcome
  }

  private recordGeneration(spec: JobSpec, entry: MemoEntry, rows: Map<string, unknown>): void {
    const generation: Generation = {
      bodyHash: bodyHash(entry.outcome.content),
      at: Date.now(),
      optionsHash: hashText(canonicalJson(spec.options)),
      location: spec.location,
      fingerprints: entry.fingerprints,
      queries: entry.queries.map((query) => ({ ...query, rows: null })),
      extensions: entry.extensions.map(({ name, program }) => ({ name, program })),
    }
    // Summarized only when asked for or stored (generations.ts): 5 ms per 1,000 rows is not for the edit path.
    const raw = entry.queries.map((query) => rows.get(queryKey(query.sql, query.params)))
    this.context.generations!.record(spec.location.path, regionJob(spec.id!), generation, raw)
  }

  /**
   * What changed since `generation` was generated: the dependencies whose fingerprints differ
   * now (`fs:file:tasks/a.md`), the rows its queries return now and did not then (or the other
   * way round: `tasks/b.md`, `row 3`), queries whose rows changed but cannot be told row by
   * row, and extensions that now run another program or are gone.
   */
  async changedSince(generation: Generation): Promise<InputChanges> {
    const dependencies: string[] = []
    for (const [dependency, fingerprint] of generation.fingerprints) {
      if (fingerprint === RESOURCE || fingerprint === QUERIES) continue
      if ((await this.fingerprintNow(dependency, generation.location)) !== fingerprint) dependencies.push(dependency)
    }
    const rows = new Set<string>()
    const queries: string[] = []
    for (const query of this.context.generations?.summarized(generation) ?? generation.queries) {
      if (query.hash === CONFLICT) continue
      const now = await this.rowsNow(query)
      if (now !== null && fingerprintValue(now) === query.hash) continue
      const summary = now === null ? null : summarizeRows(now)
      if (query.rows && summary) for (const name of changedRows(query.rows, summary)) rows.add(name)
      else queries.push(query.sql)
    }
    const extensions = generation.extensions.filter((use) => this.context.extension(use.name)?.program !== use.program).map((use) => use.name)
    return { dependencies, rows: [...rows], queries, extensions }
  }

  private listen(recorder: Recorder, allQueries: boolean): void {
    this.running.add(recorder)
    let at = this.runningAt.get(recorder.path)
    if (!at) this.runningAt.set(recorder.path, (at = new Set()))
    at.add(recorder)
    if (allQueries) this.hearingAllQueries.add(recorder)
  }

  private stopListening(recorder: Recorder): void {
    this.running.delete(recorder)
    this.hearingAllQueries.delete(recorder)
    const at = this.runningAt.get(recorder.path)
    at?.delete(recorder)
    if (at?.size === 0) this.runningAt.delete(recorder.path)
  }

  private async entryOf(spec: JobSpec, outcome: JobOutcome, recorder: Recorder, indexSeen: number): Promise<MemoEntry> {
    const fingerprints: [string, string][] = []
    let complete = true
    for (const dependency of outcome.dependencies) {
      const fingerprint = await this.fingerprintRecorded(dependency, spec.location, recorder)
      if (fingerprint === undefined) complete = false
      else fingerprints.push([dependency, fingerprint])
    }
    const queries = [...recorder.queries.values()]
    if (queries.some((q) => q.hash === CONFLICT)) complete = false
    const extensions: ExtensionUse[] = []
    for (const name of recorder.extensions) {
      const identity = this.context.extension(name)
      if (!identity) complete = false
      else extensions.push({ name, ...identity })
    }
    return { location: spec.location, outcome, fingerprints, queries, extensions, suspect: false, touches: 0, complete, indexSeen }
  }

  /** A dependency's fingerprint as the job saw it, or undefined when unknown. */
  private async fingerprintRecorded(dependency: string, location: Location, recorder: Recorder): Promise<string | undefined> {
    if (dependency.startsWith('resource:')) return RESOURCE
    if (dependency === 'index:documents' || dependency === 'index:entries') return recorder.queries.size > 0 ? QUERIES : undefined
    const read = recorder.reads.get(readKey(dependency, location))
    if (read !== undefined) return read === CONFLICT ? undefined : read
    if (!dependency.startsWith('fs:file:')) return undefined
    // Read without the host (a template, a model file): trust it only if it was settled.
    const relPath = fsPathOf(dependency.slice('fs:file:'.length))
    if (relPath === null) return undefined
    const modified = settledTime(path.join(this.context.root, relPath))
    if (modified === undefined || modified > recorder.startedAt - UNSETTLED_MS) return undefined
    // The file has not changed since before the job started, so a fingerprint taken since the
    // last change is of what the job read; one taken before an unreported change is of an older
    // text, which can only make a later check re-run the job. A nested project's folder indexes
    // share one model and one template: each is read and hashed once, not once per job.
    return this.fingerprintNow(dependency, location)
  }

  private async validEntry(key: string): Promise<MemoEntry | undefined> {
    let entry = this.entries.get(key)
    if (!entry) {
      entry = this.load(key)
      if (!entry) return undefined
    } else if (!entry.suspect && this.sameExtensions(entry)) {
      return entry
    }
    // A change that arrived while fingerprints were compared may not be in them: run the job.
    // (An entry in memory hears the changes of its own dependencies; a loaded one, any change.)
    const inMemory = this.entries.get(key) === entry
    const before = inMemory ? entry.touches : this.generation
    const indexAtStart = this.indexGeneration
    const stateAtStart = this.context.indexState()
    const valid = entry.complete && this.sameExtensions(entry) && (await this.sameFingerprints(entry))
    if (valid && before === (inMemory ? entry.touches : this.generation)) {
      entry.suspect = false
      entry.indexSeen = indexAtStart
      const state = this.context.indexState() === stateAtStart ? stateAtStart : undefined
      // A stored entry checked at another index state: stored again, so the next start need not re-run its queries.
      const storeAgain = !inMemory && state !== undefined && state !== entry.indexState
      entry.indexState = state
      if (storeAgain) this.persist(key, entry)
      for (const use of entry.extensions) use.runtime ??= this.context.extension(use.name)?.runtime
      if (!this.entries.has(key)) {
        this.entries.set(key, entry)
        this.graph.set(key, entry.outcome.dependencies)
      }
      return entry
    }
    this.drop(key)
    return undefined
  }

  private load(key: string): MemoEntry | undefined {
    const stored = this.context.store?.get(key) as StoredEntry | undefined
    if (!stored || !Array.isArray(stored.fingerprints) || !Array.isArray(stored.queries) || !stored.outcome) return undefined
    const extensions = stored.extensions.map((e) => ({ ...e, runtime: undefined }))
    return { ...stored, extensions, suspect: true, touches: 0, complete: true, indexSeen: -1 }
  }

  private persist(key: string, entry: MemoEntry): void {
    const stored: StoredEntry = {
      location: entry.location,
      outcome: entry.outcome,
      fingerprints: entry.fingerprints,
      queries: entry.queries,
      extensions: entry.extensions.map(({ name, program }) => ({ name, program })),
      indexState: entry.indexState,
      documentsState: entry.documentsState,
    }
    this.context.store?.put(key, stored)
    if (stored.documentsState === undefined) this.unstamped.add(key)
  }

  private drop(key: string): void {
    if (this.entries.delete(key)) this.graph.delete(key)
    this.context.store?.delete(key)
  }

  private sameExtensions(entry: MemoEntry): boolean {
    return entry.extensions.every((use) => {
      const now = this.context.extension(use.name)
      return now !== undefined && now.program === use.program && (use.runtime === undefined || now.runtime === use.runtime)
    })
  }

  private async sameFingerprints(entry: MemoEntry): Promise<boolean> {
    for (const [dependency, fingerprint] of entry.fingerprints) {
      if (fingerprint === RESOURCE || fingerprint === QUERIES) continue
      if ((await this.fingerprintNow(dependency, entry.location)) !== fingerprint) return false
    }
    // A query that cannot read any column changed since its hash was current, or whose WHERE
    // filters out every row changed since (query-rows.ts), returns the same rows; none can when
    // the index holds the very rows the hashes were taken at.
    // (A query that depends on more than the rows, such as the clock, reads every column.)
    const sameRows = entry.indexState !== undefined && entry.indexState === this.context.indexState()
    // A stored entry's first check: when only rows outside the documents changed (rule 7), a
    // query that reads nothing else returns the same rows. (Later checks know the changes.)
    const sameDocuments =
      !sameRows && entry.indexSeen === -1 && entry.documentsState !== undefined && entry.documentsState === this.context.documentsState()
    const change = sameRows ? NO_ROW_CHANGE : sameDocuments ? null : this.rowsChangedSince(entry.indexSeen)
    for (const query of entry.queries) {
      if (sameDocuments && !queryMayReadBeyondDocuments(query.sql)) continue
      if (change !== null && !queryMayReadChange(query, change, this.evaluateSql)) continue
      if ((await this.queryHashNow(query)) !== query.hash) return false
    }
    return true
  }

  /**
   * The `documents` columns the index's changes after generation `seen` changed, the paths
   * of the rows they changed and those rows' states (`ChangedRows`), or null when any may have (rows appeared or went, `entries`
   * changed, `seen` unknown or too long ago).
   */
  private rowsChangedSince(seen: number): RowChange | null {
    if (seen === this.indexGeneration) return NO_ROW_CHANGE
    const oldest = this.indexChanges[0]
    if (seen < 0 || oldest === undefined || oldest.at > seen + 1) return null
    const columns = new Set<string>()
    const paths = new Set<string>()
    const rows: (ChangedRows | undefined)[] = []
    for (const { at, change } of this.indexChanges) {
      if (at <= seen) continue
      if (change === null) return null
      for (const column of change.columns) columns.add(column)
      for (const changed of change.paths) paths.add(changed)
      rows.push(change.rows)
    }
    return { columns, paths, rows: ChangedRows.merge(rows) }
  }

  /** The dependency's fingerprint in the current state (taken once between changes). */
  private fingerprintNow(dependency: string, location: Location): Promise<string> {
    const key = `read\u0000${readKey(dependency, location)}`
    let fingerprint = this.current.get(key)
    if (!fingerprint) {
      fingerprint = this.context.resolve(dependency, location, []).then(
        (read) => fingerprintValue(read.value),
        (error: unknown) => fingerprintFailure(error),
      )
      this.current.set(key, fingerprint)
    }
    return fingerprint
  }

  /** A query's current rows, or null when it fails (taken once between changes, as fingerprints are). */
  private rowsNow(query: { sql: string; params: Record<string, unknown> }): Promise<unknown[] | null> {
    const key = queryKey(query.sql, query.params)
    let rows = this.currentRows.get(key)
    if (!rows) {
      rows = this.context.query(query.sql, query.params).catch(() => null)
      this.currentRows.set(key, rows)
    }
    return rows
  }

  private queryHashNow(query: RecordedQuery): Promise<string> {
    const rowsKey = queryKey(query.sql, query.params)
    const key = `query\u0000${rowsKey}`
    let hash = this.current.get(key)
    if (!hash) {
      hash = this.checkRows(rowsKey, query).then(
        (rows) => {
          const now = fingerprintValue(rows)
          if (now !== query.hash) this.checkedRows.set(rowsKey, { rows, hash: now })
          return now
        },
        (error: unknown) => fingerprintFailure(error),
      )
      this.current.set(key, hash)
    }
    return hash
  }

  /**
   * A check's run of a query: its rows now. A query whose rows can be patched by path
   * (`pathRestrictedQuery`) and whose rows an earlier check kept (`lastRows`) runs restricted
   * to the rows changed since (query-patches.ts), when the index says which (a cheap one on
   * the index itself, synchronously, the others in the query sandbox); else in full.
   * The rows returned are the caller's (a job may get them); those kept are a copy of each row.
   */
  private async checkRows(rowsKey: string, query: { sql: string; params: Record<string, unknown> }): Promise<unknown[]> {
    const restricted = pathRestrictedQuery(query.sql)
    if (restricted === null) return this.context.query(query.sql, query.params)
    const generation = this.indexGeneration
    const last = this.lastRows.get(rowsKey)
    const change = last && this.rowsChangedSince(last.generation)
    let rows: Record<string, unknown>[] | null = null
    if (last && change && change.paths.size <= MAX_PATCHED_PATHS) {
      try {
        const params = { ...query.params, [CHANGED_PATHS_PARAM]: JSON.stringify([...change.paths]) }
        // A cheap one runs here, at once: no turn of the event loop, so the change's plan is not
        // held behind Vite's watcher re-reading a large folder meanwhile (bench/RESULTS.md).
        const fresh = (restricted.cheap ? this.context.evaluate(restricted.sql, params) : await this.context.query(restricted.sql, params)) as Record<string, unknown>[]
        rows = patchRows(last.rows, change.paths, fresh)
        if (rows) this.stats.queriesPatched++
      } catch {
        rows = null // the full query says what is wrong, if anything
      }
    }
    rows ??= (await this.context.query(query.sql, query.params)) as Record<string, unknown>[]
    this.lastRows.delete(rowsKey)
    this.lastRows.set(rowsKey, { rows: rows.map((row) => ({ ...row })), generation })
    if (this.lastRows.size > MAX_KEPT_ROWS) this.lastRows.delete(this.lastRows.keys().next().value!)
    return rows
  }

}

/**
 * Whether a change of some `documents` columns in some rows may change what the entry read: one
 * of its queries can read one of those columns in one of those rows, or it is unknown (no
 * recorded query; a `sql:model:` dependency, whose query may be recorded at another location or
 * not at all: one the job names without reading it through the host has no fingerprint, so its
 * dependencies are looked at, not its fingerprints).
 */
function mayReadChange(entry: MemoEntry, change: RowChange, evaluate: EvaluateSql): boolean {
  if (entry.queries.length === 0 || entry.outcome.dependencies.some((dependency) => dependency.startsWith('sql:model:'))) return true
  return entry.queries.some((query) => queryMayReadChange(query, change, evaluate))
}

/** A recorded query can see the change: it can read one of the columns, and its WHERE keeps one of the rows. */
function queryMayReadChange(query: RecordedQuery, change: RowChange, evaluate: EvaluateSql): boolean {
  return queryMayReadColumns(query.sql, change.columns) && queryMayReadRows(query.sql, query.params, change.paths, evaluate, change.rows)
}

/** The job whose `invoke` runs in the current async context (see `recordQuery`). */
const jobScope = new AsyncLocalStorage<Recorder>()

/**
 * `run` outside any job's async context: what an extension asks through the host is its own
 * (an extension process restarted inside a job would otherwise carry that job's context into
 * every later request it makes, and its reads would be recorded for that job alone).
 */
export function outsideJobs<T>(run: () => T): T {
  return jobScope.exit(run)
}

/** Reads are the same wherever they happen, except SQL models (their rows depend on the location). */
function readKey(identifier: string, location: Location): string {
  return identifier.startsWith('sql:model:') ? `${identifier}\u0000${location.path}` : identifier
}

/** The modification time of a file, or of its nearest existing folder when it is missing. */
function settledTime(file: string): number | undefined {
  for (let at = file; ; at = path.dirname(at)) {
    try {
      return fs.statSync(at).mtimeMs
    } catch {
      if (path.dirname(at) === at) return undefined
    }
  }
}
