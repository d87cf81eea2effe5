/**
 * Write-back, sync and check on real files with real extensions: writeBack's outcomes and
 * guarantees (never clobbering, never recreating, atomic, mode kept, nothing left behind),
 * syncDocument's BOM and CRLF handling and its re-render on a concurrent edit (the acme/typist
 * fixture edits the document while it is being rendered), and syncProject's check report.
 *
 * Permission errors as root: permission bits do not stop root, so the read-only case here
 * uses an immutable file (`chattr +i`, EPERM) when the file system supports it; the CLI test
 * runs the command as user `nobody` for a real EACCES.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { InsituEngine, readProjectConfig } from '../../src/engine/engine.js'
import { applyEdits } from '../../src/engine/render-document.js'
import { MAX_CONFLICTS, renderText, syncDocument } from '../../src/sync/sync-document.js'
import { formatSyncReport, syncProject } from '../../src/sync/sync-project.js'
import { isWriteBackTemporary, writeBack } from '../../src/sync/write-back.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { addExtension, copyProject, expectProcessesGone, readFile, removeProjects, TASKS_DOC } from './plugin-project.js'


const engines: InsituEngine[] = []
const immutable: string[] = []

afterEach(async () => {
  for (const file of immutable.splice(0)) execFileSync('chattr', ['-i', file])
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  removeProjects()
  removeTempDirs()
})

async function startEngine(root: string): Promise<InsituEngine> {
  const engine = await InsituEngine.create({ root, config: readProjectConfig(root, false) })
  engines.push(engine)
  return engine
}

function entries(folder: string): string[] {
  return fs.readdirSync(folder).sort()
}

const chattrWorks = (() => {
  const folder = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'insitu-chattr-'))
  const file = path.join(folder, 'probe')
  fs.writeFileSync(file, '')
  try {
    execFileSync('chattr', ['+i', file], { stdio: 'ignore' })
    execFileSync('chattr', ['-i', file], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    fs.rmSync(folder, { recursive: true, force: true })
  }
})()

describe('writeBack', () => {
  it('writes atomically, keeps the mode and leaves no temporary file', async () => {
    const folder = tempDir()
    const file = path.join(folder, 'doc.md')
    fs.writeFileSync(file, 'old\n')
    fs.chmodSync(file, 0o640)
    const inode = fs.statSync(file).ino
    expect(await writeBack(file, 'old\n', 'new\n')).toBe('written')
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n')
    expect(fs.statSync(file).mode & 0o7777).toBe(0o640)
    expect(fs.statSync(file).ino).not.toBe(inode) // a rename, not an in-place write
    expect(entries(folder)).toEqual(['doc.md'])
  })

  it('names its temporary files so that watchers can tell them apart', () => {
    expect(isWriteBackTemporary('/p/docs/.a.md.insitu-0123456789ab.tmp')).toBe(true)
    expect(isWriteBackTemporary('/p/docs/a.md')).toBe(false)
    expect(isWriteBackTemporary('/p/docs/.a.md.insitu-xyz.tmp')).toBe(false)
  })

  it('writes nothing when the bytes are already right (mtime kept)', async () => {
    const file = path.join(tempDir(), 'doc.md')
    fs.writeFileSync(file, 'same\n')
    const past = new Date('2020-01-01T00:00:00Z')
    fs.utimesSync(file, past, past)
    expect(await writeBack(file, 'same\n', 'same\n')).toBe('unchanged')
    expect(fs.statSync(file).mtime.toISOString()).toBe(past.toISOString())
  })

  it('never clobbers an edit made after the render: conflict, nothing written', async () => {
    const folder = tempDir()
    const file = path.join(folder, 'doc.md')
    fs.writeFileSync(file, 'edited by the user\n')
    expect(await writeBack(file, 'what was rendered\n', 'regenerated\n')).toBe('conflict')
    expect(fs.readFileSync(file, 'utf8')).toBe('edited by the user\n')
    expect(entries(folder)).toEqual(['doc.md'])
  })

  it('does not recreate a deleted file', async () => {
    const folder = tempDir()
    const file = path.join(folder, 'gone.md')
    expect(await writeBack(file, 'old\n', 'new\n')).toBe('missing')
    expect(entries(folder)).toEqual([])
  })

  it('writes through a symlink and keeps the link', async () => {
    const folder = tempDir()
    fs.writeFileSync(path.join(folder, 'real.md'), 'old\n')
    fs.symlinkSync('real.md', path.join(folder, 'link.md'))
    expect(await writeBack(path.join(folder, 'link.md'), 'old\n', 'new\n')).toBe('written')
    expect(fs.lstatSync(path.join(folder, 'link.md')).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(path.join(folder, 'real.md'), 'utf8')).toBe('new\n')
    expect(entries(folder)).toEqual(['link.md', 'real.md'])
  })

  it.runIf(chattrWorks)('reports a file it may not write with its path, and leaves nothing behind', async () => {
    const folder = tempDir()
    const file = path.join(folder, 'locked.md')
    fs.writeFileSync(file, 'old\n')
    execFileSync('chattr', ['+i', file])
    immutable.push(file)
    await expect(writeBack(file, 'old\n', 'new\n', 'docs/locked.md')).rejects.toThrow(
      /^cannot write docs\/locked\.md: EPERM: operation not permitted$/,
    )
    expect(fs.readFileSync(file, 'utf8')).toBe('old\n')
    expect(entries(folder)).toEqual(['locked.md'])
  })
})

describe('syncDocument', () => {
  it('keeps a BOM and CRLF line endings, and still recognizes the front matter', async () => {
    const root = copyProject()
    const source = [
      '\uFEFF---',
      'title: Status',
      'insitu:',
      '  materializations:',
      '    rows:',
      '      kind: materialize',
      '      source: sql',
      '      model: all_tasks',
      '      target: frontmatter:/generated/rows',
      '---',
      '# Status',
      '',
      '<!-- insitu:begin include',
      'id = "x"',
      'path = "../snippets/x.txt"',
      'raw = true',
      '-->',
      '<!-- insitu:end -->',
      '',
    ].join('\r\n')
    fs.writeFileSync(path.join(root, 'docs/status.md'), source)
    const engine = await startEngine(root)
    const sync = await syncDocument(engine, 'docs/status.md', { write: true })
    const expected = [
      '\uFEFF---',
      'title: Status',
      'insitu:',
      '  materializations:',
      '    rows:',
      '      kind: materialize',
      '      source: sql',
      '      model: all_tasks',
      '      target: frontmatter:/generated/rows',
      'generated:',
      '  rows:',
      '    - title: Alpha',
      '      status: open',
      '      path: tasks/alpha.md',
      '    - title: Beta',
      '      status: done',
      '      path: tasks/beta.md',
      '---',
      '# Status',
      '',
      '<!-- insitu:begin include',
      'id = "x"',
      'path = "../snippets/x.txt"',
      'raw = true',
      '-->',
      '',
      'included line one',
      'included line two',
      '',
      '<!-- insitu:end -->',
      '',
    ].join('\r\n')
    expect(sync).toMatchObject({ path: 'docs/status.md', source, text: expected, written: true, failed: false, diagnostics: [] })
    expect(sync!.stale.map((job) => `${job.target} ${job.id} ${job.line}`)).toEqual(['region x 13', 'frontmatter rows 5'])
    expect(fs.readFileSync(path.join(root, 'docs/status.md'), 'utf8')).toBe(expected)
    // What the plugin serves: the same text, and edits that rebuild it from the BOM text.
    const served = await renderText(engine, path.join(root, 'docs/status.md'), source)
    expect(served.text).toBe(expected)
    expect(applyEdits(source, served.edits)).toBe(expected)
    // Current now: nothing stale, nothing written.
    expect(await syncDocument(engine, 'docs/status.md', { write: true })).toMatchObject({ stale: [], written: false, text: expected })
  })

  it('renders again when the document is edited while it renders: the edit is kept', async () => {
    const root = copyProject()
    addExtension(root, 'typist')
    const doc = '# Typed\n\n<!-- insitu:begin typist\ntext = "typed while the write was pending"\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(root, 'docs/typed.md'), doc)
    const engine = await startEngine(root)
    const sync = await syncDocument(engine, 'docs/typed.md', { write: true })
    const expected = [
      '# Typed',
      '',
      '<!-- insitu:begin typist',
      'text = "typed while the write was pending"',
      '-->',
      '',
      'generated 2',
      '',
      '<!-- insitu:end -->',
      'typed while the write was pending',
      '',
    ].join('\n')
    expect(sync).toMatchObject({ written: true, text: expected, failed: false })
    expect(readFile(root, 'docs/typed.md')).toBe(expected)
    expect(entries(path.join(root, 'docs'))).not.toContainEqual(expect.stringMatching(/\.tmp$/))
  })

  it('gives up with a warning when the document keeps changing, and loses none of the edits', async () => {
    const root = copyProject()
    addExtension(root, 'typist')
    const doc = '<!-- insitu:begin typist\ntext = "again"\nevery = true\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(root, 'docs/busy.md'), doc)
    const engine = await startEngine(root)
    const sync = await syncDocument(engine, 'docs/busy.md', { write: true })
    expect(sync).toMatchObject({ written: false, failed: false })
    expect(sync!.diagnostics).toEqual([
      {
        severity: 'warning',
        message: `docs/busy.md kept changing while it was being written (${MAX_CONFLICTS} times): not written`,
        path: 'docs/busy.md',
        line: null,
        code: 'insitu/write',
      },
    ])
    expect(readFile(root, 'docs/busy.md')).toBe(doc + 'again\n'.repeat(MAX_CONFLICTS))
  })

  it('does not recreate a document deleted while it renders', async () => {
    const root = copyProject()
    addExtension(root, 'typist')
    fs.writeFileSync(path.join(root, 'docs/doomed.md'), '<!-- insitu:begin typist\naction = "delete"\n-->\n<!-- insitu:end -->\n')
    const engine = await startEngine(root)
    const before = entries(path.join(root, 'docs'))
    expect(await syncDocument(engine, 'docs/doomed.md', { write: true })).toBeNull()
    expect(entries(path.join(root, 'docs'))).toEqual(before.filter((name) => name !== 'doomed.md'))
  })

  it('a written document names the lines of the file written: a region below a regenerated body moves with it', async () => {
    const root = copyProject()
    const engine = await startEngine(root)
    const file = path.join(root, 'docs/lines.md')
    // An empty include region (4 lines once written), then a region whose header is not TOML and an unterminated one.
    const source = [
      '# Lines',
      '<!-- insitu:begin include',
      'path = "../snippets/x.txt"',
      'raw = true',
      '-->',
      '<!-- insitu:end -->',
      '<!-- insitu:begin include',
      'path = ../snippets/x.txt',
      '-->',
      '<!-- insitu:end -->',
      '<!-- insitu:begin include',
      'path = "../snippets/x.txt"',
      '-->',
      'no end',
      '',
    ].join('\n')
    fs.writeFileSync(file, source)
    const synced = await syncDocument(engine, file, { write: true })
    expect(synced?.written).toBe(true)
    const written = fs.readFileSync(file, 'utf8').split('\n')
    const lineOf = (text: string, from = 0) => written.indexOf(text, from) + 1
    const toml = lineOf('<!-- insitu:begin include', 2)
    const unterminated = lineOf('<!-- insitu:begin include', toml)
    expect([toml, unterminated]).toEqual([7 + 4, 11 + 4])
    expect(synced!.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.line, d.message, (d as { at?: { line: number } }).at?.line])).toEqual([
      [toml, `invalid TOML in Insitu region at line ${toml}: invalid value (line ${toml + 1}, column 8); strings need quotes: path = "../snippets/x.txt"`, toml + 1],
      [unterminated, `unterminated Insitu region at line ${unterminated}`, undefined],
    ])
    // Rendered again as written, the same lines (a second sync writes nothing).
    const again = await syncDocument(engine, file, { write: true })
    expect(again?.written).toBe(false)
    expect(again!.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.line, d.message])).toEqual(
      synced!.diagnostics.filter((d) => d.severity === 'error').map((d) => [d.line, d.message]),
    )
  })

  it('never renders nor writes a file that is not valid UTF-8', async () => {
    const root = copyProject()
    const bytes = Buffer.concat([Buffer.from('# Latin-1 \xe9\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\n-->\n<!-- insitu:end -->\n', 'latin1')])
    fs.writeFileSync(path.join(root, 'docs/latin.md'), bytes)
    const engine = await startEngine(root)
    const sync = await syncDocument(engine, 'docs/latin.md', { write: true })
    expect(sync).toMatchObject({ written: false, failed: true, stale: [] })
    // `é` in Latin-1 is the byte 0xe9 (at offset 10), not a UTF-8 sequence
    expect(sync!.diagnostics.map((d) => [d.line, d.message])).toEqual([[1, 'not valid UTF-8 at line 1 (the byte at offset 10 is 0xe9); not rendered, not written']])
    expect(fs.readFileSync(path.join(root, 'docs/latin.md')).equals(bytes)).toBe(true)
  })
})

describe('syncProject', () => {
  it('check lists each stale region with file, line and diff, and passes after sync', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    const engine = await startEngine(root)
    const check = await syncProject(engine, { write: false })
    expect(check).toMatchObject({ stale: 4, written: 0, failed: 0 })
    expect(readFile(root, 'docs/tasks.md')).not.toBe(TASKS_DOC('open', 'done')) // check writes nothing
    const report = formatSyncReport(check, 'check')
    expect(report).toContain(
      [
        'docs/tasks.md:3 region all is stale',
        '    @@ -0,0 +1,2 @@',
        '    +- [Alpha](../tasks/alpha.md) — open',
        '    +- [Beta](../tasks/beta.md) — done',
        '',
      ].join('\n'),
    )
    expect(report.split('\n').filter((line) => / is stale$/.test(line))).toEqual([
      'docs/git.md:3 region head is stale',
      'docs/notes.md:3 region count is stale',
      'docs/snippet.md:3 region x is stale',
      'docs/tasks.md:3 region all is stale',
    ])
    expect(report.endsWith('4 of 8 documents stale (4 stale jobs)\n')).toBe(true)

    const sync = await syncProject(engine, { write: true })
    expect(formatSyncReport(sync, 'sync')).toBe(
      ['wrote docs/git.md', 'wrote docs/notes.md', 'wrote docs/snippet.md', 'wrote docs/tasks.md', 'wrote 4 of 8 documents', ''].join('\n'),
    )
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    const after = await syncProject(engine, { write: false })
    expect(formatSyncReport(after, 'check')).toBe('8 documents current\n')
    const pids = [...engine.host.pids().values()]
    expect(pids).toHaveLength(1)
    await engine.close()
    await expectProcessesGone(pids)
  })

  it('lists failed jobs with file, line and message', async () => {
    const root = copyProject()
    const engine = await startEngine(root)
    const report = formatSyncReport(await syncProject(engine, { write: false }), 'check')
    expect(report.split('\n').slice(-3)).toEqual([
      'docs/broken.md:5: error: transform explode (extension plugin/notes) failed in boom: the fuse was lit',
      '4 of 9 documents stale (4 stale jobs), 1 failed',
      '',
    ])
  })

  it('reports a front-matter materialization as frontmatter <id>', async () => {
    const root = copyProject()
    fs.writeFileSync(
      path.join(root, 'docs/fm.md'),
      '---\ninsitu:\n  materializations:\n    rows:\n      kind: materialize\n      source: sql\n      model: all_tasks\n      target: frontmatter:/generated/count\n---\n# FM\n',
    )
    const engine = await startEngine(root)
    const report = formatSyncReport(await syncProject(engine, { write: false }), 'check')
    // the diff shows the front-matter lines as they will be written (issue #14)
    expect(report).toContain(
      'docs/fm.md:4 frontmatter rows is stale\n    @@ -7,3 +7,11 @@\n           model: all_tasks\n           target: frontmatter:/generated/count\n    +generated:\n    +  count:\n    +    - title: Alpha\n',
    )
  })
})
