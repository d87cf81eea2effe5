/**
 * A build that does not watch runs the plugin's runtime in a process of its own
 * (src/plugin/build-process.ts forks src/build-child.ts): how that process ends — with its
 * build, with a crash of its own, with the build's process killed — and that nothing is left
 * behind; in write and check mode it ends once `buildStart` has made the documents current, and
 * a server without a watcher nor HMR (Astro's content sync) uses it too. In the first tests the
 * project's extension `acme/gated` holds the engine's start (and so the build) until the test
 * creates `<root>/.go`.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, createServer, type Plugin, type ViteDevServer } from 'vite'
import { afterEach, describe, expect, test } from 'vitest'
import insitu, { type InsituOptions } from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { loadRaw } from './dev-server-harness.js'
import { addExtension, buildProcessTrees, copyProject, isAlive, readFile, removeProjects, TASKS_DOC } from './plugin-project.js'

const SRC = fileURLToPath(new URL('../../src/index.ts', import.meta.url))
const VITE = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url))
/** tsx's loader, by URL: the config imports the plugin's TypeScript sources. */
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href
const WAIT = { timeout: 20_000, interval: 50 }

let builds: ChildProcess[] = []
let servers: ViteDevServer[] = []
/** Every pid a test saw: killed afterwards if a failing test left one. */
let seen: number[] = []

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const child of builds) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const pid of seen) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  builds = []
  seen = []
  removeProjects()
})

/** A copy of the plugin project whose engine cannot start until `<root>/.go` exists. */
function gatedProject(): string {
  const root = copyProject()
  addExtension(root, 'gated')
  return root
}

/** The one build process of `parent` and its children, once the gated extension waits in it. */
async function waitingBuildProcess(root: string, parent = process.pid): Promise<{ pid: number; children: number[] }> {
  await expect.poll(() => fs.existsSync(path.join(root, '.starting')), { ...WAIT, message: 'the gated extension starts' }).toBe(true)
  const trees = buildProcessTrees(parent)
  expect(trees).toHaveLength(1)
  const [tree] = trees as [{ pid: number; children: number[] }]
  expect(tree.children.length).toBeGreaterThanOrEqual(2) // the two extensions (the project's and acme/gated)
  seen.push(tree.pid, ...tree.children)
  return tree
}

describe('a build process', () => {
  test('ends once every module of its build is loaded, after its extensions (the build waits for its exit)', async () => {
    const root = gatedProject()
    const outDir = path.join(root, 'dist')
    const built = build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir } })
    const tree = await waitingBuildProcess(root)
    fs.writeFileSync(path.join(root, '.go'), '')
    await built
    expect(isAlive(tree.pid)).toBe(false)
    expect(buildProcessTrees()).toEqual([])
    // Its extensions were told to stop before it exited (each may take a moment to be reaped).
    for (const pid of tree.children) await expect.poll(() => isAlive(pid), { ...WAIT, message: `process ${pid} is gone` }).toBe(false)
    // The regenerated table (the SQL region's rows) is in the output.
    const [script] = fs.readdirSync(path.join(outDir, 'assets')).filter((file) => file.endsWith('.js'))
    expect(fs.readFileSync(path.join(outDir, 'assets', script!), 'utf8')).toContain('- [Beta](../tasks/beta.md) \u2014 done')
  })

  test('that dies fails its build, saying so, and the build ends', async () => {
    const root = gatedProject()
    const failed = build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir: path.join(root, 'dist') } }).then(
      () => null,
      (error: unknown) => error as Error,
    )
    const tree = await waitingBuildProcess(root)
    process.kill(tree.pid, 'SIGKILL')
    const failure = await failed
    expect(failure?.message).toContain('vite-plugin-insitu: its build process ended (SIGKILL) before the build was done')
    // Its extensions lost their host with it: each ends when its stdin closes (acme/gated once it may answer).
    fs.writeFileSync(path.join(root, '.go'), '')
    for (const pid of tree.children) await expect.poll(() => isAlive(pid), { ...WAIT, message: `process ${pid} is gone` }).toBe(false)
    expect(fs.existsSync(path.join(root, 'dist'))).toBe(false)
    expect(readFile(root, 'docs/tasks.md')).toBe(fs.readFileSync(fileURLToPath(new URL('../fixtures/plugin-project/docs/tasks.md', import.meta.url)), 'utf8'))
  })
})

