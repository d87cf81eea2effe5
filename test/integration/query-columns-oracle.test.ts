/**
 * The column rule (src/engine/query-columns.ts) against SQLite itself: every `documents` column
 * the bytecode of a query reads must be one the rule says the query may read. The rule judges a
 * query by its text, and an edit that changes only columns it says a query cannot read skips
 * that query (job-memo.ts, rule 2): a column it misses is an update missed.
 *
 * The oracle is `EXPLAIN <sql>` (better-sqlite3 has no authorizer callback): each `OpenRead`
 * names a cursor's table or index by its root page (`sqlite_schema.rootpage`), and each `Column`
 * reads one column of a cursor — for a WITHOUT ROWID table in storage order (the primary key
 * first), for an index in `pragma_index_xinfo` order — and each seek or key comparison on a
 * cursor (`SeekGE`, `IdxGT`, `NotFound`, …, with P4 = N key fields) its first N columns. Columns
 * of `_document_columns` are the view's path columns and its keys (`keyOfStoredColumn`: the column
 * `^title` holds the key `Title`); `_documents.body`, `.frontmatter` and
 * `.source_hash` are the view's `body`, `frontmatter` and `content_hash`. `path` is left out: the
 * view joins its two tables on it, and a changed path is never a column-only change (the index
 * reports rows appearing and going). The queries: every SQL model of the fixture projects, the playground
 * and the benchmark's generated projects, compiled as the engine runs them, and hand-written
 * ones reaching columns through aliases, subqueries, CTEs, joins, windows and JSON functions.
 */
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { keyOfStoredColumn } from '../../src/documents/index-schema.js'
import { loadSqlModels } from '../../src/documents/sql-models.js'
import { loadProjectConfig } from '../../src/host/config.js'
import { queryMayReadColumns } from '../../src/engine/query-columns.js'
import { generateProject, LAYOUTS } from '../../bench/project-generator.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const REPO = path.resolve(import.meta.dirname, '../..')
const FIXTURE_PROJECTS = ['test/fixtures/parity/project', 'test/fixtures/conformance', 'test/fixtures/plugin-project', 'playground']

/** The view columns backed by `_documents` (the rest are `_document_columns`' own names). */
const FROM_DOCUMENTS_TABLE: Record<string, string> = { body: 'body', frontmatter: 'frontmatter', source_hash: 'content_hash', path: 'path' }

/** A column no query names: the rule says a query reads it only when it takes it as reading everything. */
const NO_SUCH_COLUMN = 'insitu_oracle_no_such_column'

/** Opcodes that compare a cursor's first P4 key columns with registers (a seek, a range end, a key lookup). */
const KEY_COMPARISONS = new Set(['SeekGE', 'SeekGT', 'SeekLE', 'SeekLT', 'IdxGE', 'IdxGT', 'IdxLE', 'IdxLT', 'Found', 'NotFound', 'NoConflict'])

interface Oracle {
  /** The `documents` columns the bytecode of `sql` reads (`path` included; see the header). */
  reads(sql: string): Set<string>
  close(): void
}

/** An index of `root` as the engine builds it, and the oracle over its snapshot, opened read-only. */
function indexedProject(root: string): { oracle: Oracle; models: ReturnType<typeof loadSqlModels> } {
  const config = loadProjectConfig(path.join(root, 'insitu.toml'))
  const statePath = path.join(tempDir(), 'index.db')
  const index = new DocumentIndex({
    root,
    include: config.sources.include,
    exclude: config.sources.exclude,
    respectGitignore: config.sources.respect_gitignore,
    statePath,
  })
  index.rebuild() // writes the snapshot
  index.close()
  const db = new Database(statePath, { readonly: true })
  const schema = db.prepare('select type, name, tbl_name, rootpage, sql from sqlite_schema').all() as {
    type: string
    name: string
    tbl_name: string
    rootpage: number
    sql: string | null
  }[]
  const byRootPage = new Map(schema.filter((entry) => entry.rootpage > 0).map((entry) => [entry.rootpage, entry]))
  const storageOrder = (table: string, sql: string | null): string[] => {
    const columns = db.prepare('select name, pk from pragma_table_info(?)').all(table) as { name: string; pk: number }[]
    if (!/without\s+rowid/i.test(sql ?? '')) return columns.map((column) => column.name)
    const key = columns.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk)
    return [...key, ...columns.filter((column) => column.pk === 0)].map((column) => column.name)
  }
  const indexOrder = (name: string): (string | null)[] =>
    (db.prepare('select name from pragma_index_xinfo(?)').all(name) as { name: string | null }[]).map((row) => row.name)
  const oracle: Oracle = {
    reads(sql) {
      // EXPLAIN runs nothing, but better-sqlite3 wants every named parameter bound.
      const params = Object.fromEntries([...sql.matchAll(/[:@$]([A-Za-z_][A-Za-z0-9_]*)/g)].map((match) => [match[1]!, null]))
      const program = db.prepare(`explain ${sql}`).all(params) as { opcode: string; p1: number; p2: number; p4: unknown }[]
      const cursors = new Map<number, { table: string; columns: (string | null)[] }>()
      const read = new Set<string>()
      const readColumn = (cursorId: number, column: number) => {
        const cursor = cursors.get(cursorId)
        if (!cursor) return // an ephemeral table, a sorter or a pseudo-cursor: its columns came from reads seen already
        const name = cursor.columns[column]
        if (name === undefined || name === null) throw new Error(`EXPLAIN read column ${column} of ${cursor.table}, which the oracle cannot name: ${sql}`)
        if (cursor.table === '_document_columns') read.add(keyOfStoredColumn(name))
        else if (cursor.table === '_documents') read.add(FROM_DOCUMENTS_TABLE[name] ?? `_documents.${name}`)
      }
      for (const { opcode, p1, p2, p4 } of program) {
        if (opcode === 'OpenRead' || opcode === 'ReopenIdx') {
          const entry = byRootPage.get(p2)
          if (!entry) throw new Error(`EXPLAIN opened root page ${p2}, which no table or index of the snapshot has: ${sql}`)
          cursors.set(p1, entry.type === 'index' ? { table: entry.tbl_name, columns: indexOrder(entry.name) } : { table: entry.name, columns: storageOrder(entry.name, entry.sql) })
        } else if (opcode === 'Column') {
          readColumn(p1, p2)
        } else if (KEY_COMPARISONS.has(opcode)) {
          const keyFields = Number(p4)
          for (let column = 0; column < keyFields; column++) readColumn(p1, column)
        }
      }
      return read
    },
    close: () => db.close(),
  }
  return { oracle, models: loadSqlModels(root, config.paths.models) }
}

