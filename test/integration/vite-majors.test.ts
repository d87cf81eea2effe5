/**
 * The plugin on every supported Vite major (5, 6, 7 and 8, installed side by side as npm
 * aliases `vite5`, `vite6`, `vite7` and `vite`): a real dev server (polling watcher) hot-reloads
 * a front-matter edit feeding a SQL region, a new file a glob reads, and an included file's
 * edit; closing it leaves no extension process; `vite build` ships regenerated documents.
 * Also on each: a `load` plugin that compiles the Markdown itself (as Astro does) gets its code
 * untouched, the `?raw` module of the same file keeps its own dependency record, a request
 * of a document in flight while its update goes out is not kept as its text, a change whose
 * plan fails still decides the documents that read the file (failed-plans.test.ts), and a
 * document with a failing region stays served, its failure sent to the overlay (issue #34).
 */
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import { afterEach, describe, expect, test } from 'vitest'
import insitu from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import {
  copyProject,
  editFile,
  expectProcessesGone,
  INITIAL_NOTES,
  INITIAL_SNIPPET,
  NOTES_DOC,
  removeProjects,
  SNIPPET_DOC,
  TASKS_DOC,
} from './plugin-project.js'
import { recordingLogger, transformGate } from './dev-server-harness.js'

interface AnyPayload {
  type: string
  updates?: { acceptedPath: string }[]
}

/** What the tests use of a dev server, on any major. */
interface AnyServer {
  close(): Promise<void>
  watcher: { getWatched(): Record<string, string[]>; emit(event: 'change' | 'unlink', file: string): boolean }
  environments?: { client: { hot: { send: (payload: AnyPayload) => void }; transformRequest(url: string): Promise<{ code: string } | null> } }
  hot?: { send: (payload: AnyPayload) => void }
  ws: { send: (payload: AnyPayload) => void }
  transformRequest(url: string): Promise<{ code: string } | null>
}

interface ViteModule {
  version: string
  createServer(config: object): Promise<unknown>
  build(config: object): Promise<unknown>
}

const MAJORS: [string, () => Promise<ViteModule>][] = [
  ['vite5', () => import('vite5') as Promise<ViteModule>],
  ['vite6', () => import('vite6') as Promise<ViteModule>],
  ['vite7', () => import('vite7') as Promise<ViteModule>],
  ['vite', () => import('vite') as Promise<ViteModule>],
]

const WAIT = { timeout: 15_000 }
const seenPids = new Set<number>()
const closers: (() => Promise<void>)[] = []

afterEach(async () => {
  try {
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    for (const close of closers.splice(0)) await close()
    await expectProcessesGone(seenPids)
  } finally {
    seenPids.clear()
    removeProjects()
  }
})

/** A `load` hook that compiles `docs/tasks.md` (no query) to JS itself, as Astro does with Markdown pages. */
const compilesMarkdown = {
  name: 'test:compiles-markdown',
  enforce: 'pre' as const,
  load(id: string) {
    if (id.endsWith('/docs/tasks.md')) return 'export default "compiled <!-- insitu:begin sql\\nmodel = \\"x\\"\\n--> x <!-- insitu:end -->"'
    return null
  },
}

/** A `load` hook that serves `docs/tasks.md` (no query) as its text read from disk, as Astro's content layer reads it. */
const readsMarkdownFromDisk = {
  name: 'test:reads-markdown-from-disk',
  enforce: 'pre' as const,
  load(id: string) {
    if (id.endsWith('/docs/tasks.md')) return `export default ${JSON.stringify(fs.readFileSync(id, 'utf8'))}`
    return null
  },
}

