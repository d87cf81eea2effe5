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
 * - `viewKeysOf(db)`: the front-matter keys the existing `documents` view has columns for.
 * - `documentsSelectSql(keys)`: the `documents` rows expose the fixed columns `DOCUMENT_VIEW_COLUMNS`
 *   (`path, parent, name, stem, depth, title, body, frontmatter, content_hash`, as the Python
 *   implementation's view has them; its `content_hash` is the stored `source_hash`, a hash of the
 *   front matter text and the body, while the byte hash `_documents.content_hash`, `mtime_ns` and
 *   `size` stay internal so that touching a file never changes what queries see) plus one column
 *   per front-matter key, sorted by code point, `json_extract(frontmatter, '$."<key>"') as "<key>"`.
 * - `viewColumnKeys(keys)`: which keys become columns. A key equal (case-insensitively, as
 *   SQLite compares column names) to a fixed column, or to an earlier key, is skipped; its value
 *   stays reachable through `json_extract(frontmatter, ...)`.
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
 * `_document_columns` a WITHOUT ROWID table keyed by path (its rows are read in path order).
 */
export const SCHEMA_VERSION = 6

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
  const columns = db.prepare("select name from pragma_table_info('documents')").all() as { name: string }[]
  if (columns.length === 0) return undefined
  // Always the fixed columns, then one column per key (`documentsSelectSql`).
  return columns.slice(DOCUMENT_VIEW_COLUMNS.length).map((column) => column.name)
}

export function viewColumnKeys(keys: Iterable<string>): string[] {
  const taken = new Set<string>(DOCUMENT_VIEW_COLUMNS)
  const columns: string[] = []
  for (const key of [...new Set(keys)].sort(compareCodePoints)) {
    const folded = foldAsciiCase(key)
    if (taken.has(folded)) continue
    taken.add(folded)
    columns.push(key)
  }
  return columns
}

/** SQLite compares identifiers case-insensitively for ASCII letters only. */
function foldAsciiCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}

/** The table materializing the small columns of `documents` (everything but `body` and `frontmatter`). */
export const COLUMNS_TABLE = '_document_columns'

/** Path columns of `documents` stored in `COLUMNS_TABLE` (`body` and `frontmatter` stay in `_documents`). */
const STORED_COLUMNS = ['path', 'parent', 'name', 'stem', 'depth', 'title'] as const

/** The `select` filling `COLUMNS_TABLE` from `_documents` (a `where` may follow it). */
export function documentColumnsSelectSql(columnKeys: readonly string[]): string {
  const columns: string[] = [...STORED_COLUMNS]
  for (const key of columnKeys) {
    columns.push(`json_extract(frontmatter, ${quoteString(`$.${JSON.stringify(key)}`)}) as ${quoteIdentifier(key)}`)
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
  const keyColumns = columnKeys.map((key) => quoteIdentifier(key))
  db.exec(
    `create table ${COLUMNS_TABLE} (path TEXT primary key, parent TEXT, name TEXT, stem TEXT, depth INT, title TEXT${keyColumns.map((key) => `, ${key}`).join('')}) without rowid`,
  )
  db.exec(`insert into ${COLUMNS_TABLE} ${documentColumnsSelectSql(columnKeys)}`)
  // A model of one folder's documents (`where parent = :insitu_dir`, a folder index) looks its
  // rows up instead of scanning every document: a nested project re-runs hundreds of them per
  // edit to check their results (issue #17).
  db.exec(`create index ${COLUMNS_TABLE}_parent on ${COLUMNS_TABLE}(parent)`)
  const keys = columnKeys.map((key) => `c.${quoteIdentifier(key)}`)
  const columns = ['c.path', 'c.parent', 'c.name', 'c.stem', 'c.depth', 'c.title', 'd.body', 'd.frontmatter', 'd.source_hash as content_hash', ...keys]
  db.exec(`create view documents as select ${columns.join(', ')} from ${COLUMNS_TABLE} c left join _documents d on d.path = c.path`)
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function quoteString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`
}
