/**
 * Whether a recorded index query can see a change of some rows of `documents`, judged by its
 * text and bound parameters (issue #17: a folder index, `where parent = :insitu_dir`, cannot see
 * an edit in another folder). Conservative: a yes may be needless, a no is never wrong.
 *
 * Contract: `queryMayReadRows(sql, params, paths, evaluate?)` is false only when every row whose
 * path is in `paths` is filtered out by the query's WHERE clause whatever its other columns hold,
 * so the rows the query reads are the same rows as before. The caller guarantees that the rows
 * in `paths` kept their paths (a column-only change: `parent`, `name` and `stem`, derived from
 * `path`, kept too). That takes a text of exactly this shape (tokens, so strings, quoted names
 * and comments are never mistaken for keywords):
 *   `select <result columns> from documents [[as] <alias>] where <conjunct> and ... [group by
 *   | having | order by | limit ...]`
 * - one `select` in the whole text but subqueries over the row's own JSON (`(select … from
 *   json_each(<expr>) [[as] <alias>] [where | group by | order by | limit …])`, `json_tree`
 *   alike: they read no other row; no other subquery, no compound, no CTE: a text starting with
 *   `with`, such as a model with refs, is always a yes), no `in` followed by anything but `(`
 *   (`x in documents` is a subquery too), and not volatile (query-columns.ts, and by the
 *   tokens: a volatile function's name, bare or quoted, before a `(`, or `now`/`current_*`
 *   anywhere; the clock may change its result with no row changed);
 * - the table is `documents` itself, with no join, comma or `indexed by` after it;
 * - the WHERE clause has no `or`, `between` or `case` outside parentheses (so each `and` there
 *   separates conjuncts), and some conjunct is exactly one of (optionally in one pair of
 *   parentheses) `<column> = <value>` or `<value> = <column>` (also `==`, `!=`, `<>`),
 *   `<column> like <value> [escape <value>]`, `<column> glob <value>`, with `<column>` one of the
 *   TEXT columns `path`, `parent`, `name`, `stem` (bare, quoted, or qualified by the alias or
 *   `documents`) and `<value>` a named parameter (`:name`, `@name`, `$name`, `#name`) bound to a string,
 *   or a single-quoted string. Both sides are then TEXT and compared with the column's BINARY
 *   collation (`=` and `!=` are string (in)equality); LIKE and GLOB are asked of SQLite itself
 *   (`evaluate`, on the index: its case and escape rules; without it they keep every row). The
 *   columns are never NULL, so a row failing the conjunct fails the clause. A WHERE clause with
 *   another conjunct that may raise an error for a row's values (`mayRaise`: a function call,
 *   `->`, LIKE or GLOB on another column, a subquery) is no filter at all: SQLite may test it on
 *   a row the others keep out, and the query's result turns from rows to an error.
 *   `window` can be a column: it does not end the clause (a WINDOW clause after the WHERE stays
 *   in its last conjunct, which then is no filter). `?NNN` takes digits only, as in SQLite's
 *   tokenizer (`?1or` is `?1` then `or`); a named parameter in a Tcl form (`$a::b`, `$a(x)`)
 *   makes the text unread.
 *   (A result column aliased `parent` does not shadow the table's: SQLite resolves a name in
 *   WHERE against the table's columns first; test/unit/query-rows.test.ts checks it on SQLite.)
 * Names are compared ignoring ASCII case only, as SQLite compares them.
 * A path is filtered out when some conjunct fails for its `pathColumns`. Each text's conjuncts
 * are found once and kept while recent.
 */
import type { ChangedRows, ComparedValue } from '../documents/changed-rows.js'
import { pathColumns } from '../documents/document-record.js'
import { foldAsciiCase, queryIsVolatile, VOLATILE_FUNCTIONS, VOLATILE_NAMES } from './query-columns.js'

/** The TEXT columns of `documents` that are functions of `path` alone. */
type PathColumn = 'path' | 'parent' | 'name' | 'stem'
/** A path column, or another column named in a WHERE clause (folded), whose values `ChangedRows` tells. */
type RowColumn = { path: PathColumn } | { value: string }

