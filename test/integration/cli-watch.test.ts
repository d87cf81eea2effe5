/**
 * The built command line's `watch` (`node dist/cli/bin.js watch`, as a user runs it; built by
 * the global setup, test/clients/setup.ts) on copies of the plugin fixture, with its real Python extension and real git:
 * the first sync, dependency edits (a file, a glob's new file, the document index, a git
 * commit, a folder a tree lists, a file in an excluded folder), an edit of the document itself,
 * restarts on a config or extension change (a broken config waits for the next edit), the
 * config error at start, and the ways it stops (SIGINT, SIGTERM, SIGHUP, stdin closing) with no
 * extension process left behind — one that ignores stdin EOF included.
 *
 * And the no-lost-save guarantee of write mode (issue #14.1), with the write-race harness's
 * watch host: an editor process saving 0–30 ms after each dependency change, both writing styles.
 *
 * stdin is /dev/null unless a test says otherwise: a watch whose stdin ends at once keeps running.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { runWriteRace } from './write-race-harness.js'
import {
  BROKEN_LINE,
  BROKEN_MESSAGE,
  copyProject,
  editFile,
  expectProcessesGone,
  git,
  GIT_DOC,
  INITIAL_NOTES,
  INITIAL_SNIPPET,
  isAlive,
  NOTES_DOC,
  readFile,
  removeProjects,
  SNIPPET_DOC,
  TASKS_DOC,
} from './plugin-project.js'

const REPO = path.resolve(import.meta.dirname, '../..')
/** Built once per run by test/clients/setup.ts (a build here would rewrite dist/ under the other test files). */
const BIN = path.join(REPO, 'dist/cli/bin.js')
/** An extension that does not exit when its stdin closes: only the host can end it. */
const STUBBORN = fileURLToPath(new URL('../fixtures/python/stubborn/', import.meta.url))
/** One that also ignores SIGTERM: a graceful stop waits for its grace period before killing it. */
const DEAF = fileURLToPath(new URL('../fixtures/python/deaf/', import.meta.url))
/** One whose start waits until the test creates `<root>/.go` (it creates `<root>/.starting` first). */
const GATED = fileURLToPath(new URL('../fixtures/python/gated/', import.meta.url))
const WAIT = { timeout: 15_000, interval: 25 }
/** How long a test watches for writes that must not happen (past the live sync's 150 ms re-check). */
const QUIET_MS = 1_000

const started: WatchProcess[] = []

afterEach(() => {
  for (const watch of started.splice(0)) {
    if (watch.running) watch.child.kill('SIGKILL')
    for (const pid of watch.extensionPids) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  }
  removeProjects()
})

/** A `watch` process and what it printed. */
class WatchProcess {
  readonly child: ChildProcess
  stdout = ''
  stderr = ''
  /** Every extension process seen among its children. */
  readonly extensionPids = new Set<number>()
  readonly exit: Promise<number | null>
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | null = null

  constructor(args: readonly string[], cwd: string, stdin: 'ignore' | 'pipe' = 'ignore') {
    this.child = spawn(process.execPath, [BIN, 'watch', ...args], { cwd, stdio: [stdin, 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } })
    this.child.stdout!.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()))
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.exit = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.signal = signal
        resolve(code)
      }),
    )
    started.push(this)
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  lines(): string[] {
    return this.stdout.split('\n').slice(0, -1)
  }

  /** Wait until stdout has printed `line` `times` times in all (a failure shows the output as it is then). */
  async printed(line: string, times = 1): Promise<void> {
    try {
      await expect.poll(() => this.lines().filter((l) => l === line).length, WAIT).toBe(times)
    } catch (error) {
      throw new Error(`printed ${JSON.stringify(line)} ${times}× (${this.lines().filter((l) => l === line).length}× now)\n${this.stdout}\n${this.stderr}`, { cause: error })
    }
  }

  /** The extension processes running now (children whose command runs an extension.py). */
  extensions(): number[] {
    let listing = ''
    try {
      listing = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(this.child.pid)], { encoding: 'utf8' })
    } catch {
      return [] // ps exits 1 when there is no child
    }
    const pids = listing
      .split('\n')
      .filter((line) => line.includes('extension.py'))
      .map((line) => Number(line.trim().split(/\s+/)[0]))
      .filter((pid) => pid > 0)
    for (const pid of pids) this.extensionPids.add(pid)
    return pids
  }
}

