/**
 * The real command line (`node --import tsx src/cli/bin.ts …`, spawned) on copies of the
 * plugin fixture: exit codes 0/1/2, the reports, `--help`, `--version`, `--root`, config
 * errors, a real EACCES (the command runs as user `nobody`, since permission bits do not stop
 * root), and that no extension process outlives the command.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { USAGE } from '../../src/cli/main.js'
import { parseRegions } from '../../src/documents/regions.js'
import { type ChildRun, chownTree, copyProject, NOBODY, readFile, removeProjects, runNode, TASKS_DOC } from './plugin-project.js'

/** The built command line, as a user runs it (test/clients/setup.ts builds it before the run). */
const BIN = path.resolve(import.meta.dirname, '../../dist/cli/bin.js')

afterEach(() => removeProjects())

function cli(args: readonly string[], options: { cwd: string; uid?: number }): Promise<ChildRun> {
  return runNode([BIN], args, options)
}

/** PIDs of live processes whose working folder is inside `root` (extensions run in their folder). */
function processesInside(root: string): number[] {
  const pids: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`)
      if (cwd === root || cwd.startsWith(`${root}/`)) pids.push(Number(entry))
    } catch {
      // gone meanwhile, or not ours to see
    }
  }
  return pids
}

describe('vite-plugin-insitu command line', () => {
  it('--help lists every command and the options; --version prints the version', async () => {
    const root = copyProject()
    expect(await cli(['--help'], { cwd: root })).toEqual({ code: 0, stdout: USAGE, stderr: '' })
    expect(USAGE).toMatch(/^ {2}check {3}/m)
    expect(USAGE).toMatch(/^ {2}sync {4}/m)
    expect(USAGE).toContain('--root <dir>')
    expect(USAGE).toContain('--no-cache ')
    for (const command of ['watch ', '--poll <ms>', 'init [DIR] [--force]', 'extension add SOURCE [--version SPEC]', 'extension list', '--format <format>']) {
      expect(USAGE).toContain(command)
    }
    const version = (JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version
    expect(await cli(['--version'], { cwd: root })).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' })
  })

  it('exits 2 on usage errors, with the problem and a hint', async () => {
    const root = copyProject()
    const hint = "Run 'vite-plugin-insitu --help' for usage.\n"
    expect(await cli(['lint'], { cwd: root })).toEqual({ code: 2, stdout: '', stderr: `vite-plugin-insitu: unknown command lint\n${hint}` })
    expect(await cli(['check', '--force'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `vite-plugin-insitu: unknown option --force\n${hint}`,
    })
    expect(await cli([], { cwd: root })).toEqual({ code: 2, stdout: '', stderr: `vite-plugin-insitu: no command given\n${hint}` })
    expect(await cli(['chek'], { cwd: root })).toEqual({ code: 2, stdout: '', stderr: `vite-plugin-insitu: unknown command chek; did you mean check?\n${hint}` })
    expect(await cli(['extension', 'lst'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `vite-plugin-insitu: unknown command extension lst; did you mean extension list?\n${hint}`,
    })
    expect(await cli(['check', '--no-cahce'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: `vite-plugin-insitu: unknown option --no-cahce; did you mean --no-cache?\n${hint}`,
    })
    expect(await cli(['check', '--root', 'nowhere'], { cwd: root })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'vite-plugin-insitu: --root nowhere: not a folder\n',
    })
  })

  it('exits 2 on a bad insitu.toml, naming file, line and column', async () => {
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n[paths]\nstate = = "x"\n')
    const run = await cli(['check'], { cwd: path.join(root, 'docs') })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toMatch(new RegExp(`^${root}/insitu\\.toml:3:9: .+\\n$`))
  })

  it('check exits 1 on stale regions and 0 after sync; sync exits 0; found from a subfolder', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    const check = await cli(['check'], { cwd: path.join(root, 'docs') })
    expect(check.code).toBe(1)
    expect(check.stdout).toContain('docs/tasks.md:3 region all is stale\n    @@ -0,0 +1,2 @@\n    +- [Alpha](../tasks/alpha.md) — open\n')
    expect(check.stdout.endsWith('4 of 8 documents stale (4 stale jobs)\n')).toBe(true)
    expect(processesInside(root)).toEqual([])

    const sync = await cli(['sync'], { cwd: root })
    expect(sync).toEqual({
      code: 0,
      stdout: ['wrote docs/git.md', 'wrote docs/notes.md', 'wrote docs/snippet.md', 'wrote docs/tasks.md', 'wrote 4 of 8 documents', ''].join('\n'),
      stderr: '',
    })
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(await cli(['check'], { cwd: root })).toEqual({ code: 0, stdout: '8 documents current\n', stderr: '' })
    expect(await cli(['sync'], { cwd: root })).toEqual({ code: 0, stdout: 'wrote 0 of 8 documents\n', stderr: '' })
    expect(processesInside(root)).toEqual([])
  })

  it('check tells a region edited by hand from a stale one, and says in JSON which input changed', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    expect((await cli(['sync'], { cwd: root })).code).toBe(0)
    // An input changes (the snippet is stale) and a generated body is edited by hand (the tasks list).
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'a third line\n')
    const tasks = readFile(root, 'docs/tasks.md')
    fs.writeFileSync(path.join(root, 'docs/tasks.md'), tasks.replace('— open', '— open (edited here)'))

    const check = await cli(['check'], { cwd: root })
    expect(check.code).toBe(1)
    const lines = check.stdout.split('\n').filter((line) => !line.startsWith('    '))
    expect(lines).toEqual([
      'docs/snippet.md:3 region x is stale',
      'docs/tasks.md:3 region all was edited by hand: this region is generated: edits here are replaced; change its inputs or move the text outside the markers',
      '2 of 8 documents stale (1 stale job, 1 edited by hand)',
      '',
    ])
    const json = JSON.parse((await cli(['check', '--format', 'json'], { cwd: root })).stdout) as { stale: { path: string; state: string; why: string }[] }
    expect(json.stale.map(({ path: file, state, why }) => ({ file, state, why }))).toEqual([
      { file: 'docs/snippet.md', state: 'stale', why: 'region x is stale: snippets/x.txt changed since it was generated' },
      { file: 'docs/tasks.md', state: 'hand-edited', why: 'this region is generated: edits here are replaced; change its inputs or move the text outside the markers' },
    ])
    // Without the cache nothing says which body was generated: both are stale.
    const uncached = await cli(['check', '--no-cache'], { cwd: root })
    expect(uncached.stdout).toContain('docs/tasks.md:3 region all is stale\n')
    expect(processesInside(root)).toEqual([])
  })

  it('a body sync wrote is never called edited by hand: not after its options change, not after many checks of changing inputs', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    expect((await cli(['sync'], { cwd: root })).code).toBe(0)
    const staleLines = async () => (await cli(['check'], { cwd: root })).stdout.split('\n').filter((line) => / region /.test(line))
    // The included file changes again and again; each check generates (and remembers) another body.
    for (let i = 0; i < 20; i++) {
      fs.appendFileSync(path.join(root, 'snippets/x.txt'), `line ${i}\n`)
      expect(await staleLines()).toEqual(['docs/snippet.md:3 region x is stale'])
    }
    // A region without an id gets another one when its options change: its old body is still insitu's.
    const doc = path.join(root, 'docs/plain.md')
    fs.writeFileSync(doc, '# Plain\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\nend = 1\n-->\n<!-- insitu:end -->\n')
    expect((await cli(['sync'], { cwd: root })).code).toBe(0)
    fs.writeFileSync(doc, fs.readFileSync(doc, 'utf8').replace('end = 1', 'end = 2'))
    for (let i = 0; i < 2; i++) {
      const lines = (await staleLines()).filter((line) => line.startsWith('docs/plain.md'))
      expect(lines).toEqual([expect.stringMatching(/^docs\/plain\.md:3 region include-\S+ is stale$/)])
    }
    const json = JSON.parse((await cli(['check', '--format', 'json'], { cwd: root })).stdout) as { stale: { path: string; why: string }[] }
    expect(json.stale.find((job) => job.path === 'docs/plain.md')?.why).toMatch(/^region include-\S+ is stale: its options changed since it was generated$/)
  })

  it('exits 1 when a job fails, listing it with file and line', async () => {
    const root = copyProject()
    const run = await cli(['sync'], { cwd: root })
    expect(run.code).toBe(1)
    expect(run.stdout.split('\n').slice(-3)).toEqual([
      'docs/broken.md:5: error: transform explode (extension plugin/notes) failed in boom: the fuse was lit',
      'wrote 4 of 9 documents, 1 failed',
      '',
    ])
  })

  it('one broken region hides nothing: every other region is still checked and reported at its line', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    expect((await cli(['sync'], { cwd: root })).code).toBe(0)
    const doc = [
      '# Mixed', //                                   1
      '', //                                          2
      '<!-- insitu:begin includ', //                  3  unknown kind
      'path = "../snippets/x.txt"', //                4
      '-->', //                                       5
      '<!-- insitu:end -->', //                       6
      '', //                                          7
      '<!-- insitu:begin include', //                 8  invalid TOML
      'path = ../snippets/x.txt', //                  9
      '-->', //                                      10
      '<!-- insitu:end -->', //                      11
      '', //                                         12
      '<!-- insitu:begin include', //                13  stale
      'id = "snippet"', //                           14
      'path = "../snippets/x.txt"', //               15
      'raw = true', //                               16
      '-->', //                                      17
      'old text', //                                 18
      '<!-- insitu:end -->', //                      19
      '',
    ].join('\n')
    fs.writeFileSync(path.join(root, 'docs/mixed.md'), doc)
    const unknownId = parseRegions(doc.replace('path = ../snippets/x.txt', 'path = "x"'))[0]!.id
    const run = await cli(['check'], { cwd: root })
    expect(run).toEqual({
      code: 1,
      stdout: [
        'docs/mixed.md:13 region snippet is stale',
        '    @@ -1,1 +1,2 @@',
        '    -old text',
        '    +included line one',
        '    +included line two',
        `docs/mixed.md:3: error: transform includ failed in ${unknownId}: unknown transform: includ; did you mean include?`,
        'docs/mixed.md:8: error: invalid TOML in Insitu region at line 8: invalid value (line 9, column 8); strings need quotes: path = "../snippets/x.txt"',
        '1 of 9 documents stale (1 stale job), 1 failed',
        '',
      ].join('\n'),
      stderr: '',
    })
    // Sync writes the region that could be rendered and leaves the broken ones as they were.
    const sync = await cli(['sync'], { cwd: root })
    expect(sync.code).toBe(1)
    expect(sync.stdout.split('\n').at(-2)).toBe('wrote 1 of 9 documents, 1 failed')
    expect(readFile(root, 'docs/mixed.md')).toBe(doc.replace('-->\nold text\n', '-->\n\nincluded line one\nincluded line two\n\n'))
    // Nothing stale is left, and the failed document is still not counted as current.
    expect((await cli(['check'], { cwd: root })).stdout.split('\n').at(-2)).toBe('8 of 9 documents current, 1 failed')
  })

  it('runs the validators: an error fails the command, a warning is listed', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    expect((await cli(['sync'], { cwd: root })).code).toBe(0)
    fs.writeFileSync(path.join(root, 'notes/three.md'), 'no title here\n')
    const warned = await cli(['sync'], { cwd: root })
    expect(warned).toEqual({
      code: 0,
      stdout: ['wrote docs/notes.md', 'notes/three.md:1: warning: note has no title: notes/three.md', 'wrote 1 of 9 documents', ''].join('\n'),
      stderr: '',
    })
    fs.writeFileSync(path.join(root, 'notes/four.md'), '# Four\n\nFORBIDDEN\n')
    expect((await cli(['sync'], { cwd: root })).code).toBe(1)
    const failed = await cli(['check'], { cwd: root })
    expect(failed).toEqual({
      code: 1,
      stdout: [
        'notes/four.md:3: error: forbidden word in notes/four.md',
        'notes/three.md:1: warning: note has no title: notes/three.md',
        '10 documents current, 1 validator error',
        '',
      ].join('\n'),
      stderr: '',
    })
  })

  it('--root makes exactly that folder the project', async () => {
    const root = copyProject()
    const elsewhere = copyProject()
    // docs/ has no insitu.toml: with --root it is the project itself (defaults), not the fixture.
    const run = await cli(['check', '--root', path.join(root, 'docs')], { cwd: elsewhere })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('tasks.md:3: error: transform sql failed in all: unknown SQL model: all_tasks (looked for insitu/models/all_tasks.sql)\n')
    const whole = await cli(['sync', `--root=${root}`], { cwd: elsewhere })
    expect(whole.stdout).toContain('wrote docs/tasks.md\n')
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(readFile(elsewhere, 'docs/tasks.md')).not.toBe(TASKS_DOC('open', 'done'))
  })

  it('reports a read-only document (EACCES) with its path, writes the others and exits 1', async () => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md'))
    fs.chmodSync(root, 0o755)
    chownTree(root, NOBODY)
    fs.chmodSync(path.join(root, 'docs/tasks.md'), 0o444)
    const before = readFile(root, 'docs/tasks.md')
    const run = await cli(['sync'], { cwd: root, uid: NOBODY })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(
      [
        'wrote docs/git.md',
        'wrote docs/notes.md',
        'wrote docs/snippet.md',
        'docs/tasks.md: error: cannot write docs/tasks.md: EACCES: permission denied',
        'wrote 3 of 8 documents, 1 not written, 1 failed',
        '',
      ].join('\n'),
    )
    expect(readFile(root, 'docs/tasks.md')).toBe(before)
    expect(fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })
})

