/**
 * The persistent document index (`cache`): a snapshot in `paths.state` reconciled by stat at
 * the next start. Real files, real SQLite, real child processes for the second process.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { DEFAULT_EXCLUDE } from '../../src/host/config.js'
import { InsituEngine } from '../../src/engine/engine.js'

let root: string
let statePath: string
const open: DocumentIndex[] = []
const engines: InsituEngine[] = []
let warnings: string[] = []

/** A time long past (whole seconds, so that utimes restores it to the nanosecond). */
const OLD_SECONDS = 1_600_000_000

function write(relPath: string, text: string, seconds?: number): void {
  const file = path.join(root, relPath)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  if (seconds !== undefined) fs.utimesSync(file, seconds, seconds)
}

function createIndex(options: { cacheKey?: string } = {}): DocumentIndex {
  const index = new DocumentIndex({
    root,
    include: ['**/*.md'],
    exclude: DEFAULT_EXCLUDE,
    respectGitignore: true,
    statePath,
    cacheKey: options.cacheKey ?? 'test 1',
    warn: (message) => warnings.push(message),
  })
  open.push(index)
  return index
}

function titles(index: DocumentIndex): Record<string, unknown>[] {
  return index.query('select path, title from documents order by path')
}

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-cache-')))
  statePath = path.join(root, '.insitu', 'index.db')
  warnings = []
  write('tasks/alpha.md', '---\ntitle: Alpha\n---\n# Alpha\n', OLD_SECONDS)
  write('tasks/beta.md', '---\ntitle: Beta\n---\n# Beta\n', OLD_SECONDS)
  write('tasks/gamma.md', '---\ntitle: Gamma\n---\n# Gamma\n', OLD_SECONDS)
})

