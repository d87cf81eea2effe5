/**
 * The plugin in real builds on a fresh copy of test/fixtures/plugin-project per test, with
 * its real Python extension and real git: `vite build` (Rolldown), `vite build --watch`,
 * plain Rollup 4 and `rollup.watch`.
 *
 * Vite builds are checked by running the built chunk against a stub `document` and comparing
 * the text main.js shows; Rollup output (not minified) by the document string literals.
 */
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import { type Plugin as RollupPlugin, rollup, type RollupError, type RollupWatcher, watch as rollupWatch } from 'rollup'
import { build, type Plugin, type Rolldown } from 'vite'
import { afterEach, describe, expect, test } from 'vitest'
import insitu, { type InsituOptions } from '../../src/index.js'
import { runCli } from '../../src/cli/main.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { pluginStateFiles } from '../../src/documents/state-folder.js'
import {
  BROKEN_LINE,
  BROKEN_MESSAGE,
  buildProcessTrees,
  copyProject,
  editFile,
  expectProcessesGone,
  isAlive,
  git,
  GIT_DOC,
  INITIAL_NOTES,
  INITIAL_SNIPPET,
  NOTES_DOC,
  readFile,
  removeProjects,
  SNIPPET_DOC,
  TASKS_DOC,
} from './plugin-project.js'

/** How long an expected rebuild may take on a loaded machine. */
const WAIT = { timeout: 15_000 }

const closers: (() => Promise<void>)[] = []
const seenPids = new Set<number>()

function rememberPids(): void {
  for (const pid of liveExtensionPids()) seenPids.add(pid)
}

/** Close what the test started (now, not after it) and check that its extension processes are gone. */
async function closeAndExpectProcessesGone(): Promise<void> {
  for (const close of closers.splice(0)) await close()
  await expectProcessesGone(seenPids)
}

afterEach(async () => {
  try {
    rememberPids()
    await closeAndExpectProcessesGone()
  } finally {
    seenPids.clear()
    removeProjects()
  }
})

/** The text main.js puts into `#out`: the four documents joined by `----` lines. */
function appText(documents: { tasks: string; snippet: string; notes: string; git: string }): string {
  return [documents.tasks, documents.snippet, documents.notes, documents.git].join('\n----\n')
}

/** Run the chunk index.html loads against a stub `document`; '' while the output is incomplete. */
function runBuiltApp(outDir: string): string {
  let html: string
  try {
    html = fs.readFileSync(path.join(outDir, 'index.html'), 'utf8')
  } catch {
    return ''
  }
  const src = /<script type="module" crossorigin src="\/([^"]+)"><\/script>/.exec(html)?.[1]
  if (!src) return ''
  let code: string
  try {
    code = fs.readFileSync(path.join(outDir, src), 'utf8')
  } catch {
    return ''
  }
  const out = { textContent: '' }
  const document = {
    // Vite's modulepreload polyfill: report native support so it stops there.
    createElement: () => ({ relList: { supports: () => true } }),
    getElementById: (id: string) => (id === 'out' ? out : null),
  }
  vm.runInNewContext(code, { document })
  return out.textContent
}

function initialApp(root: string): string {
  return appText({
    tasks: TASKS_DOC('open', 'done'),
    snippet: SNIPPET_DOC(INITIAL_SNIPPET),
    notes: NOTES_DOC(INITIAL_NOTES),
    git: GIT_DOC(git(root, 'rev-parse', 'HEAD')),
  })
}

/** docs/later.md: an include of snippets/later/y.txt, a file (and folder) that does not exist yet. */
const LATER_DOC = '# Later\n\n<!-- insitu:begin include\nid = "y"\npath = "../snippets/later/y.txt"\nraw = true\n-->\n<!-- insitu:end -->\n'
/** docs/later.md regenerated once snippets/later/y.txt holds `written later`. */
const LATER_DOC_WRITTEN = LATER_DOC.replace('-->\n', '-->\n\nwritten later\n\n')

function importBroken(root: string): void {
  fs.appendFileSync(path.join(root, 'main.js'), "import broken from './docs/broken.md?raw'\nconsole.log(broken)\n")
}

