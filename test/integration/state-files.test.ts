/**
 * The state folder is shared with the Python implementation (issue #15, SPEC §11 State): the
 * plugin keeps its caches in `.insitu/vite-plugin-insitu/`, never creates, writes or deletes a
 * file the Python tool reads there (its `index.db`, with a schema of its own), starts cleanly in
 * a project the Python tool ran in, and removes only the caches an older plugin version left at
 * `paths.state` (recognised by their own marker tables). Real SQLite files, real engines.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { InsituEngine } from '../../src/engine/engine.js'
import { JobStore } from '../../src/engine/job-store.js'

let root: string
let infos: string[]
let warnings: string[]

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-state-')))
  infos = []
  warnings = []
  write('insitu/models/titles.sql', 'select title from documents order by path\n')
  write('tasks/alpha.md', '---\ntitle: Alpha\n---\n# Alpha\n')
  write('README.md', '# Readme\n\n<!-- insitu:begin sql\nmodel = "titles"\n-->\n<!-- insitu:end -->\n')
})

afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true })
})

/** Render every document once with a fresh engine (cache on), as a plugin run does. */
async function runPlugin(): Promise<string> {
  const logger = { info: (m: string) => infos.push(m), warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) }
  const engine = await InsituEngine.create({ root, logger })
  try {
    const result = await engine.renderDocument('README.md', fs.readFileSync(path.join(root, 'README.md'), 'utf8'))
    expect(result.diagnostics).toEqual([])
    return result.text
  } finally {
    await engine.close()
  }
}

/** sha256 of every file under `.insitu`, except the plugin's own folder. */
function stateFolderBytes(): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (rel: string): void => {
    for (const dirent of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${dirent.name}`
      if (child === '.insitu/vite-plugin-insitu') continue
      if (dirent.isDirectory()) walk(child)
      else out[child] = createHash('sha256').update(fs.readFileSync(path.join(root, child))).digest('hex')
    }
  }
  walk('.insitu')
  return out
}

/** An index.db as the Python implementation keeps it (its own schema, in WAL mode, with rows). */
function writePythonState(): void {
  fs.mkdirSync(path.join(root, '.insitu/extensions'), { recursive: true })
  write('.insitu/notes.txt', 'kept by the Python tool\n')
  const db = new Database(path.join(root, '.insitu/index.db'))
  db.pragma('journal_mode = wal')
  db.exec(`
    create table _documents (path text primary key, parent text not null, name text not null, stem text not null,
      depth integer not null, title text, body text not null, frontmatter text not null, content_hash text not null,
      mtime_ns integer not null, size integer not null);
    create table entries (path text primary key, parent text not null, name text not null, kind text not null, depth integer not null);
    create index entries_parent on entries(parent, kind, name);
    create view documents as select path, parent, name, stem, depth, title, body, frontmatter, content_hash from _documents;
    insert into _documents values ('tasks/alpha.md', 'tasks', 'alpha.md', 'alpha', 1, 'Alpha', '# Alpha\n', '{"title": "Alpha"}', 'x', 1, 1);
  `)
  db.close()
}

describe('a project the Python implementation ran in', () => {
  it('starts cleanly, twice, and leaves every byte the Python tool keeps as it was', async () => {
    writePythonState()
    const before = stateFolderBytes()
    expect(Object.keys(before).sort()).toEqual(['.insitu/index.db', '.insitu/notes.txt'])
    const first = await runPlugin()
    const second = await runPlugin()
    expect(first).toContain('| Alpha |')
    expect(second).toBe(first)
    expect(stateFolderBytes()).toEqual(before)
    expect(fs.readdirSync(path.join(root, '.insitu/vite-plugin-insitu')).sort()).toEqual(['.gitignore', 'index.db', 'jobs.db'])
    // the Python tool's index still has its own schema: no read_ns column, no plugin tables
    const db = new Database(path.join(root, '.insitu/index.db'), { readonly: true })
    const columns = (db.prepare("select name from pragma_table_info('_documents')").all() as { name: string }[]).map((c) => c.name)
    const tables = (db.prepare("select name from sqlite_master where type = 'table' order by name").all() as { name: string }[]).map((t) => t.name)
    db.close()
    expect(columns).not.toContain('read_ns')
    expect(tables).toEqual(['_documents', 'entries'])
    expect(infos).toEqual([])
    expect(warnings).toEqual([])
  })

  it('creates no index.db at paths.state in a fresh project', async () => {
    await runPlugin()
    expect(fs.existsSync(path.join(root, '.insitu/index.db'))).toBe(false)
    expect(fs.readdirSync(path.join(root, '.insitu')).sort()).toEqual(['.gitignore', 'vite-plugin-insitu'])
  })

  it('keeps its caches beside a custom paths.state', async () => {
    write('insitu.toml', 'version = 1\n[paths]\nstate = "var/state/python.db"\n')
    await runPlugin()
    expect(fs.existsSync(path.join(root, 'var/state/python.db'))).toBe(false)
    expect(fs.readdirSync(path.join(root, 'var/state/vite-plugin-insitu')).sort()).toEqual(['.gitignore', 'index.db', 'jobs.db'])
    expect(fs.readFileSync(path.join(root, 'var/.gitignore'), 'utf8')).toBe('# created by insitu\n*\n')
  })
})

describe('migration from plugin versions that kept their caches at paths.state', () => {
  it("removes the old plugin's index.db and jobs.db (with their WAL files), once, and says so", async () => {
    // What an older plugin wrote: its own index snapshot at paths.state and jobs.db beside it
    const old = new DocumentIndex({
      root,
      include: ['**/*.md'],
      exclude: ['.insitu/**'],
      respectGitignore: false,
      statePath: path.join(root, '.insitu/index.db'),
      cacheKey: 'vite-plugin-insitu 0.9.0',
    })
    old.rebuild()
    old.close()
    const store = JobStore.open(path.join(root, '.insitu/jobs.db'), { plugin: '0.9.0', config: 'c', v8: 'v' }, { info() {}, warn() {}, error() {} })
    store.put('job', { content: 'x' })
    store.close()
    // ... which the Python tool then opened (WAL mode) before failing on it
    const db = new Database(path.join(root, '.insitu/index.db'))
    db.pragma('journal_mode = wal')
    db.close()
    write('.insitu/index.db-shm', 'left by the failed Python run')
    write('.insitu/notes.txt', 'not ours\n')

    await runPlugin()
    expect(fs.readdirSync(path.join(root, '.insitu')).sort()).toEqual(['.gitignore', 'notes.txt', 'vite-plugin-insitu'])
    expect(infos).toEqual([
      'insitu: removed .insitu/index.db, a cache of an older vite-plugin-insitu (its caches now live in .insitu/vite-plugin-insitu/)',
      'insitu: removed .insitu/jobs.db, a cache of an older vite-plugin-insitu (its caches now live in .insitu/vite-plugin-insitu/)',
    ])
    infos = []
    await runPlugin()
    expect(infos).toEqual([])
  })

  it("never removes an index.db the Python implementation wrote, nor a file that is not SQLite", async () => {
    writePythonState()
    write('.insitu/jobs.db', 'not a database')
    const before = stateFolderBytes()
    await runPlugin()
    expect(stateFolderBytes()).toEqual(before)
    expect(infos).toEqual([])
  })
})
