/**
 * SQLite schema of the document index (SPEC §7) and the `documents` view.
 *
 * Contract:
 * - `ensureSchema(db)`: creates `_documents`, `entries` (and their parent indexes) and
 *   `_insitu_meta` (key/value: what wrote a persisted index) when missing. A database whose
 *   `user_version` is not `SCHEMA_VERSION` (another tool's file, an older layout) has those
 *   objects and `documents` dropped and recreated: the index is a cache, never a source of truth.
 * - `_documents.read_ns`: when the row's file was read (wall clock, ns): with `mtime_ns`, it
 *   says whether the stat (mtime and size) can vouch for the row (see document-index.ts).
 * - `viewKeysOf(db)`: the front-matter keys the existing `documents` view has columns for (read
 *   back from `COLUMNS_TABLE`'s column names, `keyOfStoredColumn`).
 * - `documentsSelectSql(keys)`: the `documents` rows expose the fixed columns `DOCUMENT_VIEW_COLUMNS`
 *   (`path, parent, name, stem, depth, title, body, frontmatter, content_hash`, as the Python
 *   implementation's view has them; its `content_hash` is the stored `source_hash`, a hash of the
 *   front matter text and the body, while the byte hash `_documents.content_hash`, `mtime_ns` and
 *   `size` stay internal so that touching a file never changes what queries see) plus one column
 *   per front-matter key, sorted by code point, `json_extract(frontmatter, '$."<key>"') as "<key>"`.
 *   As in the Python implementation's view, SQLite itself names a column whose name another
 *   column before it already has, ignoring ASCII case as it compares names: a key `Title` beside
 *   the fixed `title` is the column `Title:1` in `select *` (and `select Title` reads `title`, the
 *   first column of that name); keys `TAG`, `Tag`, `tag` are `TAG`, `Tag:1`, `tag:2` (SPEC §7).
 * - `viewColumnKeys(keys)`: which keys become columns: every distinct key but those equal (exactly,
 *   as the Python implementation's `keys - set(FIXED)`) to a fixed column, sorted by code point.
 *   `title` is left out (the fixed column holds it); `Title`, `PATH` and keys differing from each
 *   other only in case are all kept.
 * - `storedColumnName(key)` / `keyOfStoredColumn(name)`: a key's column name in `COLUMNS_TABLE`,
 *   a table (where two names equal ignoring ASCII case cannot stand side by side): the key with
 *   `^` written `^^` and each ASCII capital `X` written `^x`, so no two keys' names, nor a key's and
 *   a stored path column's, are equal ignoring case (`status` stays `status`, `Title` is `^title`),
 *   and the key is read back from the name.
 * - `replaceDocumentsView(db, keys)`: `documents` is a view over a table materializing them (path columns
 *   and front-matter keys stored in `_document_columns` since schema 3, keyed by `path` without a
 *   rowid since schema 6, so its rows are read in path order, and indexed by `parent`); the
 *   index rewrites the rows of the documents that change.
 */
import type Database from 'better-sqlite3'
import { compareCodePoints } from '../values/code-point-order.js'

/**
 * Bump when the layout changes or when a row is derived differently from the same file (body
 * blanking, front-matter canonical form): a persisted index of another version is then rebuilt.
 * 4: front matter as Python's json.dumps text, `title` as Python's str(), LF bodies, entries depth
 * = path segments (issue #15). 5: `_document_columns(parent)` indexed (issue #17). 6:
 * `_document_columns` a WITHOUT ROWID table keyed by path (its rows are read in path order). 7: key
 * columns named by `storedColumnName`, keys differing only in case from a fixed column or from
 * each other all kept (issue #36). 8: front-matter keys as Python's `str(key)` (`True`, `None`,
 * not `true`, `null`), at every level of the front matter (issue #36).
 */
export const SCHEMA_VERSION = 8

/** The table naming what wrote a persisted index (`cache_key`), so another version's file is not used. */
export const META_TABLE = '_insitu_meta'

export const DOCUMENT_VIEW_COLUMNS = ['path', 'parent', 'name', 'stem', 'depth', 'title', 'body', 'frontmatter', 'content_hash'] as const

const CREATE_TABLES = `
create table if not exists _documents (
  path text primary key,
  parent text not null,
  name text not null,
  stem text not null,
  depth integer not null,
  title text,
  body text not null,
  frontmatter text not null,
  content_hash text not null,
  source_hash text not null,
  mtime_ns integer not null,
  size integer not null,
  read_ns integer not null
);
create index if not exists _documents_parent on _documents(parent);
create table if not exists entries (
  path text primary key,
  parent text not null,
  name text not null,
  kind text not null check (kind in ('file', 'directory')),
  depth integer not null
);
create index if not exists entries_parent on entries(parent);
create table if not exists _insitu_meta (key text primary key, value text not null);
`

