/**
 * A sandbox process's copy of the document index (src/sandbox-child.ts runs it; the parent's side
 * is query-sandbox.ts): it starts from the index's bytes, replays the index's writes in order
 * (index-journal.ts), and runs the project's queries on them, read-only as the index runs its
 * own (read-only-sql.ts), values as it reads them (sql-values.ts).
 *
 * Contract:
 * - `setup({ kind: 'index-init', bytes, maxRowBytes, heapLimit })`: the copy starts from `bytes`;
 *   SQLite may allocate at most `heapLimit` bytes (`PRAGMA hard_heap_limit`: a query that needs
 *   more fails with SQLite's `out of memory`); a query's rows may hold at most `maxRowBytes`.
 * - `setup({ kind: 'index-apply', entries })`: the index's writes since, replayed in order in one
 *   transaction, each statement text prepared once (as the index prepares its own).
 * - `query({ kind: 'query', sql, params })`: the rows (through cloneable-values.ts), or it throws
 *   SQLite's error (its `code` kept) or a `RowsTooLargeError`.
 */
import type Database from 'better-sqlite3'
import type { JournalEntry } from './index-journal.js'
import { allowWrites, prepareReadOnly, runReadOnly } from './read-only-sql.js'
import { openDatabase } from './sqlite-database.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'

export type IndexCopySetup = { kind: 'index-init'; bytes: Buffer; maxRowBytes: number; heapLimit: number } | { kind: 'index-apply'; entries: JournalEntry[] }
export type QueryTask = { kind: 'query'; sql: string; params: unknown }

/** How many query texts (and, apart, write texts) keep their prepared statements. */
const MAX_CACHED = 512

export function createIndexCopy(): { setup(message: IndexCopySetup): void; query(task: QueryTask): unknown } {
  let db: Database.Database | undefined
  let maxRowBytes = Number.POSITIVE_INFINITY
  const statements = new Map<string, Database.Statement>()
  const writes = new Map<string, Database.Statement>()
  return {
    setup(message) {
      if (message.kind === 'index-init') {
        db = openDatabase(Buffer.from(message.bytes))
        maxRowBytes = message.maxRowBytes
        db.pragma(`hard_heap_limit = ${Math.floor(message.heapLimit)}`)
        statements.clear()
        writes.clear()
        return
      }
      if (!db || message.entries.length === 0) return
      const copy = db
      allowWrites(copy)
      copy.transaction(() => {
        for (const entry of message.entries) {
          if (entry.args === undefined) {
            copy.exec(entry.sql)
            // The schema may have changed: prepared statements go.
            statements.clear()
            writes.clear()
            continue
          }
          let write = writes.get(entry.sql)
          if (!write) {
            if (writes.size >= MAX_CACHED) writes.clear()
            writes.set(entry.sql, (write = copy.prepare(entry.sql)))
          }
          write.run(...(entry.args as []))
        }
      })()
    },
    query(task) {
      if (!db) throw new Error('the sandbox has no copy of the document index')
      let stmt = statements.get(task.sql)
      if (!stmt) {
        stmt = prepareReadOnly(db, task.sql)
        if (statements.size >= MAX_CACHED) statements.clear()
        statements.set(task.sql, stmt)
      }
      return toCloneable(runReadOnly(db, stmt, fromCloneable(task.params) as Record<string, unknown>, maxRowBytes))
    },
  }
}
