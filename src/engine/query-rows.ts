/**
 * Whether a recorded index query can see a change of some rows of `documents`, judged by its
 * text and bound parameters (issue #17: a folder index, `where parent = :insitu_dir`, cannot see
 * an edit in another folder). Conservative: a yes may be needless, a no is never wrong.
 *
 * Contract: `queryMayReadRows(sql, params, paths)` is false only when every row whose path is
 * in `paths` is filtered out by the query's WHERE clause whatever its other columns hold, so
 * the rows the query reads are the same rows as before. The caller guarantees that the rows in
 * `paths` kept their paths (a column-only change: `parent`, derived from `path`, kept too).
 * That takes a text of exactly this shape (tokens, so strings, quoted names and comments are
 * never mistaken for keywords):
 *   `select <result columns> from documents [[as] <alias>] where <conjunct> and ... [group by
 *   | having | window | order by | limit ...]`
 * - one `select` in the whole text (no subquery, no compound, no CTE: a text starting with
 *   `with`, such as a model with refs, is always a yes), no `in` followed by anything but `(`
 *   (`x in documents` is a subquery too), and not volatile (query-columns.ts: the clock may
 *   change its result with no row changed);
 * - the table is `documents` itself, with no join, comma or `indexed by` after it;
 * - the WHERE clause has no `or`, `between` or `case` outside parentheses (so each `and` there
 *   separates conjuncts), and some conjunct is exactly `<column> = <value>` (or `==`, either way
 *   round, optionally in one pair of parentheses) with `<column>` `path` or `parent` (bare,
 *   quoted, or qualified by the alias or `documents`) and `<value>` a named parameter (`:name`,
 *   `@name`, `$name`) bound to a string, or a single-quoted string. Both are TEXT, compared
 *   with the column's BINARY collation: equal exactly when the strings are equal, and never
 *   NULL (`path` and `parent` are NOT NULL), so a row failing the conjunct fails the clause.
 *   `window` can be a column: it does not end the clause (a WINDOW clause after the WHERE stays
 *   in its last conjunct, which then is no equality). `?NNN` takes digits only, as in SQLite's
 *   tokenizer (`?1or` is `?1` then `or`); a named parameter in a Tcl form (`$a::b`, `$a(x)`)
 *   makes the text unread.
 *   (A result column aliased `parent` does not shadow the table's: SQLite resolves a name in
 *   WHERE against the table's columns first; test/unit/query-rows.test.ts checks it on SQLite.)
 * A path is filtered out when some conjunct's value differs from its `path` or its `parent`
 * (`pathColumns`). Each text's conjuncts are found once and kept while recent.
 */
import { pathColumns } from '../documents/document-record.js'
import { queryIsVolatile } from './query-columns.js'

type RowColumn = 'path' | 'parent'

/** A conjunct `<column> = <value>`: the value a literal, or the name of a bound parameter. */
interface RowFilter {
  column: RowColumn
  literal?: string
  param?: string
}

interface Token {
  kind: 'word' | 'name' | 'string' | 'param' | 'other'
  /** Words folded to lower case; quoted names and strings unquoted; parameters without their prefix. */
  value: string
}

const MAX_PREPARED = 1000
const prepared = new Map<string, readonly RowFilter[] | null>()

export function queryMayReadRows(sql: string, params: Record<string, unknown>, paths: Iterable<string>): boolean {
  const filters = rowFiltersOf(sql)
  if (filters === null) return true
  const values: { column: RowColumn; value: string }[] = []
  for (const filter of filters) {
    const value = filter.param !== undefined ? params[filter.param] : filter.literal
    if (typeof value === 'string') values.push({ column: filter.column, value })
  }
  if (values.length === 0) return true
  for (const changed of paths) {
    const columns = pathColumns(changed)
    if (values.every(({ column, value }) => columns[column] === value)) return true
  }
  return false
}

