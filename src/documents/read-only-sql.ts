/**
 * The read-only guard for queries against the document index (SPEC §7).
 *
 * Contract:
 * - `assertSelectOrWith(sql)`: after whitespace, `--` line comments and `/* *\/` block comments,
 *   the text must start with the keyword `select` or `with` (case-insensitive), else
 *   `SQL models must be a SELECT or WITH query`.
 * - `prepareReadOnly(db, sql)`: the above, then `db.prepare` (which refuses more than one
 *   statement) and better-sqlite3's `stmt.readonly`: a statement that would write (a
 *   `with ... insert`, `update`, `delete`, DDL) is refused with `SQL models must be read-only`.
 *   ATTACH, DETACH and PRAGMA are statements of their own kind and can never start with
 *   SELECT/WITH, so the prefix rule refuses them; no keyword scan is needed (it would also
 *   refuse legitimate columns named e.g. `pragma`).
 * - `runReadOnly(db, stmt, params)`: runs the statement with `PRAGMA query_only = ON`, so the
 *   engine itself refuses writes too, and turns better-sqlite3's missing-parameter error into
 *   `missing SQL parameter :<name>`. The flag is left ON after the query: setting it expires
 *   every prepared statement of the database (SQLite's flag pragmas do), and re-preparing
 *   cost more than the query itself (issue #17: 0.13 against 0.015 ms for a folder's rows), so
 *   it changes only when the database's owner writes: `allowWrites(db)` turns it OFF before a
 *   write (both pragmas prepared once per database, each run only when the flag changes).
 *   Parameters bind and rows come back as Python's sqlite3 binds and returns them
 *   (`sql-values.ts`).
 */
import type Database from 'better-sqlite3'
import { readRows, toSqlParams } from './sql-values.js'

export const NOT_A_QUERY_MESSAGE = 'SQL models must be a SELECT or WITH query'
export const NOT_READ_ONLY_MESSAGE = 'SQL models must be read-only'

/** Index of the first character that is not whitespace or inside a comment (or `sql.length`). */
export function skipLeadingComments(sql: string): number {
  let i = 0
  for (;;) {
    while (i < sql.length && /\s/.test(sql[i] ?? '')) i++
    if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i)
      i = end === -1 ? sql.length : end + 1
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2)
      i = end === -1 ? sql.length : end + 2
    } else {
      return i
    }
  }
}

export function assertSelectOrWith(sql: string): void {
  const start = skipLeadingComments(sql)
  if (!/^(select|with)(?![\w$])/i.test(sql.slice(start, start + 7))) throw new Error(NOT_A_QUERY_MESSAGE)
}

export function prepareReadOnly(db: Database.Database, sql: string): Database.Statement {
  assertSelectOrWith(sql)
  const stmt = db.prepare(sql)
  if (!stmt.readonly || !stmt.reader) throw new Error(NOT_READ_ONLY_MESSAGE)
  return stmt
}

export function runReadOnly(
  db: Database.Database,
  stmt: Database.Statement,
  params: Record<string, unknown>,
  maxBytes?: number,
): Record<string, unknown>[] {
  setQueryOnly(db, true)
  try {
    return readRows(stmt, toSqlParams(params), maxBytes)
  } catch (error) {
    const missing = /^Missing named parameter "(.*)"$/.exec(error instanceof Error ? error.message : '')
    if (missing) throw new Error(`missing SQL parameter :${missing[1] ?? ''}`)
    if (error instanceof Error && /attempt to write a readonly database/.test(error.message)) {
      throw new Error(NOT_READ_ONLY_MESSAGE)
    }
    throw error
  }
}

/** Before the database's owner writes to it: `PRAGMA query_only` OFF (when a query left it ON). */
export function allowWrites(db: Database.Database): void {
  setQueryOnly(db, false)
}

/** `PRAGMA query_only` on and off, prepared once per database (`db.pragma` prepares on every call), and the flag as last set. */
const queryOnlyByDatabase = new WeakMap<Database.Database, { on: Database.Statement; off: Database.Statement; isOn: boolean }>()

function setQueryOnly(db: Database.Database, on: boolean): void {
  let state = queryOnlyByDatabase.get(db)
  if (!state) {
    state = { on: db.prepare('pragma query_only = ON'), off: db.prepare('pragma query_only = OFF'), isOn: false }
    queryOnlyByDatabase.set(db, state)
  }
  if (state.isOn === on) return
  ;(on ? state.on : state.off).run()
  state.isOn = on
}