/** A literal, or the name of a bound parameter. */
type Operand = { literal: string } | { param: string }

/** A conjunct `<column> <operator> <value> [escape <escape>]`. */
interface RowFilter {
  column: RowColumn
  operator: '=' | '!=' | 'like' | 'glob'
  value: Operand
  escape?: Operand
}

/**
 * Runs one `select` on the document index and returns the first column of its first row, for
 * LIKE and GLOB (SQLite's own functions, so its case and escape rules hold). Without one, a
 * LIKE or GLOB conjunct is taken as keeping every row.
 */
export type EvaluateSql = (sql: string, params: Record<string, string>) => unknown

interface Token {
  kind: 'word' | 'name' | 'string' | 'param' | 'other'
  /** Words folded to lower case; quoted names and strings unquoted; parameters without their prefix. */
  value: string
  /** Where the token starts in the text (absent on the tokens the readers add themselves). */
  at?: number
}

const MAX_PREPARED = 1000
/**
 * A text's conjuncts read as filters, whether every conjunct of its WHERE clause was one, and
 * the text restricted to changed paths when its rows can be patched (`pathRestrictedQuery`).
 */
interface ReadClause {
  filters: readonly RowFilter[]
  everyConjunct: boolean
  restricted: { sql: string; cheap: boolean } | null
}

const prepared = new Map<string, ReadClause | null>()

export function queryMayReadRows(
  sql: string,
  params: Record<string, unknown>,
  paths: Iterable<string>,
  evaluate?: EvaluateSql,
  rows?: ChangedRows,
): boolean {
  const filters = rowFiltersOf(sql)?.filters
  if (filters === undefined) return true
  const onPath: BoundFilter<PathColumn>[] = []
  const onValue: BoundFilter<string>[] = []
  for (const filter of filters) {
    const value = operandValue(filter.value, params)
    const escape = filter.escape === undefined ? null : operandValue(filter.escape, params)
    // A value that is no string may compare otherwise (affinity): the conjunct is not used.
    if (value === undefined || escape === undefined) continue
    const { column, operator } = filter
    if ('path' in column) onPath.push({ column: column.path, operator, value, escape })
    else if (rows) onValue.push({ column: column.value, operator, value, escape })
  }
  if (onPath.length === 0 && onValue.length === 0) return true
  for (const changed of paths) {
    const columns = pathColumns(changed)
    if (!onPath.every((filter) => mayHold(filter, columns[filter.column], evaluate))) continue
    if (onValue.length === 0 || someStateMayHold(onValue, changed, rows!)) return true
  }
  return false
}

interface BoundFilter<Column> {
  column: Column
  operator: RowFilter['operator']
  value: string
  escape: string | null
}

/**
 * Whether the row at `path` may pass every conjunct on other columns in one of its states (the
 * path columns passed already). A conjunct whose values are unknown may hold.
 */
function someStateMayHold(filters: readonly BoundFilter<string>[], path: string, rows: ChangedRows): boolean {
  const perFilter = filters.map((filter) => rows.valuesOf(path, filter.column))
  const states = perFilter.find((values) => values !== undefined)?.length
  if (states === undefined) return true
  for (let state = 0; state < states; state++) {
    if (filters.every((filter, i) => valueMayHold(filter, perFilter[i]?.[state]))) return true
  }
  return false
}

/** `=` and `!=` against a value SQLite compares as TEXT (BINARY collation); NULL passes neither; unknown may pass. */
function valueMayHold(filter: BoundFilter<string>, value: ComparedValue): boolean {
  if (value === undefined) return true
  if (value === null) return false
  return filter.operator === '=' ? value === filter.value : value !== filter.value
}

function operandValue(operand: Operand, params: Record<string, unknown>): string | undefined {
  const value = 'param' in operand ? params[operand.param] : operand.literal
  return typeof value === 'string' ? value : undefined
}

