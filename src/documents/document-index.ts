/**
 * The SQLite document index (SPEC §7): what SQL models query.
 *
 * Contract:
 * - In: the project root, `sources.include` / `sources.exclude` (gitignore patterns),
 *   `sources.respect_gitignore`, and optionally an absolute `statePath` (a file database,
 *   created with its folder; otherwise `:memory:`). A file database is a cache: an unreadable
 *   file or another schema version is replaced.
 * - `entries` holds every file and folder `listProjectEntries` walks (excluded and gitignored
 *   paths never appear); `_documents` holds the files among them that `isDocument` accepts;
 *   the `documents` view is described in `index-schema.ts` (it is recreated only when the set of
 *   front-matter keys changes).
 * - `rebuild()` reconciles everything with the disk. `refresh(events)` reconciles only the
 *   event paths: the event type is a hint, the disk is the truth (a path that exists is
 *   (re)read, a folder is (re)scanned, a missing path removes it and everything under it). A
 *   `.gitignore` or `.git/info/exclude` event (with `respectGitignore`) means a full rebuild.
 * - `projectionChanged` is true only when what queries can see changed: a row of `entries`
 *   added/removed/changed kind (`entriesChanged`), or a document added/removed or changed in
 *   path, title, body or front matter (`documentsChanged`). Identical bytes, a touched mtime,
 *   or an edit inside a generated region body (bodies are blanked) update
 *   `content_hash`/`mtime_ns`/`size` but report false.
 * - `query(sql, params)`: read-only (see `read-only-sql.ts`); rows as plain objects.
 *   `prepareError(sql)`: SQLite's message when `sql` does not prepare, else null.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import {
  type DocumentProjection,
  buildDocumentRecord,
  hashContent,
  pathColumns,
  readFileState,
  sameProjection,
} from './document-record.js'
import { errorCode, isMissing } from './fs-errors.js'
import { ensureSchema, frontMatterKeys, replaceDocumentsView, viewColumnKeys } from './index-schema.js'
import { createPathMatcher, isIgnored, listProjectEntries, type ProjectEntry } from './project-files.js'
import { isInsideFolder, normalizeRelPath } from './project-paths.js'
import { prepareReadOnly, runReadOnly } from './read-only-sql.js'

export interface DocumentIndexOptions {
  /** Absolute project root. */
  root: string
  /** `sources.include`: gitignore patterns of managed documents. */
  include: readonly string[]
  /** `sources.exclude`: gitignore patterns never walked nor indexed. */
  exclude: readonly string[]
  /** `sources.respect_gitignore`. */
  respectGitignore: boolean
  /** Absolute path of the database file (`paths.state`); `:memory:` when omitted. */
  statePath?: string
}

/** What a refresh changed in the queryable projection. */
export interface ProjectionChange {
  /** Anything queries can see changed (`entries` or `documents`). */
  projectionChanged: boolean
  /** A row of the `documents` view was added, removed or changed. */
  documentsChanged: boolean
  /** A row of `entries` (every file and folder walked) was added, removed or changed kind. */
  entriesChanged: boolean
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

interface StoredDocument extends DocumentProjection {
  content_hash: string
  mtime_ns: bigint
  size: number
}

export class DocumentIndex {
  readonly root: string
  private readonly db: Database.Database
  private readonly includes: (relPath: string, isDirectory?: boolean) => boolean
  private readonly excludes: (relPath: string, isDirectory?: boolean) => boolean
  private readonly walkOptions: { exclude: readonly string[]; respectGitignore: boolean }
  private readonly statements = new Map<string, Database.Statement>()
  private viewKeys: string[] = []
  private closed = false

  constructor(options: DocumentIndexOptions) {
    this.root = path.resolve(options.root)
    this.includes = createPathMatcher(options.include)
    this.excludes = createPathMatcher(options.exclude)
    this.walkOptions = { exclude: options.exclude, respectGitignore: options.respectGitignore }
    this.db = openDatabase(options.statePath)
    this.viewKeys = viewColumnKeys(frontMatterKeys(this.db))
    replaceDocumentsView(this.db, this.viewKeys)
  }

  /** Whether `relPath` is a managed document: `include` matches it and `exclude` does not. */
  isDocument(relPath: string): boolean {
    return this.includes(relPath, false) && !this.excludes(relPath, false)
  }

  /** Full scan: reconciles `entries` and `_documents` with the disk. */
  rebuild(): void {
    this.assertOpen()
    this.db.transaction(() => this.reconcileAll())()
  }

  refresh(events: readonly DocumentEvent[]): ProjectionChange {
    this.assertOpen()
    // A path leaving the root (`..`) is not the index's business.
    const paths = [...new Set(events.map((event) => normalizeRelPath(event.path)))].filter(
      (p) => !p.split('/').includes('..'),
    )
    const { entriesChanged, documentsChanged } = this.db.transaction((): Changes => {
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
    })()
    return { projectionChanged: entriesChanged || documentsChanged, documentsChanged, entriesChanged }
  }

  /** Project-relative paths of every indexed document, sorted. */
  documentPaths(): string[] {
    this.assertOpen()
    return (this.statement('select path from _documents order by path').all() as { path: string }[]).map((r) => r.path)
  }