async function startDev(
  vite: ViteModule,
  root: string,
  options: { write?: boolean; nativeWatcher?: boolean; plugins?: object[]; errors?: string[]; ignored?: string[] } = {},
) {
  const errors = options.errors
  const server = (await vite.createServer({
    root,
    configFile: false,
    ...(errors ? { customLogger: recordingLogger((entry) => entry.level === 'error' && errors.push(entry.message)) } : { logLevel: 'silent' }),
    plugins: [insitu({ write: options.write ?? false }), options.write ? readsMarkdownFromDisk : compilesMarkdown, ...(options.plugins ?? [])],
    // Native events (as users run it) report a write's echo within a millisecond or two.
    server: { port: 0, watch: { ...(options.nativeWatcher ? {} : { usePolling: true, interval: 50 }), ...(options.ignored ? { ignored: options.ignored } : {}) } },
  })) as AnyServer
  closers.push(() => server.close())
  const payloads: AnyPayload[] = []
  const hot = server.environments?.client.hot ?? server.hot ?? server.ws
  const send = hot.send.bind(hot)
  hot.send = (payload: AnyPayload) => {
    payloads.push(payload)
    send(payload)
  }
  const transform = (url: string) => (server.environments ? server.environments.client.transformRequest(url) : server.transformRequest(url))
  const load = async (url: string): Promise<string> => {
    const code = (await transform(url))?.code ?? ''
    const match = /^export default ("(?:[^"\\]|\\.)*")$/.exec(code)
    if (!match) throw new Error(`unexpected module code for ${url}: ${code}`)
    return JSON.parse(match[1]!) as string
  }
  const updated = () => [...new Set(payloads.flatMap((p) => (p.type === 'update' ? (p.updates ?? []).map((u) => u.acceptedPath) : [])))].sort()
  const watched = (rel: string) => server.watcher.getWatched()[path.join(root, path.dirname(rel))]?.includes(path.basename(rel)) === true
  return { server, payloads, transform, load, updated, watched }
}

