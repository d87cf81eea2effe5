/**
 * Where a compiled SQL model fails: the model file and, when SQLite's message allows, the line.
 *
 * SQLite (through better-sqlite3) says what is wrong (`near "1": syntax error`, `no such
 * column: x`) but not where, and a compiled model is one query made of every model it refs.
 *
 * Contract: `locateSqlModelError(message, parts, requested, prepareError)` returns the message
 * prefixed with the project-relative file of the model that fails (and `:<line>` of that file
 * when found): `insitu/models/bad.sql:3: no such column: x`; a model reached through refs also
 * says so: `... (in SQL model base, used by top)`.
 * - The failing model is the first `parts[k]` whose query made of `parts[0..k]` does not prepare
 *   (`prepareError` returns SQLite's message, or null when it prepares); when every prefix
 *   prepares (a failure while running), the requested model (the last part), without a line.
 * - The line: for `near "X": syntax error` / `unrecognized token: "X"`, the first occurrence of X
 *   in the model's rendered SQL whose query, cut just after it, fails with the same message; for
 *   `no such column|table|function: X` and `ambiguous column name: X`, the first occurrence of X
 *   as a word. A rendered line maps back to the line of the model file with the same text
 *   (nearest the rendered line number), else to the first file line containing X; else no line.
 */

export interface SqlModelPart {
  /** Model name. */
  name: string
  /** Project-relative POSIX path of the model file. */
  file: string
  /** The CTE name it is compiled under. */
  cte: string
  /** The rendered SQL (template expanded, trailing `;` stripped). */
  sql: string
  /** The model file's text (the template). */
  source: string
}

/** The text of a CTE of the compiled query. */
export function cteText(part: Pick<SqlModelPart, 'cte' | 'sql'>): string {
  return `${part.cte} as (\n${part.sql}\n)`
}

/**
 * The query made of `parts` in order, selecting everything from the last one; a lone part (a
 * model without refs) is its own SQL, run as written, as the Python implementation runs it: a
 * wrapping CTE would rename duplicate result columns (`title`, `title:1`).
 */
export function chainQuery(parts: readonly Pick<SqlModelPart, 'cte' | 'sql'>[]): string {
  if (parts.length === 1) return (parts[0] as Pick<SqlModelPart, 'sql'>).sql
  return `with ${parts.map(cteText).join(',\n')}\nselect * from ${parts[parts.length - 1]?.cte ?? ''}`
}

/** At most this many occurrences of a syntax error's token are tried. */
const MAX_TRIES = 200

export function locateSqlModelError(
  message: string,
  parts: readonly SqlModelPart[],
  requested: string,
  prepareError: (sql: string) => string | null,
): string {
  return sqlModelErrorSite(message, parts, requested, prepareError).message
}

/** `locateSqlModelError`'s message, with the model file and line it names (for `withPosition`). */
export function sqlModelErrorSite(
  message: string,
  parts: readonly SqlModelPart[],
  requested: string,
  prepareError: (sql: string) => string | null,
): { message: string; file: string | null; line: number | null } {
  if (parts.length === 0) return { message, file: null, line: null }
  let failing = parts.length - 1
  let prepares = true
  for (let k = 0; k < parts.length; k++) {
    if (prepareError(chainQuery(parts.slice(0, k + 1))) !== null) {
      failing = k
      prepares = false
      break
    }
  }
  const part = parts[failing]!
  const line = prepares ? null : lineOf(message, parts.slice(0, failing + 1), prepareError)
  const where = line === null ? part.file : `${part.file}:${line}`
  const via = part.name === requested ? '' : ` (in SQL model ${part.name}, used by ${requested})`
  return { message: `${where}: ${message}${via}`, file: part.file, line }
}

/** The line of the last part's model file the message is about, or null. */
function lineOf(
  message: string,
  parts: readonly SqlModelPart[],
  prepareError: (sql: string) => string | null,
): number | null {
  const part = parts[parts.length - 1]!
  const syntax = /^(?:near "([^]*)": syntax error|unrecognized token: "([^]*)")$/.exec(message)
  const named = /^(?:no such (?:column|table|function)|ambiguous column name): (.+)$/.exec(message)
  let token: string | undefined
  let offset = -1
  if (syntax) {
    token = syntax[1] ?? syntax[2] ?? ''
    if (token === '') return null
    const before = parts.slice(0, -1).map((p) => `${cteText(p)},\n`).join('')
    const head = parts.length === 1 ? '' : `with ${before}${part.cte} as (\n`
    let at = part.sql.indexOf(token)
    for (let tries = 0; at !== -1 && tries < MAX_TRIES; tries++) {
      if (prepareError(head + part.sql.slice(0, at + token.length)) === message) {
        offset = at
        break
      }
      at = part.sql.indexOf(token, at + 1)
    }
  } else if (named) {
    token = named[1]!
    offset = wordOffset(part.sql, token)
    if (offset === -1 && token.includes('.')) {
      token = token.slice(token.lastIndexOf('.') + 1)
      offset = wordOffset(part.sql, token)
    }
  }
  if (token === undefined || offset === -1) return null
  const renderedLines = part.sql.split('\n')
  const renderedLine = part.sql.slice(0, offset).split('\n').length
  const text = renderedLines[renderedLine - 1]!.trim()
  const sourceLines = part.source.split('\n')
  let best: number | null = null
  for (const [index, sourceLine] of sourceLines.entries()) {
    if (sourceLine.trim() !== text) continue
    if (best === null || Math.abs(index + 1 - renderedLine) < Math.abs(best - renderedLine)) best = index + 1
  }
  if (best !== null) return best
  const containing = sourceLines.findIndex((sourceLine) => wordOffset(sourceLine, token) !== -1)
  return containing === -1 ? null : containing + 1
}

/** Offset of `word` in `text` not inside a longer identifier (case-insensitive), or -1. */
function wordOffset(text: string, word: string): number {
  const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const match = new RegExp(`(?<![\\w$])${escaped}(?![\\w$])`, 'i').exec(text)
  return match ? match.index : -1
}
