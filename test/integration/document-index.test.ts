import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DocumentIndex, type DocumentIndexOptions } from '../../src/documents/document-index.js'
import { frontMatterKeys, viewColumnKeys, viewKeysOf } from '../../src/documents/index-schema.js'

const DEFAULT_EXCLUDE = [
  '.git/**',
  '.insitu/**',
  '.venv/**',
  '.pytest_cache/**',
  '.ruff_cache/**',
  '.pyrefly/**',
  '**/__pycache__/**',
  'dist/**',
  'site/**',
  'node_modules/**',
]

const README = [
  '# Readme',
  '',
  '<!-- insitu:begin sql',
  'model = "open_tasks"',
  '-->',
  '',
  '| generated SECRET |',
  '',
  '<!-- insitu:end -->',
  '',
].join('\n')

const BLANKED_README_BODY = ['# Readme', '', '<!-- insitu:begin sql', 'model = "open_tasks"', '-->', '<!-- insitu:end -->', ''].join(
  '\n',
)

let root: string
const open: DocumentIndex[] = []

function write(relPath: string, text: string): void {
  const file = path.join(root, relPath)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

function remove(relPath: string): void {
  fs.rmSync(path.join(root, relPath), { recursive: true, force: true })
}

function createIndex(overrides: Partial<DocumentIndexOptions> = {}): DocumentIndex {
  const index = new DocumentIndex({
    root,
    include: ['**/*.md'],
    exclude: DEFAULT_EXCLUDE,
    respectGitignore: true,
    ...overrides,
  })
  open.push(index)
  return index
}

function documentPaths(index: DocumentIndex): string[] {
  return index.query('select path from documents order by path').map((row) => row['path'] as string)
}

function entryRows(index: DocumentIndex): string[] {
  return index.query('select path, kind from entries order by path').map((row) => `${row['kind'] as string} ${row['path'] as string}`)
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
  write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: backlog\n---\n# Alpha\n')
  write('tasks/beta.md', '---\nstatus: done\n---\n# Beta\n')
  write('README.md', README)
  write('notes.txt', 'not a document\n')
  write('node_modules/pkg/readme.md', '# excluded\n')
  write('.gitignore', 'build/\n')
  write('build/out.md', '# ignored by git\n')
  // a real git work tree: only there do .gitignore files apply (SPEC §11)
  execFileSync('git', ['init', '--quiet'], { cwd: root })
})

afterEach(() => {
  for (const index of open.splice(0)) index.close()
  fs.rmSync(root, { recursive: true, force: true })
})