/** Whether the conjunct may hold for a row whose column is `text` (TEXT, BINARY collation: `=` is string equality). */
function mayHold(filter: BoundFilter<PathColumn>, text: string, evaluate: EvaluateSql | undefined): boolean {
  if (filter.operator === '=') return text === filter.value
  if (filter.operator === '!=') return text !== filter.value
  if (!evaluate) return true
  // LIKE and GLOB of two strings give the same answer every time (no PRAGMA can run to change
  // LIKE's case rule: queries are read-only): each is asked once.
  const key = `${filter.operator}\u0000${text}\u0000${filter.value}\u0000${filter.escape ?? ''}`
  let holds = matched.get(key)
  if (holds === undefined) {
    const escape = filter.escape === null ? '' : ' escape :escape'
    const sql = `select :text ${filter.operator} :pattern${escape} as holds`
    try {
      const params: Record<string, string> = { text, pattern: filter.value }
      if (filter.escape !== null) params.escape = filter.escape
      holds = evaluate(sql, params) !== 0
    } catch {
      holds = true
    }
    if (matched.size >= MAX_MATCHED) matched.clear()
    matched.set(key, holds)
  }
  return holds
}

const MAX_MATCHED = 10_000
const matched = new Map<string, boolean>()

/** The text's conjuncts read as filters (`filterOf`), or null when it is not of the recognized shape. */
function rowFiltersOf(sql: string): ReadClause | null {
  let filters = prepared.get(sql)
  if (filters === undefined) {
    filters = queryIsVolatile(sql) ? null : analyze(sql)
    if (prepared.size >= MAX_PREPARED) prepared.clear()
    prepared.set(sql, filters)
  }
  return filters
}

function analyze(sql: string): ReadClause | null {
  const tokens = tokenize(sql)
  if (tokens === null) return null
  while (tokens.length > 0 && isOther(tokens[tokens.length - 1], ';')) tokens.pop()
  // Volatile by its tokens too (a comment or quotes between a name and its call hide it from text).
  if (tokens.some((t, i) => isIdentifier(t) && (VOLATILE_WORDS.has(foldAsciiCase(t.value)) || (VOLATILE_CALLS.has(foldAsciiCase(t.value)) && isOther(tokens[i + 1], '('))))) return null
  if (!isWord(tokens[0], 'select')) return null
  // Any other `select` is a subquery over the row's own JSON (below): it reads no other row.
  if (tokens.some((t, i) => i > 0 && isWord(t, 'select') && !isRowLocalSubquery(tokens, i))) return null
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
    qualifiers.push(foldAsciiCase(alias.value))
    at++
  }
  if (!isWord(tokens[at], 'where')) return null
  const start = at + 1
  let end = depthZeroIndex(tokens, start, (t) => t.kind === 'word' && CLAUSE_AFTER_WHERE.has(t.value))
  if (end === -1) end = tokens.length
  const clause = tokens.slice(start, end)
  if (depthZeroIndex(clause, 0, (t) => t.kind === 'word' && (t.value === 'or' || t.value === 'between' || t.value === 'case')) !== -1) return null
  const filters: RowFilter[] = []
  let everyConjunct = true
  let raising = false
  let conjunct: Token[] = []
  let depth = 0
  for (const token of [...clause, { kind: 'word', value: 'and' } as Token]) {
    if (depth === 0 && isWord(token, 'and')) {
      const filter = filterOf(conjunct, qualifiers)
      if (filter) filters.push(filter)
      else everyConjunct = false
      raising ||= !filter && mayRaise(conjunct)
      conjunct = []
      continue
    }
    if (isOther(token, '(')) depth++
    else if (isOther(token, ')') && --depth < 0) return null
    conjunct.push(token)
  }
  if (depth !== 0) return null
  const text = restrict(sql, tokens, from, qualifiers, start, end)
  return { filters: raising ? [] : filters, everyConjunct, restricted: text === null ? null : { sql: text, cheap: everyConjunct } }
}

/** The parameter `pathRestrictedQuery` binds the changed paths to (a JSON array of strings). */
export const CHANGED_PATHS_PARAM = '__insitu_changed_paths'