afterEach(async () => {
  for (const index of open.splice(0)) index.close()
  for (const engine of engines.splice(0)) await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

describe('the index snapshot', () => {
  it('sees every edit, addition and removal made while stopped', () => {
    const first = createIndex()
    first.rebuild()
    first.close()
    write('tasks/alpha.md', '---\ntitle: Alpha, edited\n---\n# Alpha\n', OLD_SECONDS + 10)
    write('tasks/delta.md', '---\ntitle: Delta\n---\n# Delta\n', OLD_SECONDS)
    fs.rmSync(path.join(root, 'tasks/beta.md'))
    const second = createIndex()
    // Before reconciling, the snapshot is what the last instance saw.
    expect(titles(second)).toEqual([
      { path: 'tasks/alpha.md', title: 'Alpha' },
      { path: 'tasks/beta.md', title: 'Beta' },
      { path: 'tasks/gamma.md', title: 'Gamma' },
    ])
    second.rebuild()
    expect(titles(second)).toEqual([
      { path: 'tasks/alpha.md', title: 'Alpha, edited' },
      { path: 'tasks/delta.md', title: 'Delta' },
      { path: 'tasks/gamma.md', title: 'Gamma' },
    ])
    expect(second.query("select path from entries where path like 'tasks/%' order by path")).toEqual([
      { path: 'tasks/alpha.md' },
      { path: 'tasks/delta.md' },
      { path: 'tasks/gamma.md' },
    ])
    expect(warnings).toEqual([])
  })

  it('does not read a file whose mtime and size are unchanged (documented: same size, mtime restored)', () => {
    const first = createIndex()
    first.rebuild()
    first.close()
    // Same byte length, old mtime put back: the stat vouches for the stored row, the file is not read.
    write('tasks/gamma.md', '---\ntitle: GAMMA\n---\n# Gamma\n', OLD_SECONDS)
    const second = createIndex()
    second.rebuild()
    expect(second.query("select title from documents where path = 'tasks/gamma.md'")).toEqual([{ title: 'Gamma' }])
    // A file event always reads the file.
    expect(second.refresh([{ type: 'update', path: 'tasks/gamma.md' }])).toMatchObject({ documentsChanged: true })
    expect(second.query("select title from documents where path = 'tasks/gamma.md'")).toEqual([{ title: 'GAMMA' }])
  })

  it('reads again a file that was read within the racy window of its mtime', () => {
    const now = Math.floor(Date.now() / 1000)
    write('tasks/gamma.md', '---\ntitle: Gamma\n---\n# Gamma\n', now)
    const first = createIndex()
    first.rebuild() // read less than 2 s after the file's mtime: the stat cannot vouch for it
    first.close()
    write('tasks/gamma.md', '---\ntitle: GAMMA\n---\n# Gamma\n', now)
    const second = createIndex()
    second.rebuild()
    expect(second.query("select title from documents where path = 'tasks/gamma.md'")).toEqual([{ title: 'GAMMA' }])
  })

  it('writes no snapshot when nothing changed, and one when something did', () => {
    const first = createIndex()
    first.rebuild()
    first.close()
    fs.utimesSync(statePath, OLD_SECONDS, OLD_SECONDS)
    const second = createIndex()
    second.rebuild()
    second.close()
    expect(fs.statSync(statePath).mtimeMs).toBe(OLD_SECONDS * 1000)
    write('tasks/alpha.md', '---\ntitle: Alpha 2\n---\n# Alpha\n', OLD_SECONDS + 20)
    const third = createIndex()
    third.rebuild()
    expect(fs.statSync(statePath).mtimeMs).not.toBe(OLD_SECONDS * 1000)
    expect(fs.readdirSync(path.dirname(statePath)).sort()).toEqual(['.gitignore', 'index.db'])
    expect(fs.readFileSync(path.join(root, '.insitu', '.gitignore'), 'utf8')).toBe('# created by insitu\n*\n')
  })

  it('matchesSnapshot: true while the rows are those of the snapshot the index started from', () => {
    const first = createIndex()
    expect(first.matchesSnapshot).toBe(false) // no snapshot to start from
    first.rebuild()
    expect(first.matchesSnapshot).toBe(false) // it wrote one; it did not start from one
    first.close()
    const second = createIndex()
    second.rebuild()
    expect(second.matchesSnapshot).toBe(true)
    write('tasks/alpha.md', '---\ntitle: Alpha 2\n---\n# Alpha\n', OLD_SECONDS + 20)
    second.refresh([{ type: 'update', path: 'tasks/alpha.md' }])
    expect(second.matchesSnapshot).toBe(false)
    second.close()
    // A document changed while no index ran: the next start reads it, and its rows are new.
    write('tasks/beta.md', '---\ntitle: Beta 2\n---\n# Beta\n', OLD_SECONDS + 30)
    const third = createIndex()
    third.rebuild()
    expect(third.matchesSnapshot).toBe(false)
    third.close()
    const fourth = createIndex()
    fourth.rebuild()
    expect(fourth.matchesSnapshot).toBe(true)
    expect(titles(fourth)).toEqual([
      { path: 'tasks/alpha.md', title: 'Alpha 2' },
      { path: 'tasks/beta.md', title: 'Beta 2' },
      { path: 'tasks/gamma.md', title: 'Gamma' },
    ])
  })

  it('replaces a file that is not a database with one warning naming it', () => {
    fs.mkdirSync(path.dirname(statePath))
    fs.writeFileSync(statePath, 'this is not sqlite, but it is long enough to have a header of a database file......')
    const first = createIndex()
    expect(titles(first)).toEqual([])
    first.rebuild()
    first.close()
    expect(warnings).toEqual(['insitu: .insitu/index.db is not an insitu index cache (file is not a database); rebuilding it'])
    const second = createIndex()
    expect(titles(second)).toHaveLength(3)
    expect(warnings).toHaveLength(1)
  })

  it('replaces a truncated snapshot with one warning', () => {
    const first = createIndex()
    first.rebuild()
    first.close()
    const bytes = fs.readFileSync(statePath)
    fs.writeFileSync(statePath, bytes.subarray(0, Math.floor(bytes.length / 2)))
    const second = createIndex()
    second.rebuild()
    expect(warnings).toEqual(['insitu: .insitu/index.db is not an insitu index cache (database disk image is malformed); rebuilding it'])
    expect(titles(second)).toHaveLength(3)
  })

  it("replaces another tool's SQLite file with one warning", () => {
    fs.mkdirSync(path.dirname(statePath))
    const foreign = new Database(statePath)
    foreign.exec("create table documents (path text); insert into documents values ('stale.md')")
    foreign.close()
    const index = createIndex()
    expect(titles(index)).toEqual([])
    index.rebuild()
    expect(titles(index)).toHaveLength(3)
    expect(warnings).toEqual(['insitu: .insitu/index.db is not an insitu index cache; rebuilding it'])
  })

  it('ignores, without a warning, a snapshot written by another version', () => {
    const first = createIndex({ cacheKey: 'test 1' })
    first.rebuild()
    first.close()
    fs.rmSync(path.join(root, 'tasks/beta.md'))
    const second = createIndex({ cacheKey: 'test 2' })
    expect(titles(second)).toEqual([])
    second.rebuild()
    expect(titles(second).map((row) => row['path'])).toEqual(['tasks/alpha.md', 'tasks/gamma.md'])
    second.close()
    expect(warnings).toEqual([])
  })

  it('warns once when the snapshot cannot be written, and keeps working', () => {
    fs.writeFileSync(path.join(root, '.insitu'), 'a file where the state folder should be')
    const index = createIndex()
    index.rebuild()
    write('tasks/delta.md', '# Delta\n')
    index.refresh([{ type: 'create', path: 'tasks/delta.md' }])
    expect(warnings).toEqual(['insitu: cannot write the index cache .insitu/index.db (ENOTDIR); it stays in memory'])
    expect(titles(index)).toHaveLength(4)
    index.close() // tries no second write
    expect(warnings).toHaveLength(1)
  })
})

/** The plugin's own folder in the state folder (state-folder.ts). */
const CACHE = '.insitu/vite-plugin-insitu'

describe('the engine option cache', () => {
  async function startEngine(options: { cache?: boolean; persistIndex?: boolean } = {}): Promise<InsituEngine> {
    const engine = await InsituEngine.create({
      root,
      ...options,
      logger: { info: () => {}, warn: (message) => warnings.push(message), error: (message) => warnings.push(message) },
    })
    engines.push(engine)
    return engine
  }

  it('keeps the index in .insitu/vite-plugin-insitu/index.db by default, never as a document or an input', async () => {
    const engine = await startEngine()
    // paths.state (.insitu/index.db) is the Python implementation's index: the plugin has its own folder
    expect(fs.readdirSync(path.join(root, '.insitu')).sort()).toEqual(['.gitignore', 'vite-plugin-insitu'])
    expect(fs.readdirSync(path.join(root, CACHE)).sort()).toEqual(['.gitignore', 'index.db'])
    expect(fs.readFileSync(path.join(root, CACHE, '.gitignore'), 'utf8')).toBe('# created by insitu\n*\n')
    expect(engine.isDocument(path.join(root, CACHE, 'index.db'))).toBe(false)
    expect(engine.index.query("select path from entries where path like '.insitu%'")).toEqual([])
    // The snapshot's own writes (temporary file, rename) affect nothing.
    const events = [
      { type: 'create' as const, path: `${CACHE}/index.db.123-abc.tmp` },
      { type: 'delete' as const, path: `${CACHE}/index.db.123-abc.tmp` },
      { type: 'update' as const, path: `${CACHE}/index.db` },
    ]
    expect(engine.affected(events)).toEqual({ owners: [], projectionChanged: false, gitChanged: false })
    expect(warnings).toEqual([])
  })

  it('cache: false (and the deprecated persistIndex: false) leave no .insitu folder', async () => {
    const engine = await startEngine({ cache: false })
    expect(engine.index.documentPaths()).toEqual(['tasks/alpha.md', 'tasks/beta.md', 'tasks/gamma.md'])
    await engine.close()
    await (await startEngine({ persistIndex: false })).close()
    expect(fs.existsSync(path.join(root, '.insitu'))).toBe(false)
  })

  it('logs a corrupt index file once through the logger and rebuilds it', async () => {
    fs.mkdirSync(path.join(root, CACHE), { recursive: true })
    fs.writeFileSync(path.join(root, CACHE, 'index.db'), 'garbage that is long enough to be read as a database header by SQLite....')
    const engine = await startEngine()
    expect(engine.index.documentPaths()).toEqual(['tasks/alpha.md', 'tasks/beta.md', 'tasks/gamma.md'])
    expect(warnings).toEqual([`insitu: ${CACHE}/index.db is not an insitu index cache (file is not a database); rebuilding it`])
  })
})

describe('two processes sharing the cache', () => {
  const BIN = path.resolve(import.meta.dirname, '../../src/cli/bin.ts')
  const require = createRequire(import.meta.url)
  const tsxPackage = require.resolve('tsx/package.json')
  const TSX = pathToFileURL(path.join(path.dirname(tsxPackage), (require(tsxPackage) as { exports: { '.': string } }).exports['.'])).href

  function cli(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile(process.execPath, ['--import', TSX, BIN, ...args, '--root', root], (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr })
      })
    })
  }

  it('a command line run while an engine is open leaves a valid snapshot for both to build on', async () => {
    const logger = { info: () => {}, warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) }
    const engine = await InsituEngine.create({ root, logger })
    engines.push(engine)
    write('tasks/alpha.md', '---\ntitle: Alpha by the CLI era\n---\n# Alpha\n')
    // Two command lines at once, while the engine is open (each has its own in-memory index).
    const runs = await Promise.all([cli(['check']), cli(['check'])])
    expect(runs).toEqual([
      { code: 0, stdout: '3 documents current\n', stderr: '' },
      { code: 0, stdout: '3 documents current\n', stderr: '' },
    ])
    // The open engine still sees the edit as a change (the CLI's rows are not its rows).
    expect(engine.affected([{ type: 'update', path: 'tasks/alpha.md' }]).projectionChanged).toBe(true)
    write('tasks/beta.md', '---\ntitle: Beta, edited last\n---\n# Beta\n')
    engine.affected([{ type: 'update', path: 'tasks/beta.md' }])
    await engine.close() // the last writer: its snapshot replaces the CLI's
    const next = await InsituEngine.create({ root, logger })
    engines.push(next)
    expect(next.index.query('select path, title from documents order by path')).toEqual([
      { path: 'tasks/alpha.md', title: 'Alpha by the CLI era' },
      { path: 'tasks/beta.md', title: 'Beta, edited last' },
      { path: 'tasks/gamma.md', title: 'Gamma' },
    ])
    expect(warnings).toEqual([])
    expect(fs.readdirSync(path.join(root, CACHE)).sort()).toEqual(['.gitignore', 'index.db'])
  })

  it('--no-cache reads and writes no state folder', async () => {
    expect(await cli(['check', '--no-cache'])).toEqual({ code: 0, stdout: '3 documents current\n', stderr: '' })
    expect(fs.existsSync(path.join(root, '.insitu'))).toBe(false)
    expect(await cli(['check'])).toMatchObject({ code: 0, stderr: '' })
    expect(fs.existsSync(path.join(root, CACHE, 'index.db'))).toBe(true)
    expect(fs.existsSync(statePath)).toBe(false) // the Python implementation's file
  })
})