/** The columns `sql` reads by SQLite's account that the rule says it cannot read (must be none). */
function missedBy(oracle: Oracle, sql: string): string[] {
  return [...oracle.reads(sql)].filter((column) => column !== 'path' && !queryMayReadColumns(sql, [column])).sort()
}

afterAll(removeTempDirs)

describe('the column rule against the bytecode SQLite runs', () => {
  let generated: string[] = []
  beforeAll(() => {
    generated = LAYOUTS.map((layout) => {
      const root = path.join(tempDir(), 'project')
      generateProject(root, { documents: 40, layout })
      return root
    })
  })

  it('the oracle sees the reads of a plain query, and names them as the view does', () => {
    const root = generated[1]!
    const { oracle } = indexedProject(root)
    try {
      expect([...oracle.reads("select title from documents where status = 'open'")].sort()).toEqual(['status', 'title'])
      // Compared only inside the seek of the `parent` index: counted too.
      expect([...oracle.reads('select title from documents where parent = :insitu_dir')]).toContain('parent')
      expect([...oracle.reads("select count(*) from documents where body like '%x%'")]).toContain('body')
      expect([...oracle.reads('select content_hash, frontmatter from documents')]).toEqual(expect.arrayContaining(['content_hash', 'frontmatter']))
      expect([...oracle.reads('select count(*) from entries')]).toEqual([])
    } finally {
      oracle.close()
    }
  })

  it('misses no column any SQL model of the fixtures, the playground or the benchmark projects reads', () => {
    const checked: string[] = []
    const missed: string[] = []
    for (const root of [...FIXTURE_PROJECTS.map((project) => path.join(REPO, project)), ...generated]) {
      const { oracle, models } = indexedProject(root)
      try {
        for (const name of models.names()) {
          let sql: string
          try {
            sql = models.compile(name).sql
          } catch {
            continue // a model the fixture keeps broken on purpose (its tests expect the error)
          }
          // Counted only when it reads a column and the rule judges it column by column: not
          // when it takes the query as reading everything (`*`, the clock), which cannot miss.
          const readsColumns = [...oracle.reads(sql)].some((column) => column !== 'path')
          if (readsColumns && !queryMayReadColumns(sql, [NO_SUCH_COLUMN])) checked.push(`${path.relative(REPO, root)}: ${name}`)
          const columns = missedBy(oracle, sql)
          if (columns.length > 0) missed.push(`${name} (${columns.join(', ')}): ${sql}`)
        }
      } finally {
        oracle.close()
      }
    }
    expect(missed).toEqual([])
    // Not vacuous: models of every project were judged column by column.
    expect(checked.length).toBeGreaterThan(20)
    for (const project of FIXTURE_PROJECTS) expect(checked.some((entry) => entry.startsWith(`${project}: `))).toBe(true)
  })

  it('misses no column a query reaches through aliases, subqueries, CTEs, joins, windows or JSON', () => {
    const { oracle } = indexedProject(generated[1]!)
    const queries = [
      "select d.title as heading from documents as d where d.status = 'open' order by heading",
      'select title from documents where exists (select 1 from documents x where x.priority > documents.priority)',
      "with open(t, p) as (select title, priority from documents where status = 'open') select t from open order by p",
      'select a.title, b.title from documents a join documents b on a.parent = b.parent and a.priority < b.priority',
      'select title from documents where parent in (select parent from documents group by parent having count(*) > 2)',
      'select title, row_number() over (partition by status order by priority desc) as n from documents',
      'select title, sum(priority) over w from documents window w as (order by stem)',
      "select a.title from documents a, json_each(a.tags) t where t.value = 'docs'",
      "select json_extract(frontmatter, '$.status') as s, frontmatter ->> '$.priority' as p from documents",
      'select group_concat(title, char(10)) from documents group by depth',
      'select title from documents union select name from entries order by 1',
      'select coalesce(tags, status, title) from documents',
      "select case when status = 'open' then title else stem end from documents",
      'select max(priority), min(depth) from documents where name <> parent',
      'select title from documents order by length(body) desc limit 3',
      'select title from documents d1 where priority = (select max(priority) from documents d2 where d2.parent = d1.parent)',
      'select "title", [status], `priority` from documents',
      'select x.title from (select title, status from documents) as x where x.status is not null',
      'select count(distinct status) from documents',
      'select title from documents where stem glob :pattern or name like :pattern',
      "select count(*) filter (where status = 'open') from documents",
      "select title from documents where (status, priority) = ('open', 2)",
      'select status, count(*) from documents group by 1 order by 2 desc',
    ]
    try {
      const missed = queries.map((sql) => ({ sql, columns: missedBy(oracle, sql) })).filter(({ columns }) => columns.length > 0)
      expect(missed).toEqual([])
    } finally {
      oracle.close()
    }
  })
})
