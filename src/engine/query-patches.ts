/**
 * A query's new rows from its old rows and the rows of the paths that changed (issue #38: a
 * title edit of one task re-ran the README's 5,000-row query in the query sandbox, moved every
 * row back and fingerprinted them all; the query restricted to the changed path returns one).
 *
 * Contract: `patchRows(old, changed, fresh)` takes the rows a `pathRestrictedQuery`-shaped query
 * (query-rows.ts) returned at some state, the paths of every row changed since then (rows that
 * kept their paths), and the rows the restricted query returns now for those paths. It returns
 * the query's rows now: the old rows of the other paths, and the fresh rows, in path order
 * (SQLite's BINARY order of TEXT, code point order). Null when the rows do not look like such
 * a query's (no column named `path` ignoring ASCII case, a path that is no string, old rows not
 * in strictly ascending path order, a fresh row outside `changed`): the caller runs the query.
 * The row objects are the old and fresh ones themselves (shared, not copied).
 */
import { foldAsciiCase } from '../documents/sql-values.js'
import { compareCodePoints } from '../values/code-point-order.js'

type Row = Record<string, unknown>

export function patchRows(old: readonly Row[], changed: ReadonlySet<string>, fresh: readonly Row[]): Row[] | null {
  const sample = old[0] ?? fresh[0]
  if (sample === undefined) return []
  const key = Object.keys(sample).find((name) => foldAsciiCase(name) === 'path')
  if (key === undefined) return null
  const pathOf = (row: Row): string | null => {
    const value = row[key]
    return typeof value === 'string' ? value : null
  }
  const incoming: { path: string; row: Row }[] = []
  for (const row of fresh) {
    const path = pathOf(row)
    if (path === null || !changed.has(path)) return null
    incoming.push({ path, row })
  }
  incoming.sort((a, b) => compareCodePoints(a.path, b.path))
  const rows: Row[] = []
  let next = 0
  let previous: string | null = null
  for (const row of old) {
    const path = pathOf(row)
    if (path === null || (previous !== null && compareCodePoints(previous, path) >= 0)) return null
    previous = path
    while (next < incoming.length && compareCodePoints(incoming[next]!.path, path) < 0) rows.push(incoming[next++]!.row)
    if (!changed.has(path)) rows.push(row)
  }
  while (next < incoming.length) rows.push(incoming[next++]!.row)
  return rows
}