/** The lines printed since `mark` (a count of lines printed before). */
function since(watch: WatchProcess, mark: number): string[] {
  return watch.lines().slice(mark)
}

function quiet(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, QUIET_MS))
}

function writeFile(root: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

/** `layout/index.md`: its tree region (depth 1) listing these entries. */
function TREE_DOC(entries: readonly string[]): string {
  const lines = entries.map((entry, i) => `${i === entries.length - 1 ? '└──' : '├──'} ${entry}`)
  return ['# Layout', '', '<!-- insitu:begin tree', 'depth = 1', '-->', '', '```text', 'layout/', ...lines, '```', '', '<!-- insitu:end -->', ''].join('\n')
}

describe('vite-plugin-insitu watch', () => {
  it('writes the stale documents, reports the failing one, prints watching, then rewrites a document once per dependency edit', { timeout: 60_000 }, async () => {
    const root = copyProject({ git: true })
    const watch = new WatchProcess([], path.join(root, 'docs'))
    await watch.printed(`watching ${root}`)
    const first = watch.lines()
    expect(first.at(-1)).toBe(`watching ${root}`)
    expect(first.slice(0, -1).sort()).toEqual([
      `docs/broken.md:${BROKEN_LINE}: error: ${BROKEN_MESSAGE}`,
      'wrote docs/git.md',
      'wrote docs/notes.md',
      'wrote docs/snippet.md',
      'wrote docs/tasks.md',
    ])
    // Each written file has its line: no summary of them besides (it went to stderr).
    expect(watch.stderr).not.toMatch(/wrote \d+ of \d+ documents/)
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(readFile(root, 'docs/snippet.md')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    expect(readFile(root, 'docs/notes.md')).toBe(NOTES_DOC(INITIAL_NOTES))
    expect(readFile(root, 'docs/git.md')).toBe(GIT_DOC(git(root, 'rev-parse', 'HEAD')))

    // A file a region includes: its document is rewritten, once.
    let mark = watch.lines().length
    editFile(root, 'snippets/x.txt', 'included line two', 'included line two, edited')
    await expect.poll(() => readFile(root, 'docs/snippet.md'), WAIT).toBe(SNIPPET_DOC(['included line one', 'included line two, edited']))
    await quiet()
    expect(since(watch, mark)).toEqual(['wrote docs/snippet.md'])

    // A document the SQL model reads (the document index): the tasks list follows.
    mark = watch.lines().length
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: closed')
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('closed', 'done'))
    await quiet()
    expect(since(watch, mark)).toEqual(['wrote docs/tasks.md'])

    // A new file the extension's glob reads.
    mark = watch.lines().length
    writeFile(root, 'notes/three.md', '# Three\n')
    await expect.poll(() => readFile(root, 'docs/notes.md'), WAIT).toBe(NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md']))
    await quiet()
    expect(since(watch, mark)).toEqual(['wrote docs/notes.md'])

    // A commit: the region that reads git://HEAD shows the new commit.
    mark = watch.lines().length
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'second')
    const head = git(root, 'rev-parse', 'HEAD')
    await expect.poll(() => readFile(root, 'docs/git.md'), WAIT).toBe(GIT_DOC(head))
    // The line is printed once the write is done: it may reach this process a moment after the file.
    await expect.poll(() => since(watch, mark), WAIT).toContain('wrote docs/git.md')
    expect(watch.stderr).not.toMatch(/failed/)
  })

  it('keeps the prose of an edited document and regenerates its regions; a new document is written too', { timeout: 60_000 }, async () => {
    const root = copyProject()
    const watch = new WatchProcess(['--root', root], REPO)
    await watch.printed(`watching ${root}`)
    const mark = watch.lines().length
    const edited = TASKS_DOC('open', 'done')
      .replace('# Tasks\n', '# Tasks\n\nWhat is left, by title.\n')
      .replace('- [Beta](../tasks/beta.md) — done\n', '- [Beta](../tasks/beta.md) — edited by hand\n')
    writeFile(root, 'docs/tasks.md', edited)
    const expected = TASKS_DOC('open', 'done').replace('# Tasks\n', '# Tasks\n\nWhat is left, by title.\n')
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(expected)

    writeFile(root, 'docs/more.md', '# More\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\nraw = true\n-->\n<!-- insitu:end -->\n')
    await expect.poll(() => readFile(root, 'docs/more.md'), WAIT).toBe(
      `# More\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\nraw = true\n-->\n\n${INITIAL_SNIPPET.join('\n')}\n\n<!-- insitu:end -->\n`,
    )
    await quiet()
    expect(since(watch, mark)).toEqual(['wrote docs/tasks.md', 'wrote docs/more.md'])
    expect(readFile(root, 'docs/tasks.md')).toBe(expected)
  })

  it('follows folders created and deleted (a tree region), and files an excluded folder holds that a document reads', { timeout: 60_000 }, async () => {
    const root = copyProject()
    writeFile(root, 'layout/index.md', '# Layout\n\n<!-- insitu:begin tree\ndepth = 1\n-->\n<!-- insitu:end -->\n')
    writeFile(root, 'layout/a/one.txt', 'one\n')
    writeFile(root, 'dist/version.txt', '1.0.0')
    writeFile(root, 'docs/version.md', '# Version\n\n<!-- insitu:begin include\npath = "../dist/version.txt"\nraw = true\n-->\n<!-- insitu:end -->\n')
    const watch = new WatchProcess([], root)
    await watch.printed(`watching ${root}`)
    const tree = () => readFile(root, 'layout/index.md')
    expect(tree()).toBe(TREE_DOC(['a/', 'index.md']))
    expect(readFile(root, 'docs/version.md')).toContain('\n1.0.0\n')

    fs.mkdirSync(path.join(root, 'layout/b'))
    await expect.poll(tree, WAIT).toBe(TREE_DOC(['a/', 'b/', 'index.md']))
    fs.rmSync(path.join(root, 'layout/a'), { recursive: true })
    await expect.poll(tree, WAIT).toBe(TREE_DOC(['b/', 'index.md']))

    writeFile(root, 'dist/version.txt', '1.0.10')
    await expect.poll(() => readFile(root, 'docs/version.md'), WAIT).toContain('\n1.0.10\n')

    // The excluded folder removed (a clean before a build) and written again: still followed.
    fs.rmSync(path.join(root, 'dist'), { recursive: true })
    await expect.poll(() => watch.stdout, WAIT).toContain('docs/version.md:3: error:')
    writeFile(root, 'dist/version.txt', '1.1.0')
    await expect.poll(() => readFile(root, 'docs/version.md'), WAIT).toContain('\n1.1.0\n')
  })

  it('sees a file an excluded folder does not hold yet appear, when a document reads it', { timeout: 60_000 }, async () => {
    const root = copyProject()
    fs.mkdirSync(path.join(root, 'dist'))
    writeFile(root, 'docs/version.md', '# Version\n\n<!-- insitu:begin include\npath = "../dist/later.txt"\nraw = true\n-->\n<!-- insitu:end -->\n')
    const watch = new WatchProcess([], root)
    await watch.printed(`watching ${root}`)
    expect(watch.stdout).toContain('docs/version.md:3: error:')
    // Created a moment after the watch started (chokidar may not have set up the new watch of dist/ yet), then edited.
    writeFile(root, 'dist/later.txt', '2.0.0')
    await expect.poll(() => readFile(root, 'docs/version.md'), WAIT).toContain('\n2.0.0\n')
    await new Promise((resolve) => setTimeout(resolve, 100))
    const writes = () => watch.stdout.split('\n').filter((line) => line === 'wrote docs/version.md').length
    const written = writes()
    writeFile(root, 'dist/later.txt', '2.0.10')
    await expect.poll(() => readFile(root, 'docs/version.md'), WAIT).toContain('\n2.0.10\n')
    // A file beside it in the excluded folder is still not watched (once the last write is printed).
    await expect.poll(writes, WAIT).toBe(written + 1)
    const mark = watch.stdout.length
    writeFile(root, 'dist/other.txt', 'x')
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS))
    expect(watch.stdout.slice(mark)).toBe('')
  })

  it('an event whose handling throws still syncs the documents that read the file', { timeout: 60_000 }, async () => {
    // A real failure (test/integration/failed-plans.test.ts has the dev server's case): an included
    // file turned into a link to itself makes the index's refresh of that path throw ELOOP.
    const root = copyProject()
    const watch = new WatchProcess([], root)
    await watch.printed(`watching ${root}`)
    expect(readFile(root, 'docs/snippet.md')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    const mark = watch.lines().length
    const included = path.join(root, 'snippets/x.txt')
    fs.rmSync(included)
    fs.symlinkSync('x.txt', included)
    // The failure is printed (were it no failure any more, the test would prove nothing: find another real one)…
    await expect.poll(() => watch.stderr, WAIT).toMatch(/handling the change of snippets\/x\.txt failed: ELOOP/)
    // …and the including document is synced all the same: its include has no file to read now.
    await expect.poll(() => since(watch, mark), WAIT).toContainEqual(expect.stringMatching(/^docs\/snippet\.md:\d+: error: .*snippets\/x\.txt/))
    // Readable again: written as usual.
    fs.rmSync(included)
    fs.writeFileSync(included, 'restored line\n')
    await expect.poll(() => readFile(root, 'docs/snippet.md'), WAIT).toBe(SNIPPET_DOC(['restored line']))
    expect(watch.stderr.match(/failed/g)).toHaveLength(1)
  })

  it('restarts when insitu.toml or an extension program changes; a broken insitu.toml is reported and waits for its next edit', { timeout: 90_000 }, async () => {
    const root = copyProject()
    const watch = new WatchProcess([], root)
    await watch.printed(`watching ${root}`)
    await expect.poll(() => watch.extensions().length, WAIT).toBe(1)
    const firstExtension = watch.extensions()

    fs.appendFileSync(path.join(root, 'insitu.toml'), '# edited\n')
    await watch.printed('insitu.toml changed, restarting')
    await watch.printed(`watching ${root}`, 2)
    await expectProcessesGone(firstExtension)

    fs.appendFileSync(path.join(root, 'tools/notes/extension.py'), '# edited\n')
    await watch.printed('tools/notes/extension.py changed, restarting')
    await watch.printed(`watching ${root}`, 3)

    const config = readFile(root, 'insitu.toml')
    fs.writeFileSync(path.join(root, 'insitu.toml'), `${config}[paths]\nstate = = "x"\n`)
    await watch.printed('waiting for insitu.toml to change')
    const line = config.split('\n').length + 1
    expect(watch.stderr).toMatch(new RegExp(`^${root}/insitu\\.toml:${line}:9: `, 'm'))
    // Nothing runs while the config is broken: the edit is picked up once it is fixed.
    editFile(root, 'snippets/x.txt', 'included line two', 'included line two, while broken')
    await quiet()
    expect(readFile(root, 'docs/snippet.md')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    expect(watch.extensions()).toEqual([])

    fs.writeFileSync(path.join(root, 'insitu.toml'), config)
    await watch.printed(`watching ${root}`, 4)
    expect(readFile(root, 'docs/snippet.md')).toBe(SNIPPET_DOC(['included line one', 'included line two, while broken']))
    expect(watch.running).toBe(true)
  })

  it('a config edit made while the first start runs restarts once that start is done: one engine at a time', { timeout: 60_000 }, async () => {
    const root = copyProject()
    fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(GATED)}\n`)
    const watch = new WatchProcess([], root)
    await expect.poll(() => fs.existsSync(path.join(root, '.starting')), WAIT).toBe(true)
    fs.appendFileSync(path.join(root, 'insitu.toml'), '# edited while starting\n')
    await watch.printed('insitu.toml changed, restarting')
    fs.writeFileSync(path.join(root, '.go'), '')
    await watch.printed(`watching ${root}`, 2)
    expect(watch.lines().filter((line) => line.startsWith('watching'))).toHaveLength(2)
    await expect.poll(() => watch.extensions().length, WAIT).toBe(2)
    const extensions = [...watch.extensionPids]
    watch.child.kill('SIGINT')
    expect(await watch.exit).toBe(0)
    await expectProcessesGone(extensions)
  })

  it('polls the file system with --poll', { timeout: 60_000 }, async () => {
    const root = copyProject()
    const watch = new WatchProcess(['--poll', '50'], root)
    await watch.printed(`watching ${root}`)
    editFile(root, 'snippets/x.txt', 'included line two', 'included line two, polled')
    await expect.poll(() => readFile(root, 'docs/snippet.md'), WAIT).toBe(SNIPPET_DOC(['included line one', 'included line two, polled']))
  })

  it('exits 2 on a broken insitu.toml at start, naming file, line and column; 2 on a bad --poll', async () => {
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n[paths]\nstate = = "x"\n')
    const watch = new WatchProcess([], root)
    expect(await watch.exit).toBe(2)
    expect(watch.stdout).toBe('')
    expect(watch.stderr).toMatch(new RegExp(`^${root}/insitu\\.toml:3:9: .+\\n$`))

    const bad = new WatchProcess(['--poll', 'often'], root)
    expect(await bad.exit).toBe(2)
    expect(bad.stderr).toBe("vite-plugin-insitu: --poll must be a number of milliseconds (got often)\nRun 'vite-plugin-insitu --help' for usage.\n")
  })

  describe.each(['SIGINT', 'SIGTERM', 'SIGHUP', 'stdin closing'] as const)('stopped by %s', (how) => {
    it('prints stopped, exits 0 and leaves no extension process behind', { timeout: 60_000 }, async () => {
      const root = copyProject()
      fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(STUBBORN)}\n`)
      const watch = new WatchProcess([], root, 'pipe')
      await watch.printed(`watching ${root}`)
      await expect.poll(() => watch.extensions().length, WAIT).toBe(2)
      const extensions = watch.extensions()
      if (how === 'stdin closing') watch.child.stdin!.end()
      else watch.child.kill(how)
      expect(await watch.exit).toBe(0)
      expect(watch.lines().at(-1)).toBe('stopped')
      await expectProcessesGone(extensions)
    })
  })

  describe.each(['in-place', 'rename'] as const)('an editor saving %s while a dependency changes (issue #14.1)', (style) => {
    it('loses no save and leaves no stale region, and nothing is written while idle', { timeout: 90_000 }, async () => {
      const report = await runWriteRace({ cycles: 40, style, host: 'watch', idleMs: 1000 })
      expect(report, JSON.stringify(report.failures, null, 2)).toMatchObject({ cycles: 40, lostSaves: 0, staleRegions: 0, idleWrites: 0 })
    })
  })

  it('a second SIGINT while it stops ends it at once, still leaving no extension process behind', { timeout: 60_000 }, async () => {
    const root = copyProject()
    fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(DEAF)}\n`)
    const watch = new WatchProcess([], root)
    await watch.printed(`watching ${root}`)
    await expect.poll(() => watch.extensions().length, WAIT).toBe(2)
    const extensions = watch.extensions()
    watch.child.kill('SIGINT')
    // The deaf extension ignores shutdown and SIGTERM: the graceful stop waits for it (2 s).
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(watch.running).toBe(true)
    watch.child.kill('SIGINT')
    expect(await watch.exit).toBe(null)
    expect(watch.signal).toBe('SIGINT')
    expect(watch.lines()).not.toContain('stopped')
    await expectProcessesGone(extensions)
  })
})
