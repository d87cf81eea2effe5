/**
 * "Why did this re-run?" in a real Vite dev server (listening, polling watcher) on a fresh copy
 * of test/fixtures/plugin-project with its real Python extension (`plugin/notes`) and real git:
 * `/__insitu/data.json` and `/__insitu/` after first requests, a cached request, an edit and a
 * git commit; the terminal's update lines; the client script tag and module. The data.json
 * after an edit, the tag and the client are checked on every supported Vite major too.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createServer, type Logger, type ViteDevServer } from 'vite'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import insitu from '../../src/index.js'
import type { InspectorData } from '../../src/plugin/inspector-page.js'
import { describeReason } from '../../src/engine/run-records.js'
import { copyProject, expectProcessesGone, git, removeProjects } from './plugin-project.js'
import { liveExtensionPids } from '../../src/host/process.js'

let root: string
let server: ViteDevServer | undefined
/** Info messages Vite's logger received, and whether each asked for a timestamp (as Vite's own hmr lines do). */
let infos: { message: string; timestamp: boolean }[] = []
const seenPids = new Set<number>()
const WAIT = { timeout: 10_000 }

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g

const captureLogger: Logger = {
  info: (message, options) => void infos.push({ message: message.replace(ANSI, ''), timestamp: options?.timestamp === true }),
  warn: () => {},
  warnOnce: () => {},
  error: () => {},
  clearScreen: () => {},
  hasErrorLogged: () => false,
  hasWarned: false,
}

