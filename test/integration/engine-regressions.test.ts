/**
 * Engine behaviour found in review, each with a real Python extension (test/fixtures/python/timing)
 * and real SQLite on a temporary project:
 * - a change that lands while a render runs is not lost (the render runs again);
 * - a failed result is never served from the cache (a transient failure recovers);
 * - an extension's failed read of a missing file is still a dependency;
 * - a request too large to send fails at once, naming the extension, and the process lives on;
 * - materializations sharing an id each write their own pointer;
 * - the fallback of a failed event (`mayBeAffected`) selects the index's readers without refreshing it.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { liveExtensionPids } from '../../src/host/process.js'

const TIMING = fileURLToPath(new URL('../fixtures/python/timing/', import.meta.url))
const MODELS = fileURLToPath(new URL('../fixtures/conformance/insitu/models/', import.meta.url))
const TASKS = fileURLToPath(new URL('../fixtures/conformance/tasks/', import.meta.url))

let root: string
let engine: InsituEngine

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

function region(kind: string, options: string): string {
  return `# Doc\n\n<!-- insitu:begin ${kind}\nid = "r"\n${options}\n-->\n<!-- insitu:end -->\n`
}

function bodyOf(text: string): string {
  return /-->\n\n([\s\S]*?)\n\n<!-- insitu:end -->/.exec(text)?.[1] ?? ''
}

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-regressions-'))
  fs.cpSync(MODELS, path.join(root, 'insitu/models'), { recursive: true })
  fs.cpSync(TASKS, path.join(root, 'tasks'), { recursive: true })
  write('insitu.toml', `[[extensions]]\npath = ${JSON.stringify(TIMING)}\n`)
  write('a.txt', 'one\n')
  engine = await InsituEngine.create({ root })
})

afterEach(async () => {
  const pids = liveExtensionPids()
  await engine.close()
  for (const pid of pids) {
    await expect.poll(() => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }).toBe(false)
  }
  fs.rmSync(root, { recursive: true, force: true })
})

describe('engine regressions', () => {
  it('runs a render again when what it read changes while it runs', async () => {
    const text = region('slow_peek', 'path = "a.txt"\nms = 600')
    const rendering = engine.renderDocument('doc.md', text)
    // The extension has read a.txt ("one") and is still working: now a.txt changes.
    await expect.poll(() => fs.existsSync(path.join(root, '.peeked')), { timeout: 10_000 }).toBe(true)
    write('a.txt', 'two\n')
    // No edge to doc.md exists yet, so nothing is selected now…
    expect(engine.affected([{ type: 'update', path: 'a.txt' }]).owners).toEqual([])
    // …but the render notices the change and runs again.
    expect(bodyOf((await rendering).text)).toBe('two')
    expect(bodyOf((await engine.renderDocument('doc.md', text)).text)).toBe('two')
  })

  it('runs a failing module transform again when the file it missed appears while it runs', async () => {
    const running = engine.transformModule('data/x.csv', 'a,b\n', { transform: 'slow_fail', options: { path: 'later.txt', ms: 600 } })
    await expect.poll(() => fs.existsSync(path.join(root, '.peeked')), { timeout: 10_000 }).toBe(true)
    write('later.txt', 'arrived\n')
    expect(engine.affected([{ type: 'create', path: 'later.txt' }]).owners).toEqual([])
    expect((await running).code).toBe('arrived')
  })

  it('never serves a failed result from the cache: a transient failure recovers on the next render', async () => {
    const text = region('first_fails', '')
    const failed = await engine.renderDocument('doc.md', text)
    expect(failed.diagnostics.map((d) => d.message)).toEqual([
      'transform first_fails (extension acme/timing) failed in r: first call fails',
    ])
    const recovered = await engine.renderDocument('doc.md', text)
    expect(recovered.diagnostics).toEqual([])
    expect(bodyOf(recovered.text)).toBe('recovered')
  })

  it('forgetDocumentsWithoutJobs drops what renders of documents without jobs left, and keeps the others', async () => {
    write('plain.md', '# Plain\n\nNo region here.\n')
    write('with-job.md', region('include', 'path = "a.txt"'))
    const plain = await engine.renderDocument('plain.md', fs.readFileSync(path.join(root, 'plain.md'), 'utf8'))
    const withJob = await engine.renderDocument('with-job.md', fs.readFileSync(path.join(root, 'with-job.md'), 'utf8'))
    expect(plain.jobs).toEqual([])
    expect([...engine.runRecords.owners()].sort()).toEqual(['plain.md', 'with-job.md'])
    engine.forgetDocumentsWithoutJobs()
    expect([...engine.runRecords.owners()]).toEqual(['with-job.md'])
    // The one with a job is still served from the cache; the other is rendered again, the same.
    expect(await engine.renderDocument('with-job.md', fs.readFileSync(path.join(root, 'with-job.md'), 'utf8'))).toBe(withJob)
    const again = await engine.renderDocument('plain.md', fs.readFileSync(path.join(root, 'plain.md'), 'utf8'))
    expect(again).not.toBe(plain)
    expect(again.text).toBe(plain.text)
  })

  it("keeps an extension's failed read of a missing file as a dependency", async () => {
    const text = region('slow_peek', 'path = "later.txt"')
    const failed = await engine.renderDocument('doc.md', text)
    expect(failed.diagnostics.map((d) => d.message)).toEqual([
      'transform slow_peek (extension acme/timing) failed in r: file not found: later.txt',
    ])
    expect(failed.dependencies).toEqual(['fs:file:later.txt'])
    write('later.txt', 'here\n')
    expect(engine.affected([{ type: 'create', path: 'later.txt' }]).owners).toEqual(['doc.md'])
    expect(bodyOf((await engine.renderDocument('doc.md', text)).text)).toBe('here')
  })

  it('fails a request too large to send at once, naming the extension, and keeps the process', async () => {
    const location = { path: 'doc.md', directory: '', root: '.', depth: 0 }
    expect((await engine.host.transform('slow_peek', { path: 'a.txt' }, location)).content).toBe('one')
    const pid = engine.host.pids().get('acme/timing')
    const huge = 'x'.repeat(16 * 1024 * 1024)
    await expect(engine.host.transform('slow_peek', { path: 'a.txt', huge }, location)).rejects.toThrow(
      /^transform:slow_peek \(acme\/timing\): JSON-RPC message exceeds 16 MiB$/,
    )
    expect((await engine.host.transform('slow_peek', { path: 'a.txt' }, location)).content).toBe('one')
    expect(engine.host.pids().get('acme/timing')).toBe(pid)
  })

  it('re-runs a model over documents on a document change only, and a model over entries on any new file', async () => {
    write('insitu/models/files.sql', "select path from entries where kind = 'file' and path like 'assets/%' order by path\n")
    const overDocuments = await engine.renderDocument('docs/open.md', region('sql', 'model = "open_tasks"'))
    const overEntries = await engine.renderDocument('docs/files.md', region('sql', 'model = "files"'))
    expect(overDocuments.dependencies).toEqual([
      'index:documents',
      'fs:file:insitu/models/open_tasks.sql',
      'fs:file:insitu/models/all_tasks.sql',
    ])
    expect(overEntries.dependencies).toEqual(['index:documents', 'index:entries', 'fs:file:insitu/models/files.sql'])
    // A new file that is not a document changes the entries listing only.
    write('assets/logo.svg', '<svg/>')
    expect(engine.affected([{ type: 'create', path: 'assets/logo.svg' }])).toEqual({
      owners: ['docs/files.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    expect(bodyOf((await engine.renderDocument('docs/files.md', region('sql', 'model = "files"'))).text)).toContain('assets/logo.svg')
    // A new document changes both.
    write('tasks/gamma.md', '---\ntitle: Gamma\nstatus: backlog\n---\n')
    expect(engine.affected([{ type: 'create', path: 'tasks/gamma.md' }]).owners).toEqual(['docs/files.md', 'docs/open.md'])
  })

  it('mayBeAffected (the fallback when an event could not be handled) selects the readers of the path and every reader of the index, without refreshing it', async () => {
    write('b.txt', 'other\n')
    const docs = {
      'inc.md': region('include', 'path = "a.txt"'),
      'other.md': region('include', 'path = "b.txt"'),
      'sql.md': region('sql', 'model = "all_tasks"'),
    }
    for (const [rel, text] of Object.entries(docs)) await engine.renderDocument(rel, text)
    expect(bodyOf((await engine.renderDocument('sql.md', docs['sql.md'])).text)).toContain('Alpha')
    // An edit the index has not been told of: the fallback does not read it into the index…
    fs.writeFileSync(path.join(root, 'tasks/alpha.md'), fs.readFileSync(path.join(root, 'tasks/alpha.md'), 'utf8').replace('title: Alpha', 'title: Renamed'))
    expect(engine.mayBeAffected([{ type: 'update', path: path.join(root, 'a.txt') }]).owners.sort()).toEqual(['inc.md', 'sql.md'])
    expect(bodyOf((await engine.renderDocument('sql.md', docs['sql.md'])).text)).toContain('Alpha')
    // …while affected() refreshes the index with the event's path, and selects the readers of what changed.
    expect(engine.affected([{ type: 'update', path: path.join(root, 'tasks/alpha.md') }]).owners).toEqual(['sql.md'])
    expect(bodyOf((await engine.renderDocument('sql.md', docs['sql.md'])).text)).toContain('Renamed')
    await engine.close()
    expect(() => engine.mayBeAffected([{ type: 'update', path: path.join(root, 'a.txt') }])).toThrow('the engine is closed')
  })

  it('writes each materialization to its own pointer even when two share an id', async () => {
    const text = [
      '---',
      'insitu:',
      '  materializations:',
      '    one:',
      '      id: same',
      '      model: counts',
      '      target: frontmatter:/generated/one',
      '    two:',
      '      id: same',
      '      model: open_tasks',
      '      target: frontmatter:/generated/two',
      '---',
      '# Doc',
      '',
    ].join('\n')
    const result = await engine.renderDocument('doc.md', text)
    expect(result.diagnostics).toEqual([])
    expect(result.text).toContain('generated:\n  one:\n    total: 2\n  two:\n    title: Alpha\n')
  })
})
