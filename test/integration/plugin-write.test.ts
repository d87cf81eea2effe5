/**
 * Write mode and early cutoff in a real Vite dev server (createServer, polling watcher) on a
 * fresh copy of test/fixtures/plugin-project per test, with its real Python extension, real git
 * and, for the races, the acme/typist extension that edits or deletes the document while it renders.
 *
 * Writes are counted with Vite's own watcher (`change` events of a document): the plugin's
 * write-back is what changes a document the test does not edit.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createServer, type HotPayload, type Plugin, type ViteDevServer } from 'vite'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import insitu, { type InsituOptions } from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { acceptedPaths, type LogEntry, loadRaw, recordingLogger, recordPayloads } from './dev-server-harness.js'
import {
  chownTree,
  copyProject,
  editFile,
  expectProcessesGone,
  git,
  GIT_DOC,
  NOBODY,
  readFile,
  removeProjects,
  runTypeScript,
  INITIAL_SNIPPET,
  SNIPPET_DOC,
  TASKS_DOC,
  addExtension,
} from './plugin-project.js'

const DEV_SERVER_WRITE = path.resolve(import.meta.dirname, '../fixtures/node/dev-server-write.ts')
const WAIT = { timeout: 10_000 }
/** How long the tests watch an idle server for writes that should not happen (issue #8: 2 s). */
const IDLE_MS = 2_000

let root: string
let server: ViteDevServer | undefined
let payloads: HotPayload[] = []
let logs: LogEntry[] = []
/** Vite watcher `change` events per project-relative path. */
let changes = new Map<string, number>()
/** When Vite's watcher last reported a change of each project-relative path. */
const lastChange = new Map<string, number>()
/** Vite's watcher drops a `change` of a path within 50 ms of the previous one (see plugin-dev.test.ts). */
const CHANGE_THROTTLE_MS = 50
const seenPids = new Set<number>()
const immutable: string[] = []

