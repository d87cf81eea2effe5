/**
 * Whether a recorded index query can read a change of some `documents` columns, judged by its
 * text (issue #17). Conservative: a yes may be needless, a no is never wrong.
 *
 * Contract: `queryMayReadColumns(sql, columns)` is true when the text
 * - uses `*` anywhere but in `count(*)` and in the `select * from __insitu_result` a SQL model is
 *   wrapped in (sql-models.ts; the model's own text names its columns): `*` reads every column
 *   (so may `a * b`, conservatively);
 * - names `_documents` or `_document_columns` (tables behind the view, holding more than it
 *   shows), uses `natural` (a natural join compares every column two tables share), or names
 *   `dbstat` or a `pragma_*` table-valued function (they read the database's storage: any edit
 *   that changes a value's length changes them);
 * - is volatile (below: its rows depend on more than the rows it reads);
 * - or names one of `columns`: compared ignoring ASCII case as SQLite compares names, with no
 *   identifier character (ASCII letter, digit, `_`, `$`, or any non-ASCII character) right
 *   before or after it, so `"title"`, `[title]` and `d.title` read `title` and `subtitle` does
 *   not. An empty name, or one holding a quote character or `]` (SQL doubles those inside a
 *   quoted name), is always taken as read.
 *   The names are looked for in the text as written (a quoted `"count(*)"` is a name too).
 * Volatile: the text calls a date or time function (`date`, `time`, `datetime`,
 * `julianday`, `unixepoch`, `strftime`, `timediff`: any may read the clock, `'now'` or no
 * argument), names `now`, `current_date`, `current_time` or `current_timestamp`, or calls
 * `random`, `randomblob`, `changes`, `total_changes`, `last_insert_rowid` or `sqlite_version`
 * (also quoted, `"random"()`, or with comments before the `(`, `random/**\/()`):
 * the same rows may give another result, so its hash is always checked again (even with no
 * column changed: `queryMayReadColumns(sql, [])` is true); `queryIsVolatile(sql)` says which.
 * Each text is prepared once (folded; for the star test, its `count(*)` and wrapper removed) and
 * kept while recent.
 */
import { foldAsciiCase } from '../documents/sql-values.js'

export { foldAsciiCase }

interface PreparedText {
  folded: string
  readsEverything: boolean
  volatile: boolean
}

/** An identifier character: ASCII letter, digit, `_`, `$`, or any non-ASCII character. */
const IDENTIFIER_EDGE = '[\\w$\\u0080-\\uffff]'
const IDENTIFIER_CHARACTER = new RegExp(IDENTIFIER_EDGE)
/** Between a function's name and its `(`: a closing quote of the name, whitespace, comments. */
const BEFORE_CALL = `["\`\\]]?(?:\\s|/\\*[\\s\\S]*?(?:\\*/|$)|--[^\\n]*(?:\\n|$))*\\(`
export const VOLATILE_FUNCTIONS = ['date', 'time', 'datetime', 'julianday', 'unixepoch', 'strftime', 'timediff', 'random', 'randomblob', 'changes', 'total_changes', 'last_insert_rowid', 'sqlite_version'] as const
export const VOLATILE_NAMES = ['now', 'current_date', 'current_time', 'current_timestamp'] as const
const VOLATILE = new RegExp(
  `(?<!${IDENTIFIER_EDGE})(?:(?:${VOLATILE_FUNCTIONS.join('|')})${BEFORE_CALL}|(?:${VOLATILE_NAMES.join('|')})(?!${IDENTIFIER_EDGE}))`,
)
const READS_EVERYTHING = new RegExp(`(?<!${IDENTIFIER_EDGE})(?:_documents|_document_columns|natural|dbstat|pragma_[\\w$]*)(?!${IDENTIFIER_EDGE})`)

const MAX_PREPARED = 1000
const prepared = new Map<string, PreparedText>()

export function queryMayReadColumns(sql: string, columns: Iterable<string>): boolean {
  const text = preparedText(sql)
  if (text.readsEverything || text.volatile) return true
  for (const column of columns) if (namesColumn(text.folded, column)) return true
  return false
}

/**
 * Whether a recorded index query may return other rows when only rows outside the documents
 * changed (`entries`, the meta rows), the documents' rows being the same: true when it names
 * `entries`, `_insitu_meta` or one of SQLite's own tables (`sqlite_schema`, `sqlite_master`,
 * `sqlite_stat1`, … any name starting with `sqlite_`), or when `queryMayReadColumns(sql, [])` is
 * (it reads everything, or is volatile). Conservative as the rest: a no is never wrong.
 */
export function queryMayReadBeyondDocuments(sql: string): boolean {
  const text = preparedText(sql)
  if (text.readsEverything || text.volatile) return true
  return BEYOND_DOCUMENTS.test(text.folded)
}

const BEYOND_DOCUMENTS = new RegExp(`(?<!${IDENTIFIER_EDGE})(?:entries|_insitu_meta|sqlite_[\\w$]*)(?!${IDENTIFIER_EDGE})`)

/** Whether the text is volatile (above): the same rows may give another result. */
export function queryIsVolatile(sql: string): boolean {
  return preparedText(sql).volatile
}

function preparedText(sql: string): PreparedText {
  let text = prepared.get(sql)
  if (!text) {
    const folded = foldAsciiCase(sql)
    // Only for the star: `count(*)` reads no column, nor does the wrapper's `select *`.
    const stars = folded.replace(/count\s*\(\s*\*\s*\)/g, '').replace(/select\s+\*\s+from\s+__insitu_result\b/g, '')
    text = { folded, readsEverything: stars.includes('*') || READS_EVERYTHING.test(folded), volatile: VOLATILE.test(folded) }
    if (prepared.size >= MAX_PREPARED) prepared.clear()
    prepared.set(sql, text)
  }
  return text
}

function namesColumn(folded: string, column: string): boolean {
  if (column === '' || /["'`\]]/.test(column)) return true
  const name = foldAsciiCase(column)
  for (let at = folded.indexOf(name); at !== -1; at = folded.indexOf(name, at + 1)) {
    if (!IDENTIFIER_CHARACTER.test(folded[at - 1] ?? '') && !IDENTIFIER_CHARACTER.test(folded[at + name.length] ?? '')) return true
  }
  return false
}

