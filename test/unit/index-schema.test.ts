/**
 * The `documents` view's front-matter columns (src/documents/index-schema.ts, SPEC §7, issue #36):
 * one column per key but those equal to a fixed column, so a key differing from a fixed column or
 * from another key only in case (`Title` beside `title`; `TAG`, `Tag`, `tag`) has its column,
 * named by SQLite as it names the Python implementation's view (`Title:1`). The names below are
 * what Python 3.11's sqlite3 (SQLite 3.40) gives for the Python implementation's view over the
 * same keys; test/fixtures/sql-values (generated with it) checks the same through the index.
 */
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  COLUMNS_TABLE,
  DOCUMENT_VIEW_COLUMNS,
  ensureSchema,
  keyOfStoredColumn,
  replaceDocumentsView,
  storedColumnName,
  viewColumnKeys,
  viewKeysOf,
} from '../../src/documents/index-schema.js'

const foldAscii = (name: string) => name.replace(/[A-Z]/g, (letter) => letter.toLowerCase())

/** An in-memory index with one document of front matter `data` and the view over `keys`. */
function indexWith(data: Record<string, unknown>, keys: string[]): Database.Database {
  const db = new Database(':memory:')
  ensureSchema(db)
  db.prepare(
    `insert into _documents (path, parent, name, stem, depth, title, body, frontmatter, content_hash, source_hash, mtime_ns, size, read_ns)
     values ('a.md', '', 'a.md', 'a', 0, ?, 'body', ?, 'c', 's', 0, 0, 0)`,
  ).run(typeof data['title'] === 'string' ? data['title'] : null, JSON.stringify(data))
  replaceDocumentsView(db, viewColumnKeys(keys))
  return db
}

describe('viewColumnKeys', () => {
  it('leaves out only the keys equal to a fixed column; keeps those differing from one, or from each other, only in case', () => {
    expect(viewColumnKeys(['title', 'Title', 'tag', 'Tag', 'TAG', 'PATH', 'path', 'Name', 'content_hash', 'status', 'tag'])).toEqual([
      'Name',
      'PATH',
      'TAG',
      'Tag',
      'Title',
      'status',
      'tag',
    ])
  })

  it('sorts by code point, as Python sorts strings', () => {
    expect(viewColumnKeys(['é', 'z', 'Z', '_a', '1', '😀', '\uffff'])).toEqual(['1', 'Z', '_a', 'z', 'é', '\uffff', '😀'])
  })
})

describe('the documents view', () => {
  it("names a key differing from a fixed column only in case as SQLite names it (select * gives Title:1, as the Python implementation's view)", () => {
    const db = indexWith({ title: 'lower', Title: 'Upper', status: 's' }, ['title', 'Title', 'status'])
    const statement = db.prepare('select * from documents')
    expect(statement.columns().map((column) => column.name)).toEqual([...DOCUMENT_VIEW_COLUMNS, 'Title:1', 'status'])
    expect(statement.raw().get()).toEqual(['a.md', '', 'a.md', 'a', 0, 'lower', 'body', '{"title":"lower","Title":"Upper","status":"s"}', 's', 'Upper', 's'])
    // `Title` names the first column of that name: the fixed one
    const named = db.prepare('select Title, "Title:1" from documents')
    expect(named.columns().map((column) => column.name)).toEqual(['title', 'Title:1'])
    expect(named.raw().get()).toEqual(['lower', 'Upper'])
  })

  it('keeps every key that differs from another only in case (TAG, Tag:1, tag:2), and a fixed column name in another case (Path:1)', () => {
    const db = indexWith({ tag: 't', Tag: 'T', TAG: 'TT', Path: 'P' }, ['tag', 'Tag', 'TAG', 'Path'])
    const statement = db.prepare('select * from documents')
    expect(statement.columns().map((column) => column.name).slice(DOCUMENT_VIEW_COLUMNS.length)).toEqual(['Path:1', 'TAG', 'Tag:1', 'tag:2'])
    expect((statement.raw().get() as unknown[]).slice(DOCUMENT_VIEW_COLUMNS.length)).toEqual(['P', 'TT', 'T', 't'])
    expect(db.prepare('select tag, path from documents').raw().get()).toEqual(['TT', 'a.md'])
  })

  it('reads back the keys it has columns for (a persisted index), not the names SQLite gave them', () => {
    const keys = ['Title', 'tag', 'Tag', 'TAG', 'a^b', 'A^B', '^', 'zé', 'Path', 'x"y']
    const db = indexWith({}, keys)
    expect(viewKeysOf(db)).toEqual(viewColumnKeys(keys))
    expect(viewKeysOf(new Database(':memory:'))).toBeUndefined()
  })

  it('stores each key in a column of its own (a table cannot hold two names equal ignoring case)', () => {
    const db = indexWith({ Title: 1, tItLe: 2, status: 3 }, ['Title', 'tItLe', 'status'])
    const stored = (db.prepare(`select name from pragma_table_info('${COLUMNS_TABLE}')`).all() as { name: string }[]).map((row) => row.name)
    expect(stored).toEqual(['path', 'parent', 'name', 'stem', 'depth', 'title', '^title', 'status', 't^it^le'])
    expect(db.prepare('select "Title:1", "tItLe:2", status from documents').raw().get()).toEqual([1, 2, 3])
  })
})

describe('storedColumnName', () => {
  it('keeps a key without capitals or ^ as it is', () => {
    expect(storedColumnName('status')).toBe('status')
    expect(storedColumnName('due-date é')).toBe('due-date é')
  })

  it('is read back by keyOfStoredColumn, and gives distinct keys names that differ ignoring ASCII case', () => {
    const key = fc.string({ unit: fc.constantFrom('a', 'A', 'z', 'Z', '^', 'é', 'É', '_', ':', '1') })
    fc.assert(
      fc.property(key, key, (a, b) => {
        expect(keyOfStoredColumn(storedColumnName(a))).toBe(a)
        if (a !== b) expect(foldAscii(storedColumnName(a))).not.toBe(foldAscii(storedColumnName(b)))
        // never a stored path column's name unless the key is that column (which has no key column)
        if (!(DOCUMENT_VIEW_COLUMNS as readonly string[]).includes(a)) {
          expect(['path', 'parent', 'name', 'stem', 'depth', 'title']).not.toContain(foldAscii(storedColumnName(a)))
        }
      }),
      { numRuns: 2000 },
    )
  })
})