describe('rebuild', () => {
  it('indexes the managed documents with their path columns, title and front matter', () => {
    const index = createIndex()
    index.rebuild()
    expect(index.query('select path, parent, name, stem, depth, title, status from documents order by path')).toEqual([
      { path: 'README.md', parent: '', name: 'README.md', stem: 'README', depth: 0, title: null, status: null },
      { path: 'tasks/alpha.md', parent: 'tasks', name: 'alpha.md', stem: 'alpha', depth: 1, title: 'Alpha', status: 'backlog' },
      { path: 'tasks/beta.md', parent: 'tasks', name: 'beta.md', stem: 'beta', depth: 1, title: null, status: 'done' },
    ])
  })

  it('lists every walked file and folder in entries, minus excluded and gitignored paths', () => {
    const index = createIndex()
    index.rebuild()
    expect(entryRows(index)).toEqual([
      'file .gitignore',
      'file README.md',
      'file notes.txt',
      'directory tasks',
      'file tasks/alpha.md',
      'file tasks/beta.md',
    ])
    expect(index.query("select parent, name, depth from entries where path = 'tasks/alpha.md'")).toEqual([
      // entries.depth counts path segments, documents.depth folders (as the Python implementation does)
      { parent: 'tasks', name: 'alpha.md', depth: 2 },
    ])
  })

  it('indexes gitignored documents when respectGitignore is off', () => {
    const index = createIndex({ respectGitignore: false })
    index.rebuild()
    expect(documentPaths(index)).toEqual(['README.md', 'build/out.md', 'tasks/alpha.md', 'tasks/beta.md'])
  })

  it('stores the body after the front matter with generated region bodies blanked', () => {
    const index = createIndex()
    index.rebuild()
    expect(index.query("select body, frontmatter from documents where path = 'README.md'")).toEqual([
      { body: BLANKED_README_BODY, frontmatter: '{}' },
    ])
    expect(index.query("select body from documents where path = 'tasks/alpha.md'")).toEqual([{ body: '# Alpha\n' }])
  })

  it('exposes one sorted column per front-matter key, without insitu/generated and keys equal to a fixed column', () => {
    write(
      'tasks/gamma.md',
      '---\nzeta: 1\nName: shadowed\nowner: Ann\ntags: [a, b]\ninsitu:\n  materializations: {}\ngenerated:\n  x: 1\n---\nGamma\n',
    )
    const index = createIndex()
    index.rebuild()
    const [row] = index.query("select * from documents where path = 'tasks/gamma.md'")
    expect(Object.keys(row ?? {})).toEqual([
      'path',
      'parent',
      'name',
      'stem',
      'depth',
      'title',
      'body',
      'frontmatter',
      'content_hash',
      // `Name` differs from the fixed `name` only in case: its own column, which SQLite names so (SPEC §7)
      'Name:1',
      'owner',
      'status',
      'tags',
      'zeta',
    ])
    expect(row).toMatchObject({ name: 'gamma.md', 'Name:1': 'shadowed', owner: 'Ann', status: null, tags: '["a","b"]', zeta: 1 })
    // Python's json.dumps(front matter, sort_keys=True); a list column is SQLite's json_extract text
    expect(row?.['frontmatter']).toBe('{"Name": "shadowed", "owner": "Ann", "tags": ["a", "b"], "zeta": 1}')
    expect(index.query(`select json_extract(frontmatter, '$.Name') as n from documents where path = 'tasks/gamma.md'`)).toEqual([
      { n: 'shadowed' },
    ])
  })

  it("names columns of true, null and number keys by Python's str(key), as the Python implementation does", () => {
    // (`true` equals 1 in Python: the number key is 2)
    write('tasks/keys.md', '---\ntrue: yes\nnull: nothing\n2: two\n1.5: half\nm: {false: x}\n---\n')
    const index = createIndex()
    index.rebuild()
    const columns = index.query("select name from pragma_table_info('documents')").map((column) => column['name'])
    // SQLite names a view column aliased "True" (or "False") by its position, `column<n>`, in the
    // Python implementation's view as in this one.
    expect(columns.slice(9)).toEqual(['1.5', '2', 'None', 'column13', 'm', 'status'])
    const [row] = index.query("select * from documents where path = 'tasks/keys.md'")
    expect(row).toMatchObject({ column13: 'yes', None: 'nothing', '2': 'two', '1.5': 'half', m: '{"False":"x"}' })
    expect(row?.['frontmatter']).toBe('{"1.5": "half", "2": "two", "None": "nothing", "True": "yes", "m": {"False": "x"}}')
    expect(index.query(`select json_extract(frontmatter, '$.True') as t from documents where path = 'tasks/keys.md'`)).toEqual([{ t: 'yes' }])
  })

  it('with onDocumentRead, reads and reports every document at each rebuild, keeping the rows (and their id) when nothing changed', () => {
    const statePath = path.join(root, '.insitu', 'index.db')
    const first = createIndex({ statePath })
    first.rebuild()
    first.close()
    const reads: { relPath: string; text: string; frontMatter: unknown }[] = []
    const second = createIndex({ statePath, onDocumentRead: (relPath, read) => reads.push({ relPath, ...read }) })
    const before = second.stateId
    // The files are older than the racy window only if written long enough ago: age them.
    for (const relPath of documentPaths(second)) fs.utimesSync(path.join(root, relPath), new Date(0), new Date(0))
    second.rebuild() // the stat changed: rows touched, nothing queries see
    reads.length = 0
    const touched = second.stateId
    second.rebuild()
    expect(reads.map((read) => read.relPath).sort()).toEqual(documentPaths(second))
    const alpha = reads.find((read) => read.relPath === 'tasks/alpha.md')
    expect(alpha?.text).toBe(fs.readFileSync(path.join(root, 'tasks/alpha.md'), 'utf8'))
    expect(alpha?.frontMatter).toMatchObject({ status: 'backlog' })
    expect(second.stateId).toBe(touched)
    expect(touched).not.toBe(before)
  })

  it('gives a cold rebuild the columns a query over every stored front matter gives', () => {
    write('keys/unicode.md', '---\nzé: 1\n"__proto__": x\n"1": one\nnested: {a: 1}\nTitle: shadowed\n---\n')
    write('keys/list.md', '---\n- a\n- b\n---\nbody\n')
    write('keys/broken.md', '---\nkey: [unclosed\n---\nbody\n')
    write('keys/insitu.md', '---\ninsitu:\n  materializations: {}\ngenerated:\n  x: 1\nkept: yes\n---\n')
    const index = createIndex()
    index.rebuild()
    const db = (index as unknown as { db: Database.Database }).db
    const columns = (db.prepare("select name from pragma_table_info('documents')").all() as { name: string }[]).map((c) => c.name)
    expect(viewKeysOf(db)).toEqual(viewColumnKeys(frontMatterKeys(db)))
    expect(columns.slice(9)).toEqual(viewColumnKeys(frontMatterKeys(db)).map((key) => (key === 'Title' ? 'Title:1' : key)))
    expect(columns).toEqual(expect.arrayContaining(['zé', '__proto__', '1', 'nested', 'kept', 'status', 'Title:1']))
  })

  it("keeps a key's column that differs from a fixed column or another key only in case, also in a persisted index", () => {
    write('cased/a.md', '---\ntitle: lower\nTitle: Upper\ntag: t\n---\n')
    const statePath = path.join(root, '.insitu', 'index.db')
    const first = createIndex({ statePath })
    first.rebuild()
    const cased = "select Title, \"Title:1\" as upper, tag from documents where path = 'cased/a.md'"
    expect(first.query(cased)).toEqual([{ title: 'lower', upper: 'Upper', tag: 't' }])
    first.close()
    const second = createIndex({ statePath })
    expect(second.query(cased)).toEqual([{ title: 'lower', upper: 'Upper', tag: 't' }])
    // a new key differing from `tag` only in case: `TAG` sorts first, `tag` becomes `tag:1`
    write('cased/b.md', '---\nTAG: TT\n---\n')
    second.refresh([{ type: 'create', path: 'cased/b.md' }])
    expect(second.query("select path, TAG, \"tag:1\" from documents where path like 'cased/%' order by path")).toEqual([
      { path: 'cased/a.md', TAG: null, 'tag:1': 't' },
      { path: 'cased/b.md', TAG: 'TT', 'tag:1': null },
    ])
    second.close()
  })

  it('indexes a document with invalid front matter with an empty front matter', () => {
    write('broken.md', '---\n- a list\n---\ntext\n')
    const index = createIndex()
    index.rebuild()
    expect(index.query("select title, frontmatter, body from documents where path = 'broken.md'")).toEqual([
      { title: null, frontmatter: '{}', body: '---\n- a list\n---\ntext\n' },
    ])
  })

  it('tells documents from other paths', () => {
    const index = createIndex()
    expect(index.isDocument('tasks/alpha.md')).toBe(true)
    expect(index.isDocument('README.md')).toBe(true)
    expect(index.isDocument('notes.txt')).toBe(false)
    expect(index.isDocument('dist/guide.md')).toBe(false)
    expect(index.isDocument('node_modules/pkg/readme.md')).toBe(false)
  })
})

