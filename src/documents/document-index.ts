/**
 * The SQLite document index (SPEC §7): what SQL models query.
 *
 * Contract:
 * - In: the project root, `sources.include` / `sources.exclude` (gitignore patterns),
 *   `sources.respect_gitignore`, and optionally an absolute `statePath` (the persistent cache).
 * - The database always lives in memory, private to this instance (two processes never share
 *   rows, locks or change detection). With `statePath` it starts from the snapshot stored there
 *   (written by an earlier instance, any process) and writes a new snapshot after `rebuild()`
 *   (unless told not to: a one-shot build writes it once its modules are loaded), by `persist()`,
 *   and at `close()`, when rows changed: the whole database, to a temporary file in the same
 *   folder renamed over `statePath`, so a reader sees an old or a new snapshot, never a torn one
 *   (the last writer wins; any snapshot is a valid start, see reconciling below). A snapshot
 *   written with another `cacheKey` (plugin version) or schema version is ignored silently; a
 *   file that is not an insitu index (not SQLite, corrupt, another tool's) is ignored with one
 *   `warn` naming it, and replaced by the next snapshot. Databases are opened by `openDatabase`
 *   (sqlite-database.ts): when better-sqlite3's native part cannot load, the constructor throws
 *   its `SqliteBindingError`, never a warning. Failing to write a snapshot warns once
 *   and the instance stops writing (the index keeps working in memory). `persist()` writes one
 *   now (when rows changed). `matchesSnapshot`: the rows are still those of the snapshot this
 *   instance started from (or the instance that handed it its rows did): no `stateId` changed
 *   since it was written, so results recorded against it still hold without querying. The
 *   folder is made by `ensureStateFolder` (state-folder.ts; the engine passes `<state folder>/vite-plugin-insitu/index.db`, never `paths.state` itself, which
 *   is the Python implementation's index).
 * - Reconciling a listing (`rebuild()`, a folder's rescan) trusts a stored document row
 *   without reading the file when the file's mtime (ns) and size equal the row's and the row
 *   was read at least `RACY_WINDOW_NS` after that mtime (a file written again within the same
 *   mtime tick as the read, on a coarse-timestamp filesystem, is read again; so is one with a
 *   future mtime). Like make and git, it does not see a file rewritten with the same size and
 *   its old mtime restored. A changed stat re-reads and re-hashes the file; identical bytes
 *   only update the stored stat (and its read time when the row's read was racy). A file event
 *   (`refresh`) always re-reads its file.
 * - A document that is not text within the limits of input-limits.ts (too large, not UTF-8, a
 *   NUL byte) is indexed by its path alone (document-record.ts), with one `warn` per document
 *   and problem: `insitu: docs/big.md: document is 100 MiB (…), over the limit of 16 MiB;
 *   indexed by its path alone (no title, body or front matter)`. It is not reported to
 *   `onDocumentRead` (whoever serves it reads the file itself).
 * - `entries` holds every file and folder `listProjectEntries` walks (excluded and gitignored
 *   paths never appear); `_documents` holds the files among them that `isDocument` accepts;
 *   the `documents` view is described in `index-schema.ts` (it is recreated only when the set of
 *   front-matter keys changes).
 * - `rebuild()` reconciles everything with the disk. `refresh(events)` reconciles only the
 *   event paths: the event type is a hint, the disk is the truth (a path that exists is
 *   (re)read, a folder is (re)scanned, a missing path removes it and everything under it). A
 *   `.gitignore` or `.git/info/exclude` event (with `respectGitignore`) means a full rebuild.
 * - `diskChanges()` changes nothing: the events that would bring the index in line with the disk
 *   now (a listed path not in `entries`: create; an entry no longer listed: delete, only the
 *   topmost of a removed subtree; a document whose bytes differ from its row's: update; a touched
 *   file with the same bytes is no change; with `settledBeforeMs`, files modified after that time
 *   are left out). For changes a watcher never reported (issue #38: an edit in a dev server's
 *   first moments, after this index read the file and before Vite's watcher watched it).
 * - `projectionChanged` is true only when what queries can see changed: a row of `entries`
 *   added/removed/changed kind (`entriesChanged`), or a document added/removed or changed in
 *   path, title, body or front matter (`documentsChanged`). Identical bytes, a touched mtime,
 *   or an edit inside a generated region body (bodies are blanked) update
 *   `content_hash`/`mtime_ns`/`size` but report false. `changedColumns`: which columns of
 *   `documents` changed, when every changed row kept its path (see the interface),
 *   `changedPaths` the paths of those rows, and `changedRows` what each held before the
 *   refresh and after each of its changes (changed-rows.ts).
 * - `runQuery(sql, params)`: the project's own queries (SQL models), as `query` but in the
 *   sandbox's processes (`sandbox`: src/sandbox/process-pool.ts; each keeps a copy that replays
 *   this index's writes, query-sandbox.ts), bounded by `queryTimeoutMs`; `prepareQueries(stage)`
 *   starts one ahead, and gives it its copy ahead; `closeQueries()` ends them.
 * - `query(sql, params)`: read-only (see `read-only-sql.ts`); rows as plain objects, parameters
 *   bound and values read back as Python's sqlite3 does (sql-values.ts: ints as INTEGER, integral
 *   REALs as `PythonFloat`, the first of duplicate column names).
 *   `prepareError(sql)`: SQLite's message when `sql` does not prepare, else null.
 * - `stateId`: an id of the rows as they are; any write makes a new one, a snapshot keeps it
 *   (with the SQLite version), so equal ids mean queries return what they returned then.
 *   `documentsState`: an id of the documents' rows alone (`_documents`, from which
 *   `_document_columns` and the `documents` view are made), equal in any instance, of any
 *   process, holding the same rows with the same SQLite: rows of `entries` or of the meta table
 *   changing leave it as it was (a build's output appearing in the project between two builds).
 */
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import {
  documentContentHash,
  type DocumentProjection,
  type DocumentRead,
  documentStateProblem,
  entryDepth,
  parseDocument,
  pathColumns,
  readDocument,
  readFileState,
  sameProjection,
} from './document-record.js'
import { addChangedColumns } from './changed-columns.js'
import { ChangedRows, type RowState } from './changed-rows.js'
import { errorCode, isMissing } from './fs-errors.js'
import {
  ensureSchema,
  frontMatterKeys,
  META_TABLE,
  replaceDocumentsView,
  COLUMNS_TABLE,
  documentColumnsSelectSql,
  SCHEMA_VERSION,
  viewColumnKeys,
  viewKeysOf,
} from './index-schema.js'
import { createPathMatcher, isIgnored, listProjectEntries, type ProjectEntry } from './project-files.js'
import { isInsideFolder, normalizeRelPath } from './project-paths.js'
import { allowWrites, prepareReadOnly, runReadOnly } from './read-only-sql.js'
import { ensureStateFolder } from './state-folder.js'
import { IndexJournal } from './index-journal.js'
import type { QueryTask } from './index-copy.js'
import { queryHooks, runQuery } from './query-sandbox.js'
import { ProcessPool } from '../sandbox/process-pool.js'
import { realPathSync } from './real-path.js'
import { openDatabase, SqliteBindingError } from './sqlite-database.js'