/** The text's `path`/`parent` equality conjuncts, or null when it is not of the recognized shape. */
function rowFiltersOf(sql: string): readonly RowFilter[] | null {
  let filters = prepared.get(sql)
  if (filters === undefined) {
    filters = queryIsVolatile(sql) ? null : analyze(sql)
    if (prepared.size >= MAX_PREPARED) prepared.clear()
    prepared.set(sql, filters)
  }
  return filters
}

function analyze(sql: string): RowFilter[] | null {
  const tokens = tokenize(sql)
  if (tokens === null) return null
  while (tokens.length > 0 && isOther(tokens[tokens.length - 1], ';')) tokens.pop()
  if (!isWord(tokens[0], 'select') || tokens.filter((t) => isWord(t, 'select')).length !== 1) return null
  // `x in <table>` is a subquery without `select`, anywhere in the text.
  if (tokens.some((t, i) => isWord(t, 'in') && !isOther(tokens[i + 1], '('))) return null
  const from = depthZeroIndex(tokens, 1, (t) => isWord(t, 'from'))
  if (from === -1) return null
  let at = from + 1
  if (!isName(tokens[at], 'documents')) return null
  at++
  const qualifiers = ['documents']
  if (isWord(tokens[at], 'as')) at++
  const alias = tokens[at]
  if (alias && (alias.kind === 'name' || (alias.kind === 'word' && alias.value !== 'where'))) {
    qualifiers.push(alias.value.toLowerCase())
    at++
  }
  if (!isWord(tokens[at], 'where')) return null
  const start = at + 1
  let end = depthZeroIndex(tokens, start, (t) => t.kind === 'word' && CLAUSE_AFTER_WHERE.has(t.value))
  if (end === -1) end = tokens.length
  const clause = tokens.slice(start, end)
  if (depthZeroIndex(clause, 0, (t) => t.kind === 'word' && (t.value === 'or' || t.value === 'between' || t.value === 'case')) !== -1) return null
  const filters: RowFilter[] = []
  let conjunct: Token[] = []
  let depth = 0
  for (const token of [...clause, { kind: 'word', value: 'and' } as Token]) {
    if (depth === 0 && isWord(token, 'and')) {
      const filter = filterOf(conjunct, qualifiers)
      if (filter) filters.push(filter)
      conjunct = []
      continue
    }
    if (isOther(token, '(')) depth++
    else if (isOther(token, ')') && --depth < 0) return null
    conjunct.push(token)
  }
  return depth === 0 ? filters : null
}

/** Words that end the WHERE clause; none can be a name (`window` can: a WINDOW clause stays in the last conjunct). */
const CLAUSE_AFTER_WHERE = new Set(['group', 'having', 'order', 'limit'])

function filterOf(conjunct: Token[], qualifiers: readonly string[]): RowFilter | null {
  let tokens = conjunct
  if (isOther(tokens[0], '(') && isOther(tokens[tokens.length - 1], ')')) tokens = tokens.slice(1, -1)
  const eq = tokens.findIndex((t) => isOther(t, '=') || isOther(t, '=='))
  if (eq === -1) return null
  const left = tokens.slice(0, eq)
  const right = tokens.slice(eq + 1)
  return sideFilter(left, right, qualifiers) ?? sideFilter(right, left, qualifiers)
}

function sideFilter(columnSide: Token[], valueSide: Token[], qualifiers: readonly string[]): RowFilter | null {
  const column = columnOf(columnSide, qualifiers)
  if (column === null || valueSide.length !== 1) return null
  const value = valueSide[0] as Token
  if (value.kind === 'string') return { column, literal: value.value }
  if (value.kind === 'param' && value.value !== '') return { column, param: value.value }
  return null
}

function columnOf(tokens: Token[], qualifiers: readonly string[]): RowColumn | null {
  let name: Token | undefined
  if (tokens.length === 1) name = tokens[0]
  else if (tokens.length === 3 && isOther(tokens[1], '.') && isIdentifier(tokens[0]) && qualifiers.includes((tokens[0] as Token).value.toLowerCase())) name = tokens[2]
  if (!isIdentifier(name)) return null
  const folded = name.value.toLowerCase()
  return folded === 'path' || folded === 'parent' ? folded : null
}

