/**
 * The document index's writes as a log, for the copies of the index that the query sandbox's
 * processes keep (query-sandbox.ts): a copy starts from the database's bytes and replays what
 * was written since, in order, so a query sent after a write sees it, as it would in this process.
 *
 * Contract:
 * - `new IndexJournal(db)` patches `db` (the index's own connection, before any statement is
 *   prepared): every statement that writes (better-sqlite3's `reader` false; `PRAGMA` statements
 *   excepted: a copy needs none of them) records `{ sql, args }` each time it runs, `db.exec`
 *   records `{ sql }`, and a transaction that throws (rolled back) drops what it recorded. While
 *   nobody follows (before the first `snapshot()`, after `reset()`), nothing is recorded: the
 *   patch costs one check per write.
 * - `snapshot()` starts following, if not yet, and returns the database's bytes now
 *   (`serialize()`) with the position of the log's end: a copy made from those bytes replays
 *   `since(position)` next. Call it outside the index's transactions (it is: the sandbox runs
 *   between the index's synchronous calls).
 * - `since(position)` is every entry from `position` to the end; `end` the position after the
 *   last entry, `start` the position of the first one held. `forget(position)` drops the entries
 *   before `position` (every copy has them); `reset()` stops following and drops everything (no
 *   copy is left).
 * - Bounded: when the entries held (texts and string and Buffer arguments, estimated) pass
 *   `MAX_JOURNAL_BYTES` (a copy that receives no query for a long time while much is written, a
 *   full rebuild of a large index), they are dropped: `start` moves to `end`, and a copy whose
 *   position is below `start` can no longer follow (the sandbox replaces it with a fresh one).
 */
import type Database from 'better-sqlite3'

/** One write, as a copy replays it: `exec(sql)`, or `prepare(sql).run(...args)`. */
export type JournalEntry = { sql: string; args?: unknown[] }

const PRAGMA = /^\s*pragma\b/i

/** The most the entries held may take before they are dropped (see the contract). */
export const MAX_JOURNAL_BYTES = 32 * 1024 * 1024

export class IndexJournal {
  private entries: JournalEntry[] = []
  /** The position of `entries[0]`. */
  private base = 0
  private recording = false
  private bytes = 0

  constructor(private readonly db: Database.Database) {
    const prepare = db.prepare.bind(db)
    db.prepare = ((sql: string) => {
      const stmt = prepare(sql)
      if (!stmt.reader && !PRAGMA.test(sql)) {
        const run = stmt.run.bind(stmt)
        stmt.run = ((...args: unknown[]) => {
          const result = run(...(args as []))
          if (this.recording) this.record({ sql, args })
          return result
        }) as typeof stmt.run
      }
      return stmt
    }) as typeof db.prepare
    const exec = db.exec.bind(db)
    db.exec = ((sql: string) => {
      const result = exec(sql)
      if (this.recording && !PRAGMA.test(sql)) this.record({ sql })
      return result
    }) as typeof db.exec
    const transaction = db.transaction.bind(db)
    db.transaction = ((fn: (...args: unknown[]) => unknown) =>
      transaction((...args: unknown[]) => {
        const mark = this.end
        try {
          return fn(...args)
        } catch (error) {
          this.truncate(mark)
          throw error
        }
      })) as typeof db.transaction
  }

  get end(): number {
    return this.base + this.entries.length
  }

  get start(): number {
    return this.base
  }

  snapshot(): { bytes: Buffer; position: number } {
    this.recording = true
    return { bytes: this.db.serialize(), position: this.end }
  }

  since(position: number): JournalEntry[] {
    return this.entries.slice(Math.max(0, position - this.base))
  }

  forget(position: number): void {
    const drop = Math.min(this.entries.length, position - this.base)
    if (drop <= 0) return
    for (const entry of this.entries.slice(0, drop)) this.bytes -= sizeOf(entry)
    this.entries = this.entries.slice(drop)
    this.base += drop
  }

  reset(): void {
    this.recording = false
    this.base = this.end
    this.entries = []
    this.bytes = 0
  }

  private record(entry: JournalEntry): void {
    this.entries.push(entry)
    this.bytes += sizeOf(entry)
    if (this.bytes > MAX_JOURNAL_BYTES) {
      // Too much for a copy to catch up on: the copies behind start afresh (see the contract).
      this.base = this.end
      this.entries = []
      this.bytes = 0
    }
  }

  /** Drop what was recorded after `mark` (a rolled-back transaction). */
  private truncate(mark: number): void {
    const keep = mark - this.base
    if (keep < 0 || keep >= this.entries.length) return
    for (const entry of this.entries.slice(keep)) this.bytes -= sizeOf(entry)
    this.entries.length = keep
  }
}

function sizeOf(entry: JournalEntry): number {
  let size = entry.sql.length + 16
  for (const arg of entry.args ?? []) {
    if (typeof arg === 'string') size += arg.length
    else if (Buffer.isBuffer(arg)) size += arg.length
    else size += 8
  }
  return size
}