describe('refresh', () => {
  let index: DocumentIndex
  beforeEach(() => {
    index = createIndex()
    index.rebuild()
  })

  it('reports a new document as a projection change and indexes it', () => {
    write('tasks/delta.md', '---\nstatus: doing\n---\n')
    expect(index.refresh([{ type: 'create', path: 'tasks/delta.md' }])).toMatchObject({ projectionChanged: true })
    expect(index.query("select status from documents where path = 'tasks/delta.md'")).toEqual([{ status: 'doing' }])
  })

  it('tells a change of the documents view from a change of the entries listing', () => {
    const change = (type: 'create' | 'update' | 'delete', rel: string) => index.refresh([{ type, path: rel }])
    write('assets/logo.svg', '<svg/>')
    expect(change('create', 'assets/logo.svg')).toEqual({ projectionChanged: true, documentsChanged: false, entriesChanged: true, changedColumns: undefined })
    write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: doing\n---\n# Alpha\n')
    const statusChange = new Set(['status', 'frontmatter', 'content_hash'])
    const edited = change('update', 'tasks/alpha.md')
    expect({ ...edited, changedRows: undefined }).toEqual({
      projectionChanged: true,
      documentsChanged: true,
      entriesChanged: false,
      changedColumns: statusChange,
      changedPaths: new Set(['tasks/alpha.md']),
      changedRows: undefined,
    })
    // What the row held before and after: its `status` in each state (changed-rows.ts).
    expect(edited.changedRows?.valuesOf('tasks/alpha.md', 'status')).toEqual(['backlog', 'doing'])
    expect(edited.changedRows?.valuesOf('tasks/alpha.md', 'TITLE')).toEqual(['Alpha', 'Alpha'])
    expect(edited.changedRows?.valuesOf('tasks/alpha.md', 'body')).toBeUndefined()
    write('tasks/gamma.md', '# Gamma\n')
    expect(change('create', 'tasks/gamma.md')).toEqual({ projectionChanged: true, documentsChanged: true, entriesChanged: true, changedColumns: undefined })
    fs.rmSync(path.join(root, 'assets'), { recursive: true })
    expect(change('delete', 'assets')).toEqual({ projectionChanged: true, documentsChanged: false, entriesChanged: true, changedColumns: undefined })
    expect(change('update', 'tasks/alpha.md')).toEqual({ projectionChanged: false, documentsChanged: false, entriesChanged: false, changedColumns: undefined })
  })

  it('reports no change for a rewrite with identical bytes', () => {
    write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: backlog\n---\n# Alpha\n')
    expect(index.refresh([{ type: 'update', path: 'tasks/alpha.md' }])).toMatchObject({ projectionChanged: false })
  })

  it('reports no change when only a generated region body changed, but records the new hash', () => {
    const [before] = index.query("select content_hash from _documents where path = 'README.md'")
    write('README.md', README.replace('| generated SECRET |', '| regenerated, longer output |'))
    expect(index.refresh([{ type: 'update', path: 'README.md' }])).toMatchObject({ projectionChanged: false })
    const [after] = index.query("select content_hash, body from _documents where path = 'README.md'")
    expect(after?.['content_hash']).not.toBe(before?.['content_hash'])
    expect(after?.['body']).toBe(BLANKED_README_BODY)
  })

  it('reports no change for a touched mtime, and records it', () => {
    const file = path.join(root, 'tasks/beta.md')
    const later = new Date(Date.now() + 60_000)
    fs.utimesSync(file, later, later)
    expect(index.refresh([{ type: 'update', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: false })
    const [row] = index.query("select cast(mtime_ns / 1000000000 as integer) as seconds from _documents where path = 'tasks/beta.md'")
    expect(row?.['seconds']).toBe(Math.floor(later.getTime() / 1000))
  })

  it('reports a front matter edit and adds a column for a new key', () => {
    write('tasks/beta.md', '---\nstatus: backlog\npriority: high\n---\n# Beta\n')
    expect(index.refresh([{ type: 'update', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: true })
    expect(index.query('select path, status, priority from documents where status is not null order by path')).toEqual([
      { path: 'tasks/alpha.md', status: 'backlog', priority: null },
      { path: 'tasks/beta.md', status: 'backlog', priority: 'high' },
    ])
  })

  it('reports a body edit outside regions', () => {
    write('tasks/beta.md', '---\nstatus: done\n---\n# Beta, renamed\n')
    expect(index.refresh([{ type: 'update', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: true })
  })

  it('drops the column of a key no document has any more', () => {
    write('tasks/alpha.md', '# Alpha\n')
    write('tasks/beta.md', '# Beta\n')
    index.refresh([
      { type: 'update', path: 'tasks/alpha.md' },
      { type: 'update', path: 'tasks/beta.md' },
    ])
    expect(() => index.query('select status from documents')).toThrow('no such column: status')
  })

  it('keeps the columns in step with the keys through renames, value edits and folder deletions', () => {
    const columns = () => Object.keys(index.query('select * from documents limit 1')[0] ?? {}).slice(9)
    write('drafts/one.md', '---\ndraft: true\nphase: wip\n---\n# One\n')
    index.refresh([{ type: 'create', path: 'drafts' }])
    expect(columns()).toEqual(['draft', 'phase', 'status'])
    write('drafts/one.md', '---\ndraft: true\nstage: wip\n---\n# One\n') // phase renamed to stage
    index.refresh([{ type: 'update', path: 'drafts/one.md' }])
    expect(columns()).toEqual(['draft', 'stage', 'status'])
    write('drafts/one.md', '---\ndraft: false\nstage: done\n---\n# One\n') // values only
    index.refresh([{ type: 'update', path: 'drafts/one.md' }])
    expect(index.query("select draft, stage from documents where path = 'drafts/one.md'")).toEqual([{ draft: 0, stage: 'done' }])
    remove('drafts')
    index.refresh([{ type: 'delete', path: 'drafts' }])
    expect(columns()).toEqual(['status'])
  })

  it('removes a deleted document', () => {
    remove('tasks/beta.md')
    expect(index.refresh([{ type: 'delete', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md'])
    expect(entryRows(index)).not.toContain('file tasks/beta.md')
  })

  it('removes every document under a deleted folder', () => {
    remove('tasks')
    expect(index.refresh([{ type: 'delete', path: 'tasks' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md'])
    expect(entryRows(index)).toEqual(['file .gitignore', 'file README.md', 'file notes.txt'])
  })

  it('scans a created folder, nested folders included', () => {
    write('guides/intro.md', '---\ntitle: Intro\n---\n')
    write('guides/deep/more.md', '# More\n')
    write('guides/deep/image.png', 'png')
    expect(index.refresh([{ type: 'create', path: 'guides' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'guides/deep/more.md', 'guides/intro.md', 'tasks/alpha.md', 'tasks/beta.md'])
    expect(entryRows(index).filter((row) => row.includes('guides'))).toEqual([
      'directory guides',
      'directory guides/deep',
      'file guides/deep/image.png',
      'file guides/deep/more.md',
      'file guides/intro.md',
    ])
  })

  it('adds the new folders above a file created without its folder event', () => {
    write('a/b/c.md', '# C\n')
    expect(index.refresh([{ type: 'create', path: 'a/b/c.md' }])).toMatchObject({ projectionChanged: true })
    expect(entryRows(index).filter((row) => / a/.test(row))).toEqual(['directory a', 'directory a/b', 'file a/b/c.md'])
  })

  it('counts a non-document file as a change of entries', () => {
    write('data.csv', 'a,b\n')
    expect(index.refresh([{ type: 'create', path: 'data.csv' }])).toMatchObject({ projectionChanged: true })
    expect(entryRows(index)).toContain('file data.csv')
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
    write('data.csv', 'a,b\n1,2\n')
    expect(index.refresh([{ type: 'update', path: 'data.csv' }])).toMatchObject({ projectionChanged: false })
  })

  it('ignores events on excluded and gitignored paths', () => {
    write('node_modules/pkg/other.md', '# no\n')
    write('build/more.md', '# no\n')
    expect(
      index.refresh([
        { type: 'create', path: 'node_modules/pkg/other.md' },
        { type: 'create', path: 'build/more.md' },
        { type: 'create', path: 'build' },
      ]),
    ).toMatchObject({ projectionChanged: false })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
  })

  it('ignores paths outside the root and normalizes the others', () => {
    write('tasks/delta.md', '# Delta\n')
    expect(index.refresh([{ type: 'delete', path: '../elsewhere.md' }])).toMatchObject({ projectionChanged: false })
    expect(index.refresh([{ type: 'create', path: './tasks//delta.md' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md', 'tasks/delta.md'])
  })

  it('trusts the disk over the event type', () => {
    write('tasks/beta.md', '---\nstatus: review\n---\n')
    expect(index.refresh([{ type: 'delete', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: true })
    expect(index.query("select status from documents where path = 'tasks/beta.md'")).toEqual([{ status: 'review' }])
    remove('tasks/alpha.md')
    expect(index.refresh([{ type: 'update', path: 'tasks/alpha.md' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/beta.md'])
  })

  it('rebuilds when a .gitignore changes', () => {
    write('.gitignore', 'build/\ntasks/beta.md\n')
    expect(index.refresh([{ type: 'update', path: '.gitignore' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md'])
    write('.gitignore', '')
    expect(index.refresh([{ type: 'update', path: '.gitignore' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'build/out.md', 'tasks/alpha.md', 'tasks/beta.md'])
  })

  it('handles a file replaced by a folder of the same name', () => {
    remove('tasks/beta.md')
    write('tasks/beta.md/inner.md', '# inner\n')
    expect(index.refresh([{ type: 'create', path: 'tasks/beta.md' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md/inner.md'])
    expect(entryRows(index).filter((row) => row.includes('beta'))).toEqual(['directory tasks/beta.md', 'file tasks/beta.md/inner.md'])
  })
})

describe('read-only queries', () => {
  let index: DocumentIndex
  beforeEach(() => {
    index = createIndex()
    index.rebuild()
  })

  it.each([
    "insert into entries values ('x', '', 'x', 'file', 0)",
    "update _documents set title = 'x'",
    'delete from _documents',
    'create table t (a)',
    'drop table entries',
    "attach database ':memory:' as other",
    'detach database main',
    'pragma user_version = 7',
    'pragma table_info(documents)',
    'vacuum',
    '',
    '-- only a comment',
  ])('refuses %j as not a query', (sql) => {
    expect(() => index.query(sql)).toThrow(/^SQL models must be a SELECT or WITH query$/)
  })

  it.each([
    "with x as (select 1) insert into entries values ('x', '', 'x', 'file', 0)",
    'with x as (select 1) delete from _documents',
    "WITH x AS (SELECT 1) UPDATE _documents SET title = 'x'",
  ])('refuses the write %j', (sql) => {
    expect(() => index.query(sql)).toThrow(/^SQL models must be read-only$/)
  })

  it('refuses several statements', () => {
    expect(() => index.query('select 1; drop table entries')).toThrow('The supplied SQL string contains more than one statement')
  })

  it('leaves the data untouched after refused statements', () => {
    for (const sql of ['delete from _documents', 'with x as (select 1) delete from _documents', 'select 1; delete from entries']) {
      expect(() => index.query(sql)).toThrow()
    }
    expect(documentPaths(index)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
    expect(entryRows(index)).toHaveLength(6)
  })

  it('accepts select and with after comments, in any case', () => {
    expect(index.query('-- a comment\n  -- another\nSELECT 1 AS one')).toEqual([{ one: 1 }])
    expect(index.query('/* block */ With t(n) as (select 2) select n from t')).toEqual([{ n: 2 }])
  })

  it('binds named parameters and names a missing one', () => {
    expect(index.query('select path from documents where status = :status', { status: 'done' })).toEqual([
      { path: 'tasks/beta.md' },
    ])
    expect(index.query('select :flag as flag, :list as list', { flag: true, list: ['a'] })).toEqual([{ flag: 1, list: '["a"]' }])
    expect(() => index.query('select path from documents where status = :status')).toThrow(
      new Error('missing SQL parameter :status'),
    )
  })

  it('still writes its own rows after a refused query', () => {
    expect(() => index.query('delete from entries')).toThrow()
    write('late.md', '# late\n')
    expect(index.refresh([{ type: 'create', path: 'late.md' }])).toMatchObject({ projectionChanged: true })
    expect(documentPaths(index)).toContain('late.md')
  })

  it('keeps writing its rows and its snapshot after successful queries (query_only stays on between them)', () => {
    const statePath = path.join(root, '.insitu', 'index.db')
    const persisted = createIndex({ statePath })
    persisted.rebuild()
    expect(persisted.query("select count(*) as n from documents where status = 'done'")).toEqual([{ n: 1 }])
    expect(() => persisted.query('with x as (select 1) delete from _documents')).toThrow(/^SQL models must be read-only$/)
    write('tasks/gamma.md', '---\nstatus: done\n---\n# Gamma\n')
    expect(persisted.refresh([{ type: 'create', path: 'tasks/gamma.md' }])).toMatchObject({ documentsChanged: true })
    expect(persisted.query("select count(*) as n from documents where status = 'done'")).toEqual([{ n: 2 }])
    persisted.close()
    const reopened = createIndex({ statePath })
    expect(reopened.query("select count(*) as n from documents where status = 'done'")).toEqual([{ n: 2 }])
    reopened.close()
  })
})

describe('statePath', () => {
  it('keeps the index in a file database across instances', () => {
    const statePath = path.join(root, '.insitu', 'index.db')
    const first = createIndex({ statePath })
    first.rebuild()
    first.close()
    expect(fs.existsSync(statePath)).toBe(true)
    const second = createIndex({ statePath })
    expect(documentPaths(second)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
    expect(second.query("select status from documents where path = 'tasks/beta.md'")).toEqual([{ status: 'done' }])
    second.rebuild()
    write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: backlog\n---\n# Alpha\n')
    expect(second.refresh([{ type: 'update', path: 'tasks/alpha.md' }])).toMatchObject({ projectionChanged: false })
  })

  it('replaces a file that is not a database, and a database of another schema', () => {
    const statePath = path.join(root, 'state', 'index.db')
    fs.mkdirSync(path.dirname(statePath))
    fs.writeFileSync(statePath, 'this is not sqlite, but it is long enough to have a header of a database file......')
    const first = createIndex({ statePath })
    first.rebuild()
    expect(documentPaths(first)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
    first.close()

    const foreignPath = path.join(root, 'state', 'foreign.db')
    const foreign = new Database(foreignPath)
    foreign.exec("create table documents (path text); insert into documents values ('stale.md'); create table entries (x)")
    foreign.close()
    const second = createIndex({ statePath: foreignPath })
    expect(documentPaths(second)).toEqual([])
    second.rebuild()
    expect(documentPaths(second)).toEqual(['README.md', 'tasks/alpha.md', 'tasks/beta.md'])
  })
})

describe('the documents table', () => {
  /** What `documents` must hold: its select over `_documents`, computed afresh (a view would give this). */
  function expected(index: DocumentIndex): unknown[] {
    const keys = (index.query("select name from pragma_table_info('documents')", {}) as { name: string }[]).slice(9).map((r) => r.name)
    const columns = keys.map((key) => `json_extract(frontmatter, '$.${JSON.stringify(key).replaceAll("'", "''")}') as "${key}"`)
    return index.query(`select path, parent, name, stem, depth, title, body, frontmatter, source_hash as content_hash${columns.map((c) => `, ${c}`).join('')} from _documents order by path`, {})
  }

  it('stays in step with every document through row updates, key changes, deletions and folder removals', () => {
    for (let i = 0; i < 30; i++) write(`tasks/t${i}.md`, `---\ntitle: T${i}\nstatus: open\n---\n# T${i}\n`)
    const index = createIndex()
    index.rebuild()
    const all = () => index.query('select * from documents order by path', {})
    expect(all()).toEqual(expected(index))
    // One value (row update), a new key (recreated), a deletion, a new document, a removed folder.
    write('tasks/t1.md', '---\ntitle: T1\nstatus: done\n---\n# T1\n')
    index.refresh([{ type: 'update', path: 'tasks/t1.md' }])
    expect(index.query("select status from documents where path = 'tasks/t1.md'", {})).toEqual([{ status: 'done' }])
    expect(all()).toEqual(expected(index))
    write('tasks/t2.md', '---\ntitle: T2\nstatus: open\nowner: ana\n---\n# T2\n')
    index.refresh([{ type: 'update', path: 'tasks/t2.md' }])
    expect(index.query("select owner from documents where path = 'tasks/t2.md'", {})).toEqual([{ owner: 'ana' }])
    expect(all()).toEqual(expected(index))
    remove('tasks/t3.md')
    write('notes/n.md', '# N\n')
    index.refresh([
      { type: 'delete', path: 'tasks/t3.md' },
      { type: 'create', path: 'notes/n.md' },
    ])
    expect(all()).toEqual(expected(index))
    expect(index.query("select path from documents where path in ('tasks/t3.md', 'notes/n.md')", {})).toEqual([{ path: 'notes/n.md' }])
    remove('tasks')
    index.refresh([{ type: 'delete', path: 'tasks' }])
    expect(index.query("select count(*) as n from documents where parent = 'tasks'", {})).toEqual([{ n: 0 }])
    expect(all()).toEqual(expected(index))
  })
})

describe('row order', () => {
  it('lists rows of a query without ORDER BY sorted by path, however often they were rewritten', () => {
    for (const name of ['b', 'c', 'd']) write(`order/${name}.md`, `---\ntitle: ${name}\n---\n# ${name}\n`)
    const index = createIndex()
    index.rebuild()
    const titles = () => index.query("select title from documents where path like 'order/%'", {}).map((row) => row.title)
    const inFolder = () => index.query("select title from documents where parent = 'order'", {}).map((row) => row.title)
    expect(titles()).toEqual(['b', 'c', 'd'])
    write('order/b.md', '---\ntitle: b\n---\n# b, edited\n')
    index.refresh([{ type: 'update', path: 'order/b.md' }])
    write('order/a.md', '---\ntitle: a\nfresh_key: 1\n---\n') // a new key: the view is recreated
    index.refresh([{ type: 'create', path: 'order/a.md' }])
    write('order/c.md', '---\ntitle: c\n---\n# c, edited\n')
    index.refresh([{ type: 'update', path: 'order/c.md' }])
    expect(titles()).toEqual(['a', 'b', 'c', 'd'])
    expect(inFolder()).toEqual(['a', 'b', 'c', 'd'])
  })
})

describe('refresh: changedColumns', () => {
  const columnsOf = (index: DocumentIndex, rel: string) => {
    const change = index.refresh([{ type: 'update', path: rel }])
    return change.changedColumns === undefined ? undefined : [...change.changedColumns].sort()
  }

  it('names the columns whose value changed while every changed row kept its path', () => {
    write('tasks/a.md', '---\ntitle: A\nstatus: open\npoints: 1\nbig: 9007199254740993\n---\n# A\n')
    write('tasks/b.md', '---\ntitle: B\nbig: 1\n---\n# B\n')
    const index = createIndex()
    index.rebuild()
    write('tasks/a.md', '---\ntitle: A\nstatus: open\npoints: 1\nbig: 9007199254740993\n---\n# A, longer\n')
    expect(columnsOf(index, 'tasks/a.md')).toEqual(['body', 'content_hash'])
    write('tasks/a.md', '---\ntitle: A\nstatus: done\npoints: 1\nbig: 9007199254740993\n---\n# A, longer\n')
    expect(columnsOf(index, 'tasks/a.md')).toEqual(['content_hash', 'frontmatter', 'status'])
    // 1 and 1.0 are different values to SQL (integer and real); big integers compare exactly.
    write('tasks/a.md', '---\ntitle: A\nstatus: done\npoints: 1.0\nbig: 9007199254740992\n---\n# A, longer\n')
    expect(columnsOf(index, 'tasks/a.md')).toEqual(['big', 'content_hash', 'frontmatter', 'points'])
    // A title from the front matter is the `title` column and a key of its own; a key that goes is named.
    write('tasks/a.md', '---\ntitle: A2\nstatus: done\npoints: 1.0\n---\n# A, longer\n')
    expect(columnsOf(index, 'tasks/a.md')).toEqual(['big', 'content_hash', 'frontmatter', 'title'])
    write('tasks/a.md', '---\ntitle: A2\nstatus: done\npoints: 1.0\n---\n# A, longer\n')
    write('tasks/b.md', '---\ntitle: B\nbig: 1\n---\n# B, longer\n')
    write('tasks/a.md', '---\ntitle: A3\nstatus: done\npoints: 1.0\n---\n# A, longer\n')
    const both = index.refresh([{ type: 'update', path: 'tasks/a.md' }, { type: 'update', path: 'tasks/b.md' }])
    expect([...(both.changedColumns ?? [])].sort()).toEqual(['body', 'content_hash', 'frontmatter', 'title'])
  })

  it('is undefined when nothing changed, a row appeared or went, or the view gained a column', () => {
    write('tasks/a.md', '---\ntitle: A\nstatus: open\n---\n# A\n')
    const index = createIndex()
    index.rebuild()
    expect(index.refresh([{ type: 'update', path: 'tasks/a.md' }])).toMatchObject({ documentsChanged: false, changedColumns: undefined })
    write('tasks/c.md', '# C\n')
    expect(index.refresh([{ type: 'create', path: 'tasks/c.md' }])).toMatchObject({ documentsChanged: true, changedColumns: undefined })
    remove('tasks/c.md')
    expect(index.refresh([{ type: 'delete', path: 'tasks/c.md' }])).toMatchObject({ documentsChanged: true, changedColumns: undefined })
    write('tasks/a.md', '---\ntitle: A\nstatus: open\nowner: ann\n---\n# A\n')
    expect(index.refresh([{ type: 'update', path: 'tasks/a.md' }])).toMatchObject({ documentsChanged: true, changedColumns: undefined })
    expect(index.query("select owner from documents where path = 'tasks/a.md'", {})).toEqual([{ owner: 'ann' }])
  })
})

describe('documentsState', () => {
  it('is one id for the same rows in any instance, another when a document changes or goes, and ignores other files', () => {
    const state = { statePath: path.join(root, '.insitu', 'index.sqlite'), cacheKey: 'documents-state test' }
    // Written an hour ago: a file modified within the read's racy window is read again (a new read time).
    const hourAgo = new Date(Date.now() - 3_600_000)
    for (const rel of fs.readdirSync(root, { recursive: true }) as string[]) fs.utimesSync(path.join(root, rel), hourAgo, hourAgo)
    const first = createIndex(state)
    first.rebuild({ persist: true })
    const initial = first.documentsState
    // Another instance from the first one's snapshot: the same rows (their stat and read times too).
    const second = createIndex(state)
    second.rebuild({ persist: false })
    expect(second.documentsState).toBe(initial)
    const stateBefore = second.stateId
    // A file that is not a document (a build's output) leaves the documents' rows as they were.
    write('dist-out/page.html', '<p>x</p>')
    write('notes/data.json', '{}')
    second.refresh([{ type: 'create', path: 'notes/data.json' }])
    expect(second.stateId).not.toBe(stateBefore)
    expect(second.documentsState).toBe(initial)
    write('tasks/alpha.md', '---\ntitle: Alpha 2\nstatus: backlog\n---\n# Alpha\n')
    second.refresh([{ type: 'update', path: 'tasks/alpha.md' }])
    const edited = second.documentsState
    expect(edited).not.toBe(initial)
    remove('tasks/alpha.md')
    second.refresh([{ type: 'delete', path: 'tasks/alpha.md' }])
    expect(second.documentsState).not.toBe(edited)
    expect(second.documentsState).not.toBe(initial)
  })
})

describe('diskChanges', () => {
  it('names what changed on disk since the index read it, without changing the index', () => {
    write('tasks/sub/x.md', '# X\n')
    write('tasks/gamma.md', '# Gamma\n')
    const index = createIndex()
    index.rebuild({ persist: false })
    expect(index.diskChanges()).toEqual([])
    // A touch and a save of the same bytes are no change.
    const later = new Date(Date.now() + 5_000)
    fs.utimesSync(path.join(root, 'tasks/beta.md'), later, later)
    write('README.md', README)
    expect(index.diskChanges()).toEqual([])
    // A folder that became a file (one event, for the path), a deleted document, a new one.
    remove('tasks/sub')
    write('tasks/sub', 'now a file\n')
    remove('tasks/gamma.md')
    write('tasks/delta.md', '# Delta\n')
    const events = index.diskChanges()
    expect([...events].sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { type: 'create', path: 'tasks/delta.md' },
      { type: 'delete', path: 'tasks/gamma.md' },
      { type: 'update', path: 'tasks/sub' },
    ])
    // Nothing was read into the index: it still has gamma and sub/x, and not delta.
    expect(documentPaths(index)).toEqual(expect.arrayContaining(['tasks/gamma.md', 'tasks/sub/x.md']))
    expect(documentPaths(index)).not.toContain('tasks/delta.md')
    // The events, as a watcher would have given them, bring it in line.
    index.refresh(events)
    expect(index.diskChanges()).toEqual([])
    expect(documentPaths(index)).toContain('tasks/delta.md')
    expect(documentPaths(index)).not.toContain('tasks/gamma.md')
  })

  it('names an edited document, a new folder once and a deleted one', () => {
    const index = createIndex()
    index.rebuild({ persist: false })
    write('tasks/alpha.md', '---\ntitle: Alpha, edited\nstatus: backlog\n---\n# Alpha\n')
    write('drafts/new.md', '# New\n')
    write('drafts/deep/more.md', '# More\n')
    remove('tasks/beta.md')
    const later = new Date(Date.now() + 5_000)
    fs.utimesSync(path.join(root, 'README.md'), later, later)
    expect(index.diskChanges()).toEqual([
      { type: 'delete', path: 'tasks/beta.md' },
      { type: 'create', path: 'drafts' },
      { type: 'update', path: 'tasks/alpha.md' },
    ])
    expect(index.query("select title from documents where path = 'tasks/alpha.md'")).toEqual([{ title: 'Alpha' }])
    // What changed after `settledBeforeMs` is left to its watcher event (deletes cannot be dated).
    expect(index.diskChanges({ settledBeforeMs: Date.now() - 60_000 })).toEqual([{ type: 'delete', path: 'tasks/beta.md' }])
    expect(index.diskChanges({ settledBeforeMs: Date.now() + 60_000 })).toHaveLength(3)
  })
})