export interface DocumentIndexOptions {
  /** Absolute project root. */
  root: string
  /** `sources.include`: gitignore patterns of managed documents. */
  include: readonly string[]
  /** `sources.exclude`: gitignore patterns never walked nor indexed. */
  exclude: readonly string[]
  /** `sources.respect_gitignore`. */
  respectGitignore: boolean
  /** Absolute path of the persistent snapshot (`paths.state`); in memory only when omitted. */
  statePath?: string
  /** What a snapshot must have been written with to be used (e.g. the plugin's version). @default '' */
  cacheKey?: string
  /** Told (once per problem) when a state file is unusable or cannot be written. */
  warn?: (message: string) => void
  /**
   * Told of every document the index reads, with the text as decoded and the front matter
   * parsed: a build serves its documents from these reads instead of reading and parsing each
   * file again (issue #17). When given, a reconcile reads every document it lists (a stat that
   * vouches for a row does not spare the read) and reports each, changed or not.
   */
  onDocumentRead?: (relPath: string, read: DocumentRead) => void
  /**
   * Milliseconds one of the project's queries (`runQuery`) may run before it fails with a
   * `QueryTimeoutError` (query-sandbox.ts).
   * @default 30000
   */
  queryTimeoutMs?: number
  /**
   * Milliseconds after which the query sandbox's last process ends when left idle (a one-shot
   * build: its memory is given back once the build no longer queries; a later query starts
   * another). Undefined: it stays until `closeQueries()`.
   * @default undefined
   */
  queryProcessIdleMs?: number
  /**
   * Rows another instance with the same options reconciled a moment ago (`handOver()`, in a
   * worker thread: rebuild-in-worker.ts): this instance starts from them as from a usable
   * snapshot, without reading `statePath`, with that instance's snapshot state and its warnings
   * already told.
   */
  handedOver?: IndexHandover
  /**
   * The query sandbox, started ahead (its first process boots while the index is scanned in a
   * worker thread: engine.ts): `sandbox` is this pool, given this index's hooks. The index
   * closes it as its own.
   */
  sandbox?: ProcessPool
}

/** What `handOver()` gives another instance (`DocumentIndexOptions.handedOver`); structured-cloneable. */
export interface IndexHandover {
  /** The database, serialized (with the snapshot's meta rows: its `stateId` carries over). */
  bytes: Uint8Array
  /** The rows are those of the snapshot at `statePath` (written by `persist()`). */
  persisted: boolean
  /** Writing a snapshot failed (warned): the next instance does not try again either. */
  writeFailed: boolean
  /** That instance's `matchesSnapshot`: its rows are those of the snapshot it started from. */
  matchesSnapshot: boolean
  /** The warnings that instance gave (its `warn`): not given again. */
  warned: string[]
}

/** How many SQL texts `query()` keeps prepared. */
const MAX_CACHED_QUERIES = 512

/** How long after its mtime a file must have been read for its stat to vouch for the row (2 s: FAT). */
export const RACY_WINDOW_NS = 2_000_000_000n

/** What a refresh changed in the queryable projection. */
export interface ProjectionChange {
  /** Anything queries can see changed (`entries` or `documents`). */
  projectionChanged: boolean
  /** A row of the `documents` view was added, removed or changed. */
  documentsChanged: boolean
  /** A row of `entries` (every file and folder walked) was added, removed or changed kind. */
  entriesChanged: boolean
  /**
   * When every `documents` row that changed kept its path: the columns whose value changed in
   * some row (changed-columns.ts; a prose edit: `body` and `content_hash`). Undefined when
   * nothing changed, or a row appeared or went, or the view's columns changed.
   */
  changedColumns: ReadonlySet<string> | undefined
  /** With `changedColumns`: the paths of the rows that changed. */
  changedPaths?: ReadonlySet<string>
  /** With `changedColumns`: what those rows held before and after (changed-rows.ts). */
  changedRows?: ChangedRows
}

interface Changes {
  entriesChanged: boolean
  documentsChanged: boolean
}

export interface DocumentEvent {
  type: 'create' | 'update' | 'delete'
  /** Project-relative POSIX path of a file or a folder. */
  path: string
}

type EntryKind = 'file' | 'directory'

interface StoredStat {
  content_hash: string
  mtime_ns: bigint
  size: bigint
  read_ns: bigint
}

type StoredDocument = DocumentProjection & StoredStat

/** More changed documents than this at once: `documents` is recreated rather than updated row by row. */
const MAX_ROW_UPDATES = 500

/** Files `diskChangeSteps` looks at between two yields. */
const DISK_CHECK_SLICE = 1000