describe('vite build', () => {
  test('the output contains the regenerated documents', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir } })
    expect(runBuiltApp(outDir)).toBe(initialApp(root))
    // The sources keep their stale regions: only the output is regenerated.
    expect(fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8')).toContain('-->\n<!-- insitu:end -->')
    // `cache` (default): the document index persists in the state folder, which git ignores.
    expect(fs.existsSync(path.join(root, '.insitu/vite-plugin-insitu/index.db'))).toBe(true)
    expect(git(root, 'status', '--porcelain', '--untracked-files=all', '--', '.insitu')).toBe('')
  })

  test('cache: false builds the same output and writes no state folder', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ cache: false })], build: { outDir } })
    expect(runBuiltApp(outDir)).toBe(initialApp(root))
    expect(fs.existsSync(path.join(root, '.insitu'))).toBe(false)
  })

  test('the job cache is written once the modules are loaded, while the output is (closeBundle has nothing left to write)', async () => {
    const root = copyProject({ git: true })
    const jobs = pluginStateFiles(root, '.insitu/index.db').jobs
    let atWriteBundle: boolean | undefined
    const written = () => fs.existsSync(jobs) && fs.statSync(jobs).size > 0
    const probe: Plugin = {
      name: 'job-cache-probe',
      // The engine's process writes it as it ends, at the last buildEnd, while the bundler writes
      // the output (usually before this hook; on a loaded machine a moment after): it is there
      // before closeBundle, which would be the first to write it otherwise.
      async writeBundle() {
        const until = Date.now() + 10_000
        while (!written() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10))
        atWriteBundle = written()
      },
    }
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu(), probe], build: { outDir: path.join(root, 'dist') } })
    expect(atWriteBundle).toBe(true)
    expect(runBuiltApp(path.join(root, 'dist'))).toBe(initialApp(root))
  })

  test.each(['cold', 'warm'])('a %s build serves each document as its index read it: an edit during the build shows in neither the task nor its row', async (state) => {
    const root = copyProject({ git: true })
    fs.appendFileSync(path.join(root, 'main.js'), "import alpha from './tasks/alpha.md?raw'\nconsole.log(alpha)\n")
    const outDir = path.join(root, 'dist')
    if (state === 'warm') {
      // Files older than the index's racy window: their stat alone would vouch for their rows.
      for (const folder of ['docs', 'tasks', 'notes']) {
        for (const name of fs.readdirSync(path.join(root, folder))) fs.utimesSync(path.join(root, folder, name), new Date(0), new Date(0))
      }
      await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir } })
    }
    // Runs right after insitu's buildStart, which has read every document into its index.
    const lateEdit: Plugin = { name: 'late-edit', buildStart: () => editFile(root, 'tasks/alpha.md', 'status: open', 'status: edited later') }
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu(), lateEdit], build: { outDir } })
    expect(readFile(root, 'tasks/alpha.md')).toContain('status: edited later')
    expect(runBuiltApp(outDir)).toBe(initialApp(root)) // the sql region lists Alpha as open
    const chunks = fs.readdirSync(path.join(outDir, 'assets')).filter((name) => name.endsWith('.js'))
    const code = chunks.map((name) => fs.readFileSync(path.join(outDir, 'assets', name), 'utf8')).join('\n')
    expect(code).toMatch(/title: Alpha(\\n|\n)status: open(\\n|\n)---(\\n|\n)# Alpha/) // a string or template literal
    expect(code).not.toContain('edited later')
  })

  test('an extension manifest that cannot be read fails the build even when no managed module is imported', async () => {
    const root = copyProject({ git: true })
    fs.writeFileSync(path.join(root, 'main.js'), "document.getElementById('out').textContent = 'no documents here'\n")
    fs.writeFileSync(path.join(root, 'tools/notes/insitu-extension.toml'), 'name = \n')
    const failure = await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir: path.join(root, 'dist') } }).then(
      () => null,
      (error: unknown) => error as Error,
    )
    rememberPids()
    expect(failure?.message).toContain('insitu-extension.toml:1:')
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(false)
  })

  test('a failing extension region fails the build with its file and line', async () => {
    const root = copyProject({ git: true })
    importBroken(root)
    const file = path.join(root, 'docs/broken.md')
    const failure = await build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu()],
      build: { outDir: path.join(root, 'dist') },
    }).then(
      () => null,
      (error: unknown) => error as Error & { errors?: unknown[] },
    )
    expect(failure).toBeInstanceOf(Error)
    expect(failure?.message).toContain(`[plugin vite-plugin-insitu] ${file}:${BROKEN_LINE}:1\n`)
    expect(failure?.message).toContain(BROKEN_MESSAGE)
    expect(failure?.errors).toEqual([
      expect.objectContaining({
        id: file,
        loc: { file, line: BROKEN_LINE, column: 1 },
        plugin: 'vite-plugin-insitu',
        hook: 'load',
      }),
    ])
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(false)
  })
})

describe('vite build: check mode', () => {
  test('fails on stale regions naming file and line, writes nothing, and passes after sync', async () => {
    const root = copyProject({ git: true })
    fs.rmSync(path.join(root, 'docs/broken.md'))
    const before = readFile(root, 'docs/tasks.md')
    const run = () =>
      build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ check: true })], build: { outDir: path.join(root, 'dist') } }).then(
        () => null,
        (error: unknown) => error as Error,
      )
    const failure = await run()
    rememberPids()
    expect(failure?.message).toContain('insitu check failed:')
    expect(failure?.message).toContain('docs/tasks.md:3 region all is stale')
    expect(failure?.message).toContain('+- [Alpha](../tasks/alpha.md) — open')
    expect(readFile(root, 'docs/tasks.md')).toBe(before)
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(false)

    const out: string[] = []
    const sink = { write: (chunk: string) => void out.push(chunk) }
    expect(await runCli(['sync', '--root', root], { stdout: sink, stderr: sink, cwd: root })).toBe(0)
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(await run()).toBeNull()
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(true)
  })

  test('INSITU_CHECK=1 turns check mode on', async () => {
    const root = copyProject({ git: true })
    fs.rmSync(path.join(root, 'docs/broken.md'))
    process.env.INSITU_CHECK = '1'
    let plugin
    try {
      plugin = insitu()
    } finally {
      delete process.env.INSITU_CHECK
    }
    const failure = await build({ root, configFile: false, logLevel: 'silent', plugins: [plugin], build: { outDir: path.join(root, 'dist') } }).then(
      () => null,
      (error: unknown) => error as Error,
    )
    rememberPids()
    expect(failure?.message).toContain('docs/snippet.md:3 region x is stale')
  })
})

