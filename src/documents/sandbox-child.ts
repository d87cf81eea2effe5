/**
 * A query sandbox process (query-sandbox.ts starts it with `fork`, IPC with V8 serialization): a
 * copy of the document index that runs the project's SQL queries, so that a query that never
 * ends can be stopped by ending this process, and never holds the process that serves pages.
 *
 * Messages from the parent, handled in order:
 * - `{ type: 'init', bytes, maxRowBytes, heapLimit }`: the copy starts from the index's bytes;
 *   SQLite may allocate at most `heapLimit` bytes (`PRAGMA hard_heap_limit`: a query that needs
 *   more fails with SQLite's `out of memory`), and a query's rows may hold at most `maxRowBytes`
 *   (sql-values.ts `RowsTooLargeError`).
 * - `{ type: 'apply', entries }`: the index's writes since (index-journal.ts), replayed in order.
 * - `{ type: 'query', id, sql, params }`: answered `{ type: 'start', id }` when it starts, then
 *   `{ type: 'result', id, rows }` (values through cloneable-values.ts) or `{ type: 'error', id,
 *   message, code }`, read-only as the index's own queries are (read-only-sql.ts).
 * - `{ type: 'skip', ids }`: queries the parent gave to another process meanwhile: not run.
 * It exits when the IPC channel closes (the parent ended or let it go).
 */
import type Database from 'better-sqlite3'
import type { JournalEntry } from './index-journal.js'
import { allowWrites, prepareReadOnly, runReadOnly } from './read-only-sql.js'
import { RowsTooLargeError } from './sql-values.js'
import { openDatabase } from './sqlite-database.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'

export type SandboxRequest =
  | { type: 'init'; bytes: Buffer; maxRowBytes: number; heapLimit: number }
  | { type: 'apply'; entries: JournalEntry[] }
  | { type: 'query'; id: number; sql: string; params: unknown }
  | { type: 'skip'; ids: number[] }

export type SandboxReply =
  | { type: 'start'; id: number }
  | { type: 'result'; id: number; rows: unknown }
  | { type: 'error'; id: number; message: string; code: string | null; tooLarge?: number }

/** How many query texts keep their prepared statements. */
const MAX_CACHED = 512

let db: Database.Database | undefined
let maxRowBytes = Number.POSITIVE_INFINITY
const statements = new Map<string, Database.Statement>()
const skipped = new Set<number>()
/** Every message but `skip`, in arrival order, handled one per turn of the event loop. */
const inbox: Exclude<SandboxRequest, { type: 'skip' }>[] = []
let draining = false

function send(reply: SandboxReply): void {
  process.send?.(reply)
}

function receive(message: SandboxRequest): void {
  // A skip counts at once, for the queries still waiting in the inbox.
  if (message.type === 'skip') {
    for (const id of message.ids) skipped.add(id)
    return
  }
  inbox.push(message)
  if (!draining) {
    draining = true
    setImmediate(drain)
  }
}

/** One message per turn: the messages that arrived meanwhile (a `skip`) are read before the next query runs. */
function drain(): void {
  const next = inbox.shift()
  if (!next) {
    draining = false
    return
  }
  switch (next.type) {
    case 'init':
      db = openDatabase(Buffer.from(next.bytes))
      maxRowBytes = next.maxRowBytes
      db.pragma(`hard_heap_limit = ${Math.floor(next.heapLimit)}`)
      break
    case 'apply':
      apply(next.entries)
      break
    case 'query':
      if (skipped.delete(next.id)) break
      send({ type: 'start', id: next.id })
      send(run(next))
  }
  setImmediate(drain)
}

function apply(entries: readonly JournalEntry[]): void {
  if (!db || entries.length === 0) return
  allowWrites(db)
  for (const entry of entries) {
    if (entry.args === undefined) {
      db.exec(entry.sql)
      statements.clear() // the schema may have changed: prepared statements go
    } else {
      db.prepare(entry.sql).run(...(entry.args as []))
    }
  }
}

function run(request: Extract<SandboxRequest, { type: 'query' }>): SandboxReply {
  if (!db) return { type: 'error', id: request.id, message: 'the query sandbox has no index', code: null }
  try {
    let stmt = statements.get(request.sql)
    if (!stmt) {
      stmt = prepareReadOnly(db, request.sql)
      if (statements.size >= MAX_CACHED) statements.clear()
      statements.set(request.sql, stmt)
    }
    const rows = runReadOnly(db, stmt, fromCloneable(request.params) as Record<string, unknown>, maxRowBytes)
    return { type: 'result', id: request.id, rows: toCloneable(rows) }
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code
    return {
      type: 'error',
      id: request.id,
      message: error instanceof Error ? error.message : String(error),
      code: typeof code === 'string' ? code : null,
      ...(error instanceof RowsTooLargeError ? { tooLarge: error.maxBytes } : {}),
    }
  }
}

process.on('message', (message) => receive(message as SandboxRequest))
process.on('disconnect', () => process.exit(0))
