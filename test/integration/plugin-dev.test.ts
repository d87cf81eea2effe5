/**
 * The plugin in a real Vite dev server (createServer, polling watcher) on a fresh copy of
 * test/fixtures/plugin-project per test, with its real Python extension and real git.
 *
 * main.js imports the healthy documents with `?raw` and accepts their updates, so each HMR
 * `update` payload names the documents it refreshes (`acceptedPath`). A post plugin counts
 * the transforms of every module, to show that unaffected documents are not re-rendered.
 * Vite's logger is replaced by one that records (and prints nothing), for the restart and
 * validator messages.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createServer, type HotPayload, type Plugin, type ViteDevServer } from 'vite'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import insitu, { type InsituOptions } from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { liveSandboxPids } from '../../src/sandbox/process-pool.js'
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
  addExtension,
} from './plugin-project.js'
import { acceptedPaths, type LogEntry, loadRaw, recordingLogger, recordPayloads } from './dev-server-harness.js'

const DOCS = ['/docs/tasks.md?raw', '/docs/snippet.md?raw', '/docs/notes.md?raw', '/docs/git.md?raw'] as const

let root: string
let server: ViteDevServer | undefined
let payloads: HotPayload[] = []
/** What Vite's logger received (the server logs nothing itself), ANSI colours stripped. */
let logs: LogEntry[] = []
const transforms = new Map<string, number>()
const seenPids = new Set<number>()
/** When Vite's watcher last reported a `change` of each absolute path. */
const lastChange = new Map<string, number>()
/**
 * Vite's watcher (its bundled chokidar) drops a `change` of a path that comes within 50 ms of
 * the previous `change` of that path (`_throttle('change', path, 50)`): a test editing the same
 * file twice waits until that window has passed since the last reported change.
 */
const CHANGE_THROTTLE_MS = 50
/** How long an expected watcher event may take on a loaded machine. */
const WAIT = { timeout: 10_000 }

const countTransforms: Plugin = {
  name: 'test:count-transforms',
  enforce: 'post',
  transform(_code, id) {
    transforms.set(id, (transforms.get(id) ?? 0) + 1)
  },
}

const captureLogger = recordingLogger((entry) => logs.push(entry))

/** How Vite's dev server logs a plugin's `this.warn({ message, id, loc, frame })` at line 1 of a one-line file. */
function VITE_DEV_WARNING(file: string, message: string, firstLine: string): string {
  return [`warning: ${message}`, '  Plugin: vite-plugin-insitu', `  File: ${file}:1:1`, `  1 | ${firstLine}`, '    | ^', '  2 |'].join('\n')
}

function logged(level: 'info' | 'warn' | 'error'): string[] {
  return logs.filter((entry) => entry.level === level).map((entry) => entry.message)
}