export class DocumentIndex {
  readonly root: string
  private readonly db: Database.Database
  /** The index's writes, for the query sandbox's copies (index-journal.ts). */
  private readonly journal: IndexJournal
  /**
   * Where `runQuery` runs the project's queries; made at the first use (`sandbox`). A holder, so
   * that views made with `Object.create(index)` (the job memo's recording view) share it.
   */
  private readonly sandboxHolder: { pool: ProcessPool | undefined } = { pool: undefined }
  private queriesClosed = false
  /** Milliseconds one of the project's queries (or the templates of a SQL model) may run. */
  readonly queryTimeoutMs: number
  private readonly queryProcessIdleMs: number | undefined
  private readonly includes: (relPath: string, isDirectory?: boolean) => boolean
  private readonly excludes: (relPath: string, isDirectory?: boolean) => boolean
  private readonly walkOptions: { exclude: readonly string[]; respectGitignore: boolean }
  private readonly statements = new Map<string, Database.Statement>()
  /**
   * `query()`'s statements, prepared once per SQL text (a nested project re-runs hundreds of
   * folder models per edit to check their rows: preparing each again cost more than running it,
   * issue #17). Dropped whenever the `documents` view is replaced (its columns change).
   */
  private readonly queryStatements = new Map<string, Database.Statement>()
  private viewKeys: string[] = []
  private closed = false
  private readonly statePath: string | undefined
  private readonly cacheKey: string
  private readonly warn: (message: string) => void
  private readonly onDocumentRead: DocumentIndexOptions['onDocumentRead']
  /** `root` ending in the path separator. */
  private readonly rootPrefix: string
  /** `total_changes()` when the rows last matched the snapshot on disk (-1: no snapshot yet). */
  private persistedChanges = -1
  /** The current `stateId` and the `total_changes()` it is the id of (see `stateId`). */
  private state: { id: string; at: number } | undefined
  /** The `stateId` of the snapshot this instance started from, when it kept that id (see `matchesSnapshot`). */
  private snapshotStateId: string | undefined
  /** The current `documentsState` and the `total_changes()` it is the id of. */
  private documentsStateAt: { id: string; at: number } | undefined
  /**
   * The distinct front-matter keys of all documents when the view was last checked (undefined:
   * not known), and whether a change since may have added or removed one: the view is only
   * recomputed then (scanning every document's keys costs milliseconds at 10,000 documents).
   */
  private knownKeys: Set<string> | undefined
  private keysMayHaveChanged = false
  /**
   * While a reconcile writes every row anew (a rebuild of an empty index, a cold start): the
   * front-matter keys of the documents read, so the view's columns need no query over them all.
   */
  private keysOfEveryRow: Set<string> | undefined
  /** Documents whose projection changed since `documents`' stored columns were last brought in step ('all': too many to do one by one). */
  private stale: Set<string> | 'all' = new Set()
  /**
   * Since the current refresh began: the `documents` columns whose value changed in a row that
   * kept its path; null once a row appeared or went or the view's columns changed.
   */
  private changedColumns: Set<string> | null = new Set()
  /** Since the current refresh began: the documents whose projection changed (see `changedColumns`). */
  private changedPaths = new Set<string>()
  /** With `changedColumns`: each changed row's state before the refresh and after each of its changes. */
  private changedStates = new Map<string, RowState[]>()
  /** The root's real path, resolved once per reconcile (`readFileState` confines reads to it). */
  private realRoot: string | undefined

  constructor(options: DocumentIndexOptions) {
    this.root = path.resolve(options.root)
    this.includes = createPathMatcher(options.include)
    this.excludes = createPathMatcher(options.exclude)
    this.walkOptions = { exclude: options.exclude, respectGitignore: options.respectGitignore }
    this.statePath = options.statePath
    this.cacheKey = options.cacheKey ?? ''
    this.warn = options.warn ?? (() => {})
    this.onDocumentRead = options.onDocumentRead
    this.rootPrefix = this.root.endsWith(path.sep) ? this.root : this.root + path.sep
    const handedOver = options.handedOver
    if (handedOver) {
      for (const message of handedOver.warned) this.warned.add(message)
      this.writeFailed = handedOver.writeFailed
    }
    const snapshot = handedOver ? openDatabase(Buffer.from(handedOver.bytes.buffer, handedOver.bytes.byteOffset, handedOver.bytes.byteLength)) : this.loadSnapshot()
    this.db = snapshot ?? openDatabase(':memory:')
    this.journal = new IndexJournal(this.db)
    this.queryTimeoutMs = options.queryTimeoutMs ?? 30_000
    this.queryProcessIdleMs = options.queryProcessIdleMs
    if (options.sandbox) {
      options.sandbox.useHooks(queryHooks(this.journal))
      this.sandboxHolder.pool = options.sandbox
    }
    if (snapshot) {
      this.persistedChanges = handedOver?.persisted === false ? -1 : this.totalChanges()
      const stored = snapshot.prepare(`select value from ${META_TABLE} where key = 'state_id'`).pluck().get()
      // Written by another SQLite: the same rows may come back in another order, so a new id.
      if (typeof stored === 'string' && stored.startsWith(`${sqliteVersion(snapshot)}:`)) {
        this.state = { id: stored, at: this.totalChanges() }
        if (handedOver?.matchesSnapshot !== false) this.snapshotStateId = stored
      }
    }
    ensureSchema(this.db)
    const stored = snapshot ? viewKeysOf(this.db) : undefined
    if (stored) {
      this.viewKeys = stored
    } else {
      const distinct = frontMatterKeys(this.db)
      this.knownKeys = new Set(distinct)
      this.viewKeys = viewColumnKeys(distinct)
      replaceDocumentsView(this.db, this.viewKeys)
    }
  }

  /** Whether `relPath` is a managed document: `include` matches it and `exclude` does not. */
  isDocument(relPath: string): boolean {
    return this.includes(relPath, false) && !this.excludes(relPath, false)
  }

  /** Full scan: reconciles `entries` and `_documents` with the disk, then writes the snapshot (unless `persist` is false). */
  rebuild(options: { persist?: boolean } = {}): void {
    this.assertOpen()
    this.withRealRoot(() => this.db.transaction(() => this.reconcileAll())())
    if (options.persist !== false) this.persist()
  }

