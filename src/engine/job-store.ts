/**
 * The persistent job store: job results kept across runs in one SQLite file (`jobs.db` in the
 * project's state folder), beside the in-memory memo (job-memo.ts) that validates them.
 *
 * Contract:
 * - `JobStore.open(file, header, logger)` opens or creates the file. Its `meta` table holds
 *   the store format and the `header` (plugin version, config fingerprint, V8 version); a
 *   store written under another header is emptied (its results were computed by another
 *   plugin, config or serializer), silently. A file that is not such a store (not SQLite, or
 *   SQLite without our format, or failing to read) is deleted and created afresh with ONE
 *   `logger.warn` line naming the file; a file that cannot be created at all leaves the store
 *   off (`null`), with one warning.
 * - `get(key)` returns the stored entry (V8-serialized, so Dates and Buffers survive) or
 *   undefined; it never validates it: the caller checks every fingerprint before serving.
 * - `put(key, entry)` / `delete(key)` are buffered and written in one transaction on the next
 *   macrotask (or by `flush()`); `close()` flushes and closes. A failure while reading or
 *   writing turns the store off with one warning (the memo keeps working in memory).
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import Database from 'better-sqlite3'
import type { HostLogger } from '../host/process.js'

export const JOB_STORE_FILE = 'jobs.db'
const FORMAT = 'insitu-jobs/1'

export interface JobStoreHeader {
  plugin: string
  config: string
  v8: string
}

export class JobStore {
  private pending = new Map<string, unknown | undefined>()
  private flushing: NodeJS.Immediate | undefined
  private broken = false

  private constructor(
    readonly file: string,
    private readonly db: Database.Database,
    private readonly logger: HostLogger,
  ) {}

  static open(file: string, header: JobStoreHeader, logger: HostLogger): JobStore | null {
    let db: Database.Database
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true })
      db = openChecked(file)
    } catch (error) {
      logger.warn(`insitu: ignoring the job cache ${file} (${(error as Error).message}); rebuilding it`)
      try {
        removeDatabase(file)
        db = openChecked(file)
      } catch (again) {
        logger.warn(`insitu: job cache ${file} cannot be created (${(again as Error).message}); caching in memory only`)
        return null
      }
    }
    const stored = Object.fromEntries(
      (db.prepare('select key, value from meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]),
    )
    const wanted: Record<string, string> = { format: FORMAT, ...header }
    const same = Object.keys(wanted).every((key) => stored[key] === wanted[key])
    if (!same) {
      db.transaction(() => {
        db.prepare('delete from jobs').run()
        db.prepare('delete from meta').run()
        const insert = db.prepare('insert into meta (key, value) values (?, ?)')
        for (const [key, value] of Object.entries(wanted)) insert.run(key, value)
      })()
    }
    return new JobStore(file, db, logger)
  }

  get(key: string): unknown {
    if (this.broken) return undefined
    if (this.pending.has(key)) return this.pending.get(key)
    try {
      const row = this.db.prepare('select entry from jobs where key = ?').get(key) as { entry: Buffer } | undefined
      return row ? v8.deserialize(row.entry) : undefined
    } catch (error) {
      this.fail(error)
      return undefined
    }
  }

  put(key: string, entry: unknown): void {
    this.queue(key, entry)
  }

  delete(key: string): void {
    this.queue(key, undefined)
  }

  flush(): void {
    if (this.flushing) clearImmediate(this.flushing)
    this.flushing = undefined
    if (this.broken || this.pending.size === 0) return
    const writes = this.pending
    this.pending = new Map()
    try {
      const upsert = this.db.prepare('insert or replace into jobs (key, entry) values (?, ?)')
      const remove = this.db.prepare('delete from jobs where key = ?')
      this.db.transaction(() => {
        for (const [key, entry] of writes) {
          if (entry === undefined) remove.run(key)
          else upsert.run(key, v8.serialize(entry))
        }
      })()
    } catch (error) {
      this.fail(error)
    }
  }

  close(): void {
    this.flush()
    try {
      this.db.close()
    } catch {
      // already closed or broken: nothing to keep
    }
  }

  private queue(key: string, entry: unknown): void {
    if (this.broken) return
    this.pending.set(key, entry)
    this.flushing ??= setImmediate(() => this.flush())
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
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = OFF')
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