describe('while the bundle is made', () => {
  test.each<{ mode: string; options: InsituOptions; processes: number }>([
    { mode: 'plain', options: {}, processes: 1 },
    { mode: 'write', options: { write: true }, processes: 0 },
    { mode: 'check, after a sync', options: { check: true }, processes: 0 },
    { mode: 'plain, buildProcess: false', options: { buildProcess: false }, processes: 0 },
  ])('$mode mode: $processes build process (write and check end it once buildStart has made every document current)', async ({ mode, options, processes }) => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md')) // its region fails: a sync of every document would fail the build
    if (mode === 'check, after a sync') await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ write: true })], build: { outDir: path.join(root, 'first') } })
    const outDir = path.join(root, 'dist')
    let during: unknown[] | undefined
    let extensionsDuring: number[] = []
    const probe: Plugin = {
      name: 'probe',
      transform(_code, id) {
        if (id.endsWith('/main.js')) during = buildProcessTrees()
        if (id.includes('/docs/notes.md')) extensionsDuring = liveExtensionPids() // rendered by the extension by now
      },
    }
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu(options), probe], build: { outDir } })
    expect(during).toHaveLength(processes)
    expect(buildProcessTrees()).toEqual([])
    // The engine in this process instead (its extension a child of this one until the build's end).
    if (options.buildProcess === false) expect(extensionsDuring).not.toEqual([])
    else expect(extensionsDuring).toEqual([])
    // The bundle holds the current documents either way: served by the engine, or read from disk.
    const [script] = fs.readdirSync(path.join(outDir, 'assets')).filter((file) => file.endsWith('.js'))
    expect(fs.readFileSync(path.join(outDir, 'assets', script!), 'utf8')).toContain('- [Beta](../tasks/beta.md) \u2014 done')
    if (options.write === true || options.check === true) expect(readFile(root, 'docs/tasks.md')).toBe(TASKS_DOC('open', 'done'))
  })
})

describe('a server without a watcher nor hot updates (Astro\'s content sync)', () => {
  const serverOptions = { middlewareMode: true, hmr: false, watch: null, ws: false } as const

  test.each([
    ['watch: null', null],
    ["watch: { ignored: ['**'] } (Astro's)", { ignored: ['**'] }],
  ])('write mode, %s: the documents are written at its start, by a build process gone once it has', async (_name, watch) => {
    const root = copyProject()
    fs.rmSync(path.join(root, 'docs/broken.md')) // its region fails: the start's sync would fail the server
    servers.push(await createServer({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ write: true })], server: { ...serverOptions, watch } }))
    await expect.poll(() => readFile(root, 'docs/tasks.md'), WAIT).toBe(TASKS_DOC('open', 'done'))
    await expect.poll(() => buildProcessTrees(), WAIT).toEqual([])
    // No engine in this process either (a dev server's would keep the project's extension running here).
    expect(liveExtensionPids()).toEqual([])
  })

  test('otherwise its build process serves the documents regenerated, and ends when the server closes', async () => {
    const root = copyProject()
    const server = await createServer({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], server: serverOptions })
    servers.push(server)
    expect(await loadRaw(server.environments.client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    const [tree, ...others] = buildProcessTrees()
    expect(others).toEqual([])
    seen.push(tree!.pid, ...tree!.children)
    await server.close()
    expect(buildProcessTrees()).toEqual([])
    expect(isAlive(tree!.pid)).toBe(false)
    for (const pid of tree!.children) await expect.poll(() => isAlive(pid), { ...WAIT, message: `process ${pid} is gone` }).toBe(false)
  })
})

describe('vite build killed while its build process works', () => {
  test.each(['SIGKILL', 'SIGINT', 'SIGTERM'] as const)('%s: the build process stops its extensions and exits', async (signal) => {
    const root = gatedProject()
    fs.writeFileSync(path.join(root, 'vite.config.ts'), `import insitu from ${JSON.stringify(SRC)}\nexport default { logLevel: 'info', plugins: [insitu()] }\n`)
    const vite = spawn(process.execPath, ['--import', TSX, VITE, 'build'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } })
    builds.push(vite)
    let output = ''
    vite.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    vite.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const tree = await waitingBuildProcess(root, vite.pid!)
    vite.kill(signal)
    await expect.poll(() => vite.exitCode !== null || vite.signalCode !== null, { ...WAIT, message: `vite exits (${output})` }).toBe(true)
    // Nobody creates .go: acme/gated would wait 20 s more; the build process ends it.
    for (const pid of [tree.pid, ...tree.children]) {
      await expect.poll(() => isAlive(pid), { ...WAIT, timeout: 10_000, message: `process ${pid} is gone` }).toBe(false)
    }
  })
})