async function startServer(options: { listen?: boolean; insitu?: InsituOptions } = {}): Promise<ViteDevServer> {
  const dev = await createServer({
    root,
    configFile: false,
    customLogger: captureLogger,
    plugins: [insitu(options.insitu), countTransforms],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  server = dev
  dev.watcher.on('change', (file) => lastChange.set(path.resolve(root, file), Date.now()))
  recordPayloads(dev.environments.client, () => payloads)
  if (options.listen) await dev.listen()
  return dev
}

function client(): ViteDevServer['environments']['client'] {
  if (!server) throw new Error('no server')
  return server.environments.client
}

/** The document text a `?raw` module exports. */
function load(url: string): Promise<string> {
  return loadRaw(client(), url)
}

/** Documents named by the HMR `update` payloads received so far, de-duplicated and sorted. */
function updatedDocuments(): string[] {
  return acceptedPaths(payloads)
}

/** Serve main.js and every document, and wait until Vite's watcher covers the files tests edit. */
async function openApp(): Promise<void> {
  await client().transformRequest('/main.js')
  for (const url of DOCS) await load(url)
  const watched = (rel: string) => server?.watcher.getWatched()[path.join(root, path.dirname(rel))]?.includes(path.basename(rel)) === true
  for (const rel of ['tasks/alpha.md', 'snippets/x.txt', 'notes/one.md']) {
    await expect.poll(() => watched(rel), { ...WAIT, message: `Vite watches ${rel}` }).toBe(true)
  }
  rememberPids()
  payloads = []
}

/** Wait until Vite's watcher covers `rel` (so an edit of it is reported). */
async function watchedByVite(rel: string): Promise<void> {
  const watched = () => server?.watcher.getWatched()[path.join(root, path.dirname(rel))]?.includes(path.basename(rel)) === true
  await expect.poll(watched, { ...WAIT, message: `Vite watches ${rel}` }).toBe(true)
}

/** Wait until another edit of `rel` cannot fall into the watcher's change throttle. */
async function afterChangeThrottle(rel: string): Promise<void> {
  const last = lastChange.get(path.join(root, rel))
  if (last === undefined) return
  // The throttle's own 50 ms timer expires before this later poll, so the window is closed.
  await expect.poll(() => Date.now() - last, { ...WAIT, interval: 20 }).toBeGreaterThan(2 * CHANGE_THROTTLE_MS)
}

function rememberPids(): void {
  for (const pid of liveExtensionPids()) seenPids.add(pid)
}

function moduleOf(url: string) {
  return client().moduleGraph.getModuleById(path.join(root, url))
}

beforeEach(() => {
  root = copyProject({ git: true })
  payloads = []
  logs = []
  transforms.clear()
  seenPids.clear()
  lastChange.clear()
})

afterEach(async () => {
  try {
    rememberPids()
    await server?.close()
    server = undefined
    await expectProcessesGone(seenPids)
  } finally {
    removeProjects()
  }
})

describe('vite dev server', () => {
  test('a change made while the extensions start is not lost', async () => {
    addExtension(root, 'gated')
    const dev = await startServer()
    const served = client().transformRequest('/docs/tasks.md?raw') // starts the engine, waits for it
    await expect.poll(() => fs.existsSync(path.join(root, '.starting')), WAIT).toBe(true)
    // The index has been walked; the host waits for acme/gated. Vite reports this edit now.
    await expect.poll(() => dev.watcher.getWatched()[path.join(root, 'tasks')]?.includes('alpha.md') === true, WAIT).toBe(true)
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => lastChange.has(path.join(root, 'tasks/alpha.md')), WAIT).toBe(true)
    fs.writeFileSync(path.join(root, '.go'), '')
    await served
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
  })

  test('serves every document regenerated', async () => {
    await startServer()
    await openApp()
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    expect(await load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    expect(await load('/docs/git.md?raw')).toBe(GIT_DOC(git(root, 'rev-parse', 'HEAD')))
  })

  describe('a start whose documents did not change since the last one (its query process left for later)', () => {
    /** Every file older than the index's racy window, then one start and its close: the next start finds the rows as that one's snapshot left them. */
    async function startedOnce(): Promise<void> {
      const old = new Date(1_600_000_000_000)
      for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
        const file = path.join(entry.parentPath, entry.name)
        if (!file.includes(`${path.sep}.git`)) fs.utimesSync(file, old, old)
      }
      await startServer()
      await openApp()
      await server?.close()
      server = undefined
      await expect.poll(liveSandboxPids, WAIT).toEqual([])
    }

    test("serves its first page from stored results with no query process, forks one 1 s after the engine's start, and a task edit then updates the SQL region", async () => {
      await startedOnce()
      await startServer()
      expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
      expect(liveSandboxPids()).toEqual([])
      // No query asks for one: the later start (dev-server.ts) forks it.
      await expect.poll(() => liveSandboxPids().length, WAIT).toBe(1)
      await openApp()
      editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
      await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/tasks.md?raw'])
      expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
      expect(liveSandboxPids()).toHaveLength(1)
    })
  })

  test("editing a task's front matter updates the document with the SQL region", async () => {
    await startServer()
    await openApp()
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))

    payloads = []
    editFile(root, 'tasks/beta.md', 'status: done', 'status: in review')
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/tasks.md?raw'])
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'in review'))
  })

  test("a task's title edit updates its own folder's index, and the other folder's index is not even re-rendered", async () => {
    // Folder indexes over `parent = :insitu_dir` (issue #17's nested layout).
    fs.writeFileSync(path.join(root, 'insitu/models/folder_titles.sql'), "select title from documents where parent = :insitu_dir and name != 'index.md' order by path\n")
    const folderIndex = '# Folder\n\n<!-- insitu:begin sql\nid = "titles"\nmodel = "folder_titles"\n-->\n<!-- insitu:end -->\n'
    fs.mkdirSync(path.join(root, 'more'))
    fs.writeFileSync(path.join(root, 'more/gamma.md'), '---\ntitle: Gamma\n---\n# Gamma\n')
    fs.writeFileSync(path.join(root, 'more/index.md'), folderIndex)
    fs.writeFileSync(path.join(root, 'tasks/index.md'), folderIndex)
    // A page showing both folder indexes and docs/tasks.md, accepting their updates.
    const shown = ['./tasks/index.md?raw', './more/index.md?raw', './docs/tasks.md?raw']
    fs.writeFileSync(
      path.join(root, 'folders.js'),
      `${shown.map((url, i) => `import d${i} from '${url}'`).join('\n')}\nexport default [d0, d1, d2]\nimport.meta.hot?.accept(${JSON.stringify(shown)}, () => {})\n`,
    )
    const dev = await startServer({ listen: true })
    await client().transformRequest('/folders.js')
    // The engine's runs of an owner, as the inspector reports them (a render to see whether the
    // text changed counts, even when Vite's module is kept).
    const address = dev.httpServer?.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const runsOf = async (owner: string): Promise<number> => {
      const found = (await (await fetch(`http://localhost:${port}/__insitu/data.json`)).json()) as { owners: { owner: string; runs: number }[] }
      return found.owners.find((o) => o.owner === owner)?.runs ?? 0
    }
    const tasksIndex = '/tasks/index.md?raw'
    const moreIndex = '/more/index.md?raw'
    expect(await load(tasksIndex)).toContain('| Alpha |\n| Beta |')
    expect(await load(moreIndex)).toContain('| Gamma |')
    await load('/docs/tasks.md?raw')
    await watchedByVite('tasks/alpha.md')
    await watchedByVite('more/gamma.md')
    const transformsOf = (url: string) => transforms.get(path.join(root, url))
    const moreBefore = transformsOf(moreIndex)
    expect(await runsOf('more/index.md?raw')).toBe(1)
    payloads = []

    editFile(root, 'tasks/alpha.md', 'title: Alpha', 'title: Alpha renamed')
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/tasks.md?raw', tasksIndex])
    expect(await load(tasksIndex)).toContain('| Alpha renamed |\n| Beta |')
    expect(moduleOf(moreIndex)?.transformResult).not.toBeNull()
    expect(transformsOf(moreIndex)).toBe(moreBefore)
    expect(await runsOf('tasks/index.md?raw')).toBe(2)
    expect(await runsOf('more/index.md?raw')).toBe(1)

    payloads = []
    const tasksBefore = transformsOf(tasksIndex)
    editFile(root, 'more/gamma.md', 'title: Gamma', 'title: Gamma renamed')
    // docs/tasks.md's `path like 'tasks/%'` is checked (its rows stay the same: no update).
    await expect.poll(updatedDocuments, WAIT).toEqual([moreIndex])
    expect(await load(moreIndex)).toContain('| Gamma renamed |')
    expect(moduleOf(tasksIndex)?.transformResult).not.toBeNull()
    expect(transformsOf(tasksIndex)).toBe(tasksBefore)
    expect(await runsOf('tasks/index.md?raw')).toBe(2)
    expect(await runsOf('more/index.md?raw')).toBe(2)
    expect(await load(tasksIndex)).toContain('| Alpha renamed |\n| Beta |')
  })

  test('creating and deleting a file the extension globs updates the reading document each time', async () => {
    await startServer()
    await openApp()
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    // notes/three.md is also a new managed document, so the SQL document (index:documents) is
    // re-rendered too, but its table lists tasks only: same text, no update (early cutoff).
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/notes.md?raw'])
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md']))

    payloads = []
    fs.rmSync(path.join(root, 'notes/three.md'))
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/notes.md?raw'])
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
  })

  test('editing an included file updates the including document, fresh after every edit', async () => {
    await startServer()
    await openApp()
    const lines = [...INITIAL_SNIPPET]
    for (const added of ['included line three', 'included line four', 'included line five']) {
      await afterChangeThrottle('snippets/x.txt')
      payloads = []
      fs.appendFileSync(path.join(root, 'snippets/x.txt'), `${added}\n`)
      lines.push(added)
      await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/snippet.md?raw'])
      expect(await load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(lines))
    }
  })

  test('documents whose inputs did not change are not re-rendered', async () => {
    await startServer()
    await openApp()
    const untouched = ['/docs/tasks.md?raw', '/docs/notes.md?raw', '/docs/git.md?raw']
    const before = new Map(untouched.map((url) => [url, transforms.get(path.join(root, url))]))
    for (const url of untouched) expect(before.get(url)).toBe(1)
    const snippetBefore = transforms.get(path.join(root, '/docs/snippet.md?raw'))

    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/snippet.md?raw'])
    expect(payloads.filter((p) => p.type !== 'update')).toEqual([])

    for (const url of untouched) expect(moduleOf(url)?.transformResult).not.toBeNull()
    expect(moduleOf('/docs/snippet.md?raw')?.transformResult).toBeNull()
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    expect(await load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
    for (const url of untouched) expect(transforms.get(path.join(root, url))).toBe(before.get(url))
    expect(transforms.get(path.join(root, '/docs/snippet.md?raw'))).toBe(snippetBefore! + 1)
  })

  test('a git commit updates the document with the git region', async () => {
    await startServer()
    await openApp()
    const first = git(root, 'rev-parse', 'HEAD')
    expect(await load('/docs/git.md?raw')).toBe(GIT_DOC(first))

    git(root, 'commit', '-q', '--allow-empty', '-m', 'second')
    const second = git(root, 'rev-parse', 'HEAD')
    expect(second).not.toBe(first)
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/git.md?raw'])
    expect(await load('/docs/git.md?raw')).toBe(GIT_DOC(second))
  })

  test('an extension error keeps the document served, and sends the failure to the overlay at the region line, also over HTTP', async () => {
    const dev = await startServer({ listen: true })
    const file = path.join(root, 'docs/broken.md')
    const onDisk = readFile(root, 'docs/broken.md')
    // Served as it is on disk (the region never rendered), not failed (issue #34).
    expect(await load('/docs/broken.md?raw')).toBe(onDisk)
    const overlay = (p: HotPayload) => p.type === 'error'
    expect(payloads.filter(overlay)).toEqual([
      {
        type: 'error',
        err: expect.objectContaining({ message: BROKEN_MESSAGE, id: file, plugin: 'vite-plugin-insitu', stack: '', loc: { file, line: BROKEN_LINE, column: 1 } }),
      },
    ])
    expect(logged('error')).toEqual([expect.stringContaining(`insitu: docs/broken.md:${BROKEN_LINE}: ${BROKEN_MESSAGE}\n  File: ${file}:${BROKEN_LINE}:1\n`)])
    rememberPids()

    // The URL a browser requests for `import broken from './docs/broken.md?raw'`: served, and
    // the failure, already told, is not printed again (the extension fails on every request).
    payloads = []
    const address = dev.httpServer?.address()
    if (!address || typeof address === 'string') throw new Error('the server is not listening on a port')
    const response = await fetch(`http://localhost:${address.port}/docs/broken.md?import&raw`)
    expect(response.status).toBe(200)
    expect(await response.text()).toContain(JSON.stringify(onDisk))
    expect(payloads.filter(overlay)).toEqual([])
    expect(logged('error')).toHaveLength(1)

    // Fixing the region: the failures event says none are left, and the next transform has fresh content.
    editFile(root, 'docs/broken.md', 'insitu:begin explode', 'insitu:begin count_notes')
    const fixed = readFile(root, 'docs/broken.md').replace('-->\n<!-- insitu:end -->', `-->\n\n${INITIAL_NOTES.length} notes: ${INITIAL_NOTES.join(', ')}\n\n<!-- insitu:end -->`)
    await expect.poll(() => load('/docs/broken.md?raw'), WAIT).toBe(fixed)
    await expect.poll(() => logged('info'), WAIT).toContain('insitu: docs/broken.md: fixed')
    expect(payloads).toContainEqual({ type: 'custom', event: 'insitu:failures', data: { files: [{ file: 'docs/broken.md', failures: [] }] } })
  })

  test('a failing template keeps its region\'s last good body while the other regions stay current; the fix clears the failure before its update', async () => {
    // A second region (an include) in the tasks document, beside the SQL region whose template breaks.
    editFile(root, 'docs/tasks.md', '<!-- insitu:end -->\n', '<!-- insitu:end -->\n\n<!-- insitu:begin include\nid = "x"\npath = "../snippets/x.txt"\nraw = true\n-->\n<!-- insitu:end -->\n')
    await startServer()
    await openApp()
    const good = await load('/docs/tasks.md?raw')
    expect(good).toContain('- [Alpha](../tasks/alpha.md) — open')
    expect(good).toContain('included line one')

    // A syntax error in the template: the document is re-rendered by the change's plan, its SQL
    // region keeps what it showed (not its empty body on disk), and the overlay tells why.
    await watchedByVite('insitu/templates/tasks.md.j2')
    editFile(root, 'insitu/templates/tasks.md.j2', '{% endfor %}', '{% endfor')
    const template = path.join(root, 'insitu/templates/tasks.md.j2')
    await expect.poll(() => payloads.filter((p) => p.type === 'error'), WAIT).toHaveLength(1)
    const [sent] = payloads.filter((p) => p.type === 'error') as Extract<HotPayload, { type: 'error' }>[]
    expect(sent!.err).toMatchObject({ plugin: 'vite-plugin-insitu', loc: { file: template } })
    expect(sent!.err.message).toMatch(/^transform sql failed in all: template tasks\.md\.j2: /)
    expect(await load('/docs/tasks.md?raw')).toBe(good)
    expect(logged('error').filter((line) => line.includes('template tasks.md.j2'))).toHaveLength(1)

    // The other region still follows its input.
    await afterChangeThrottle('snippets/x.txt')
    editFile(root, 'snippets/x.txt', 'included line two', 'included line 2')
    await expect.poll(() => load('/docs/tasks.md?raw'), WAIT).toBe(good.replace('included line two', 'included line 2'))

    // Fixed (and changed: a new dash): the failures event (none left) comes before the update of
    // the document, so the browser client closes the overlay before Vite's client handles the update.
    payloads = []
    await afterChangeThrottle('insitu/templates/tasks.md.j2')
    fs.writeFileSync(template, readFile(root, 'insitu/templates/tasks.md.j2').replace('{% endfor\n', '{% endfor %}\n').replace(' — ', ' – '))
    await expect.poll(updatedDocuments, WAIT).toEqual(['/docs/tasks.md?raw'])
    const cleared = payloads.findIndex((p) => p.type === 'custom' && p.event === 'insitu:failures')
    const update = payloads.findIndex((p) => p.type === 'update')
    expect(payloads[cleared]).toEqual({ type: 'custom', event: 'insitu:failures', data: { files: [{ file: 'docs/tasks.md', failures: [] }] } })
    expect(cleared).toBeLessThan(update)
    expect(await load('/docs/tasks.md?raw')).toBe(good.replace('included line two', 'included line 2').replaceAll(') — ', ') – '))
  })

  test('front matter that does not parse keeps the regions\' last good bodies, and tells why at its line', async () => {
    await startServer()
    await openApp()
    const good = await load('/docs/tasks.md?raw')
    await afterChangeThrottle('docs/tasks.md')
    // Broken YAML on top of the document: it cannot be rendered, its region keeps what it showed.
    fs.writeFileSync(path.join(root, 'docs/tasks.md'), `---\ntitle: [unclosed\n---\n${readFile(root, 'docs/tasks.md')}`)
    const file = path.join(root, 'docs/tasks.md')
    await expect.poll(() => payloads.filter((p) => p.type === 'error'), WAIT).toHaveLength(1)
    const [sent] = payloads.filter((p) => p.type === 'error') as Extract<HotPayload, { type: 'error' }>[]
    expect(sent!.err).toMatchObject({ plugin: 'vite-plugin-insitu', loc: { file } })
    expect(sent!.err.loc!.line).toBeLessThanOrEqual(3)
    expect(await load('/docs/tasks.md?raw')).toBe(`---\ntitle: [unclosed\n---\n${good}`)
  })

  test('a failing document deleted takes its failure with it', async () => {
    await startServer()
    await openApp()
    await load('/docs/broken.md?raw')
    await watchedByVite('docs/broken.md')
    payloads = []
    fs.rmSync(path.join(root, 'docs/broken.md'))
    await expect.poll(() => payloads, WAIT).toContainEqual({ type: 'custom', event: 'insitu:failures', data: { files: [{ file: 'docs/broken.md', failures: [] }] } })
    expect(logged('info').filter((line) => line.includes('fixed'))).toEqual([])
  })

  test('no extension process survives the server', async () => {
    await startServer({ listen: true })
    await openApp()
    const pids = liveExtensionPids()
    expect(pids).toHaveLength(1)
    for (const pid of pids) expect(() => process.kill(pid, 0)).not.toThrow()
    await server?.close()
    await server?.close()
    server = undefined
    await expectProcessesGone(pids)
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }))
  })

  test('a server restart stops the old extension process and serves from a fresh one', async () => {
    const first = await startServer({ listen: true })
    await openApp()
    const before = liveExtensionPids()
    expect(before).toHaveLength(1)
    // An inline plugin object is reused by the restarted server: it must start afresh.
    await first.restart()
    for (const pid of before) await expect.poll(() => isAlive(pid), WAIT).toBe(false)
    // The restarted server's watcher reports the edit (once it watches the file again); the
    // fresh engine's index follows it.
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    const watched = () => server?.watcher.getWatched()[path.join(root, 'tasks')]?.includes('alpha.md') === true
    await expect.poll(watched, WAIT).toBe(true)
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: reviewing')
    await expect.poll(() => load('/docs/tasks.md?raw'), WAIT).toBe(TASKS_DOC('reviewing', 'done'))
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    const after = liveExtensionPids()
    expect(after).toHaveLength(1)
    expect(after).not.toEqual(before)
    rememberPids()
  })

  test('editing an extension program restarts the server, which serves its new output from a fresh process', async () => {
    await startServer({ listen: true })
    await openApp()
    await watchedByVite('tools/notes/extension.py')
    const before = liveExtensionPids()
    expect(before).toHaveLength(1)

    editFile(root, 'tools/notes/extension.py', '{len(files)} notes: ', '{len(files)} notes found: ')
    await expect.poll(() => logged('info'), WAIT).toContain('insitu: tools/notes/extension.py changed, restarting server')
    const renamed = NOTES_DOC(INITIAL_NOTES).replace('2 notes: ', '2 notes found: ')
    await expect.poll(() => load('/docs/notes.md?raw'), WAIT).toBe(renamed)
    for (const pid of before) await expect.poll(() => isAlive(pid), WAIT).toBe(false)
    const after = liveExtensionPids()
    expect(after).toHaveLength(1)
    expect(after).not.toEqual(before)
    rememberPids()
    expect(logged('error')).toEqual([])
  })

  test("an editor's temporary file renamed over the program: the restart names the program, never the temporary file", async () => {
    await startServer({ listen: true })
    await openApp()
    await watchedByVite('tools/notes/extension.py')
    const program = path.join(root, 'tools/notes/extension.py')
    // What `sed -i` does: write the new text to a temporary file beside the program, then rename it over the program.
    const temporary = path.join(root, 'tools/notes/sedx3ajcv')
    server!.watcher.on('add', (file) => {
      if (path.resolve(root, file) === temporary && fs.existsSync(temporary)) fs.renameSync(temporary, program)
    })
    fs.writeFileSync(temporary, readFile(root, 'tools/notes/extension.py').replace('{len(files)} notes: ', '{len(files)} notes seen: '))
    await expect.poll(() => logged('info'), WAIT).toContain('insitu: tools/notes/extension.py changed, restarting server')
    await expect.poll(() => load('/docs/notes.md?raw'), WAIT).toBe(NOTES_DOC(INITIAL_NOTES).replace('2 notes: ', '2 notes seen: '))
    expect(fs.existsSync(temporary)).toBe(false)
    expect(logs.filter((entry) => entry.message.includes('sedx3ajcv'))).toEqual([])
    rememberPids()
  })

  test('an extension that fails to start is reported once; the documents using it are served, their failure told', async () => {
    addExtension(root, 'failures/identity')
    const identity = '# Identity\n\n<!-- insitu:begin identity_x\nid = "who"\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(root, 'docs/identity.md'), identity)
    await startServer()
    await openApp()
    // Everything that does not need the failed extension is served as usual.
    expect(await load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    // The document that needs it is served as it is, and the overlay says why.
    expect(await load('/docs/identity.md?raw')).toBe(identity)
    const message = 'transform identity_x (extension acme/identity) failed in who: manifest/runtime identity mismatch for acme/identity'
    expect(payloads.filter((p) => p.type === 'error')).toEqual([
      { type: 'error', err: expect.objectContaining({ message, loc: { file: path.join(root, 'docs/identity.md'), line: 3, column: 1 } }) },
    ])
    // Asking again serves it the same way, without another report in the log.
    expect(await load('/docs/identity.md?raw')).toBe(identity)
    const reports = logged('error').filter((line) => line.includes('failed to start'))
    expect(reports).toEqual(['extension acme/identity failed to start: manifest/runtime identity mismatch for acme/identity'])
    expect(logged('error').filter((line) => line.includes(message))).toHaveLength(1)
  })

  test('a broken insitu.toml serves managed documents as they are and tells its file and line; fixing it restarts the server', async () => {
    await startServer({ listen: true })
    await openApp()
    await watchedByVite('insitu.toml')
    const config = path.join(root, 'insitu.toml')
    const original = readFile(root, 'insitu.toml')
    const line = original.split('\n').length + 1
    const before = client()
    fs.appendFileSync(config, '\n[watch\n')
    await expect.poll(() => logged('info'), WAIT).toContain('insitu: insitu.toml changed, restarting server')
    // The restarted server's environment (Vite assigns the new server's parts to the same object).
    await expect.poll(() => client() !== before, WAIT).toBe(true)
    recordPayloads(client(), () => payloads)
    const expected = `${config}:${line}:7: illegal character in key`
    // Served as it is on disk (its region as it was written: empty), and the overlay says why;
    // the message's column and loc's are the same: the one an editor opens.
    const overlay = () => payloads.find((p) => p.type === 'error' && p.err.message === expected)
    await expect.poll(async () => (await load('/docs/tasks.md?raw')) === readFile(root, 'docs/tasks.md') && overlay() !== undefined, WAIT).toBe(true)
    expect(overlay()).toEqual({ type: 'error', err: expect.objectContaining({ message: expected, loc: { file: config, line, column: 7 } }) })
    // The server keeps serving everything else, and says why insitu is not working.
    expect((await client().transformRequest('/main.js'))?.code).toContain('docs/tasks.md?raw')
    expect(logged('error')).toContain(`vite-plugin-insitu: ${expected}`)
    expect(liveExtensionPids()).toEqual([])

    logs = []
    await afterChangeThrottle('insitu.toml')
    fs.writeFileSync(config, `${original}\n`)
    await expect.poll(() => logged('info'), WAIT).toContain('insitu: insitu.toml changed, restarting server')
    await expect.poll(() => load('/docs/tasks.md?raw'), WAIT).toBe(TASKS_DOC('open', 'done'))
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    rememberPids()
  })

  test('validators run once the extensions are up: warnings and errors are logged, the server keeps serving', async () => {
    fs.writeFileSync(path.join(root, 'notes/three.md'), 'no title here\n')
    fs.writeFileSync(path.join(root, 'notes/four.md'), '# Four\n\nFORBIDDEN\n')
    await startServer()
    await client().transformRequest('/main.js')
    await expect.poll(() => logs.filter((entry) => entry.level !== 'info'), WAIT).toHaveLength(2)
    expect(logged('error')).toEqual(['[insitu] validation error: notes/four.md:3: forbidden word in notes/four.md'])
    expect(logged('warn')).toEqual([VITE_DEV_WARNING(path.join(root, 'notes/three.md'), 'note has no title: notes/three.md', 'no title here')])
    const notes = ['notes/four.md', 'notes/one.md', 'notes/three.md', 'notes/two.md']
    expect(await load('/docs/notes.md?raw')).toBe(NOTES_DOC(notes))
    rememberPids()
  })

  test('modules insitu does not manage are served while the extensions are still starting', async () => {
    // The extension's handshake waits until the test creates a file (outside the extension
    // folder: a file inside it would restart the server).
    const gate = path.join(root, 'release-gate')
    fs.writeFileSync(
      path.join(root, 'tools/notes/gate.py'),
      [
        'import os, runpy, time',
        "while not os.path.exists('../../release-gate'):",
        '    time.sleep(0.02)',
        "runpy.run_path('extension.py', run_name='__main__')",
        '',
      ].join('\n'),
    )
    editFile(root, 'tools/notes/insitu-extension.toml', '"extension.py"', '"gate.py"')
    try {
      await startServer()
      let settled = false
      const tasks = load('/docs/tasks.md?raw').finally(() => {
        settled = true
      })
      tasks.catch(() => {})
      const main = await client().transformRequest('/main.js')
      expect(main?.code).toContain('/docs/tasks.md?import&raw')
      expect(settled).toBe(false)
      await expect.poll(() => liveExtensionPids(), WAIT).toHaveLength(1)
      rememberPids()
      fs.writeFileSync(gate, '')
      expect(await tasks).toBe(TASKS_DOC('open', 'done'))
    } finally {
      fs.writeFileSync(gate, '')
    }
  })
})
