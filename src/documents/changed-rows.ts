/**
 * The states of the `documents` rows an index change rewrote in place (every one kept its path),
 * for the job memo's row rule (src/engine/query-rows.ts): a query whose WHERE clause keeps a
 * changed row in none of its states (`status = 'blocked'` for a task open before and after a
 * title edit) reads the same rows as before (issue #38).
 *
 * Contract:
 * - `new ChangedRows(states, viewKeys)`: per path, the row's `title` and `frontmatter` (the
 *   stored JSON text) before its first change and after each, and the front-matter keys the
 *   view has columns for (`viewColumnKeys` order; unchanged meanwhile: a change of the view's
 *   columns is no in-place change, document-index.ts).
 * - `valuesOf(path, name)`: the value of the column `name` in each state, as SQLite compares it
 *   with a TEXT value under the column's BINARY collation: a string, or null (SQL NULL: the key
 *   missing or JSON null, or a front matter that is no mapping); undefined when this cannot say:
 *   a path without states, a name resolving to no column this reads (`depth`, `body`,
 *   `frontmatter`, `content_hash`, the path columns, whose values query-rows.ts derives itself,
 *   or a name the view has no column for: perhaps a result column's alias; a name with a colon,
 *   which may be a column SQLite renamed, `Title:1`), a key whose JSON path
 *   this does not spell as the view does (holding `"` or `\`), or a state whose value is of
 *   another type (a number, boolean, list or mapping: SQLite compares those by other rules).
 *   A name is resolved as SQLite resolves one in a WHERE clause over the view: ignoring ASCII
 *   case, the fixed column `title` first, then the first key column in the view's order.
 * - `ChangedRows.merge(changes)`: the states of several changes in order, or undefined when
 *   one of them is unknown.
 */
import { foldAsciiCase } from './sql-values.js'

/** What a row held in one state: the columns `valuesOf` reads. */
export interface RowState {
  title: string | null
  /** The front matter as stored (JSON text). */
  frontmatter: string
}

/** A value as compared with a TEXT operand; undefined: cannot say. */
export type ComparedValue = string | null | undefined

export class ChangedRows {
  /** Parsed front matter per state (null: not a mapping). */
  private readonly parsed = new WeakMap<RowState, Record<string, unknown> | null | undefined>()
  private keysByFold: Map<string, string> | undefined

  constructor(
    readonly states: ReadonlyMap<string, readonly RowState[]>,
    private readonly viewKeys: readonly string[],
  ) {}

  static merge(changes: readonly (ChangedRows | undefined)[]): ChangedRows | undefined {
    if (changes.length === 1) return changes[0]
    const states = new Map<string, RowState[]>()
    let viewKeys: readonly string[] = []
    for (const change of changes) {
      if (!change) return undefined
      viewKeys = change.viewKeys
      for (const [path, each] of change.states) states.set(path, [...(states.get(path) ?? []), ...each])
    }
    return new ChangedRows(states, viewKeys)
  }

  valuesOf(path: string, name: string): readonly ComparedValue[] | undefined {
    const states = this.states.get(path)
    if (!states) return undefined
    const folded = foldAsciiCase(name)
    // SQLite names a key column whose name an earlier column has `<name>:<n>` (`Title:1`): a name
    // with a colon may be such a column, of another key.
    if (folded.includes(':')) return undefined
    if (folded === 'title') return states.map((state) => state.title)
    if (FIXED_UNREAD.has(folded)) return undefined
    const key = this.keyByFoldedName().get(folded)
    if (key === undefined || key.includes('"') || key.includes('\\')) return undefined
    const values: ComparedValue[] = []
    for (const state of states) {
      const frontMatter = this.frontMatterOf(state)
      if (frontMatter === undefined) return undefined
      // Own keys only (`constructor` and `__proto__` are keys like any other).
      const value = frontMatter !== null && Object.hasOwn(frontMatter, key) ? frontMatter[key] : null
      if (value === null || typeof value === 'string') values.push(value)
      else return undefined
    }
    return values
  }

  /** The first key of each name ignoring ASCII case, in the view's order (the column SQLite resolves the name to). */
  private keyByFoldedName(): ReadonlyMap<string, string> {
    if (this.keysByFold === undefined) {
      this.keysByFold = new Map()
      for (const key of this.viewKeys) {
        const folded = foldAsciiCase(key)
        if (!this.keysByFold.has(folded)) this.keysByFold.set(folded, key)
      }
    }
    return this.keysByFold
  }

  /** The parsed front matter, null when it is no mapping, undefined when it does not parse. */
  private frontMatterOf(state: RowState): Record<string, unknown> | null | undefined {
    if (this.parsed.has(state)) return this.parsed.get(state)
    let parsed: Record<string, unknown> | null | undefined
    try {
      const value: unknown = JSON.parse(state.frontmatter)
      parsed = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null
    } catch {
      parsed = undefined
    }
    this.parsed.set(state, parsed)
    return parsed
  }
}

/** The view's fixed columns other than `title` (and the path columns, which query-rows.ts reads itself). */
const FIXED_UNREAD = new Set(['path', 'parent', 'name', 'stem', 'depth', 'body', 'frontmatter', 'content_hash'])