async function startServer(options: InsituOptions = { write: true }, before: Plugin[] = []): Promise<ViteDevServer> {
  const dev = await createServer({
    root,
    configFile: false,
    customLogger: recordingLogger((entry) => logs.push(entry)),
    plugins: [...before, insitu(options)],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  server = dev
  dev.watcher.on('change', (file) => {
    const rel = path.relative(root, path.resolve(root, file)).split(path.sep).join('/')
    changes.set(rel, (changes.get(rel) ?? 0) + 1)
    lastChange.set(rel, Date.now())
  })
  // Only this test's server: a payload a closed server sends late (the previous test's write chain)
  // is not this test's.
  recordPayloads(dev.environments.client, () => (server === dev ? payloads : []))
  return dev
}

function client(): ViteDevServer['environments']['client'] {
  if (!server) throw new Error('no server')
  return server.environments.client
}

function messages(level: LogEntry['level']): string[] {
  return logs.filter((entry) => entry.level === level).map((entry) => entry.message)
}

/** Wait until Vite's watcher covers `rel` (so an edit of it is reported). */
async function watchedByVite(rel: string): Promise<void> {
  const watched = () => server?.watcher.getWatched()[path.join(root, path.dirname(rel))]?.includes(path.basename(rel)) === true
  await expect.poll(watched, { ...WAIT, message: `Vite watches ${rel}` }).toBe(true)
}

/** Wait until another edit of `rel` cannot fall into the watcher's change throttle. */
async function afterChangeThrottle(rel: string): Promise<void> {
  const last = lastChange.get(rel)
  if (last !== undefined) await expect.poll(() => Date.now() - last, { ...WAIT, interval: 20 }).toBeGreaterThan(2 * CHANGE_THROTTLE_MS)
}

/** Wait for `ms` of wall time (only to observe that nothing happens while idle). */
function idle(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Start the server, load main.js and its documents, and wait for the start-up write-back and its watcher events. */
async function openWrittenApp(): Promise<void> {
  await startServer()
  await client().transformRequest('/main.js')
  for (const url of ['/docs/tasks.md?raw', '/docs/snippet.md?raw', '/docs/notes.md?raw', '/docs/git.md?raw']) await loadRaw(client(), url)
  await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('open', 'done'))
  await expect.poll(() => changes.get('docs/tasks.md') ?? 0, WAIT).toBeGreaterThan(0)
  for (const rel of ['tasks/alpha.md', 'docs/tasks.md']) await watchedByVite(rel)
  payloads = []
  changes = new Map()
}

beforeEach(() => {
  root = copyProject({ git: true })
  payloads = []
  logs = []
  changes = new Map()
  lastChange.clear()
  seenPids.clear()
})

afterEach(async () => {
  try {
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    await server?.close()
    server = undefined
    await expectProcessesGone(seenPids)
  } finally {
    for (const file of immutable.splice(0)) execFileSync('chattr', ['-i', file])
    removeProjects()
  }
})

describe('write mode: dev server', () => {
  test('writes every stale managed document at start, and nothing else', async () => {
    const untouched = ['snippets/x.txt', 'main.js', 'tasks/alpha.md', 'docs/broken.md'].map((rel) => [rel, readFile(root, rel)] as const)
    await startServer()
    await client().transformRequest('/main.js')
    await expect.poll(() => messages('info'), WAIT).toContainEqual(expect.stringMatching(/^.*insitu: wrote 4 of \d+ documents$/))
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    expect(readFile(root, 'docs/git.md')).toBe(GIT_DOC(git(root, 'rev-parse', 'HEAD')))
    for (const [rel, text] of untouched) expect(readFile(root, rel), rel).toBe(text)
    // What transform serves is what was written.
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(readFile(root, 'docs/tasks.md'))
    expect(fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  test('two documents that include each other stop writing after 4 chained writes, naming the cause', async () => {
    const includes = (other: string) => `# ${other}\n\n<!-- insitu:begin include\npath = "${other}.md"\nraw = true\n-->\n<!-- insitu:end -->\n`
    fs.writeFileSync(path.join(root, 'docs/ping.md'), includes('pong'))
    fs.writeFileSync(path.join(root, 'docs/pong.md'), includes('ping'))
    await startServer()
    await client().transformRequest('/main.js')
    for (const url of ['/docs/ping.md?raw', '/docs/pong.md?raw']) await loadRaw(client(), url)
    for (const rel of ['docs/ping.md', 'docs/pong.md']) await watchedByVite(rel)
    editFile(root, 'docs/ping.md', '# pong', '# pong, edited')
    await expect
      .poll(() => messages('warn'), WAIT)
      .toContainEqual(expect.stringMatching(/insitu: docs\/p[io]ng\.md not written: it changed again after each of 4 writes \(do documents include each other's generated text\?\)$/))
  })

  test('the start-up write of many documents sends no update: each write is recognized as it lands', async () => {
    const names = Array.from({ length: 150 }, (_, i) => `docs/many/d${String(i).padStart(3, '0')}.md`)
    for (const name of names) {
      fs.mkdirSync(path.join(root, 'docs/many'), { recursive: true })
      fs.writeFileSync(path.join(root, name), '# Many\n\n<!-- insitu:begin include\npath = "../../snippets/x.txt"\n-->\n<!-- insitu:end -->\n')
    }
    await startServer()
    await client().transformRequest('/main.js')
    // The first documents (whose writes land first), loaded as modules while the others are written.
    for (const name of names.slice(0, 10)) await loadRaw(client(), `/${name}?raw`)
    await expect.poll(() => messages('info'), WAIT).toContainEqual(expect.stringMatching(/insitu: wrote 154 of \d+ documents$/))
    await idle(IDLE_MS)
    expect(payloads.filter((p) => p.type === 'update' || p.type === 'full-reload')).toEqual([])
    expect(readFile(root, names[0]!)).toContain('included line one')
  })

  test('a page that read a document before its start-up write is updated by the echo (as VitePress adds an @include’s reader)', async () => {
    // A plugin shaped like VitePress's @include and `vitepress:hmr-fix`: page.js reads
    // docs/snippet.md from disk and watches it, and each event of that file adds its readers.
    const snippet = path.join(root, 'docs/snippet.md')
    fs.writeFileSync(path.join(root, 'page.js'), '// reads docs/snippet.md\n')
    const includer: Plugin = {
      name: 'test:includer',
      transform(_code, id) {
        if (!id.endsWith('/page.js')) return
        this.addWatchFile(snippet)
        return `export default ${JSON.stringify(fs.readFileSync(snippet, 'utf8'))}\nif (import.meta.hot) import.meta.hot.accept()\n`
      },
      hotUpdate({ file, modules }) {
        if (file === snippet) return [...modules, ...modules.flatMap((module) => [...module.importers])]
      },
    }
    await startServer({ write: true }, [includer])
    // Served at once (not insitu's), before the start-up sync writes docs/snippet.md: the stale text.
    expect((await client().transformRequest('/page.js'))?.code).not.toContain('included line one')
    await expect.poll(() => readFile(root, 'docs/snippet.md'), WAIT).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    // No update announced that write: its echo must not drop the reader the other plugin adds.
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/page.js'])
    expect((await client().transformRequest('/page.js'))?.code).toContain('included line one')
  })

  test('a module Vite read just before the start-up write of its file is still regenerated', async () => {
    const stale = readFile(root, 'docs/tasks.md')
    // A plugin before insitu holds the transform of docs/tasks.md (Vite has read the stale
    // text) until insitu has written the file back: insitu's transform then sees a disk that
    // moved on under the code it was handed.
    const holdUntilWritten: Plugin = {
      name: 'test:hold-until-written',
      enforce: 'pre',
      transform: {
        order: 'pre', // before insitu's own pre transform
        async handler(_code, id) {
          if (!id.endsWith('/docs/tasks.md')) return null
          await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).not.toBe(stale)
          return null
        },
      },
    }
    await startServer({ write: true }, [holdUntilWritten])
    const result = await client().transformRequest('/docs/tasks.md')
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    // Vite serves a .md module as text here: it must hold the regenerated table.
    expect(result?.code).toContain('- [Alpha](../tasks/alpha.md) — open')
  })

  test('a dependency edit writes the document once and sends one update; its echo sends nothing; no write loop', async () => {
    await openWrittenApp()
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('blocked', 'done'))
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
    await idle(IDLE_MS)
    // One write (Vite saw one change of the document), one update naming it, nothing after.
    expect(changes.get('docs/tasks.md')).toBe(1)
    const updates = payloads.filter((p) => p.type === 'update').flatMap((p) => p.updates.map((u) => u.acceptedPath))
    expect(updates).toEqual(['/docs/tasks.md?raw'])
    // Only the fixture's broken document, told once when the start-up sync met it (issue #34).
    expect(messages('error')).toEqual([expect.stringMatching(/^insitu: docs\/broken\.md:5: transform explode .* the fuse was lit\n/)])
  })

  test('an included file reported while truncated is written with what follows the truncation', async () => {
    // `fs.writeFileSync` truncates, then writes: the watcher can report the empty file and drop
    // the write's change (its 50 ms throttle). Here Vite's watcher stops watching the file and
    // the test reports the truncation itself, so the write that follows has no event at all.
    await openWrittenApp()
    const file = path.join(root, 'snippets/x.txt')
    await server?.watcher.unwatch(file)
    fs.writeFileSync(file, '')
    server?.watcher.emit('change', file)
    setTimeout(() => fs.writeFileSync(file, 'written after the truncation\n'), 30)
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/snippet.md?raw'])
    expect(readFile(root, 'docs/snippet.md')).toBe(SNIPPET_DOC(['written after the truncation']))
    expect(await loadRaw(client(), '/docs/snippet.md?raw')).toBe(SNIPPET_DOC(['written after the truncation']))
  })

  test("a user's edit of a managed document is kept, and regenerated around", async () => {
    const openTasks = "select title, status, path from documents where path like 'tasks/%' and status = 'open' order by title\n"
    fs.writeFileSync(path.join(root, 'insitu/models/open_tasks.sql'), openTasks)
    await openWrittenApp()
    await afterChangeThrottle('docs/tasks.md')
    // A prose edit: the regions are still current, so nothing is written; Vite's own update.
    // (A write-back puts a new file in place: the edited file's inode would change.)
    editFile(root, 'docs/tasks.md', '# Tasks', '# Tasks, edited')
    const edited = fs.statSync(path.join(root, 'docs/tasks.md')).ino
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    await idle(500) // the late re-check
    expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done').replace('# Tasks', '# Tasks, edited'))
    expect(fs.statSync(path.join(root, 'docs/tasks.md')).ino).toBe(edited)
    expect(acceptedPaths(payloads)).toEqual(['/docs/tasks.md?raw'])

    // An edit that makes a region stale (another template): written back at once, the edit kept.
    await afterChangeThrottle('docs/tasks.md')
    payloads = []
    editFile(root, 'docs/tasks.md', 'model = "all_tasks"', 'model = "open_tasks"')
    const openOnly = (text: string) => text.includes('model = "open_tasks"') && !text.includes('Beta')
    await expect.poll(() => openOnly(readFile(root, 'docs/tasks.md')), WAIT).toBe(true)
    expect(readFile(root, 'docs/tasks.md')).toContain('# Tasks, edited\n')
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(openOnly(await loadRaw(client(), '/docs/tasks.md?raw'))).toBe(true)
  })

  test('a failure below a region regenerated in the same save is told at its line in the file written (issue #34)', async () => {
    await openWrittenApp()
    await watchedByVite('docs/snippet.md')
    await afterChangeThrottle('docs/snippet.md')
    payloads = []
    logs = []
    // The include's body is emptied and an unterminated region added below it, in one save: the
    // write puts the included lines back (+4 lines), so the begin comment moves down in the file.
    const saved = SNIPPET_DOC(INITIAL_SNIPPET).replace(/-->\n\n[\s\S]*?\n\n<!-- insitu:end -->/, '-->\n<!-- insitu:end -->') + '\nMore text.\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\n-->\nno end here\n'
    const savedLine = saved.split('\n').indexOf('More text.') + 3
    fs.writeFileSync(path.join(root, 'docs/snippet.md'), saved)
    await expect.poll(() => readFile(root, 'docs/snippet.md'), WAIT).toContain('included line one')
    const written = readFile(root, 'docs/snippet.md')
    const writtenLine = written.split('\n').indexOf('More text.') + 3
    expect(writtenLine).toBeGreaterThan(savedLine)
    const message = `unterminated Insitu region at line`
    await expect.poll(() => messages('error').filter((m) => m.includes(message)), WAIT).toHaveLength(1)
    const [told] = messages('error').filter((m) => m.includes(message))
    expect(told).toContain(`insitu: docs/snippet.md:${writtenLine}: unterminated Insitu region at line ${writtenLine}`)
    // Its code frame is of the file as written: the begin comment at the line named.
    expect(told).toMatch(new RegExp(`> ?${writtenLine} \\| <!-- insitu:begin include|${writtenLine} \\| <!-- insitu:begin include`))
    const overlay = payloads.find((p) => p.type === 'error' && p.err.message.includes(message))
    expect(overlay).toMatchObject({ err: { loc: { file: path.join(root, 'docs/snippet.md'), line: writtenLine } } })
  })

  test('saving the text the plugin last wrote again (an undo, a checkout) is the user\'s edit: it updates', async () => {
    await openWrittenApp()
    const written = readFile(root, 'docs/tasks.md')
    await afterChangeThrottle('docs/tasks.md')
    fs.appendFileSync(path.join(root, 'docs/tasks.md'), 'A line typed at the end.\n')
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(`${written}A line typed at the end.\n`)
    await afterChangeThrottle('docs/tasks.md')
    payloads = []
    fs.writeFileSync(path.join(root, 'docs/tasks.md'), written)
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(written)
  })

  test('a document that cannot be written is reported with its path, and the server keeps serving it current', async () => {
    await openWrittenApp()
    const file = path.join(root, 'docs/tasks.md')
    // Root ignores permission bits: an immutable file is what refuses root's writes.
    execFileSync('chattr', ['+i', file])
    immutable.push(file)
    const before = readFile(root, 'docs/tasks.md')
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => messages('error'), WAIT).toContainEqual(
      expect.stringMatching(/vite-plugin-insitu: cannot write docs\/tasks\.md: (EPERM|EACCES): /),
    )
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
    expect(readFile(root, 'docs/tasks.md')).toBe(before)
    expect(fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })

  test.runIf(process.getuid?.() === 0)('a read-only document (a real EACCES, as another user) is reported at start and on each change, and served current', async () => {
    fs.chmodSync(root, 0o755)
    chownTree(root, NOBODY)
    fs.chmodSync(path.join(root, 'docs/tasks.md'), 0o444)
    const before = readFile(root, 'docs/tasks.md')
    const run = await runTypeScript(DEV_SERVER_WRITE, [root], { cwd: root, uid: NOBODY })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const result = JSON.parse(run.stdout) as { errors: string[]; served: string; disk: string }
    const cannotWrite = result.errors.filter((m) => m.includes('cannot write'))
    expect(cannotWrite.length).toBeGreaterThanOrEqual(2)
    for (const message of cannotWrite) expect(message).toMatch(/vite-plugin-insitu: cannot write docs\/tasks\.md: EACCES: permission denied/)
    expect(result.served).toBe(TASKS_DOC('blocked', 'done'))
    expect(result.disk).toBe(before)
  })

  test('an edit typed into a document while its write is pending is kept', async () => {
    addExtension(root, 'typist')
    const doc = '# Typed\n\n<!-- insitu:begin typist\ntext = "typed while the write was pending"\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(root, 'docs/typed.md'), doc)
    await startServer()
    await client().transformRequest('/main.js')
    // The typist appends a line to the document while its first render runs; the write-back
    // sees the file changed, renders again, and writes a text that holds the typed line. (The
    // watcher may report the typed line first, as a user's edit: then a third render writes.)
    const expected = /^# Typed\n\n<!-- insitu:begin typist\ntext = "typed while the write was pending"\n-->\n\ngenerated [23]\n\n<!-- insitu:end -->\ntyped while the write was pending\n$/
    await expect.poll(() => readFile(root, 'docs/typed.md'), WAIT).toMatch(expected)
    await idle(IDLE_MS)
    expect(readFile(root, 'docs/typed.md')).toMatch(expected)
  })

  test('a document deleted while its write is pending is not recreated', async () => {
    addExtension(root, 'typist')
    fs.writeFileSync(path.join(root, 'docs/doomed.md'), '<!-- insitu:begin typist\naction = "delete"\n-->\n<!-- insitu:end -->\n')
    await startServer()
    await client().transformRequest('/main.js')
    await expect.poll(() => messages('info'), WAIT).toContainEqual(expect.stringMatching(/insitu: wrote 4 of \d+ documents$/))
    await idle(IDLE_MS)
    expect(fs.existsSync(path.join(root, 'docs/doomed.md'))).toBe(false)
    expect(fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })
})

describe('early cutoff (without write)', () => {
  test('a change that leaves a document the same sends no update for it', async () => {
    await startServer({})
    await client().transformRequest('/main.js')
    for (const url of ['/docs/tasks.md?raw', '/docs/notes.md?raw']) await loadRaw(client(), url)
    for (const rel of ['tasks/alpha.md', 'tasks/beta.md']) await watchedByVite(rel)
    payloads = []
    // The task's body is in the index (the SQL document is re-rendered), but its table shows
    // titles and statuses only: the same text, no update.
    editFile(root, 'tasks/alpha.md', '# Alpha', '# Alpha, described at length')
    await expect.poll(() => changes.get('tasks/alpha.md') ?? 0, WAIT).toBe(1)
    // A later edit that does change it: its update is the only one.
    editFile(root, 'tasks/beta.md', 'status: done', 'status: in review')
    await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(payloads.filter((p) => p.type === 'update')).toHaveLength(1)
    expect(await loadRaw(client(), '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'in review'))
  })
})

describe('check wins over write in every dev server (issue #14.3)', () => {
  /** A server as Astro's content sync makes it: middleware mode, no HMR. */
  async function startSyncServer(plugin: Plugin): Promise<ViteDevServer> {
    const dev = await createServer({
      root,
      configFile: false,
      customLogger: recordingLogger((entry) => logs.push(entry)),
      plugins: [plugin],
      server: { middlewareMode: true, hmr: false, watch: { usePolling: true, interval: 50 } },
    })
    server = dev
    return dev
  }

  /** `insitu(options)` made while INSITU_CHECK=1 (the option's default is read then). */
  function withCheckVariable(options: InsituOptions): Plugin {
    const before = process.env.INSITU_CHECK
    process.env.INSITU_CHECK = '1'
    try {
      return insitu(options)
    } finally {
      if (before === undefined) delete process.env.INSITU_CHECK
      else process.env.INSITU_CHECK = before
    }
  }

  test.each([
    ['the check option', () => insitu({ write: true, check: true })],
    ['INSITU_CHECK=1', () => withCheckVariable({ write: true })],
  ] as const)('%s: a middleware-mode server without HMR serves current text and writes nothing, at start or on a change', async (_name, plugin) => {
    const stale = readFile(root, 'docs/tasks.md')
    const dev = await startSyncServer(plugin())
    expect(await loadRaw(dev.environments.client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    await watchedByVite('tasks/alpha.md')
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => loadRaw(dev.environments.client, '/docs/tasks.md?raw'), WAIT).toBe(TASKS_DOC('blocked', 'done'))
    await idle(IDLE_MS)
    expect(readFile(root, 'docs/tasks.md')).toBe(stale)
    expect(fs.readdirSync(path.join(root, 'docs')).filter((name) => name.includes('.insitu-'))).toEqual([])
  })

  test('write mode in a server without HMR keeps the files current after start too (Vite runs no hot-update hook there)', async () => {
    const dev = await startSyncServer(insitu({ write: true }))
    expect(await loadRaw(dev.environments.client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('open', 'done'))
    await watchedByVite('tasks/alpha.md')
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('blocked', 'done'))
    expect(await loadRaw(dev.environments.client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
  })
})