describe('vite build: write mode', () => {
  /** A plugin standing in for Astro or VitePress: it reads each document's Markdown from disk in `load` (before insitu's). */
  const diskReader = (root: string, seen: Map<string, string>): Plugin => ({
    name: 'test:disk-reader',
    enforce: 'pre',
    load(id) {
      if (!id.endsWith('.md?raw')) return null
      const file = id.slice(0, -'?raw'.length)
      const text = fs.readFileSync(file, 'utf8')
      seen.set(path.relative(root, file), text)
      return `export default ${JSON.stringify(text)}`
    },
  })
  test('syncs every managed document at buildStart, so a loader reading the disk sees current content', async () => {
    const root = copyProject({ git: true })
    fs.rmSync(path.join(root, 'docs/broken.md'))
    const seen = new Map<string, string>()
    const before = { snippet: readFile(root, 'snippets/x.txt'), main: readFile(root, 'main.js') }
    await build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [diskReader(root, seen), insitu({ write: true })],
      build: { outDir: path.join(root, 'dist') },
    })
    rememberPids()
    const head = git(root, 'rev-parse', 'HEAD')
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(readFile(root, 'docs/git.md')).toBe(GIT_DOC(head))
    expect(Object.fromEntries(seen)).toEqual({
      'docs/tasks.md': TASKS_DOC('open', 'done'),
      'docs/snippet.md': SNIPPET_DOC(INITIAL_SNIPPET),
      'docs/notes.md': NOTES_DOC(INITIAL_NOTES),
      'docs/git.md': GIT_DOC(head),
    })
    // Only managed documents are written.
    expect(readFile(root, 'snippets/x.txt')).toBe(before.snippet)
    expect(readFile(root, 'main.js')).toBe(before.main)
  })

  test('check wins over write; a failing region fails the build naming it, and the rest is written', async () => {
    const root = copyProject({ git: true })
    const before = readFile(root, 'docs/tasks.md')
    const failure = await build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu({ write: true, check: true })],
      build: { outDir: path.join(root, 'dist') },
    }).then(
      () => null,
      (error: unknown) => error as Error,
    )
    rememberPids()
    expect(failure?.message).toContain('insitu check failed:')
    expect(readFile(root, 'docs/tasks.md')).toBe(before)

    const broken = await build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu({ write: true })],
      build: { outDir: path.join(root, 'dist') },
    }).then(
      () => null,
      (error: unknown) => error as Error,
    )
    rememberPids()
    // docs/broken.md's extension region fails: the build fails naming it, and the rest is written.
    expect(broken?.message).toContain('insitu sync failed:')
    expect(broken?.message).toContain(`docs/broken.md:${BROKEN_LINE}: error: ${BROKEN_MESSAGE}`)
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
  })
})

describe('vite build: validators and the project root', () => {
  test('validator warnings reach onwarn with their file and line, and a validator error fails the build', async () => {
    const root = copyProject({ git: true })
    const untitled = path.join(root, 'notes/three.md')
    fs.writeFileSync(untitled, 'no title here\n')
    const warnings: Rolldown.RolldownLog[] = []
    const config = {
      root,
      configFile: false as const,
      logLevel: 'silent' as const,
      plugins: [insitu()],
      build: { outDir: path.join(root, 'dist'), rolldownOptions: { onwarn: (warning: Rolldown.RolldownLog) => void warnings.push(warning) } },
    }
    await build(config)
    expect(warnings.filter((w) => w.plugin === 'vite-plugin-insitu')).toEqual([
      expect.objectContaining({
        message: 'note has no title: notes/three.md',
        id: untitled,
        loc: { file: untitled, line: 1, column: 1 },
        code: 'PLUGIN_WARNING',
      }),
    ])
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(true)

    const forbidden = path.join(root, 'notes/four.md')
    fs.writeFileSync(forbidden, '# Four\n\nFORBIDDEN\n')
    fs.rmSync(path.join(root, 'dist'), { recursive: true })
    const failure = await build({ ...config, plugins: [insitu()] }).then(
      () => null,
      (error: unknown) => error as Error & { errors?: unknown[] },
    )
    expect(failure).toBeInstanceOf(Error)
    expect(failure?.message).toContain(`[plugin vite-plugin-insitu] ${forbidden}:3:1\n`)
    expect(failure?.errors).toEqual([
      expect.objectContaining({
        message: 'forbidden word in notes/four.md',
        id: forbidden,
        loc: { file: forbidden, line: 3, column: 1 },
        plugin: 'vite-plugin-insitu',
        hook: 'buildEnd',
      }),
    ])
    expect(fs.existsSync(path.join(root, 'dist/index.html'))).toBe(false)
  })

  test('the extensions option turns an extension off, or on over enabled = false', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    const viteBuild = (extensions: Record<string, boolean>) =>
      build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ extensions })], build: { outDir } }).then(
        () => null,
        (error: Error) => error.message,
      )
    // Off by the option: the document using it fails the build.
    expect(await viteBuild({ 'plugin/notes': false })).toContain('unknown transform: count_notes')
    // Off in insitu.toml, on by the option: the build succeeds with its output.
    fs.appendFileSync(path.join(root, 'insitu.toml'), 'enabled = false\n')
    expect(await viteBuild({})).toContain('unknown transform: count_notes')
    expect(await viteBuild({ 'plugin/notes': true })).toBeNull()
    expect(runBuiltApp(outDir)).toBe(initialApp(root))
  })

  test('the root option is the project folder itself: no insitu.toml above it is used', async () => {
    const root = copyProject({ git: true })
    // An app in sub/ with a region only the project's extension (declared in ../insitu.toml) provides.
    const sub = path.join(root, 'sub')
    fs.mkdirSync(sub)
    fs.copyFileSync(path.join(root, 'index.html'), path.join(sub, 'index.html'))
    fs.writeFileSync(path.join(sub, 'main.js'), "import page from './page.md?raw'\ndocument.getElementById('out').textContent = page\n")
    const page = '# Page\n\n<!-- insitu:begin count_notes\nid = "count"\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(sub, 'page.md'), page)
    const outDir = path.join(sub, 'dist')
    const viteBuild = (options: Parameters<typeof insitu>[0]) =>
      build({ root: sub, configFile: false, logLevel: 'silent', plugins: [insitu(options)], build: { outDir } })

    // Without `root`: the nearest insitu.toml walking up from Vite's root (the project's).
    await viteBuild({})
    expect(runBuiltApp(outDir)).toBe(page.replace('-->\n', `-->\n\n${INITIAL_NOTES.length} notes: ${INITIAL_NOTES.join(', ')}\n\n`))

    // With `root` (relative to Vite's root): exactly sub/, which has no insitu.toml (defaults, no extensions).
    fs.rmSync(outDir, { recursive: true })
    const failure = await viteBuild({ root: '.' }).then(
      () => null,
      (error: unknown) => error as Error & { errors?: { message?: string; id?: string }[] },
    )
    expect(failure?.errors).toEqual([
      expect.objectContaining({ id: path.join(sub, 'page.md'), message: expect.stringContaining('unknown transform: count_notes') }),
    ])
  })
})