/**
 * The query `sql` restricted to the rows whose path is one of the JSON array bound to
 * `CHANGED_PATHS_PARAM`, or null when its rows cannot be patched that way. It can when each of
 * its rows is one `documents` row its WHERE keeps, shown by plain columns and ordered by path:
 * the text is of the shape `queryMayReadRows` reads (its conjuncts aside), with result columns
 * that are bare names (or `<qualifier>.<name>`), distinct ignoring ASCII case, one of them
 * `path`, no `distinct`, and after the WHERE clause exactly `order by [<qualifier>.]path [asc]`.
 * Then the rows of the other paths are what they were, and the restricted text (the WHERE
 * clause in parentheses, `and path in (…)` after it) gives the changed paths' rows
 * (query-patches.ts merges them). `cheap`: every conjunct of the WHERE clause is one
 * `queryMayReadRows` reads (a column compared with a string or parameter), so the restricted
 * query looks at most as many rows as paths are bound, each at the cost of a few comparisons:
 * it can run in the process that serves pages, with no sandbox to bound it.
 */
export function pathRestrictedQuery(sql: string): { sql: string; cheap: boolean } | null {
  return rowFiltersOf(sql)?.restricted ?? null
}

/**
 * The restricted text of `pathRestrictedQuery`, from `analyze`'s reading: the FROM at `from`,
 * the WHERE clause's tokens from `clauseStart` to `clauseEnd` (what follows it).
 */
function restrict(sql: string, tokens: readonly Token[], from: number, qualifiers: readonly string[], clauseStart: number, clauseEnd: number): string | null {
  if (tokens.some((t) => isOther(t, ';') || isWord(t, 'window'))) return null
  if (isWord(tokens[1], 'distinct') || isWord(tokens[1], 'all')) return null
  // Result columns: plain names, distinct, `path` among them.
  const names = new Set<string>()
  let column: Token[] = []
  for (const token of [...tokens.slice(1, from), { kind: 'other', value: ',' } as Token]) {
    if (!isOther(token, ',')) {
      column.push(token)
      continue
    }
    const name = plainColumnName(column, qualifiers)
    if (name === null || names.has(name)) return null
    names.add(name)
    column = []
  }
  if (!names.has('path')) return null
  // After the WHERE clause: `order by [q.]path [asc]` and nothing else.
  if (!isWord(tokens[clauseEnd], 'order') || !isWord(tokens[clauseEnd + 1], 'by')) return null
  let tail = tokens.slice(clauseEnd + 2)
  if (isWord(tail[tail.length - 1], 'asc')) tail = tail.slice(0, -1)
  if (plainColumnName(tail, qualifiers) !== 'path') return null
  // The WHERE clause in parentheses, and the path condition after it (a text around the query
  // would name qualified columns otherwise: `d.Path` is `path` in a query, `Path` through `select *`).
  const whereAt = tokens[clauseStart]?.at
  const orderAt = tokens[clauseEnd]!.at
  if (whereAt === undefined || orderAt === undefined) return null
  return `${sql.slice(0, whereAt)}(${sql.slice(whereAt, orderAt)}\n) and path in (select value from json_each(:${CHANGED_PATHS_PARAM})) ${sql.slice(orderAt)}`
}

/** A result column or ordering term that is a plain name (bare word, or `<qualifier>.<word>`), folded; else null. */
function plainColumnName(tokens: readonly Token[], qualifiers: readonly string[]): string | null {
  if (tokens.length === 1 && tokens[0]!.kind === 'word') return tokens[0]!.value
  if (tokens.length === 3 && isIdentifier(tokens[0]) && qualifiers.includes(foldAsciiCase(tokens[0].value)) && isOther(tokens[1], '.') && tokens[2]!.kind === 'word') {
    return tokens[2]!.value
  }
  return null
}

/**
 * Whether the `select` at `at` opens a subquery that reads only the outer row: it follows `(`,
 * and its FROM clause is exactly one call of `json_each` or `json_tree` (with an optional
 * alias), followed by the subquery's end or its WHERE, GROUP BY, ORDER BY or LIMIT. Its own
 * subqueries are each checked too (the caller checks every `select`).
 */