describe.each(MAJORS)('%s', (_name, importVite) => {
  test('dev server: hot-reloads front-matter, new-file and include changes; close stops the extension', async () => {
    const vite = await importVite()
    const root = copyProject()
    const dev = await startDev(vite, root)
    await dev.transform('/main.js')
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    expect(await dev.load('/docs/notes.md?raw')).toBe(NOTES_DOC(INITIAL_NOTES))
    for (const rel of ['tasks/alpha.md', 'snippets/x.txt', 'notes/one.md']) {
      await expect.poll(() => dev.watched(rel), { ...WAIT, message: `Vite watches ${rel}` }).toBe(true)
    }
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    expect(seenPids.size).toBe(1)

    dev.payloads.length = 0
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(dev.updated, WAIT).toContain('/docs/tasks.md?raw')
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))

    dev.payloads.length = 0
    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    await expect.poll(dev.updated, WAIT).toContain('/docs/notes.md?raw')
    expect(await dev.load('/docs/notes.md?raw')).toBe(NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md']))

    dev.payloads.length = 0
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await expect.poll(dev.updated, WAIT).toEqual(['/docs/snippet.md?raw'])
    expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))

    await closers.pop()!()
    await expectProcessesGone(seenPids)
  })

  test('dev server: a request in flight while its document’s update goes out is not kept (in-flight-requests.test.ts)', async () => {
    const vite = await importVite()
    const root = copyProject()
    const gate = transformGate('/docs/tasks.md?raw')
    const dev = await startDev(vite, root, { plugins: [gate.plugin] })
    await dev.transform('/main.js')
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    const tasksUpdates = () => dev.payloads.filter((p) => (p.updates ?? []).some((u) => u.acceptedPath === '/docs/tasks.md?raw')).length
    dev.payloads.length = 0
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: reviewing')
    await expect.poll(tasksUpdates, WAIT).toBe(1)
    gate.arm()
    const inFlight = dev.load('/docs/tasks.md?raw')
    await expect.poll(gate.reached, WAIT).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 150)) // a later mtime than the first edit's
    editFile(root, 'tasks/alpha.md', 'status: reviewing', 'status: blocked')
    await expect.poll(tasksUpdates, WAIT).toBe(2)
    gate.release()
    expect(await inFlight).toBe(TASKS_DOC('reviewing', 'done'))
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
    expect(dev.payloads.filter((p) => p.type === 'full-reload')).toEqual([])
  })

  test('dev server: a change whose plan fails still decides the document that includes the file, which keeps its last good body (failed-plans.test.ts)', async () => {
    const vite = await importVite()
    const root = copyProject()
    const errors: string[] = []
    // Vite 5–7's watcher (chokidar 3) leaves a rejection of its own unhandled when a file it
    // watches becomes a symlink loop: it does not watch this one, and the test emits the file's
    // events on it, as the plugin itself reports a dropped change.
    const dev = await startDev(vite, root, { errors, ignored: ['**/snippets/x.txt'] })
    await dev.transform('/main.js')
    expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    dev.payloads.length = 0
    // A link to itself: the index refresh of its events throws (ELOOP).
    const included = path.join(root, 'snippets/x.txt')
    fs.rmSync(included)
    fs.symlinkSync('x.txt', included)
    const failures = () => errors.filter((message) => message.includes(`handling the change of ${included} failed: ELOOP`))
    const snippetUpdates = () => dev.payloads.filter((p) => (p.updates ?? []).some((u) => u.acceptedPath === '/docs/snippet.md?raw')).length
    const told = () => dev.payloads.filter((p) => p.type === 'error' && (p as { err?: { message?: string } }).err?.message?.includes('file not found: snippets/x.txt')).length
    // A delete (Vite 5: from the watcher) and an update (Vite 5: `handleHotUpdate`): each is
    // decided; the document keeps its last good body (issue #34), so no update is sent, and its
    // failure is told once, when it first happens.
    for (const [event, count] of [['unlink', 1], ['change', 2]] as const) {
      dev.server.watcher.emit(event, included)
      await expect.poll(failures, WAIT).toHaveLength(count)
      await expect.poll(told, WAIT).toBe(1)
      expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    }
    await new Promise((resolve) => setTimeout(resolve, 300)) // an update would come now
    expect(snippetUpdates()).toBe(0)
    expect(told()).toBe(1)
    expect(dev.payloads.filter((p) => p.type === 'full-reload')).toEqual([])
  })

  test("dev server: another plugin's compiled Markdown is left untouched and does not erase the ?raw module's record", async () => {
    const vite = await importVite()
    const root = copyProject()
    const dev = await startDev(vite, root)
    await dev.transform('/main.js')
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    // The same file under another id: compiled by the test's load hook; insitu must not touch it.
    const compiled = await dev.transform('/docs/tasks.md')
    expect(compiled?.code).toContain('compiled <!-- insitu:begin sql\\nmodel = \\"x\\"\\n--> x <!-- insitu:end -->')
    await expect.poll(() => dev.watched('tasks/alpha.md'), WAIT).toBe(true)

    dev.payloads.length = 0
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(dev.updated, WAIT).toContain('/docs/tasks.md?raw')
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
  })

  test('dev server, write mode: a dependency edit rewrites the document, and a disk reader sees it', async () => {
    const vite = await importVite()
    const root = copyProject()
    const dev = await startDev(vite, root, { write: true })
    await dev.transform('/main.js')
    await expect.poll(() => fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8'), WAIT).toBe(TASKS_DOC('open', 'done'))
    expect(await dev.load('/docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
    await expect.poll(() => dev.watched('tasks/alpha.md'), WAIT).toBe(true)

    dev.payloads.length = 0
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    await expect.poll(() => fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8'), WAIT).toBe(TASKS_DOC('blocked', 'done'))
    await expect.poll(dev.updated, WAIT).toContain('/docs/tasks.md?raw')
    expect(await dev.load('/docs/tasks.md')).toBe(TASKS_DOC('blocked', 'done'))
    expect(await dev.load('/docs/tasks.md?raw')).toBe(TASKS_DOC('blocked', 'done'))
  })

  test('dev server, write mode: exactly one HMR payload per dependency edit (issue #14.2)', async () => {
    const vite = await importVite()
    const root = copyProject()
    const dev = await startDev(vite, root, { write: true, nativeWatcher: true })
    await dev.transform('/main.js')
    await dev.load('/docs/tasks.md?raw')
    await expect.poll(() => fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8'), WAIT).toBe(TASKS_DOC('open', 'done'))
    await expect.poll(() => dev.watched('tasks/alpha.md'), WAIT).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 500)) // the start-up write's echo and re-check
    dev.payloads.length = 0
    const EDITS = 10
    const about = (p: AnyPayload) => p.type === 'full-reload' || (p.updates ?? []).some((u) => u.acceptedPath.startsWith('/docs/tasks.md'))
    for (let edit = 1; edit <= EDITS; edit++) {
      const [from, to] = edit % 2 === 1 ? ['open', 'blocked'] : ['blocked', 'open']
      editFile(root, 'tasks/alpha.md', `status: ${from}`, `status: ${to}`)
      await expect.poll(() => fs.readFileSync(path.join(root, 'docs/tasks.md'), 'utf8'), WAIT).toBe(TASKS_DOC(to, 'done'))
      await expect.poll(() => dev.payloads.filter(about).length, WAIT).toBeGreaterThanOrEqual(edit)
      // The write's echo and the late re-check come within ~200 ms: give them time to (not) send.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(dev.payloads.filter(about).length, `payloads after edit ${edit}`).toBe(edit)
    }
  })

  test('vite build ships the regenerated documents', async () => {
    const vite = await importVite()
    const root = copyProject()
    const outDir = path.join(root, 'dist')
    await vite.build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir, minify: false } })
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    const html = fs.readFileSync(path.join(outDir, 'index.html'), 'utf8')
    const src = /<script type="module" crossorigin src="\/([^"]+)"><\/script>/.exec(html)?.[1]
    expect(src).toBeTruthy()
    const out = { textContent: '' }
    const document = {
      createElement: () => ({ relList: { supports: () => true } }),
      getElementById: (id: string) => (id === 'out' ? out : null),
    }
    vm.runInNewContext(fs.readFileSync(path.join(outDir, src!), 'utf8'), { document })
    expect(out.textContent).toContain(TASKS_DOC('open', 'done'))
    expect(out.textContent).toContain(SNIPPET_DOC(INITIAL_SNIPPET))
    expect(out.textContent).toContain(NOTES_DOC(INITIAL_NOTES))
    await expectProcessesGone(seenPids)
  })

  test('vite build --watch, write mode: one rebuild per change, though each change writes a document (issue #14.5)', async () => {
    const vite = await importVite()
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md')) // a failing document fails a write-mode build
    const watcher = (await vite.build({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu({ write: true })],
      build: { outDir: path.join(root, 'dist'), minify: false, watch: {} },
    })) as { on(event: 'event', listener: (event: { code: string; result?: { close(): unknown } }) => void): void; close(): Promise<void> }
    closers.push(() => watcher.close())
    let ends = 0
    watcher.on('event', (event) => {
      if (event.code === 'END') ends++
      if (event.code === 'ERROR') throw new Error('the watch build failed')
      void event.result?.close()
    })
    const settled = async (builds: number) => {
      await expect.poll(() => ends, WAIT).toBe(builds)
      await new Promise((resolve) => setTimeout(resolve, 1500)) // a second rebuild would start now
      expect(ends).toBe(builds)
    }
    await settled(1)
    fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
    await settled(2)
    expect(fs.readFileSync(path.join(root, 'docs/snippet.md'), 'utf8')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
    editFile(root, 'docs/tasks.md', '# Tasks', '# Tasks, edited')
    await settled(3)
    const bundles = fs.readdirSync(path.join(root, 'dist/assets')).filter((name) => name.endsWith('.js'))
    expect(bundles.map((name) => fs.readFileSync(path.join(root, 'dist/assets', name), 'utf8')).join('\n')).toContain('# Tasks, edited')
  })
})

