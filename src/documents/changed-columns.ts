/**
 * Which columns of the `documents` view an edit of one document changed, so that the job memo
 * re-checks only the jobs whose queries can read one of them (issue #17: a title edit of one
 * task no longer re-runs every count over the tasks to prove its rows unchanged).
 *
 * Contract:
 * - `addChangedColumns(db, before, after, into)`: `before` and `after` are two projections of
 *   the same path. Adds to `into` the names of the `documents` columns whose value differs:
 *   `title`, `body` and `frontmatter` as they differ, `content_hash` whenever the body or the
 *   front matter does (it hashes both), and every top-level front-matter key whose value as
 *   `json_extract` returns it differs (SQLite's own `json_each` type and value: `1` and `1.0`
 *   differ, big integers compare exactly) or that is present on one side only. Keys are added
 *   whether or not the view has a column for them (a superset only re-checks more). Returns
 *   false when the keys cannot be compared (a front matter that is not an object: its keys are
 *   not columns, but the caller should treat every column as changed to stay simple and safe).
 */
import type Database from 'better-sqlite3'
import type { DocumentProjection } from './document-record.js'

type Projection = Pick<DocumentProjection, 'title' | 'body' | 'frontmatter'>

const statements = new WeakMap<Database.Database, Database.Statement>()

export function addChangedColumns(db: Database.Database, before: Projection, after: Projection, into: Set<string>): boolean {
  if (before.title !== after.title) into.add('title')
  if (before.body !== after.body) {
    into.add('body')
    into.add('content_hash')
  }
  if (before.frontmatter === after.frontmatter) return true
  into.add('frontmatter')
  into.add('content_hash')
  const old = topLevelValues(db, before.frontmatter)
  const now = topLevelValues(db, after.frontmatter)
  if (!old || !now) return false
  for (const [key, value] of now) if (old.get(key) !== value) into.add(key)
  for (const key of old.keys()) if (!now.has(key)) into.add(key)
  return true
}

/** Each top-level key with its type and value as SQLite reads them, or undefined when not an object. */
function topLevelValues(db: Database.Database, json: string): Map<string, string> | undefined {
  let statement = statements.get(db)
  if (!statement) {
    statement = db
      .prepare(
        "select json_type(:json) = 'object' as object, key, type, case when type in ('object', 'array') then json else atom end as value " +
          'from (select 1) left join (select key, type, atom, value as json from json_each(:json))',
      )
      .safeIntegers(true)
    statements.set(db, statement)
  }
  const rows = statement.all({ json }) as { object: bigint | null; key: string | null; type: string | null; value: unknown }[]
  if (rows.length === 0 || rows[0]?.object !== 1n) return undefined
  const values = new Map<string, string>()
  for (const row of rows) {
    if (row.key === null) continue // an empty object: the left join's one row
    values.set(row.key, `${row.type}\u0000${String(row.value)}`)
  }
  return values
}