function isRowLocalSubquery(tokens: readonly Token[], at: number): boolean {
  if (!isOther(tokens[at - 1], '(')) return false
  const end = closingParenthesis(tokens, at - 1)
  if (end === -1) return false
  const body = tokens.slice(at, end)
  const from = depthZeroIndex(body, 1, (t) => isWord(t, 'from'))
  if (from === -1) return false
  const call = body[from + 1]
  if (!(isWord(call, 'json_each') || isWord(call, 'json_tree')) || !isOther(body[from + 2], '(')) return false
  let next = closingParenthesis(body, from + 2) + 1
  if (next === 0) return false
  if (isWord(body[next], 'as')) next++
  if (body[next]?.kind === 'word' && !SUBQUERY_CLAUSES.has(body[next]!.value)) next++
  return next === body.length || (body[next]?.kind === 'word' && SUBQUERY_CLAUSES.has(body[next]!.value))
}

const SUBQUERY_CLAUSES = new Set(['where', 'group', 'order', 'limit'])

/** The index of the `)` closing the `(` at `open`, or -1. */
function closingParenthesis(tokens: readonly Token[], open: number): number {
  let depth = 0
  for (let i = open; i < tokens.length; i++) {
    if (isOther(tokens[i], '(')) depth++
    else if (isOther(tokens[i], ')') && --depth === 0) return i
  }
  return -1
}

/**
 * Whether a conjunct may raise an error for some row's values (a function call, `->`/`->>` on
 * text that is no JSON, LIKE or GLOB with a pattern of the row's, a subquery): SQLite may test it
 * on a row another conjunct filters out (it orders the tests as it likes), so a row the filters
 * keep out can still change the query's result, from rows to an error.
 */
function mayRaise(conjunct: readonly Token[]): boolean {
  return conjunct.some(
    (t, i) =>
      (isIdentifier(t) && isOther(conjunct[i + 1], '(')) ||
      isOther(t, '->') ||
      isOther(t, '->>') ||
      (t.kind === 'word' && RAISING_WORDS.has(t.value)),
  )
}

const RAISING_WORDS = new Set(['select', 'like', 'glob', 'regexp', 'match'])

const VOLATILE_WORDS = new Set<string>(VOLATILE_NAMES)
const VOLATILE_CALLS = new Set<string>(VOLATILE_FUNCTIONS)

/** Words that end the WHERE clause; none can be a name (`window` can: a WINDOW clause stays in the last conjunct). */
const CLAUSE_AFTER_WHERE = new Set(['group', 'having', 'order', 'limit'])

/**
 * A conjunct of exactly one of the forms `<column> <op> <value>`, `<value> <op> <column>` (`=`,
 * `==`, `!=`, `<>`), `<column> like <value> [escape <value>]`, `<column> glob <value>`, optionally
 * in one pair of parentheses; else null.
 */
function filterOf(conjunct: Token[], qualifiers: readonly string[]): RowFilter | null {
  let tokens = conjunct
  if (isOther(tokens[0], '(') && isOther(tokens[tokens.length - 1], ')')) tokens = tokens.slice(1, -1)
  const leading = columnAt(tokens, 0, qualifiers)
  if (leading) {
    const operator = operatorOf(tokens[leading.end])
    const value = operandOf(tokens[leading.end + 1])
    if (operator === null || value === null) return null
    // LIKE and GLOB are read on the path columns only.
    if ('value' in leading.column && operator !== '=' && operator !== '!=') return null
    const rest = tokens.length - (leading.end + 2)
    if (rest === 0) return { column: leading.column, operator, value }
    const escape = operandOf(tokens[leading.end + 3])
    if (operator === 'like' && rest === 2 && isWord(tokens[leading.end + 2], 'escape') && escape !== null) {
      return { column: leading.column, operator, value, escape }
    }
    return null
  }
  // `<value> = <column>`: equality and inequality only (`x like path` would make the column the pattern).
  const value = operandOf(tokens[0])
  const operator = operatorOf(tokens[1])
  const trailing = columnAt(tokens, 2, qualifiers)
  if (value === null || (operator !== '=' && operator !== '!=') || !trailing || trailing.end !== tokens.length) return null
  return { column: trailing.column, operator, value }
}

function operatorOf(token: Token | undefined): RowFilter['operator'] | null {
  if (isOther(token, '=') || isOther(token, '==')) return '='
  if (isOther(token, '!=') || isOther(token, '<>')) return '!='
  if (isWord(token, 'like')) return 'like'
  if (isWord(token, 'glob')) return 'glob'
  return null
}