/** After insitu: `docs/demo.md` becomes JS importing the very file its region includes (as a page compiled to a component that imports one). */
const importsIncludedFile = {
  name: 'test:imports-included-file',
  transform(code: string, id: string) {
    if (id.endsWith('/docs/demo.md')) return `import '../snippets/demo.js'\nexport default ${JSON.stringify(code)}`
    return null
  },
}

// One Vite major is enough: the decision is LiveSync's (src/sync/live-sync.ts), not Vite's.
describe('vite: one update per save of an included file', () => {
  for (const write of [false, true]) {
    test(`dev server${write ? ', write mode' : ''}: the same save reported twice, before the page fetches again, sends one update`, async () => {
      const vite = (await import('vite')) as ViteModule
      const root = copyProject()
      const dev = await startDev(vite, root, { write })
      await dev.transform('/main.js')
      expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
      await expect.poll(() => dev.watched('snippets/x.txt'), WAIT).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 500)) // the start-up write's echo and re-check
      const snippetUpdates = () => dev.payloads.filter((p) => (p.updates ?? []).some((u) => u.acceptedPath === '/docs/snippet.md?raw')).length
      dev.payloads.length = 0
      fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line three\n')
      await expect.poll(snippetUpdates, WAIT).toBe(1)
      // A watcher's repeat of the same save (the dropped-change guard re-reports a file whose
      // stamp moved under a truncate-then-write) arrives before the browser fetched the module.
      dev.server.watcher.emit('change', path.join(root, 'snippets/x.txt'))
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(snippetUpdates()).toBe(1)
      expect(dev.payloads.filter((p) => p.type === 'full-reload')).toEqual([])
      expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three']))
      // The next real save still updates, and a repeat of it after the fetch sends nothing either.
      fs.appendFileSync(path.join(root, 'snippets/x.txt'), 'included line four\n')
      await expect.poll(snippetUpdates, WAIT).toBe(2)
      expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three', 'included line four']))
      dev.server.watcher.emit('change', path.join(root, 'snippets/x.txt'))
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(snippetUpdates()).toBe(2)
      // An edit that leaves the region as it was (trailing blank lines are trimmed): early cutoff, no update.
      fs.appendFileSync(path.join(root, 'snippets/x.txt'), '\n\n\n')
      await new Promise((resolve) => setTimeout(resolve, 800))
      expect(snippetUpdates()).toBe(2)
      expect(await dev.load('/docs/snippet.md?raw')).toBe(SNIPPET_DOC([...INITIAL_SNIPPET, 'included line three', 'included line four']))
    })
  }
})