  query(sql: string, params: Record<string, unknown> = {}): Record<string, unknown>[] {
    this.assertOpen()
    return runReadOnly(this.db, prepareReadOnly(this.db, sql), params)
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

  close(): void {
    if (this.closed) return
    this.closed = true
    this.db.close()
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
    const result = this.reconcileListing('', listing)
    if (result.documentsChanged) this.refreshView()
    return result
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
        const real = fs.realpathSync(absolute)
        if (!isInsideFolder(fs.realpathSync(this.root), real)) return undefined
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
    for (const stored of this.rowsUnder('entries', prefix) as { path: string; kind: EntryKind }[]) {
      const kind = wanted.get(stored.path)
      if (kind === stored.kind) wanted.delete(stored.path)
      else changed = this.deleteEntry(stored.path) || changed
    }
    for (const [relPath, kind] of wanted) changed = this.putEntry(relPath, kind) || changed
    const documents = new Set(listing.filter((e) => e.kind === 'file' && this.isDocument(e.path)).map((e) => e.path))
    for (const stored of this.rowsUnder('_documents', prefix) as { path: string }[]) {
      if (!documents.has(stored.path)) documentsChanged = this.deleteDocument(stored.path) || documentsChanged
    }
    for (const relPath of documents) documentsChanged = this.upsertDocument(relPath) || documentsChanged
    return { entriesChanged: changed, documentsChanged }
  }

  private rowsUnder(table: 'entries' | '_documents', prefix: string): unknown[] {
    const columns = table === 'entries' ? 'path, kind' : 'path'
    if (prefix === '') return this.statement(`select ${columns} from ${table}`).all()
    // `path` in [prefix, prefix with its trailing '/' bumped to '0'): exactly the paths below it.
    const below = this.statement(`select ${columns} from ${table} where path >= ? and path < ?`)
    return below.all(prefix, `${prefix.slice(0, -1)}0`)
  }

  /** Removes `relPath` and everything below it (`relPath` ending in `/`: only below it). */
  private removeSubtree(relPath: string, documents: boolean): boolean {
    const table = documents ? '_documents' : 'entries'
    const base = relPath.endsWith('/') ? relPath.slice(0, -1) : relPath
    let removed = 0
    if (!relPath.endsWith('/')) removed += this.statement(`delete from ${table} where path = ?`).run(base).changes
    removed += this.statement(`delete from ${table} where path >= ? and path < ?`).run(`${base}/`, `${base}0`).changes
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
    const { parent, name, depth } = pathColumns(relPath)
    const insert = this.statement('insert or replace into entries (path, parent, name, kind, depth) values (?, ?, ?, ?, ?)')
    insert.run(relPath, parent, name, kind, depth)
    return true
  }

  private deleteEntry(relPath: string): boolean {
    return this.statement('delete from entries where path = ?').run(relPath).changes > 0
  }

  private deleteDocument(relPath: string): boolean {
    return this.statement('delete from _documents where path = ?').run(relPath).changes > 0
  }

  /** (Re)reads one document; true when its projection changed (or it appeared/disappeared). */
  private upsertDocument(relPath: string): boolean {
    const state = readFileState(fs.realpathSync(this.root), path.join(this.root, relPath))
    if (!state) return this.deleteDocument(relPath)
    const contentHash = hashContent(state.bytes)
    const select = this.statement(
      'select path, title, body, frontmatter, content_hash, mtime_ns, size from _documents where path = ?',
    ).safeIntegers(true)
    const stored = select.get(relPath) as StoredDocument | undefined
    if (stored && stored.content_hash === contentHash) {
      if (stored.mtime_ns !== state.mtimeNs || Number(stored.size) !== state.size) {
        const touch = this.statement('update _documents set mtime_ns = ?, size = ? where path = ?')
        touch.run(state.mtimeNs, state.size, relPath)
      }
      return false
    }
    const record = buildDocumentRecord(relPath, state, contentHash)
    const upsert = this.statement(
      `insert or replace into _documents
         (path, parent, name, stem, depth, title, body, frontmatter, content_hash, mtime_ns, size)
       values (@path, @parent, @name, @stem, @depth, @title, @body, @frontmatter, @content_hash, @mtime_ns, @size)`,
    )
    upsert.run(record)
    return !stored || !sameProjection(stored, record)
  }

  /** Recreates the `documents` view when the set of front-matter keys changed. */
  private refreshView(): void {
    const keys = viewColumnKeys(frontMatterKeys(this.db))
    if (keys.length === this.viewKeys.length && keys.every((key, i) => key === this.viewKeys[i])) return
    this.viewKeys = keys
    replaceDocumentsView(this.db, keys)
  }
}

function isIgnoreRulesFile(relPath: string): boolean {
  return relPath === '.gitignore' || relPath.endsWith('/.gitignore') || relPath === '.git/info/exclude'
}

function openDatabase(statePath: string | undefined): Database.Database {
  if (statePath === undefined) {
    const db = new Database(':memory:')
    ensureSchema(db)
    return db
  }
  fs.mkdirSync(path.dirname(statePath), { recursive: true })
  let db = new Database(statePath)
  try {
    ensureSchema(db)
  } catch (error) {
    const code = errorCode(error)
    if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') throw error
    db.close()
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(statePath + suffix, { force: true })
    db = new Database(statePath)
    ensureSchema(db)
  }
  return db
}
