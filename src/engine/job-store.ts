/**
 * The persistent job store: job results kept across runs in one SQLite file (`jobs.db` in the
 * plugin's folder of the project's state folder, state-folder.ts), beside the in-memory memo (job-memo.ts) that validates them.
 *
 * Contract:
 * - `JobStore.open(file, header, logger)` opens the file when there is one (nothing is
 *   written before the first `flush()`). Its `meta` table holds the store format and the
 *   `header` (plugin version, config fingerprint, V8 version); a store written under another
 *   header serves nothing and is emptied by the next flush (its results were computed by
 *   another plugin, config or serializer), silently. The header is compared again whenever
 *   another engine wrote the file, and inside every flush, so entries always match the
 *   header they are stored under. A file that is not such a store (not
 *   SQLite, SQLite without our format, unreadable) is deleted with ONE `logger.warn` line
 *   naming the file, and written afresh by the next flush. The file is opened by `openDatabase`
 *   (documents/sqlite-database.ts): when better-sqlite3's native part cannot load, `open`
 *   throws its `SqliteBindingError` (and deletes nothing).
 * - `holdsEntries()`: the file exists, opened, under our header (a start can expect its results
 *   served); false otherwise, and after a failure.
 * - `get(key)` returns the stored entry (V8-serialized, so Dates and Buffers survive, and
 *   values/cloneable-values.ts keeps `PythonFloat` boxes: a warm start renders `2.0` as a cold
 *   one does) or undefined; it never validates it: the caller checks every fingerprint before serving.
 *   The stored entries are read in one statement when first needed; a key they miss makes the
 *   store look at the file again (another connection may have written it since, or created it
 *   when there was none) at most once a second, and its own flush makes it read them again.
 * - `put(key, entry)` / `delete(key)` are buffered (entries serialized only then: `entry` must
 *   not change after `put`) and written in one transaction by `flush()`
 *   or `close()` (flush and close): never while a dev server runs, whose watcher would hear
 *   every write in the project folder. A failure while reading or writing turns the store off
 *   with one warning (the memo keeps working in memory).
 * - Writes are not synced to the disk (`synchronous = OFF`, issue #17: a build's last flush
 *   waited on fsync): a cache, every entry is validated before use; a process that dies mid-write
 *   still leaves a consistent file (the rollback journal is written), only a crash of the
 *   machine can leave it torn, and then it is detected and rebuilt as above.
 * - `isStoreFile(absolutePosix)`: the store file or one of SQLite's files beside it.
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import type Database from 'better-sqlite3'
import { toPosixPath } from '../documents/project-paths.js'
import { openDatabase, SqliteBindingError } from '../documents/sqlite-database.js'
import type { HostLogger } from '../host/process.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'

const FORMAT = 'insitu-jobs/1'

/** A pending delete (`JobStore.delete`). */
const DELETED = Symbol('deleted')

/** `entry` as stored, or undefined when V8 cannot serialize it. */
function serialized(entry: unknown): Buffer | undefined {
  try {
    return v8.serialize(toCloneable(entry))
  } catch {
    return undefined
  }
}

/** How often a missing key may make the store look at the file again (see `mayHaveNewEntries`). */
const RELOOK_MS = 1000

export interface JobStoreHeader {
  plugin: string
  config: string
  v8: string
}

export class JobStore {
  /** Entries to write, serialized by `flush()` (DELETED: delete). */
  private pending = new Map<string, unknown>()
  private broken = false

  private constructor(
    readonly file: string,
    private readonly header: JobStoreHeader,
    /** The open store, or null when there is no file yet (created by the first flush). */
    private db: Database.Database | null,
    private readonly logger: HostLogger,
  ) {}

  /** `PRAGMA data_version` when the header was last compared, and whether it matched. */
  private checked: { version: number; current: boolean } | undefined

  static open(file: string, header: JobStoreHeader, logger: HostLogger): JobStore {
    if (!fs.existsSync(file)) return new JobStore(file, header, null, logger)
    try {
      return new JobStore(file, header, openChecked(file), logger)
    } catch (error) {
      if (error instanceof SqliteBindingError) throw error
      logger.warn(`insitu: ignoring the job cache ${file} (${(error as Error).message}); rebuilding it`)
      try {
        removeDatabase(file)
      } catch {
        // the first flush reports what is wrong with the file
      }
      return new JobStore(file, header, null, logger)
    }
  }

  /** Whether the file holds entries written under our header (see the contract). */
  holdsEntries(): boolean {
    if (this.broken || !this.db) return false
    try {
      return this.isCurrent(this.db)
    } catch (error) {
      this.fail(error)
      return false
    }
  }

  get(key: string): unknown {
    if (this.pending.has(key)) {
      // A copy, as a read of the file gives once it is flushed.
      const entry = this.pending.get(key)
      const bytes = entry === DELETED ? undefined : serialized(entry)
      return bytes === undefined ? undefined : fromCloneable(v8.deserialize(bytes))
    }
    if (this.broken || (!this.db && !this.openWrittenMeanwhile())) return undefined
    try {
      // Read under our header when the entries were read: validated before use, whoever wrote since.
      let bytes = this.stored?.entries.get(key)
      if (bytes === undefined && this.mayHaveNewEntries()) {
        // One read transaction: the header compared and the entries read are the same file state.
        const db = this.db!
        bytes = db.transaction(() => (this.isCurrent(db) ? this.storedEntries(db).get(key) : undefined))()
      }
      return bytes === undefined ? undefined : fromCloneable(v8.deserialize(bytes))
    } catch (error) {
      this.fail(error)
      return undefined
    }
  }

