/**
 * The document index's first scan in a worker thread (documents/rebuild-in-worker.ts, a dev
 * server's start): the same rows, snapshot, state id and warnings as a scan in this thread, and
 * a fallback (null) whenever the thread does not give them. Real files, real SQLite, a real thread.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { DocumentIndex, type DocumentIndexOptions } from '../../src/documents/document-index.js'
import { rebuildInWorker, SCAN_ENTRIES, worthAThread } from '../../src/documents/rebuild-in-worker.js'
import { InsituEngine } from '../../src/engine/engine.js'
import { DEFAULT_EXCLUDE } from '../../src/host/config.js'
import { generateProject } from '../../bench/project-generator.js'

let root: string
const open: DocumentIndex[] = []

/** A time long past (whole seconds): a stat vouches for the rows at the next start. */
const OLD_SECONDS = 1_600_000_000

function write(relPath: string, text: string | Buffer): void {
  const file = path.join(root, relPath)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  fs.utimesSync(file, OLD_SECONDS, OLD_SECONDS)
}

function options(warnings: string[], state: 'cache' | 'memory' = 'cache'): DocumentIndexOptions {
  const statePath = state === 'cache' ? path.join(root, '.insitu', 'index.db') : undefined
  return { root, include: ['**/*.md'], exclude: DEFAULT_EXCLUDE, respectGitignore: true, statePath, cacheKey: 'test 1', warn: (m) => warnings.push(m) }
}

const ROWS = 'select * from documents order by path'
const ENTRIES = 'select * from entries order by path'

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-index-worker-')))
  write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: open\n---\n# Alpha\n')
  write('tasks/beta.md', '---\ntitle: Beta\npriority: 2\n---\n# Beta\n')
  write('notes/plain.md', '# Plain\n')
  write('notes/binary.md', Buffer.from([0x23, 0x00, 0x41]))
  write('ignored/skip.md', '# skipped\n')
  write('.gitignore', 'ignored/\n')
})

afterEach(() => {
  for (const index of open.splice(0)) index.close()
  fs.rmSync(root, { recursive: true, force: true })
})

it('gives the rows, entries and warnings of a scan in this thread, and writes the same snapshot', async () => {
  const here: string[] = []
  const local = new DocumentIndex(options(here, 'memory'))
  open.push(local)
  local.rebuild()
  const there: string[] = []
  const scanned = await rebuildInWorker(options(there), { persist: true, always: true })
  expect(scanned).not.toBeNull()
  open.push(scanned!)
  expect(scanned!.query(ROWS)).toEqual(local.query(ROWS))
  expect(scanned!.query(ENTRIES)).toEqual(local.query(ENTRIES))
  expect(there).toEqual(here)
  expect(there.length).toBeGreaterThan(0) // the NUL byte's warning, told once
  // The snapshot the thread wrote is the next start's: same state id, nothing read again.
  const stateId = scanned!.stateId
  scanned!.close()
  open.pop()
  const next = new DocumentIndex(options([]))
  open.push(next)
  expect(next.stateId).toBe(stateId)
  expect(next.query(ROWS)).toEqual(local.query(ROWS))
})

it('starts from the snapshot as a scan here would, and keeps its state id when nothing changed', async () => {
  const first = new DocumentIndex(options([]))
  first.rebuild()
  const stateId = first.stateId
  first.close()
  const scanned = await rebuildInWorker(options([]), { persist: true, always: true })
  open.push(scanned!)
  expect(scanned!.stateId).toBe(stateId)
  write('tasks/gamma.md', '---\ntitle: Gamma\n---\n')
  const changed = await rebuildInWorker(options([]), { persist: true, always: true })
  open.push(changed!)
  expect(changed!.stateId).not.toBe(stateId)
  expect(changed!.query("select title from documents where path = 'tasks/gamma.md'")).toEqual([{ title: 'Gamma' }])
})

it('hands over whether the rows are still those of the snapshot it started from (matchesSnapshot)', async () => {
  const fresh = await rebuildInWorker(options([]), { persist: true, always: true })
  open.push(fresh!)
  expect(fresh!.matchesSnapshot).toBe(false) // no snapshot to start from
  fresh!.close()
  open.pop()
  const same = await rebuildInWorker(options([]), { persist: true, always: true })
  open.push(same!)
  expect(same!.matchesSnapshot).toBe(true)
  same!.close()
  open.pop()
  write('tasks/gamma.md', '---\ntitle: Gamma\n---\n')
  const changed = await rebuildInWorker(options([]), { persist: true, always: true })
  open.push(changed!)
  expect(changed!.matchesSnapshot).toBe(false)
})

it('answers null when it cannot give the rows (the caller scans here), and never with onDocumentRead', async () => {
  expect(await rebuildInWorker({ ...options([]), onDocumentRead: () => {} }, { persist: true, always: true })).toBeNull()
  // A root that is not a folder: the scan throws there; here it throws the same error.
  const file = path.join(root, 'tasks/alpha.md')
  expect(await rebuildInWorker({ ...options([], 'memory'), root: file }, { persist: false, always: true })).toBeNull()
})

it('an aborted start ends the thread and rejects with the reason', async () => {
  const abort = new AbortController()
  const reason = new Error('closing')
  const scanning = rebuildInWorker(options([]), { persist: true, signal: abort.signal, always: true })
  abort.abort(reason)
  await expect(scanning).rejects.toBe(reason)
})

it('an engine started with indexInWorker renders what one scanning here renders, its SQL through the sandbox', async () => {
  // A small project scans here (a thread costs more); this one is worth a thread.
  expect(worthAThread(options([]))).toBe(false)
  const project = generateProject(path.join(root, 'project'), { documents: SCAN_ENTRIES + 100 })
  expect(worthAThread({ ...options([], 'memory'), root: project.root })).toBe(true)
  const readme = fs.readFileSync(project.readme, 'utf8')
  const render = async (indexInWorker: boolean) => {
    fs.rmSync(path.join(project.root, '.insitu'), { recursive: true, force: true })
    const engine = await InsituEngine.create({ root: project.root, indexInWorker })
    try {
      const result = await engine.renderDocument(project.readme, readme)
      return { text: result.text, diagnostics: result.diagnostics, documents: engine.index.documentPaths().length }
    } finally {
      await engine.close()
    }
  }
  const here = await render(false)
  const there = await render(true)
  expect(there).toEqual(here)
  expect(there.documents).toBeGreaterThan(SCAN_ENTRIES)
  expect(there.diagnostics).toEqual([])
}, 60_000)
