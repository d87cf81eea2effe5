/**
 * Whether a recorded index query can read a change of some `documents` columns, judged by its
 * text (issue #17). Conservative: a yes may be needless, a no is never wrong.
 *
 * Contract: `queryMayReadColumns(sql, columns)` is true when the text
 * - uses `*` anywhere but in `count(*)` and in the `select * from __insitu_result` a SQL model is
 *   wrapped in (sql-models.ts; the model's own text names its columns): `*` reads every column
 *   (so may `a * b`, conservatively);
 * - names `_documents` or `_document_columns` (tables behind the view, holding more than it
 *   shows) or uses `natural` (a natural join compares every column two tables share);
 * - or names one of `columns`: compared ignoring ASCII case as SQLite compares names, with no
 *   identifier character (ASCII letter, digit, `_`, `$`, or any non-ASCII character) right
 *   before or after it, so `"title"`, `[title]` and `d.title` read `title` and `subtitle` does
 *   not. An empty name, or one holding a quote character or `]` (SQL doubles those inside a
 *   quoted name), is always taken as read.
 * Each text is prepared once (folded, its `count(*)` and wrapper removed) and kept while recent.
 */

interface PreparedText {
  folded: string
  readsEverything: boolean
}

const MAX_PREPARED = 1000
const prepared = new Map<string, PreparedText>()

export function queryMayReadColumns(sql: string, columns: Iterable<string>): boolean {
  const text = preparedText(sql)
  if (text.readsEverything) return true
  for (const column of columns) if (namesColumn(text.folded, column)) return true
  return false
}

function preparedText(sql: string): PreparedText {
  let text = prepared.get(sql)
  if (!text) {
    const folded = foldAsciiCase(sql).replace(/count\s*\(\s*\*\s*\)/g, '').replace(/select\s+\*\s+from\s+__insitu_result\b/g, '')
    text = { folded, readsEverything: folded.includes('*') || /(?<![\w$\u0080-\uffff])(_documents|_document_columns|natural)(?![\w$\u0080-\uffff])/.test(folded) }
    if (prepared.size >= MAX_PREPARED) prepared.clear()
    prepared.set(sql, text)
  }
  return text
}

function namesColumn(folded: string, column: string): boolean {
  if (column === '' || /["'`\]]/.test(column)) return true
  const name = foldAsciiCase(column)
  for (let at = folded.indexOf(name); at !== -1; at = folded.indexOf(name, at + 1)) {
    if (!isIdentifierCharacter(folded.charCodeAt(at - 1)) && !isIdentifierCharacter(folded.charCodeAt(at + name.length))) return true
  }
  return false
}

/** NaN (before the start or past the end of the text) is not an identifier character. */
function isIdentifierCharacter(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39) || code === 0x5f || code === 0x24 || code >= 0x80
  )
}

function foldAsciiCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}