  /**
   * The events that would bring the index in line with the disk (see the header); changes
   * nothing. With `settledBeforeMs` (a `Date.now()` time), a file created or modified after it is
   * left out: a watcher's event for it may still be on its way.
   */
  diskChanges(options: { settledBeforeMs?: number } = {}): DocumentEvent[] {
    const steps = this.diskChangeSteps(options)
    for (;;) {
      const step = steps.next()
      if (step.done) return step.value
    }
  }

  /**
   * `diskChanges` in steps: it yields after reading the rows, after listing the project and
   * after every `DISK_CHECK_SLICE` documents it looked at (a dev server lets other work run
   * there: 10,000 documents take about 100 ms in all), and returns the events. The index is not
   * read after the first yield; the disk is read as the steps go.
   */
  *diskChangeSteps(options: { settledBeforeMs?: number } = {}): Generator<void, DocumentEvent[]> {
    this.assertOpen()
    const settledBeforeNs = options.settledBeforeMs === undefined ? undefined : BigInt(Math.floor(options.settledBeforeMs)) * 1_000_000n
    const unsettled = (stat: fs.BigIntStats | undefined) => settledBeforeNs !== undefined && stat !== undefined && stat.mtimeNs > settledBeforeNs
    const entries = this.rowsUnder('entries', '') as [string, EntryKind][]
    const documents = this.rowsUnder('_documents', '') as [string, string, bigint, bigint][]
    yield
    const listing = listProjectEntries(this.root, this.walkOptions)
    yield
    const listed = new Map(listing.map((entry) => [entry.path, entry.kind]))
    const events: DocumentEvent[] = []
    // Paths whose event covers everything under them (a folder gone, created or changed kind).
    const covered = new Set<string>()
    const isCovered = (relPath: string) => {
      for (let slash = relPath.indexOf('/'); slash !== -1; slash = relPath.indexOf('/', slash + 1)) {
        if (covered.has(relPath.slice(0, slash))) return true
      }
      return false
    }
    for (const [storedPath, storedKind] of entries) {
      const kind = listed.get(storedPath)
      listed.delete(storedPath)
      if (kind === storedKind || isCovered(storedPath)) continue
      // Gone, or a file that became a folder (or the reverse): the path's whole subtree is read again.
      events.push({ type: kind === undefined ? 'delete' : 'update', path: storedPath })
      covered.add(storedPath)
    }
    // In listing order: a folder comes before what is in it.
    for (const [relPath, kind] of listed) {
      if (isCovered(relPath)) continue
      if (settledBeforeNs !== undefined && unsettled(fs.statSync(this.rootPrefix + relPath, { bigint: true, throwIfNoEntry: false }))) continue
      events.push({ type: 'create', path: relPath })
      if (kind === 'directory') covered.add(relPath)
    }
    let looked = 0
    for (const [storedPath, contentHash, mtimeNs, size] of documents) {
      if (++looked % DISK_CHECK_SLICE === 0) yield
      if (isCovered(storedPath)) continue
      let stat: fs.BigIntStats | undefined
      try {
        stat = fs.statSync(this.rootPrefix + storedPath, { bigint: true, throwIfNoEntry: false })
      } catch {
        continue // not reachable as a file (a folder on its path became a file): the listing said so
      }
      if (!stat?.isFile() || (stat.mtimeNs === mtimeNs && stat.size === size) || unsettled(stat)) continue
      // Its stat moved: a change only if its bytes did (a touch, a save of the same text, is none).
      const state = readFileState(this.realRootPath(), path.join(this.root, storedPath))
      if (state && documentContentHash(state) !== contentHash) events.push({ type: 'update', path: storedPath })
    }
    return events
  }

  refresh(events: readonly DocumentEvent[]): ProjectionChange {
    this.assertOpen()
    this.changedColumns = new Set()
    this.changedPaths = new Set()
    this.changedStates = new Map()
    // A path leaving the root (`..`) is not the index's business.
    const paths = [...new Set(events.map((event) => normalizeRelPath(event.path)))].filter(
      (p) => !p.split('/').includes('..'),
    )
    const { entriesChanged, documentsChanged } = this.withRealRoot(() => this.db.transaction((): Changes => {
      if (paths.some((p) => p === '' || (this.walkOptions.respectGitignore && isIgnoreRulesFile(p)))) {
        return this.reconcileAll()
      }
      let entries = false
      let documents = false
      for (const relPath of paths) {
        const result = this.reconcilePath(relPath)
        entries ||= result.entriesChanged
        documents ||= result.documentsChanged
      }
      if (documents) this.refreshView()
      return { entriesChanged: entries, documentsChanged: documents }
    })())
    const changedColumns = documentsChanged && this.changedColumns !== null ? this.changedColumns : undefined
    const changedPaths = changedColumns && this.changedPaths
    const changedRows = changedColumns && new ChangedRows(this.changedStates, this.viewKeys)
    return { projectionChanged: entriesChanged || documentsChanged, documentsChanged, entriesChanged, changedColumns, changedPaths, changedRows }
  }

  /** Project-relative paths of every indexed document, sorted. */
  documentPaths(): string[] {
    this.assertOpen()
    return (this.statement('select path from _documents order by path').all() as { path: string }[]).map((r) => r.path)
  }

  query(sql: string, params: Record<string, unknown> = {}): Record<string, unknown>[] {
    this.assertOpen()
    let stmt = this.queryStatements.get(sql)
    if (!stmt) {
      stmt = prepareReadOnly(this.db, sql)
      // Models change as people edit them: keep the recent texts only.
      if (this.queryStatements.size >= MAX_CACHED_QUERIES) this.queryStatements.clear()
      this.queryStatements.set(sql, stmt)
    }
    return runReadOnly(this.db, stmt, params)
  }

  /**
   * One of the project's queries (a SQL model's, as written by its users): the same as `query`,
   * but run in the query sandbox (query-sandbox.ts: another process with a copy of the rows as
   * they are now), so that it can be stopped when it runs longer than `queryTimeoutMs`
   * (`QueryTimeoutError`) and never holds this process's event loop.
   */
  runQuery(sql: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
    this.assertOpen()
    if (this.queriesClosed) return Promise.reject(new Error('the document index is closed'))
    return runQuery(this.sandbox, sql, params, this.queryTimeoutMs)
  }

