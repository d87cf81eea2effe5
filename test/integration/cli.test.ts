/**
 * The real command line (`node --import tsx src/cli/bin.ts …`, spawned) on copies of the
 * plugin fixture: exit codes 0/1/2, the reports, `--help`, `--version`, `--root`, config
 * errors, a real EACCES (the command runs as user `nobody`, since permission bits do not stop
 * root), and that no extension process outlives the command.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { USAGE } from '../../src/cli/main.js'
import { copyProject, readFile, removeProjects, TASKS_DOC } from './plugin-project.js'

const BIN = path.resolve(import.meta.dirname, '../../src/cli/bin.ts')
const require = createRequire(import.meta.url)
const tsxPackage = require.resolve('tsx/package.json')
const TSX = pathToFileURL(path.join(path.dirname(tsxPackage), (require(tsxPackage) as { exports: { '.': string } }).exports['.'])).href
const NOBODY = 65534

afterEach(() => removeProjects())

interface Run {
  code: number
  stdout: string
  stderr: string
}

function cli(args: readonly string[], options: { cwd: string; uid?: number }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, BIN, ...args],
      { cwd: options.cwd, uid: options.uid, gid: options.uid, env: { ...process.env, FORCE_COLOR: '0' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
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
  it('--help lists both commands and the options; --version prints the version', async () => {
    const root = copyProject()
    expect(await cli(['--help'], { cwd: root })).toEqual({ code: 0, stdout: USAGE, stderr: '' })
    expect(USAGE).toMatch(/^ {2}check {3}/m)
    expect(USAGE).toMatch(/^ {2}sync {4}/m)
    expect(USAGE).toContain('--root <dir>')
    expect(USAGE).toContain('--no-cache ')
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

function chownTree(folder: string, uid: number): void {
  fs.chownSync(folder, uid, uid)
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const target = path.join(folder, entry.name)
    if (entry.isDirectory()) chownTree(target, uid)
    else fs.chownSync(target, uid, uid)
  }
}
