/** Which recorded queries can read a change of some `documents` columns (src/engine/query-columns.ts). */
import { describe, expect, it } from 'vitest'
import { queryMayReadBeyondDocuments, queryMayReadColumns } from '../../src/engine/query-columns.js'

const reads = (sql: string, ...columns: string[]) => queryMayReadColumns(sql, columns)

describe('queryMayReadColumns', () => {
  it('finds a column named in any spelling SQLite accepts, and not inside a longer name', () => {
    expect(reads("select title from documents where path like 'tasks/%'", 'title')).toBe(true)
    expect(reads('select "Title" from documents', 'title')).toBe(true)
    expect(reads('select [title], d.status from documents d', 'status')).toBe(true)
    expect(reads('select `TITLE` from documents', 'title')).toBe(true)
    expect(reads('select subtitle, title_x, status_mix from documents', 'title', 'status')).toBe(false)
    expect(reads('select "due date" from documents', 'due date')).toBe(true)
    expect(reads('select größe from documents', 'größe')).toBe(true)
    expect(reads('select xgröße from documents', 'größe')).toBe(false)
  })

  it('takes a star, a natural join or the tables behind the view as reading everything', () => {
    expect(reads('select * from documents', 'title')).toBe(true)
    expect(reads('select d.* from documents d', 'title')).toBe(true)
    expect(reads('select priority * 2 from documents', 'title')).toBe(true)
    expect(reads('select count(*) from documents natural join entries', 'title')).toBe(true)
    expect(reads('select count(*) from _documents', 'title')).toBe(true)
    expect(reads('select count(*) from _document_columns', 'title')).toBe(true)
  })

  it('reads nothing through count(*) or the wrapper around a model', () => {
    expect(reads("select status, count( * ) as n from documents where path like 'tasks/%' group by status", 'title', 'body')).toBe(false)
    expect(reads('with __insitu_result as (select path from documents) select * from __insitu_result', 'title')).toBe(false)
    expect(reads('with __insitu_result as (select path from documents) SELECT * FROM __insitu_result', 'path')).toBe(true)
  })

  it('takes a name SQL would spell with doubled quotes, or an empty one, as read', () => {
    expect(reads('select path from documents', 'say "hi"')).toBe(true)
    expect(reads('select path from documents', "it's")).toBe(true)
    expect(reads('select path from documents', '')).toBe(true)
  })

  it('finds a name that holds what the star test removes', () => {
    expect(reads('select "count(*)" from documents', 'count(*)')).toBe(true)
    expect(reads('select "n count(*)" from documents', 'n count(*)')).toBe(true)
  })

  it('takes a query of the storage (dbstat, pragma functions) as reading every column', () => {
    // Found by review: a body edit changes their results (payload sizes, page counts).
    for (const sql of ['select sum(payload) as p from dbstat', 'select name, sum(payload) from dbstat group by name', 'select page_count from pragma_page_count()']) {
      expect(reads(sql, 'body')).toBe(true)
    }
  })

  it('takes a query on the clock or on chance as reading everything', () => {
    for (const sql of [
      "select path from documents where due < date('now')",
      'select path from documents where due < date()',
      "select strftime('%s') as t",
      'select current_timestamp as t',
      'select path from documents order by random()',
      "select julianday('now') - julianday(due) as late from documents",
      // Found by review: SQLite also calls a quoted name, and allows comments before the `(`.
      'select path, total_changes/**/() as n from documents',
      'select path, "total_changes"() as n from documents',
      'select path, [random]() as n from documents',
      'select path, total_changes -- x\n() as n from documents',
    ]) {
      expect(reads(sql)).toBe(true) // even with no column changed
      expect(reads(sql, 'title')).toBe(true)
    }
    expect(reads("select update_date, status from documents where nowhere = 1")).toBe(false)
    expect(reads("select update_date, status from documents where nowhere = 1", 'title')).toBe(false)
  })
})

describe('queryMayReadBeyondDocuments', () => {
  it('is false for a query of the documents view alone, whatever its columns', () => {
    expect(queryMayReadBeyondDocuments('select title, status, path from documents where parent = :insitu_dir order by path')).toBe(false)
    expect(queryMayReadBeyondDocuments('select status, count(*) from documents group by status')).toBe(false)
  })

  it('is true for entries, the meta rows, SQLite\'s own tables, or anything that reads everything or is volatile', () => {
    for (const sql of [
      'select path from entries',
      'select path from "ENTRIES"',
      'select d.path from documents d join main.entries e on e.path = d.path',
      'select value from _insitu_meta',
      'select sql from sqlite_schema',
      'select name from sqlite_master',
      'select * from documents',
      'select path from _documents',
      "select path, date('now') from documents",
      "select count(*) from documents where tags like '%entries%'", // a name in a string counts, conservatively
    ]) {
      expect(queryMayReadBeyondDocuments(sql), sql).toBe(true)
    }
    expect(queryMayReadBeyondDocuments('select path from documents where name = :entries_name')).toBe(false)
  })
})