  /**
   * A store opened before its file existed: another engine may have written it since (looked
   * for at most once a second, as new entries are).
   */
  private openWrittenMeanwhile(): boolean {
    const now = performance.now()
    if (now - this.lastOpenLook < RELOOK_MS) return false
    this.lastOpenLook = now
    if (!fs.existsSync(this.file)) return false
    try {
      this.db = openChecked(this.file)
      return true
    } catch {
      return false // the first flush reports what is wrong with it
    }
  }

  /**
   * Store `entry` at the next flush (an entry V8 cannot serialize is not stored). Serialized
   * then, off the path of the render that made it (issue #17): `entry` must not change meanwhile.
   */
  put(key: string, entry: unknown): void {
    if (!this.broken) this.pending.set(key, entry)
  }

  delete(key: string): void {
    if (!this.broken) this.pending.set(key, DELETED)
  }

  isStoreFile(absolutePosix: string): boolean {
    const file = toPosixPath(this.file)
    return absolutePosix === file || ['-wal', '-shm', '-journal'].some((suffix) => absolutePosix === file + suffix)
  }

  /** Write what changed (creating the file, or emptying one of another header, first). */
  flush(): void {
    if (this.broken || this.pending.size === 0) return
    const writes = this.pending
    this.pending = new Map()
    try {
      if (!this.db) {
        fs.mkdirSync(path.dirname(this.file), { recursive: true })
        this.db = openChecked(this.file)
      }
      const db = this.db
      const upsert = db.prepare('insert or replace into jobs (key, entry) values (?, ?)')
      const remove = db.prepare('delete from jobs where key = ?')
      db.transaction(() => {
        // Another engine may have written the file meanwhile: entries always match the header.
        if (!this.isCurrent(db)) {
          db.prepare('delete from jobs').run()
          const insert = db.prepare('insert or replace into meta (key, value) values (?, ?)')
          for (const [key, value] of Object.entries(this.header)) insert.run(key, value)
        }
        for (const [key, entry] of writes) {
          const bytes = entry === DELETED ? undefined : serialized(entry)
          if (bytes === undefined) remove.run(key)
          else upsert.run(key, bytes)
        }
      })()
      this.checked = undefined
      this.stored = undefined
    } catch (error) {
      this.fail(error)
    }
  }

  close(): void {
    this.flush()
    try {
      this.db?.close()
    } catch {
      // already closed or broken: nothing to keep
    }
  }

  /**
   * Every stored entry, read in one statement when first needed and again after another
   * connection wrote the file (`isCurrent` compared its data version): a warm start looks up
   * hundreds of entries, and a query per entry cost its own lock and page reads (issue #17).
   */
  private stored: { version: number; entries: Map<string, Buffer> } | undefined

  /** When a store without its file last looked whether it exists now. */
  private lastOpenLook = -Infinity

  /** When a miss last asked the file whether another connection wrote it. */
  private lastLook = -Infinity

  /**
   * Whether a missing key is worth asking the file again (`PRAGMA data_version`, a lock and a
   * page read): at most once a second, or always before the entries were first read. A miss
   * costs a re-run at worst; a cold start misses every key.
   */
  private mayHaveNewEntries(): boolean {
    if (this.stored === undefined) return true
    const now = performance.now()
    if (now - this.lastLook < RELOOK_MS) return false
    this.lastLook = now
    return true
  }

  private storedEntries(db: Database.Database): Map<string, Buffer> {
    const version = this.checked!.version
    if (this.stored?.version !== version) {
      const rows = this.statement(db, 'select key, entry from jobs').raw(true).all() as [string, Buffer][]
      this.stored = { version, entries: new Map(rows) }
    }
    return this.stored.entries
  }

  /** Statements prepared once per open file (a warm start looks up hundreds of entries). */
  private readonly statements = new WeakMap<Database.Database, Map<string, Database.Statement>>()

  private statement(db: Database.Database, sql: string): Database.Statement {
    let prepared = this.statements.get(db)
    if (!prepared) this.statements.set(db, (prepared = new Map()))
    let statement = prepared.get(sql)
    if (!statement) prepared.set(sql, (statement = db.prepare(sql)))
    return statement
  }

  /** The file's header is ours (compared again only when another connection wrote). */
  private isCurrent(db: Database.Database): boolean {
    const version = this.statement(db, 'pragma data_version').pluck().get() as number
    if (this.checked?.version !== version) {
      const stored = Object.fromEntries(
        (db.prepare('select key, value from meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]),
      )
      this.checked = { version, current: Object.entries(this.header).every(([key, value]) => stored[key] === value) }
    }
    return this.checked.current
  }

  private fail(error: unknown): void {
    if (this.broken) return
    this.broken = true
    this.pending.clear()
    this.logger.warn(`insitu: job cache ${this.file} failed (${(error as Error).message}); caching in memory only`)
  }
}

/** Open (or create) the store, failing when the file is not one. */
function openChecked(file: string): Database.Database {
  const existed = fs.existsSync(file)
  const db = openDatabase(file)
  try {
    db.pragma('busy_timeout = 2000')
    db.pragma('synchronous = OFF') // a validated cache: no fsync (see the header)
    if (existed) {
      const tables = (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name)
      const format = tables.includes('meta')
        ? (db.prepare("select value from meta where key = 'format'").get() as { value: string } | undefined)?.value
        : undefined
      if (format !== FORMAT || !tables.includes('jobs')) throw new Error('not an insitu job cache')
    } else {
      db.exec('create table meta (key text primary key, value text not null); create table jobs (key text primary key, entry blob not null)')
      db.prepare('insert into meta (key, value) values (?, ?)').run('format', FORMAT)
    }
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

function removeDatabase(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true })
}