export function ensureSchema(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number
  if (version !== SCHEMA_VERSION) {
    for (const name of ['documents', COLUMNS_TABLE, '_documents', 'entries', META_TABLE]) dropObject(db, name)
  }
  db.exec(CREATE_TABLES)
  if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`)
}

function dropObject(db: Database.Database, name: string): void {
  const row = db.prepare('select type from sqlite_master where name = ?').get(name) as { type: string } | undefined
  if (row?.type === 'view') db.exec(`drop view ${quoteIdentifier(name)}`)
  else if (row?.type === 'table') db.exec(`drop table ${quoteIdentifier(name)}`)
}

/** Distinct top-level front-matter keys over all documents. */
export function frontMatterKeys(db: Database.Database): string[] {
  const rows = db
    .prepare("select distinct j.key as key from _documents d, json_each(d.frontmatter) j where json_type(d.frontmatter) = 'object'")
    .all() as { key: string }[]
  return rows.map((row) => String(row.key))
}

export function viewKeysOf(db: Database.Database): string[] | undefined {
  const view = db.prepare("select count(*) from pragma_table_info('documents')").pluck().get() as number
  if (view === 0) return undefined
  // The view's own names are SQLite's (`Title:1`): the keys are read from the table's columns,
  // the stored path columns first, then one column per key (`replaceDocumentsView`).
  const columns = db.prepare(`select name from pragma_table_info('${COLUMNS_TABLE}')`).all() as { name: string }[]
  return columns.slice(STORED_COLUMNS.length).map((column) => keyOfStoredColumn(column.name))
}

export function viewColumnKeys(keys: Iterable<string>): string[] {
  const fixed = new Set<string>(DOCUMENT_VIEW_COLUMNS)
  return [...new Set(keys)].filter((key) => !fixed.has(key)).sort(compareCodePoints)
}

/** A key's column name in `COLUMNS_TABLE`: `^` as `^^`, an ASCII capital as `^` and its small letter. */
export function storedColumnName(key: string): string {
  return key.replace(/[\^A-Z]/g, (character) => (character === '^' ? '^^' : `^${character.toLowerCase()}`))
}

/** The key whose `storedColumnName` is `name`. */
export function keyOfStoredColumn(name: string): string {
  return name.replace(/\^([\^a-z])/g, (_escape, character: string) => (character === '^' ? '^' : character.toUpperCase()))
}

/** The table materializing the small columns of `documents` (everything but `body` and `frontmatter`). */
export const COLUMNS_TABLE = '_document_columns'

/** Path columns of `documents` stored in `COLUMNS_TABLE` (`body` and `frontmatter` stay in `_documents`). */
const STORED_COLUMNS = ['path', 'parent', 'name', 'stem', 'depth', 'title'] as const

/** The `select` filling `COLUMNS_TABLE` from `_documents` (a `where` may follow it). */
export function documentColumnsSelectSql(columnKeys: readonly string[]): string {
  const columns: string[] = [...STORED_COLUMNS]
  for (const key of columnKeys) {
    columns.push(`json_extract(frontmatter, ${quoteString(`$.${JSON.stringify(key)}`)}) as ${quoteIdentifier(storedColumnName(key))}`)
  }
  return `select ${columns.join(', ')} from _documents`
}

/**
 * (Re)creates `documents`: a view over `COLUMNS_TABLE`, which stores the path columns and one
 * column per front-matter key (so queries read stored values instead of running `json_extract`
 * over every document on every query; the index keeps its rows in step, see `DocumentIndex`),
 * LEFT JOINed to `_documents` for `body`, `frontmatter` and `content_hash` by its primary key, a join SQLite
 * leaves out of queries that read neither.
 */
export function replaceDocumentsView(db: Database.Database, columnKeys: readonly string[]): void {
  dropObject(db, 'documents')
  dropObject(db, COLUMNS_TABLE)
  // Keyed by path without a rowid: a scan reads the rows in path order, however often they were
  // rewritten (docs/guide/compatibility.md: a query without ORDER BY lists rows sorted by path). The declared types
  // are those `create table … as select` gave (front-matter columns have none).
  const keyColumns = columnKeys.map((key) => quoteIdentifier(storedColumnName(key)))
  db.exec(
    `create table ${COLUMNS_TABLE} (path TEXT primary key, parent TEXT, name TEXT, stem TEXT, depth INT, title TEXT${keyColumns.map((key) => `, ${key}`).join('')}) without rowid`,
  )
  db.exec(`insert into ${COLUMNS_TABLE} ${documentColumnsSelectSql(columnKeys)}`)
  // A model of one folder's documents (`where parent = :insitu_dir`, a folder index) looks its
  // rows up instead of scanning every document: a nested project re-runs hundreds of them per
  // edit to check their results (issue #17).
  db.exec(`create index ${COLUMNS_TABLE}_parent on ${COLUMNS_TABLE}(parent)`)
  // Each named as its key: SQLite names a name already taken (ignoring ASCII case) `<key>:<n>`, as
  // in the Python implementation's view.
  const keys = columnKeys.map((key) => `c.${quoteIdentifier(storedColumnName(key))} as ${quoteIdentifier(key)}`)
  const columns = ['c.path', 'c.parent', 'c.name', 'c.stem', 'c.depth', 'c.title', 'd.body', 'd.frontmatter', 'd.source_hash as content_hash', ...keys]
  db.exec(`create view documents as select ${columns.join(', ')} from ${COLUMNS_TABLE} c left join _documents d on d.path = c.path`)
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function quoteString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
