/**
 * SQL values in and out of the document index, in the value model of values/python-float.ts,
 * exactly as the Python implementation's sqlite3 binds and returns them (SPEC §11 SQL values).
 *
 * Contract:
 * - `toSqlParams(params)`: what each named parameter binds as. An int (a safe JavaScript
 *   integer, or a `bigint`) binds as INTEGER (`:n / 2` is integer division, `typeof(:n)` is
 *   `integer`: better-sqlite3 binds every `number` as REAL, so ints are passed as bigints); a
 *   float (any other number, or a `PythonFloat`) as REAL; a boolean as INTEGER 1/0 (Python's
 *   `True` is the int 1); a string as TEXT; a Buffer as BLOB; null/undefined as NULL; an array
 *   or object as its compact JSON text (`wireJson`: `JSON.stringify` keeping `2.0` and big ints;
 *   Python's sqlite3 refuses those). An int outside
 *   SQLite's 64-bit range fails with `SQL parameter :<name> is too large for an SQLite INTEGER`.
 * - `readRows(stmt, params)`: the rows as Python's `[dict(row) for row in cursor]` over
 *   `sqlite3.Row` builds them: INTEGER → a number (a `bigint` beyond ±(2^53 − 1)), REAL → a
 *   number (a `PythonFloat` box when integral, so templates print `2.0`), TEXT → string, BLOB →
 *   Buffer, NULL → null. Duplicate column names (`select title, title`, joins) keep the first
 *   column's place and value; `dict(row)` looks each name up with `row[name]`, which finds the
 *   first column equal to it ignoring ASCII case, so `select 1 as a, 2 as A` gives `{a: 1, A: 1}`
 *   (verified against Python 3.11's sqlite3; better-sqlite3's own objects keep the last value).
 *   With `maxBytes`, reading stops with a `RowsTooLargeError` once the rows read hold more
 *   (an estimate: 64 bytes a row, 16 a value, texts and blobs their length besides): the query sandbox bounds what one
 *   query can make a process hold.
 */
import type Database from 'better-sqlite3'
import { PythonFloat } from '../values/python-float.js'
import { wireJson } from '../values/wire-json.js'

export type SqlParamValue = string | number | bigint | Buffer | null

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

export function toSqlParams(params: Record<string, unknown>): Record<string, SqlParamValue> {
  const out: Record<string, SqlParamValue> = {}
  for (const [key, value] of Object.entries(params)) out[key] = toSqlValue(key, value)
  return out
}

function toSqlValue(name: string, value: unknown): SqlParamValue {
  if (value === null || value === undefined) return null
  if (typeof value === 'string') return value
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : value
  if (typeof value === 'boolean') return value ? 1n : 0n
  if (typeof value === 'bigint') {
    if (value < INT64_MIN || value > INT64_MAX) throw new Error(`SQL parameter :${name} is too large for an SQLite INTEGER`)
    return value
  }
  if (value instanceof PythonFloat) return value.value
  if (Buffer.isBuffer(value)) return value
  return wireJson(value) ?? null
}

const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER)
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** One column value (read with `safeIntegers`) in the value model. */
export function fromSqlValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value >= SAFE_MIN && value <= SAFE_MAX ? Number(value) : value
  if (typeof value === 'number' && Number.isInteger(value)) return new PythonFloat(value)
  return value
}

/** Per prepared statement: its column names, and where each takes its value from (see `columnSources`). */
const shapes = new WeakMap<Database.Statement, { names: string[]; source: number[] }>()

/**
 * The column names of `stmt` and, for each, the first column `row[name]` finds (equal ignoring
 * ASCII case), or -1 when an earlier column has the very same name (its key is set already).
 * Kept per statement: a prepared statement's columns are fixed (the index drops its statements
 * when the `documents` view is recreated).
 */
function columnSources(stmt: Database.Statement): { names: string[]; source: number[] } {
  let shape = shapes.get(stmt)
  if (!shape) {
    const names = stmt.columns().map((column) => column.name)
    const folded = names.map(foldAsciiCase)
    const source = names.map((name, i) => (names.indexOf(name) < i ? -1 : folded.indexOf(folded[i] as string)))
    shape = { names, source }
    shapes.set(stmt, shape)
  }
  return shape
}

export function readRows(stmt: Database.Statement, params: Record<string, SqlParamValue>, maxBytes?: number): Record<string, unknown>[] {
  const { names, source } = columnSources(stmt)
  const read = stmt.raw(true).safeIntegers(true)
  const rows = (maxBytes === undefined ? read.all(params) : boundedRows(read.iterate(params) as IterableIterator<unknown[]>, maxBytes)) as unknown[][]
  const out: Record<string, unknown>[] = new Array(rows.length)
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as unknown[]
    const object: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) {
      const from = source[i] as number
      if (from >= 0) object[names[i] as string] = fromSqlValue(row[from])
    }
    out[r] = object
  }
  return out
}

/**
 * Rows read past `maxBytes`: an estimate of what they hold here and on their way to the parent
 * (each row 64 bytes, each value 16 more, texts and blobs their length besides).
 */
export class RowsTooLargeError extends Error {
  /** The bound the rows passed, in bytes (carried across the sandbox's boundary: sandbox/task-errors.ts). */
  readonly tooLarge: number
  constructor(maxBytes: number) {
    super(`the query returned more than ${maxBytes} bytes of rows`)
    this.tooLarge = maxBytes
  }
}

function boundedRows(rows: IterableIterator<unknown[]>, maxBytes: number): unknown[][] {
  const out: unknown[][] = []
  let bytes = 0
  for (const row of rows) {
    bytes += 64
    for (const value of row) bytes += typeof value === 'string' || Buffer.isBuffer(value) ? value.length + 16 : 16
    if (bytes > maxBytes) {
      rows.return?.()
      throw new RowsTooLargeError(maxBytes)
    }
    out.push(row)
  }
  return out
}

/** Lower case for ASCII letters only, as SQLite compares names. */
export function foldAsciiCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}