  /**
   * The sandbox's processes, each with a copy of this index (made at the first use): where
   * `runQuery` runs, and where other work that may never end can run too (a template that
   * outruns its slice of this process: builtins/jinja-renderer.ts).
   */
  get sandbox(): ProcessPool {
    // Closed: no new pool (its processes would outlive the index, nobody closing them).
    if (!this.sandboxHolder.pool && (this.closed || this.queriesClosed)) throw new Error('the document index is closed')
    this.sandboxHolder.pool ??= new ProcessPool(queryHooks(this.journal), this.queryProcessIdleMs)
    return this.sandboxHolder.pool
  }

  /**
   * Ready the sandbox ahead of the first `runQuery` (a project with SQL models): `'process'`
   * starts its first process (it boots while the index is read), `'copy'` also gives it its copy
   * of the rows as they are now (it loads them while the first pages are transformed).
   */
  prepareQueries(stage: 'process' | 'copy'): void {
    if (this.closed || this.queriesClosed) return
    this.sandbox.prepare(stage === 'copy' ? ({ kind: 'query' } satisfies Pick<QueryTask, 'kind'>) : undefined)
  }

  /**
   * Whether the rows are those of the snapshot this instance started from (or the instance that
   * handed them over did): none changed since, so the snapshot's `stateId` still names them (the
   * header). False without a snapshot, after any write (a document read again, a stat touched),
   * and for a snapshot another SQLite wrote.
   */
  get matchesSnapshot(): boolean {
    return this.snapshotStateId !== undefined && this.stateId === this.snapshotStateId
  }

  /**
   * An id of the rows as they are now: it changes whenever any row changes (any write since it
   * was taken, a touched stat included), and a snapshot keeps it, so an instance that loads a
   * snapshot and changes nothing has the id of the instance that wrote it. Equal ids mean the
   * same rows (and the same SQLite), so a query's recorded rows are still its rows.
   */
  get stateId(): string {
    const at = this.totalChanges()
    if (this.state?.at !== at) this.state = { id: `${sqliteVersion(this.db)}:${randomUUID()}`, at }
    return this.state.id
  }

  /**
   * An id of the documents' rows (see the header): a hash of every `_documents` row's path,
   * hashes of its bytes and projection and its stat, in path order, which the rest of each row,
   * `_document_columns` and the view's columns are made from (by this plugin version, which the
   * snapshot's cache key and the job store's header are of), and of the view's columns. Computed
   * again only after a write.
   */
  get documentsState(): string {
    const at = this.totalChanges()
    if (this.documentsStateAt?.at !== at) {
      const hash = createHash('sha256')
      // One line per row, its fields joined by NUL, in path order; made by SQLite as one text
      // (10,000 rows: about 15 ms, against 21 handed over one by one).
      const rows = this.statement(
        `select group_concat(path || char(0) || content_hash || char(0) || source_hash || char(0) || mtime_ns || char(0) || size || char(0) || read_ns, char(10) order by path) from _documents`,
      ).pluck()
      const lines = rows.get() as string | null
      if (lines !== null) hash.update(`${lines}\n`)
      // And the view's columns (made from the rows' keys; hashed too, should one ever lag behind).
      hash.update(String(this.statement(`select group_concat(name, char(0)) from pragma_table_info('${COLUMNS_TABLE}')`).pluck().get()))
      this.documentsStateAt = { id: `${sqliteVersion(this.db)}:${hash.digest('base64url')}`, at }
    }
    return this.documentsStateAt.id
  }

  /** SQLite's message when `sql` does not prepare, else null (to locate a SQL model's error). */
  prepareError(sql: string): string | null {
    this.assertOpen()
    try {
      this.db.prepare(sql)
      return null
    } catch (error) {
      return error instanceof Error ? error.message : String(error)
    }
  }

  /** End the query sandbox's processes (resolves once they are gone); `runQuery` fails after it. */
  async closeQueries(): Promise<void> {
    this.queriesClosed = true
    await this.sandboxHolder.pool?.close()
  }

  close(): void {
    if (this.closed) return
    this.persist()
    this.closed = true
    void this.sandboxHolder.pool?.close()
    this.db.close()
  }

  /**
   * The rows as they are, for another instance (`DocumentIndexOptions.handedOver`), with what it
   * must know of this one; this instance is closed without writing a snapshot (`persist()` first
   * when one is wanted).
   */
  handOver(): IndexHandover {
    this.assertOpen()
    const persisted = this.statePath !== undefined && this.totalChanges() === this.persistedChanges
    const matchesSnapshot = this.matchesSnapshot
    const stateId = this.stateId
    allowWrites(this.db)
    const meta = this.db.prepare(`insert or replace into ${META_TABLE} (key, value) values (?, ?)`)
    meta.run('cache_key', this.cacheKey)
    meta.run('state_id', stateId)
    const bytes = this.db.serialize()
    this.closed = true
    this.db.close()
    return { bytes, persisted, writeFailed: this.writeFailed, matchesSnapshot, warned: [...this.warned] }
  }

  /** Writes the snapshot when the rows changed since the last one (see the header). */
  persist(): void {
    this.assertOpen()
    if (this.statePath === undefined || this.writeFailed) return
    const changes = this.totalChanges()
    if (changes === this.persistedChanges) return
    const folder = path.dirname(this.statePath)
    const temporary = `${this.statePath}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`
    try {
      ensureStateFolder(folder, this.root)
      const stateId = this.stateId
      allowWrites(this.db)
      const meta = this.db.prepare(`insert or replace into ${META_TABLE} (key, value) values (?, ?)`)
      meta.run('cache_key', this.cacheKey)
      meta.run('state_id', stateId)
      fs.writeFileSync(temporary, this.db.serialize())
      fs.renameSync(temporary, this.statePath)
      this.persistedChanges = this.totalChanges()
      this.state = { id: stateId, at: this.persistedChanges } // the meta rows are not rows queries are about
    } catch (error) {
      try {
        fs.rmSync(temporary, { force: true })
      } catch {
        // nothing was created
      }
      this.writeFailed = true
      this.warnOnce(`insitu: cannot write the index cache ${this.displayPath()} (${errorCode(error) ?? messageOf(error)}); it stays in memory`)
    }
  }