async function startServer(): Promise<ViteDevServer> {
  const dev = await createServer({
    root,
    configFile: false,
    customLogger: captureLogger,
    plugins: [insitu()],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  server = dev
  await dev.listen()
  return dev
}

function origin(): string {
  const address = server?.httpServer?.address()
  if (!address || typeof address === 'string') throw new Error('the server is not listening')
  return `http://localhost:${address.port}`
}

async function data(): Promise<InspectorData> {
  const response = await fetch(`${origin()}/__insitu/data.json`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
  return (await response.json()) as InspectorData
}

function ownerOf(found: InspectorData, owner: string) {
  const record = found.owners.find((o) => o.owner === owner)
  if (!record) throw new Error(`no record of ${owner} in ${found.owners.map((o) => o.owner).join(', ')}`)
  return record
}

/** Why the owner's last run ran, in words (a request served from the cache since does not change it). */
function lastRunReason(found: InspectorData, owner: string): string {
  return describeReason(ownerOf(found, owner).lastRun.reason)
}

async function reasonOf(owner: string): Promise<string> {
  return ownerOf(await data(), owner).reasonText
}

/** The plugin's update lines logged so far (each with a timestamp). */
function updateLines(): string[] {
  const lines = infos.filter((i) => i.message.startsWith('insitu: docs/'))
  for (const line of lines) expect(line.timestamp, line.message).toBe(true)
  return lines.map((i) => i.message)
}

async function request(url: string): Promise<void> {
  await server!.environments.client.transformRequest(url)
}

async function watchedByVite(rel: string): Promise<void> {
  const watched = () => server?.watcher.getWatched()[path.join(root, path.dirname(rel))]?.includes(path.basename(rel)) === true
  await expect.poll(watched, { ...WAIT, message: `Vite watches ${rel}` }).toBe(true)
}

beforeEach(() => {
  root = copyProject({ git: true })
  infos = []
  seenPids.clear()
})

afterEach(async () => {
  try {
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    await server?.close()
    server = undefined
    await expectProcessesGone(seenPids)
  } finally {
    removeProjects()
  }
})

interface ViteModule {
  createServer(config: object): Promise<{
    listen(): Promise<unknown>
    close(): Promise<void>
    httpServer: ViteDevServer['httpServer']
    watcher: { getWatched(): Record<string, string[]> }
    transformRequest(url: string): Promise<unknown>
    transformIndexHtml(url: string, html: string): Promise<string>
  }>
}

const MAJORS: [string, () => Promise<ViteModule>][] = [
  ['vite5', () => import('vite5') as Promise<ViteModule>],
  ['vite6', () => import('vite6') as Promise<ViteModule>],
  ['vite7', () => import('vite7') as Promise<ViteModule>],
  ['vite', () => import('vite') as Promise<ViteModule>],
]

describe.each(MAJORS)('%s', (_name, importVite) => {
  test('data.json names the event after an edit; HTML gets the client, which imports Vite’s client', async () => {
    const vite = await importVite()
    const dev = await vite.createServer({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu()],
      server: { port: 0, watch: { usePolling: true, interval: 50 } },
    })
    server = dev as unknown as ViteDevServer
    await dev.listen()
    await dev.transformRequest('/docs/notes.md?raw')
    expect(await reasonOf('docs/notes.md?raw')).toBe('first request')
    await expect.poll(() => dev.watcher.getWatched()[path.join(root, 'notes')]?.includes('one.md'), WAIT).toBe(true)
    for (const pid of liveExtensionPids()) seenPids.add(pid)
    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    // The dev server re-renders it at once (early cutoff: its text changed, so it updates).
    await expect.poll(async () => lastRunReason(await data(), 'docs/notes.md?raw'), WAIT).toBe('notes/three.md created')
    await dev.transformRequest('/docs/notes.md?raw')
    expect(await reasonOf('docs/notes.md?raw')).toBe('notes/three.md created')

    const html = await dev.transformIndexHtml('/index.html', fs.readFileSync(path.join(root, 'index.html'), 'utf8'))
    expect(html).toContain('<script type="module" src="/__insitu/client.js"></script>')
    const code = await (await fetch(`${origin()}/__insitu/client.js`)).text()
    expect(code).toContain('import { createHotContext } from "/@vite/client"')
    const viteClient = await (await fetch(`${origin()}/@vite/client`)).text()
    expect(viteClient).toMatch(/export \{[^}]*\bcreateHotContext\b/)
  })
})

describe('/__insitu/', () => {
  test('data.json lists each requested module with its jobs, provider, dependencies and reason', async () => {
    await startServer()
    await request('/docs/notes.md?raw')
    const found = await data()
    expect(found.root).toBe(root)
    expect(found.owners.map((o) => o.owner)).toEqual(['docs/notes.md?raw'])
    const notes = ownerOf(found, 'docs/notes.md?raw')
    expect(notes).toMatchObject({
      file: 'docs/notes.md',
      type: 'document',
      reason: { kind: 'first' },
      reasonText: 'first request',
      runs: 1,
      cachedRequests: 0,
      pending: null,
      pendingText: null,
    })
    expect(notes.lastRun.jobs).toEqual([
      {
        id: 'count',
        kind: 'count_notes',
        line: 3,
        target: 'region',
        provider: 'plugin/notes',
        reused: false,
        error: null,
        // What this job read (here the document's only job: every dependency of the run).
        dependencies: notes.lastRun.dependencies,
      },
    ])
    expect(notes.lastRun.dependencies).toContain('fs:glob:notes/*.md')
    expect(notes.lastRun.diagnostics).toEqual([])
    expect(notes.lastRun.error).toBeNull()
    // Managed documents nobody requested yet are listed by path.
    expect(found.notRequested).toEqual(['docs/broken.md', 'docs/git.md', 'docs/snippet.md', 'docs/tasks.md', 'notes/one.md', 'notes/two.md', 'tasks/alpha.md', 'tasks/beta.md'])

    // Another environment asks for the same module id: served from the engine's cache.
    await server!.environments.ssr.transformRequest('/docs/notes.md?raw')
    expect(ownerOf(await data(), 'docs/notes.md?raw')).toMatchObject({ reasonText: 'cached', runs: 1, cachedRequests: 1 })
  })

  test('after an edit, data.json names the file event that re-ran each module, and the terminal logs one line per update', async () => {
    await startServer()
    await request('/docs/notes.md?raw')
    await request('/docs/tasks.md?raw')
    await watchedByVite('notes/one.md')
    for (const pid of liveExtensionPids()) seenPids.add(pid)

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    // affected() selects both (the glob covers the new note; the SQL region reads the documents
    // view), and the dev server re-renders both at once to see whether their text changed.
    await expect.poll(async () => lastRunReason(await data(), 'docs/notes.md?raw'), WAIT).toBe('notes/three.md created')
    await expect.poll(async () => lastRunReason(await data(), 'docs/tasks.md?raw'), WAIT).toBe('notes/three.md created')

    await request('/docs/notes.md?raw')
    await request('/docs/tasks.md?raw')
    const found = await data()
    expect(ownerOf(found, 'docs/notes.md?raw')).toMatchObject({
      reason: { kind: 'selected', causes: [{ type: 'create', path: 'notes/three.md' }], more: 0 },
      reasonText: 'notes/three.md created',
      runs: 2,
      pending: null,
    })
    expect(ownerOf(found, 'docs/tasks.md?raw')).toMatchObject({ reasonText: 'notes/three.md created', runs: 2 })
    // The notes count changed; the task list did not (its model reads tasks only): no update line for it.
    expect(updateLines()).toEqual(['insitu: docs/notes.md (count) ← notes/three.md created'])
  })

  test('a git commit is the reason of the modules that read git', async () => {
    await startServer()
    await request('/docs/git.md?raw')
    expect(await reasonOf('docs/git.md?raw')).toBe('first request')
    fs.writeFileSync(path.join(root, 'committed.txt'), 'x\n')
    git(root, 'add', 'committed.txt')
    git(root, 'commit', '-q', '-m', 'second')
    await expect.poll(async () => lastRunReason(await data(), 'docs/git.md?raw'), WAIT).toBe('git changed')
    await request('/docs/git.md?raw')
    expect(await reasonOf('docs/git.md?raw')).toBe('git changed')
    expect(updateLines()).toEqual(['insitu: docs/git.md (head) ← git changed'])
  })

  test('the page is escaped HTML without scripts; other paths below /__insitu/ are 404', async () => {
    await startServer()
    fs.writeFileSync(path.join(root, 'docs/<img src=x onerror=alert(1)>.md'), '# Stray\n\n<!-- insitu:end -->\n')
    await request('/docs/<img src=x onerror=alert(1)>.md?raw')
    const response = await fetch(`${origin()}/__insitu/`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'")
    const html = await response.text()
    expect(html).toContain('<tr data-owner="docs/&lt;img src=x onerror=alert(1)&gt;.md?raw">')
    expect(html).toContain('warning docs/&lt;img src=x onerror=alert(1)&gt;.md:3 stray insitu:end without a matching begin')
    expect(html).not.toContain('<img src=x onerror=alert(1)>')
    expect(html).not.toContain('<script')

    const missing = await fetch(`${origin()}/__insitu/secret`)
    expect(missing.status).toBe(404)
    expect(await missing.text()).toBe('not found: /__insitu/secret\n')
  })

  test('served HTML loads the browser client, which takes its channel from Vite’s client', async () => {
    const dev = await startServer()
    const html = await dev.transformIndexHtml('/index.html', fs.readFileSync(path.join(root, 'index.html'), 'utf8'))
    expect(html).toContain('<script type="module" src="/__insitu/client.js"></script>')
    const response = await fetch(`${origin()}/__insitu/client.js`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    const code = await response.text()
    expect(code).toContain('import { createHotContext } from "/@vite/client"')
    expect(code).toContain('hot.on("insitu:diagnostics"')
  })
})