/** A running `vite build --watch`, and what its events reported so far. */
interface ViteWatch {
  watcher: Rolldown.RolldownWatcher
  /** The code of every event, in order. */
  events: string[]
  /** The error of every ERROR event. */
  errors: Error[]
  /** How many builds have ended (END events). */
  ends(): number
}

/**
 * Start `vite build --watch` of `root` into `outDir` with the plugin; the watcher is closed after
 * the test. Every build's result is closed as soon as it is reported (BUNDLE_END or ERROR).
 */
async function startViteWatch(root: string, outDir: string, options: InsituOptions = {}): Promise<ViteWatch> {
  const watcher = (await build({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [insitu(options)],
    build: { outDir, watch: {} },
  })) as Rolldown.RolldownWatcher
  closers.push(() => watcher.close())
  const events: string[] = []
  const errors: Error[] = []
  watcher.on('event', (event) => {
    events.push(event.code)
    if (event.code === 'ERROR') errors.push(event.error)
    if (event.code === 'BUNDLE_END' || event.code === 'ERROR') void event.result.close()
  })
  return { watcher, events, errors, ends: () => events.filter((code) => code === 'END').length }
}

describe('vite build --watch', () => {
  test('rebuilds when an included file changes and when a globbed file is created', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    const { events, errors, ends } = await startViteWatch(root, outDir)
    const head = git(root, 'rev-parse', 'HEAD')
    const app = (snippet: string[], notes: string[]) =>
      appText({ tasks: TASKS_DOC('open', 'done'), snippet: SNIPPET_DOC(snippet), notes: NOTES_DOC(notes), git: GIT_DOC(head) })

    await expect.poll(ends, WAIT).toBe(1)
    expect(events).toEqual(['START', 'BUNDLE_START', 'BUNDLE_END', 'END'])
    expect(runBuiltApp(outDir)).toBe(app(INITIAL_SNIPPET, INITIAL_NOTES))
    rememberPids()
    expect(seenPids.size).toBe(1)

    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    const snippet = [...INITIAL_SNIPPET, 'included line three']
    await expect.poll(() => runBuiltApp(outDir), WAIT).toBe(app(snippet, INITIAL_NOTES))

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    await expect.poll(() => runBuiltApp(outDir), WAIT).toBe(app(snippet, ['notes/one.md', 'notes/three.md', 'notes/two.md']))
    expect(errors).toEqual([])

    // The extension process is reused across rebuilds, and stops with the watcher.
    expect(liveExtensionPids()).toEqual([...seenPids])
    await closeAndExpectProcessesGone()
  })

  test('write mode: one rebuild per change, though each change writes a document (issue #14.5)', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    fs.rmSync(path.join(root, 'docs/broken.md')) // a failing document fails a write-mode build
    const { errors, ends } = await startViteWatch(root, outDir, { write: true })
    await expect.poll(ends, WAIT).toBe(1)
    expect(fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8')).toBe(TASKS_DOC('open', 'done'))
    const settled = async (builds: number) => {
      await expect.poll(ends, WAIT).toBe(builds)
      await new Promise((resolve) => setTimeout(resolve, 1500)) // a second rebuild would start now
      expect(ends()).toBe(builds)
    }
    await settled(1)
    // A file the document includes (the bundler watches it): the document is written, once rebuilt.
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await settled(2)
    expect(fs.readFileSync(path.join(root, 'docs/snippet.md'), 'utf8')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
    expect(runBuiltApp(outDir)).toContain(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
    // A task's front matter (a managed document itself), feeding the SQL region of another.
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await settled(3)
    expect(fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8')).toBe(TASKS_DOC('blocked', 'done'))
    expect(runBuiltApp(outDir)).toContain(TASKS_DOC('blocked', 'done'))
    // The user's own edit of a written document: kept, regenerated around, one rebuild.
    editFile(root, 'docs/tasks.md', '# Tasks', '# Tasks, edited')
    await settled(4)
    expect(fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8')).toBe(TASKS_DOC('blocked', 'done').replace('# Tasks', '# Tasks, edited'))
    expect(runBuiltApp(outDir)).toContain('# Tasks, edited')
    expect(errors).toEqual([])
  })

  test('write mode with a tree region: the write-back files of a document in its folder start no rebuild', async () => {
    // A tree region reads its folder (fs:dir): the temporary and backup files a write-back puts
    // beside a document must not count as changes of it.
    const root = copyProject({ git: true })
    fs.rmSync(path.join(root, 'docs/broken.md'))
    fs.writeFileSync(path.join(root, 'docs/layout.md'), '# Layout\n\n<!-- insitu:begin tree\n-->\n<!-- insitu:end -->\n')
    fs.appendFileSync(path.join(root, 'main.js'), "import layout from './docs/layout.md?raw'\ndocument.title = layout\n")
    const { errors, ends } = await startViteWatch(root, path.join(root, 'dist'), { write: true })
    const settled = async (builds: number) => {
      await expect.poll(ends, WAIT).toBe(builds)
      await new Promise((resolve) => setTimeout(resolve, 1500)) // a second rebuild would start now
      expect(ends()).toBe(builds)
    }
    await settled(1)
    expect(fs.readFileSync(path.join(root, 'docs/layout.md'), 'utf8')).toContain('snippet.md')
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await settled(2)
    expect(fs.readFileSync(path.join(root, 'docs/snippet.md'), 'utf8')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
    expect(fs.readFileSync(path.join(root, 'docs/layout.md'), 'utf8')).not.toContain('.insitu-')
    expect(errors).toEqual([])
  })

  test('rebuilds when a new managed document appears outside the watched folders (index:documents dependents)', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    const { errors, ends } = await startViteWatch(root, outDir)
    await expect.poll(ends, WAIT).toBe(1)
    expect(runBuiltApp(outDir)).toContain(TASKS_DOC('open', 'done'))
    rememberPids()

    // tasks/ itself is not watched by the bundler (only the documents it already indexed are):
    // the plugin's own watcher sees the new document and wakes the bundler.
    fs.writeFileSync(path.join(root, 'tasks/gamma.md'), '---\ntitle: Gamma\nstatus: open\n---\n# Gamma\n')
    await expect.poll(() => runBuiltApp(outDir), WAIT).toContain('- [Gamma](../tasks/gamma.md) — open')
    // …and its deletion too.
    fs.rmSync(path.join(root, 'tasks/gamma.md'))
    await expect.poll(() => runBuiltApp(outDir), WAIT).toContain(TASKS_DOC('open', 'done'))
    // The deletion reached the bundler (it watched the indexed file) and the plugin's own
    // watcher: it was handled once, so it cost one rebuild.
    await expect.poll(ends, WAIT).toBe(3)
    expect(errors).toEqual([])
  })

  test('a failing include of a missing file rebuilds fine once the file is created', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    fs.writeFileSync(path.join(root, 'docs/later.md'), LATER_DOC)
    fs.appendFileSync(path.join(root, 'main.js'), "import later from './docs/later.md?raw'\ndocument.title = later\n")
    const { errors } = await startViteWatch(root, outDir)
    await expect.poll(() => errors.length, WAIT).toBe(1)
    rememberPids()
    expect(errors[0]?.message).toContain('file not found: snippets/later/y.txt')
    expect(runBuiltApp(outDir)).toBe('')

    fs.mkdirSync(path.join(root, 'snippets/later'))
    fs.writeFileSync(path.join(root, 'snippets/later/y.txt'), 'written later\n')
    await expect.poll(() => runBuiltApp(outDir), WAIT).toBe(initialApp(root))
    const assets = fs.readdirSync(path.join(outDir, 'assets')).map((name) => readFile(outDir, `assets/${name}`))
    expect(assets.filter((code) => code.includes('written later'))).toHaveLength(1)
    expect(errors).toHaveLength(1)
  })

  test('a git commit starts a rebuild by itself (the plugin watches git and wakes the bundler)', async () => {
    const root = copyProject({ git: true })
    const outDir = path.join(root, 'dist')
    const { errors, ends } = await startViteWatch(root, outDir)
    const first = git(root, 'rev-parse', 'HEAD')
    await expect.poll(ends, WAIT).toBe(1)
    expect(runBuiltApp(outDir)).toBe(initialApp(root))
    rememberPids()

    git(root, 'commit', '-q', '--allow-empty', '-m', 'second')
    const second = git(root, 'rev-parse', 'HEAD')
    expect(second).not.toBe(first)
    // Nothing the bundler watches changed: the commit alone wakes it, and the git region follows.
    await expect
      .poll(() => runBuiltApp(outDir), WAIT)
      .toBe(appText({ tasks: TASKS_DOC('open', 'done'), snippet: SNIPPET_DOC(INITIAL_SNIPPET), notes: NOTES_DOC(INITIAL_NOTES), git: GIT_DOC(second) }))
    // The output file is written before the bundler reports the build's END.
    await expect.poll(ends, WAIT).toBe(2)
    expect(errors).toEqual([])
  })
})

/** Resolve `./x.md?raw` next to its importer (Rollup's own resolution would look for a file named so). */
const resolveQueries: RollupPlugin = {
  name: 'test:resolve-queries',
  resolveId(source, importer) {
    const query = source.indexOf('?')
    if (query < 0 || !importer) return null
    return path.resolve(path.dirname(importer), source.slice(0, query)) + source.slice(query)
  },
}

/** The plugin as Rollup sees it (Vite's Plugin type adds Vite-only hooks). */
function insituForRollup(root: string, options: InsituOptions = {}): RollupPlugin {
  return insitu({ root, ...options }) as unknown as RollupPlugin
}

/** Another plugin turning Markdown (already regenerated by insitu's transform) into a module. */
const markdownAsText: RollupPlugin = {
  name: 'test:markdown-as-text',
  transform(code, id) {
    if (!id.endsWith('.md')) return null
    return { code: `export default ${JSON.stringify(code)}`, map: null }
  },
}

/** How Rollup prints `export default "<text>"` of a `?raw` document imported as `name`. */
function rawDeclaration(name: string, text: string): string {
  return `var ${name} = ${JSON.stringify(text)};`
}

/** A plugin recording the id (relative to `root`) of every module Rollup transforms into `transformed`. */
function recordTransforms(root: string, transformed: string[]): RollupPlugin {
  return { name: 'test:record-transforms', transform: (_code, id) => void transformed.push(path.relative(root, id)) }
}

/** A running `rollup.watch()`, and what its events reported so far. */
interface RollupWatch {
  watcher: RollupWatcher
  /** The error of every ERROR event (with the files that build watched). */
  errors: RollupError[]
  /** The files every successful build (BUNDLE_END) watched, in order. */
  watchFiles: string[][]
  /** How many builds have ended (END events). */
  ends(): number
  /** The text of the output file; '' until a build wrote it. */
  output(): string
}

/**
 * Start `rollup.watch()` of `root/<input>` with `plugins`, writing ES output to `root/out/<input>`;
 * the watcher is closed after the test. Every build's result is closed as soon as it is reported.
 */
function startRollupWatch(root: string, input: string, plugins: RollupPlugin[]): RollupWatch {
  const outFile = path.join(root, 'out', input)
  const watcher = rollupWatch({ input: path.join(root, input), plugins, output: { file: outFile, format: 'es' } })
  closers.push(() => watcher.close())
  const errors: RollupError[] = []
  const watchFiles: string[][] = []
  let ends = 0
  watcher.on('event', (event) => {
    if (event.code === 'END') ends++
    if (event.code === 'ERROR') errors.push(event.error)
    if (event.code === 'BUNDLE_END') watchFiles.push([...event.result.watchFiles])
    if ((event.code === 'BUNDLE_END' || event.code === 'ERROR') && event.result) void event.result.close()
  })
  return {
    watcher,
    errors,
    watchFiles,
    ends: () => ends,
    output: () => (fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : ''),
  }
}

describe('plain Rollup 4', () => {
  test('rollup() builds with regenerated content', async () => {
    const root = copyProject({ git: true })
    // The engine runs in the build's own process (src/build-child.ts), with the extension below it.
    let trees: ReturnType<typeof buildProcessTrees> = []
    const probe: RollupPlugin = {
      name: 'probe',
      transform(_code, id) {
        if (id.endsWith('git.md?raw')) trees = buildProcessTrees() // the engine has rendered it by now
      },
    }
    const bundle = await rollup({ input: path.join(root, 'main.js'), plugins: [insituForRollup(root), resolveQueries, probe] })
    closers.push(() => bundle.close())
    const [tree, ...others] = trees
    expect(others).toEqual([])
    // The extension, and the SQL region's sandbox process unless it has ended idle already.
    expect(tree?.children.length).toBeGreaterThanOrEqual(1)
    const { output } = await bundle.generate({ format: 'es' })
    const code = output[0].code
    expect(code).toContain(rawDeclaration('tasks', TASKS_DOC('open', 'done')))
    expect(code).toContain(rawDeclaration('snippet', SNIPPET_DOC(INITIAL_SNIPPET)))
    expect(code).toContain(rawDeclaration('notes', NOTES_DOC(INITIAL_NOTES)))
    expect(code).toContain(rawDeclaration('git', GIT_DOC(git(root, 'rev-parse', 'HEAD'))))
    await closeAndExpectProcessesGone()
    // The build ended it once every module was loaded (its extension told to stop before).
    expect(isAlive(tree!.pid)).toBe(false)
    expect(buildProcessTrees()).toEqual([])
    await expectProcessesGone(tree!.children)
  })

  test('rollup() fails on a failing extension region with its file and line', async () => {
    const root = copyProject()
    importBroken(root)
    const file = path.join(root, 'docs/broken.md')
    const failure = await rollup({ input: path.join(root, 'main.js'), plugins: [insituForRollup(root), resolveQueries] }).then(
      () => null,
      (error: unknown) => error as Error & { loc?: unknown; id?: unknown; plugin?: unknown; hook?: unknown },
    )
    expect(failure).toBeInstanceOf(Error)
    // Rollup words load failures itself ("Could not load <id> (imported by <importer>): ...");
    // the region's file and line are the error's `loc`, as Rollup's CLI prints them.
    const importer = path.relative(process.cwd(), path.join(root, 'main.js'))
    expect(failure?.message).toBe(`Could not load ${file}?raw (imported by ${importer}): ${BROKEN_MESSAGE}`)
    expect(failure?.loc).toEqual({ file, line: BROKEN_LINE, column: 1 })
    expect(failure?.id).toBe(file)
    expect(failure?.plugin).toBe('vite-plugin-insitu')
    expect(failure?.hook).toBe('load')
  })

  test('rollup.watch() rebuilds on a dependency edit and a globbed file creation', async () => {
    const root = copyProject({ git: true })
    const { errors, ends, output } = startRollupWatch(root, 'main.js', [insituForRollup(root), resolveQueries])

    await expect.poll(ends, WAIT).toBe(1)
    expect(output()).toContain(rawDeclaration('snippet', SNIPPET_DOC(INITIAL_SNIPPET)))
    rememberPids()
    expect(seenPids.size).toBe(1)

    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('snippet', SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three'])))

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('notes', NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md'])))
    expect(output()).toContain(rawDeclaration('tasks', TASKS_DOC('open', 'done')))
    expect(errors).toEqual([])

    expect(liveExtensionPids()).toEqual([...seenPids])
    await closeAndExpectProcessesGone()
  })

  test('rollup.watch() re-transforms cached document modules whose dependencies changed', async () => {
    const root = copyProject({ git: true })
    // Documents imported as modules (no `?raw`): insitu regenerates them in `transform`, so an
    // unchanged source is served from Rollup's cache unless shouldTransformCachedModule says no.
    fs.writeFileSync(
      path.join(root, 'text.js'),
      [
        "export { default as tasks } from './docs/tasks.md'",
        "export { default as notes } from './docs/notes.md'",
        "export { default as snippet } from './docs/snippet.md'",
        '',
      ].join('\n'),
    )
    const transformed: string[] = []
    const { errors, ends, output } = startRollupWatch(root, 'text.js', [insituForRollup(root), markdownAsText, recordTransforms(root, transformed)])

    await expect.poll(ends, WAIT).toBe(1)
    expect(output()).toContain(rawDeclaration('tasks', TASKS_DOC('open', 'done')))
    expect(output()).toContain(rawDeclaration('notes', NOTES_DOC(INITIAL_NOTES)))
    rememberPids()

    // tasks/alpha.md is not a module: only the index dependency of docs/tasks.md covers it.
    transformed.length = 0
    fs.writeFileSync(path.join(root, 'tasks/alpha.md'), readFile(root, 'tasks/alpha.md').replace('status: open', 'status: blocked'))
    await expect.poll(output, WAIT).toContain(rawDeclaration('tasks', TASKS_DOC('blocked', 'done')))
    expect(output()).toContain(rawDeclaration('notes', NOTES_DOC(INITIAL_NOTES)))
    // Which modules were redone, not how often: one write may reach Rollup's watcher as two
    // change events, and then Rollup rebuilds twice (seen once in a full run).
    expect([...new Set(transformed)]).toEqual(['docs/tasks.md'])

    // Only the including document is redone; docs/tasks.md, just rebuilt, is no longer stale.
    transformed.length = 0
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('snippet', SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three'])))
    expect([...new Set(transformed)]).toEqual(['docs/snippet.md'])

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('notes', NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md'])))
    expect(errors).toEqual([])
  })

  test('rollup.watch() is handed files only, never a folder (a tree region at the root, a glob of notes/)', async () => {
    const root = copyProject({ git: true })
    // A tree of the root depends on `fs:dir:.`, the extension's glob on notes/. Rollup and
    // Rolldown watch a folder recursively: the root would include out/ (every output write
    // another build), any folder the write-back's temporary files (issue #14.5). The plugin's own
    // watcher reports what folders would. (Rolldown's watch result lists no watch files, so
    // this is checked through Rollup; both get them from the same plugin code.)
    fs.writeFileSync(path.join(root, 'README.md'), '# Readme\n\n<!-- insitu:begin tree\nid = "layout"\n-->\n<!-- insitu:end -->\n')
    fs.appendFileSync(path.join(root, 'main.js'), "import readme from './README.md?raw'\ndocument.title = readme\n")
    const { errors, watchFiles, output } = startRollupWatch(root, 'main.js', [insituForRollup(root), resolveQueries])

    await expect.poll(() => watchFiles.length, WAIT).toBe(1)
    rememberPids()
    expect(output()).toContain(`<!-- insitu:begin tree\\nid = \\"layout\\"\\n-->\\n\\n\`\`\`text\\n${path.basename(root)}/\\n`)
    expect(watchFiles[0]).not.toContain(root)
    expect(watchFiles[0]).not.toContain(path.join(root, 'notes'))
    expect(watchFiles[0]!.filter((file) => !fs.statSync(file).isFile())).toEqual([])
    expect(watchFiles[0]).toContain(path.join(root, 'README.md'))

    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('snippet', SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three'])))
    await expect.poll(() => watchFiles.length, WAIT).toBe(2)
    expect(watchFiles[1]).not.toContain(root)
    // A new file the glob lists: the plugin's own watcher wakes the bundler.
    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    await expect.poll(output, WAIT).toContain('notes/three.md')
    expect(errors).toEqual([])
  })

  test('rollup.watch() rebuilds after a commit and re-transforms only the cached document that reads git', async () => {
    const root = copyProject({ git: true })
    fs.writeFileSync(
      path.join(root, 'text.js'),
      ["export { default as git } from './docs/git.md'", "export { default as snippet } from './docs/snippet.md'", ''].join('\n'),
    )
    const transformed: string[] = []
    const { errors, ends, output } = startRollupWatch(root, 'text.js', [insituForRollup(root), markdownAsText, recordTransforms(root, transformed)])
    const first = git(root, 'rev-parse', 'HEAD')
    await expect.poll(ends, WAIT).toBe(1)
    expect(output()).toContain(rawDeclaration('git', GIT_DOC(first)))
    rememberPids()

    git(root, 'commit', '-q', '--allow-empty', '-m', 'second')
    const second = git(root, 'rev-parse', 'HEAD')
    transformed.length = 0
    await expect.poll(output, WAIT).toContain(rawDeclaration('git', GIT_DOC(second)))
    // Rollup serves every other module from its cache: only the git reader was marked stale.
    expect([...transformed].sort()).toEqual(['docs/git.md'])
    expect(errors).toEqual([])
  })

  test('rollup.watch() rebuilds when a missing included file is created (the plugin\'s own watcher reports it)', async () => {
    const root = copyProject({ git: true })
    fs.writeFileSync(path.join(root, 'docs/later.md'), LATER_DOC)
    fs.writeFileSync(path.join(root, 'later.js'), "import later from './docs/later.md?raw'\nexport { later }\n")
    const { errors, watchFiles, ends, output } = startRollupWatch(root, 'later.js', [insituForRollup(root), resolveQueries])

    // The first build fails (the file is missing); no folder is handed to the bundler for it.
    await expect.poll(() => errors.length, WAIT).toBe(1)
    rememberPids()
    expect(errors[0]?.message).toContain('file not found: snippets/later/y.txt')
    expect(errors[0]?.watchFiles).not.toContain(path.join(root, 'snippets'))
    expect(errors[0]?.watchFiles).not.toContain(root)

    fs.mkdirSync(path.join(root, 'snippets/later'))
    fs.writeFileSync(path.join(root, 'snippets/later/y.txt'), 'written later\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('later', LATER_DOC_WRITTEN))
    // Now the file exists, it is watched itself.
    expect(watchFiles.at(-1)).toContain(path.join(root, 'snippets/later/y.txt'))
    expect(ends()).toBeGreaterThanOrEqual(1)
  })

  test('rollup.watch() rebuilds when a missing included file under sources.exclude is created (the plugin\'s own watcher looks there for it)', async () => {
    // site/ is excluded by default: the walk and the watcher skip it, a read by name does not.
    const root = copyProject({ git: true })
    fs.mkdirSync(path.join(root, 'site'))
    const doc = LATER_DOC.replace('../snippets/later/y.txt', '../site/version.txt')
    fs.writeFileSync(path.join(root, 'docs/later.md'), doc)
    fs.writeFileSync(path.join(root, 'later.js'), "import later from './docs/later.md?raw'\nexport { later }\n")
    const { errors, watchFiles, output } = startRollupWatch(root, 'later.js', [insituForRollup(root), resolveQueries])
    await expect.poll(() => errors.length, WAIT).toBe(1)
    rememberPids()
    expect(errors[0]?.message).toContain('file not found: site/version.txt')
    fs.writeFileSync(path.join(root, 'site/unrelated.txt'), 'x\n') // excluded, read by nothing: no rebuild
    fs.writeFileSync(path.join(root, 'site/version.txt'), 'written later\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('later', doc.replace('-->\n', '-->\n\nwritten later\n\n')))
    expect(watchFiles.at(-1)).toContain(path.join(root, 'site/version.txt'))
  })

  test('rollup.watch(): changes the bundler does not report are still handled (a folder watch that ends, a watcher not ready yet)', async () => {
    const root = copyProject({ git: true })
    fs.writeFileSync(path.join(root, 'docs/later.md'), LATER_DOC)
    // A tree of docs/ (fs:dir:docs) and the later document, both imported.
    fs.writeFileSync(path.join(root, 'docs/layout.md'), '# Layout\n\n<!-- insitu:begin tree\nid = "t"\n-->\n<!-- insitu:end -->\n')
    fs.writeFileSync(
      path.join(root, 'both.js'),
      "import later from './docs/later.md?raw'\nimport layout from './docs/layout.md?raw'\nexport { later, layout }\n",
    )
    const { ends, output } = startRollupWatch(root, 'both.js', [insituForRollup(root), resolveQueries])
    await expect.poll(ends, WAIT).toBe(1)
    rememberPids()
    // The missing include makes the bundler watch snippets/ until the file exists; its watcher may
    // not even be ready this early: the plugin's own watcher covers what it does not report…
    fs.mkdirSync(path.join(root, 'snippets/later'))
    fs.writeFileSync(path.join(root, 'snippets/later/y.txt'), 'written later\n')
    await expect.poll(output, WAIT).toContain(rawDeclaration('later', LATER_DOC_WRITTEN))
    // …and a new file in docs/, the tree's folder, regenerates the tree either way.
    fs.writeFileSync(path.join(root, 'docs/zzz-new.md'), '# New\n')
    await expect.poll(output, WAIT).toContain('zzz-new.md')
  })
})