  private readonly warned = new Set<string>()
  /** A snapshot could not be written (warned): this instance stops trying. */
  private writeFailed = false

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return
    this.warned.add(message)
    this.warn(message)
  }

  /** Once per document and problem: the document is indexed by its path alone (document-record.ts). */
  private warnPathOnly(relPath: string, problem: string): void {
    this.warnOnce(`insitu: ${relPath}: ${problem}; indexed by its path alone (no title, body or front matter)`)
  }

  private totalChanges(): number {
    return this.statement('select total_changes()').pluck().get() as number
  }

  private displayPath(): string {
    const statePath = this.statePath as string
    return isInsideFolder(this.root, statePath) ? path.relative(this.root, statePath).split(path.sep).join('/') : statePath
  }

  /** The snapshot at `statePath` as an in-memory database, or undefined (none, stale, unusable). */
  private loadSnapshot(): Database.Database | undefined {
    if (this.statePath === undefined) return undefined
    let bytes: Buffer
    try {
      bytes = fs.readFileSync(this.statePath)
    } catch (error) {
      if (!isMissing(error)) this.warnOnce(`insitu: cannot read the index cache ${this.displayPath()} (${messageOf(error)}); rebuilding it`)
      return undefined
    }
    let db: Database.Database | undefined
    try {
      db = openDatabase(bytes)
      const verdict = snapshotVerdict(db, this.cacheKey)
      if (verdict === 'usable') return db
      db.close()
      if (verdict === 'foreign') this.warnOnce(`insitu: ${this.displayPath()} is not an insitu index cache; rebuilding it`)
    } catch (error) {
      db?.close()
      if (error instanceof SqliteBindingError) throw error
      this.warnOnce(`insitu: ${this.displayPath()} is not an insitu index cache (${messageOf(error)}); rebuilding it`)
    }
    return undefined
  }

  /** Runs a reconcile (it writes rows): the root's real path resolved once, writes allowed (read-only-sql.ts). */
  private withRealRoot<T>(run: () => T): T {
    allowWrites(this.db)
    this.realRoot = realPathSync(this.root)
    try {
      return run()
    } finally {
      this.realRoot = undefined
    }
  }

  /** The root's real path: the one a reconcile resolved (`withRealRoot`), else resolved now. */
  private realRootPath(): string {
    return this.realRoot ?? realPathSync(this.root)
  }

  /** Prepared once per SQL text (the index's own statements only). */
  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql)
    if (!stmt) {
      stmt = this.db.prepare(sql)
      this.statements.set(sql, stmt)
    }
    return stmt
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the document index is closed')
  }

  private reconcileAll(): Changes {
    const listing = listProjectEntries(this.root, this.walkOptions)
    const empty = this.statement('select 1 from _documents limit 1').get() === undefined
    this.keysOfEveryRow = empty ? new Set() : undefined
    try {
      const result = this.reconcileListing('', listing)
      if (result.documentsChanged) this.refreshView()
      return result
    } finally {
      this.keysOfEveryRow = undefined
    }
  }

  /** Brings one event path (and everything under it) in line with the disk. */
  private reconcilePath(relPath: string): Changes {
    const kind = this.kindOnDisk(relPath)
    if (kind === undefined || isIgnored(this.root, this.walkOptions, relPath, kind === 'directory')) {
      const documentsChanged = this.removeSubtree(relPath, true)
      const entriesChanged = this.removeSubtree(relPath, false)
      return { entriesChanged, documentsChanged }
    }
    let entriesChanged = this.ensureAncestors(relPath)
    entriesChanged = this.putEntry(relPath, kind) || entriesChanged
    if (kind === 'file') {
      entriesChanged = this.removeSubtree(`${relPath}/`, false) || entriesChanged
      const removedUnder = this.removeSubtree(`${relPath}/`, true)
      const documentChanged = this.isDocument(relPath) ? this.upsertDocument(relPath) : this.deleteDocument(relPath)
      return { entriesChanged, documentsChanged: removedUnder || documentChanged }
    }
    const documentChanged = this.deleteDocument(relPath)
    const result = this.reconcileListing(relPath, listProjectEntries(this.root, this.walkOptions, relPath))
    return {
      entriesChanged: entriesChanged || result.entriesChanged,
      documentsChanged: documentChanged || result.documentsChanged,
    }
  }

  /** What `relPath` is on disk, following a symlink only when its target stays inside the root. */
  private kindOnDisk(relPath: string): EntryKind | undefined {
    const absolute = path.join(this.root, relPath)
    try {
      const lstat = fs.lstatSync(absolute)
      if (lstat.isSymbolicLink()) {
        const real = realPathSync(absolute)
        if (!isInsideFolder(this.realRootPath(), real)) return undefined
      }
      const stat = lstat.isSymbolicLink() ? fs.statSync(absolute) : lstat
      if (stat.isFile()) return 'file'
      if (stat.isDirectory()) return 'directory'
      return undefined
    } catch (error) {
      if (isMissing(error)) return undefined
      throw error
    }
  }

  /**
   * Reconciles the stored rows strictly below `scope` (everything when `scope` is `''`) with a
   * listing of that part of the project.
   */
  private reconcileListing(scope: string, listing: readonly ProjectEntry[]): Changes {
    const prefix = scope === '' ? '' : `${scope}/`
    let changed = false
    let documentsChanged = false
    const wanted = new Map(listing.map((entry) => [entry.path, entry.kind]))
    for (const [storedPath, storedKind] of this.rowsUnder('entries', prefix) as [string, EntryKind][]) {
      const kind = wanted.get(storedPath)
      if (kind === storedKind) wanted.delete(storedPath)
      else changed = this.deleteEntry(storedPath) || changed
    }
    for (const [relPath, kind] of wanted) {
      this.insertEntry(relPath, kind)
      changed = true
    }
    // A listed path is never excluded (the walk skips those): `include` alone decides.
    const documents = new Set(listing.filter((e) => e.kind === 'file' && this.includes(e.path, false)).map((e) => e.path))
    const stats = new Map<string, StoredStat>()
    for (const [storedPath, content_hash, mtime_ns, size, read_ns] of this.rowsUnder('_documents', prefix) as [string, string, bigint, bigint, bigint][]) {
      if (!documents.has(storedPath)) documentsChanged = this.deleteDocument(storedPath) || documentsChanged
      else stats.set(storedPath, { content_hash, mtime_ns, size, read_ns })
    }
    for (const relPath of documents) {
      const stored = stats.get(relPath)
      // Told of every read: the plugin serves a build's documents from them (so read them all).
      if (stored && !this.onDocumentRead && this.statVouchesFor(relPath, stored)) continue
      documentsChanged = this.upsertDocument(relPath, stored ?? null) || documentsChanged
    }
    return { entriesChanged: changed, documentsChanged }
  }

  /** Whether the file's stat shows it unchanged since `stored` was read (see the header). */
  private statVouchesFor(relPath: string, stored: StoredStat): boolean {
    if (stored.mtime_ns + RACY_WINDOW_NS > stored.read_ns) return false
    // A walked path is normalized: joining by hand is exact, and cheaper than path.join per file.
    const stat = fs.statSync(this.rootPrefix + relPath, { bigint: true, throwIfNoEntry: false })
    return stat !== undefined && stat.isFile() && stat.mtimeNs === stored.mtime_ns && stat.size === stored.size
  }

  /** The stored rows strictly below `prefix` as arrays: `[path, kind]` or `[path, content_hash, mtime_ns, size, read_ns]`. */
  private rowsUnder(table: 'entries' | '_documents', prefix: string): unknown[][] {
    const columns = table === 'entries' ? 'path, kind' : 'path, content_hash, mtime_ns, size, read_ns'
    if (prefix === '') return this.statement(`select ${columns} from ${table}`).raw(true).safeIntegers(table === '_documents').all() as unknown[][]
    // `path` in [prefix, prefix with its trailing '/' bumped to '0'): exactly the paths below it.
    const below = this.statement(`select ${columns} from ${table} where path >= ? and path < ?`)
    return below.raw(true).safeIntegers(table === '_documents').all(prefix, `${prefix.slice(0, -1)}0`) as unknown[][]
  }

  /** Removes `relPath` and everything below it (`relPath` ending in `/`: only below it). */
  private removeSubtree(relPath: string, documents: boolean): boolean {
    const table = documents ? '_documents' : 'entries'
    const base = relPath.endsWith('/') ? relPath.slice(0, -1) : relPath
    let removed = 0
    if (!relPath.endsWith('/')) removed += this.statement(`delete from ${table} where path = ?`).run(base).changes
    removed += this.statement(`delete from ${table} where path >= ? and path < ?`).run(`${base}/`, `${base}0`).changes
    if (documents && removed > 0) {
      this.keysMayHaveChanged = true
      this.changedColumns = null
      this.markStale()
    }
    return removed > 0
  }

  /** Adds the folders above `relPath` that are not listed yet (a file created in a new folder). */
  private ensureAncestors(relPath: string): boolean {
    let changed = false
    let parent = pathColumns(relPath).parent
    while (parent !== '') {
      changed = this.putEntry(parent, 'directory') || changed
      parent = pathColumns(parent).parent
    }
    return changed
  }

  private putEntry(relPath: string, kind: EntryKind): boolean {
    const current = this.statement('select kind from entries where path = ?').get(relPath) as { kind: string } | undefined
    if (current?.kind === kind) return false
    this.insertEntry(relPath, kind)
    return true
  }

  private insertEntry(relPath: string, kind: EntryKind): void {
    const { parent, name } = pathColumns(relPath)
    const depth = entryDepth(relPath)
    const insert = this.statement('insert or replace into entries (path, parent, name, kind, depth) values (?, ?, ?, ?, ?)')
    insert.run(relPath, parent, name, kind, depth)
  }

  private deleteEntry(relPath: string): boolean {
    return this.statement('delete from entries where path = ?').run(relPath).changes > 0
  }

  private deleteDocument(relPath: string): boolean {
    const deleted = this.statement('delete from _documents where path = ?').run(relPath).changes > 0
    if (deleted) {
      this.keysMayHaveChanged = true // it may have been the last document with a key
      this.changedColumns = null
      this.markStale(relPath)
    }
    return deleted
  }

  /** Remember that `documents` no longer holds `relPath`'s projection (undefined: many rows). */
  private markStale(relPath?: string): void {
    if (this.stale === 'all') return
    if (relPath === undefined || this.stale.size >= MAX_ROW_UPDATES) this.stale = 'all'
    else this.stale.add(relPath)
  }

  /** Notes whether a document going from `before` to `after` front matter may change the set of keys. */
  private noteKeys(before: string | undefined, after: string): void {
    if (this.keysMayHaveChanged || this.knownKeys === undefined) {
      this.keysMayHaveChanged = true
      return
    }
    const added = topLevelKeys(after)
    if (added === undefined || added.some((key) => !this.knownKeys!.has(key))) this.keysMayHaveChanged = true
    else if (before !== undefined && before !== after) {
      const kept = new Set(added)
      const removed = topLevelKeys(before)
      if (removed === undefined || removed.some((key) => !kept.has(key))) this.keysMayHaveChanged = true
    }
  }

  /**
   * (Re)reads one document; true when its projection changed (or it appeared/disappeared).
   * `known`: the row's stored stat (null: no row), when the caller has read it already.
   */
  private upsertDocument(relPath: string, known?: StoredStat | null): boolean {
    const readNs = BigInt(Date.now()) * 1_000_000n
    const state = readFileState(this.realRootPath(), path.join(this.root, relPath))
    if (!state) return this.deleteDocument(relPath)
    const contentHash = documentContentHash(state)
    const select = this.statement(
      'select path, title, body, frontmatter, content_hash, mtime_ns, size, read_ns from _documents where path = ?',
    ).safeIntegers(true)
    // The stored projection is read only for other bytes (it is what the new record is compared with).
    let stored = known === undefined ? (select.get(relPath) as StoredDocument | undefined) : undefined
    const storedStat = known === undefined ? stored : (known ?? undefined)
    if (storedStat && storedStat.content_hash === contentHash) {
      // The same bytes: record a new stat, or a read that lets the stat vouch for the row (see
      // the header); a row whose stat vouches already is left as it is (the rows keep their id).
      const racy = storedStat.mtime_ns + RACY_WINDOW_NS > storedStat.read_ns
      if (storedStat.mtime_ns !== state.mtimeNs || storedStat.size !== BigInt(state.size) || (racy && storedStat.read_ns < readNs)) {
        const touch = this.statement('update _documents set mtime_ns = ?, size = ?, read_ns = ? where path = ?')
        touch.run(state.mtimeNs, state.size, readNs, relPath)
      }
      // The stored record stands: only the text and front matter are wanted (no record built).
      const problem = documentStateProblem(state)
      if (problem !== null) this.warnPathOnly(relPath, problem)
      else if (this.onDocumentRead) this.onDocumentRead(relPath, readDocument(state.bytes))
      return false
    }
    if (storedStat && !stored) stored = select.get(relPath) as StoredDocument
    const parsed = parseDocument(relPath, state, contentHash)
    const record = parsed.record
    // Not text within the limits: indexed by its path alone, and not handed on as text.
    if (parsed.problem !== null) this.warnPathOnly(relPath, parsed.problem)
    else this.onDocumentRead?.(relPath, parsed)
    if (this.keysOfEveryRow) for (const key of parsed.frontMatterKeys) this.keysOfEveryRow.add(key)
    this.noteKeys(stored?.frontmatter, record.frontmatter)
    const upsert = this.statement(
      `insert or replace into _documents
         (path, parent, name, stem, depth, title, body, frontmatter, content_hash, source_hash, mtime_ns, size, read_ns)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    upsert.run(
      record.path, record.parent, record.name, record.stem, record.depth, record.title, record.body,
      record.frontmatter, record.content_hash, record.source_hash, record.mtime_ns, record.size, readNs,
    )
    const changed = !stored || !sameProjection(stored, record)
    if (changed) {
      this.markStale(relPath)
      this.changedPaths.add(relPath)
      const columns = this.changedColumns
      if (!stored || (columns !== null && !addChangedColumns(this.db, stored, record, columns))) this.changedColumns = null
      if (stored && this.changedColumns !== null) {
        const states = this.changedStates.get(relPath) ?? [{ title: stored.title, frontmatter: stored.frontmatter }]
        states.push({ title: record.title, frontmatter: record.frontmatter })
        this.changedStates.set(relPath, states)
      }
    }
    return changed
  }

  /**
   * Brings `documents` (its stored columns) in step with `_documents`: recreated when the set of
   * front-matter keys changed (or too many rows changed), else the changed rows rewritten.
   */
  private refreshView(): void {
    if (this.keysMayHaveChanged) {
      const distinct = this.keysOfEveryRow ? [...this.keysOfEveryRow] : frontMatterKeys(this.db)
      this.knownKeys = new Set(distinct)
      this.keysMayHaveChanged = false
      const keys = viewColumnKeys(distinct)
      if (keys.length !== this.viewKeys.length || keys.some((key, i) => key !== this.viewKeys[i])) {
        this.viewKeys = keys
        this.stale = 'all'
        this.changedColumns = null
      }
    }
    const stale = this.stale
    this.stale = new Set()
    if (stale === 'all') {
      replaceDocumentsView(this.db, this.viewKeys)
      // A statement prepared before keeps the old view's columns (`select *` would miss the new ones).
      this.queryStatements.clear()
      return
    }
    if (stale.size === 0) return
    const remove = this.statement(`delete from ${COLUMNS_TABLE} where path = ?`)
    const insert = this.statement(`insert into ${COLUMNS_TABLE} ${documentColumnsSelectSql(this.viewKeys)} where path = ?`)
    for (const relPath of stale) {
      remove.run(relPath)
      insert.run(relPath)
    }
  }
}

/** The keys of a stored front-matter JSON text; undefined when JSON.parse cannot read it (Python's `NaN`). */
function topLevelKeys(frontmatter: string): string[] | undefined {
  try {
    return Object.keys(JSON.parse(frontmatter) as object)
  } catch {
    return undefined
  }
}

/** The SQLite library's version (one library per process: asked once). */
let librarySqliteVersion: string | undefined

function sqliteVersion(db: Database.Database): string {
  librarySqliteVersion ??= String(db.prepare('select sqlite_version()').pluck().get())
  return librarySqliteVersion
}

function isIgnoreRulesFile(relPath: string): boolean {
  return relPath === '.gitignore' || relPath.endsWith('/.gitignore') || relPath === '.git/info/exclude'
}

/**
 * Whether a loaded snapshot can be used: `usable` (this schema and cache key), `stale` (an
 * insitu index of another version: dropped silently) or `foreign` (anything else). A file that
 * is not SQLite, or corrupt, throws on the first read.
 */
function snapshotVerdict(db: Database.Database, cacheKey: string): 'usable' | 'stale' | 'foreign' {
  const integrity = db.pragma('quick_check', { simple: true })
  if (integrity !== 'ok') throw new Error('integrity check failed')
  const tables = new Set(
    (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((row) => row.name),
  )
  if (!tables.has('_documents') || !tables.has('entries')) return 'foreign'
  if (db.pragma('user_version', { simple: true }) !== SCHEMA_VERSION || !tables.has(META_TABLE)) return 'stale'
  const key = db.prepare(`select value from ${META_TABLE} where key = 'cache_key'`).get() as { value: string } | undefined
  return key?.value === cacheKey ? 'usable' : 'stale'
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