function operandOf(token: Token | undefined): Operand | null {
  if (token?.kind === 'string') return { literal: token.value }
  if (token?.kind === 'param' && token.value !== '') return { param: token.value }
  return null
}

/** A column at `at` (bare, quoted, or `<qualifier>.<name>`), and the index after it. */
function columnAt(tokens: readonly Token[], at: number, qualifiers: readonly string[]): { column: RowColumn; end: number } | null {
  let name: Token | undefined
  let end = at + 1
  const first = tokens[at]
  if (isOther(tokens[at + 1], '.')) {
    if (!isIdentifier(first) || !qualifiers.includes(foldAsciiCase(first.value))) return null
    name = tokens[at + 2]
    end = at + 3
  } else {
    name = first
  }
  if (!isIdentifier(name)) return null
  const folded = foldAsciiCase(name.value)
  return { column: PATH_COLUMNS.has(folded) ? { path: folded as PathColumn } : { value: folded }, end }
}

const PATH_COLUMNS = new Set(['path', 'parent', 'name', 'stem'])

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
  return isIdentifier(token) && foldAsciiCase(token.value) === name
}

const IDENTIFIER = /[\w$\u0080-\uffff]/
/** Outside strings, quoted names and comments only ASCII is read: anything else makes the text unread. */
const ASCII_ONLY = /^[\x20-\x7e]*$/
const OPERATORS = ['->>', '->', '==', '!=', '<>', '<=', '>=', '||', '<<', '>>']

/**
 * SQLite's tokens, roughly; null for a text this cannot read: an unterminated string or name, or
 * a NUL (SQLite stops reading the statement there), or, outside strings, quoted names and
 * comments, any character but printable ASCII and SQLite's whitespace (space, tab, line feed,
 * form feed, carriage return): SQLite takes every character from U+0080 on as part of a name (a
 * no-break space before `path` makes another name), and such texts are rare enough to be
 * checked as before.
 */
function tokenize(sql: string): Token[] | null {
  if (sql.includes('\0')) return null
  const tokens: Token[] = []
  let i = 0
  while (i < sql.length) {
    const c = sql[i] as string
    if (c === ' ' || c === '\t' || c === '\n' || c === '\f' || c === '\r') {
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
      tokens.push({ kind: c === "'" ? 'string' : 'name', value: quoted.value, at: i })
      i = quoted.end
    } else if (c === '[') {
      const close = sql.indexOf(']', i + 1)
      if (close === -1) return null
      tokens.push({ kind: 'name', value: sql.slice(i + 1, close), at: i })
      i = close + 1
    } else if (c === '?') {
      // `?NNN` (digits only) binds by position: no name to look up (an empty value).
      let j = i + 1
      while (j < sql.length && /[0-9]/.test(sql[j] as string)) j++
      tokens.push({ kind: 'param', value: '', at: i })
      i = j
    } else if (c === ':' || c === '@' || c === '$' || c === '#') {
      let j = i + 1
      while (j < sql.length && IDENTIFIER.test(sql[j] as string)) j++
      // SQLite's Tcl forms (`$a::b`, `$a(x)`), where a build has them: not read here.
      if (sql[j] === '(' || sql[j] === ':' || !ASCII_ONLY.test(sql.slice(i, j))) return null
      tokens.push({ kind: 'param', value: sql.slice(i + 1, j), at: i })
      i = j
    } else if (IDENTIFIER.test(c)) {
      let j = i + 1
      while (j < sql.length && IDENTIFIER.test(sql[j] as string)) j++
      const word = sql.slice(i, j)
      if (!ASCII_ONLY.test(word)) return null
      tokens.push({ kind: /^[0-9]/.test(word) ? 'other' : 'word', value: foldAsciiCase(word), at: i })
      i = j
    } else {
      if (c < ' ' || c > '~') return null
      const operator = OPERATORS.find((op) => sql.startsWith(op, i)) ?? c
      tokens.push({ kind: 'other', value: operator, at: i })
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