function depthZeroIndex(tokens: readonly Token[], from: number, test: (token: Token) => boolean): number {
  let depth = 0
  for (let i = from; i < tokens.length; i++) {
    const token = tokens[i] as Token
    if (isOther(token, '(')) depth++
    else if (isOther(token, ')')) depth--
    else if (depth === 0 && test(token)) return i
  }
  return -1
}

function isWord(token: Token | undefined, word: string): boolean {
  return token?.kind === 'word' && token.value === word
}

function isOther(token: Token | undefined, text: string): boolean {
  return token?.kind === 'other' && token.value === text
}

function isIdentifier(token: Token | undefined): token is Token {
  return token?.kind === 'word' || token?.kind === 'name'
}

/** A table name: a bare or quoted identifier equal to `name` ignoring ASCII case. */
function isName(token: Token | undefined, name: string): boolean {
  return isIdentifier(token) && token.value.toLowerCase() === name
}

const IDENTIFIER = /[\w$\u0080-\uffff]/
const OPERATORS = ['->>', '->', '==', '!=', '<>', '<=', '>=', '||', '<<', '>>']

/** SQLite's tokens, roughly; null for a text this cannot read (an unterminated string or name). */
function tokenize(sql: string): Token[] | null {
  const tokens: Token[] = []
  let i = 0
  while (i < sql.length) {
    const c = sql[i] as string
    if (/\s/.test(c)) {
      i++
    } else if (sql.startsWith('--', i)) {
      const eol = sql.indexOf('\n', i)
      i = eol === -1 ? sql.length : eol + 1
    } else if (sql.startsWith('/*', i)) {
      const close = sql.indexOf('*/', i + 2)
      i = close === -1 ? sql.length : close + 2
    } else if (c === "'" || c === '"' || c === '`') {
      const quoted = readQuoted(sql, i, c)
      if (quoted === null) return null
      tokens.push({ kind: c === "'" ? 'string' : 'name', value: quoted.value })
      i = quoted.end
    } else if (c === '[') {
      const close = sql.indexOf(']', i + 1)
      if (close === -1) return null
      tokens.push({ kind: 'name', value: sql.slice(i + 1, close) })
      i = close + 1
    } else if (c === '?') {
      // `?NNN` (digits only) binds by position: no name to look up (an empty value).
      let j = i + 1
      while (j < sql.length && /[0-9]/.test(sql[j] as string)) j++
      tokens.push({ kind: 'param', value: '' })
      i = j
    } else if (c === ':' || c === '@' || c === '$') {
      let j = i + 1
      while (j < sql.length && IDENTIFIER.test(sql[j] as string)) j++
      // SQLite's Tcl forms (`$a::b`, `$a(x)`), where a build has them: not read here.
      if (sql[j] === '(' || sql[j] === ':') return null
      tokens.push({ kind: 'param', value: sql.slice(i + 1, j) })
      i = j
    } else if (IDENTIFIER.test(c)) {
      let j = i + 1
      while (j < sql.length && IDENTIFIER.test(sql[j] as string)) j++
      const word = sql.slice(i, j)
      tokens.push({ kind: /^[0-9]/.test(word) ? 'other' : 'word', value: word.toLowerCase() })
      i = j
    } else {
      const operator = OPERATORS.find((op) => sql.startsWith(op, i)) ?? c
      tokens.push({ kind: 'other', value: operator })
      i += operator.length
    }
  }
  return tokens
}

/** A quoted string or name from `start` (its quote doubled inside), or null when unterminated. */
function readQuoted(sql: string, start: number, quote: string): { value: string; end: number } | null {
  let value = ''
  let i = start + 1
  for (;;) {
    const close = sql.indexOf(quote, i)
    if (close === -1) return null
    value += sql.slice(i, close)
    if (sql[close + 1] !== quote) return { value, end: close + 1 }
    value += quote
    i = close + 2
  }
}