describe('vite: a file both included and imported', () => {
  test('dev server: an edit that leaves the region as it was still updates the imported module', async () => {
    const vite = (await import('vite')) as ViteModule
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'snippets/demo.js'), 'export const demo = 1\n')
    fs.writeFileSync(path.join(root, 'docs/demo.md'), '# Demo\n\n<!-- insitu:begin include\npath = "../snippets/demo.js"\nraw = true\n-->\n<!-- insitu:end -->\n')
    const server = (await vite.createServer({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu(), importsIncludedFile],
      server: { port: 0, watch: { usePolling: true, interval: 50 } },
    })) as AnyServer
    closers.push(() => server.close())
    const payloads: AnyPayload[] = []
    const hot = server.environments!.client.hot
    const send = hot.send.bind(hot)
    hot.send = (payload: AnyPayload) => {
      payloads.push(payload)
      send(payload)
    }
    const transform = (url: string) => server.environments!.client.transformRequest(url)
    expect((await transform('/docs/demo.md'))?.code).toContain('export const demo = 1')
    expect((await transform('/snippets/demo.js'))?.code).toContain('export const demo = 1')
    await expect.poll(() => server.watcher.getWatched()[path.join(root, 'snippets')]?.includes('demo.js'), WAIT).toBe(true)
    // Trailing blank lines: the region is unchanged (insitu sends nothing), the module is not.
    fs.appendFileSync(path.join(root, 'snippets/demo.js'), '\n\n')
    await expect.poll(() => payloads.length, WAIT).toBeGreaterThan(0)
    expect(payloads.some((p) => p.type === 'full-reload' || (p.updates ?? []).length > 0)).toBe(true)
  })
})
