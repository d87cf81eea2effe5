/**
 * The real `vite` command on a copy of test/fixtures/plugin-project (plus an extension that
 * ignores stdin EOF), stopped by a signal: after SIGTERM (Vite closes the server, the plugin
 * shuts its extensions down) and after SIGINT or SIGHUP (nobody else handles them: the
 * plugin ends its extensions before the signal takes the process), no extension is left.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, test } from 'vitest'
import { copyProject, isAlive, removeProjects } from './plugin-project.js'

const SRC = fileURLToPath(new URL('../../src/index.ts', import.meta.url))
/** An extension that does not exit when its stdin closes: only the host can end it. */
const STUBBORN = fileURLToPath(new URL('../fixtures/python/stubborn/', import.meta.url))
const VITE = fileURLToPath(new URL('../../node_modules/vite/bin/vite.js', import.meta.url))
const ROLLUP = fileURLToPath(new URL('../../node_modules/rollup/dist/bin/rollup', import.meta.url))
/** tsx's loader, by URL: the config imports the plugin's TypeScript sources. */
const TSX = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href
const WAIT = { timeout: 20_000, interval: 100 }

let vite: ChildProcess | undefined
/** Extension PIDs seen in the current test: killed afterwards if a failing test left them. */
let seen: number[] = []

afterEach(() => {
  if (vite && vite.exitCode === null && vite.signalCode === null) vite.kill('SIGKILL')
  for (const pid of seen) if (isAlive(pid)) process.kill(pid, 'SIGKILL')
  vite = undefined
  seen = []
  removeProjects()
})

/** PIDs of the extension processes among the direct children of `pid` (not tsx's esbuild). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('extension.py'))
      .map((line) => Number(line.trim().split(/\s+/)[0]))
      .filter((n) => n > 0)
  } catch {
    return [] // ps exits 1 when there is no child
  }
}

async function startVite(): Promise<{ process: ChildProcess; extensions: number[] }> {
  const root = copyProject({ git: true })
  fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(STUBBORN)}\n`)
  fs.writeFileSync(
    path.join(root, 'vite.config.ts'),
    `import insitu from ${JSON.stringify(SRC)}\nexport default { logLevel: 'info', plugins: [insitu()] }\n`,
  )
  const port = 20_000 + Math.floor(Math.random() * 20_000)
  const child = spawn(process.execPath, [VITE, '--port', String(port), '--strictPort'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  })
  vite = child
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await expect.poll(() => output, { ...WAIT, message: 'vite is ready' }).toContain('ready in')
  // The plugin starts its extension in the background at buildStart: wait until it runs.
  await expect.poll(() => childrenOf(child.pid!).length, { ...WAIT, message: 'both extensions run' }).toBe(2)
  seen = childrenOf(child.pid!)
  return { process: child, extensions: seen }
}

/** `rollup -c -w` (its CLI handles signals with signal-exit, as the plugin does). */
async function startRollupWatch(): Promise<{ process: ChildProcess; extensions: number[] }> {
  const root = copyProject({ git: true })
  fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(STUBBORN)}\n`)
  fs.writeFileSync(
    path.join(root, 'rollup.config.mjs'),
    [
      `import insitu from ${JSON.stringify(SRC)}`,
      'import fs from "node:fs"',
      'import path from "node:path"',
      'const raw = { name: "raw", resolveId(id, importer) { return id.endsWith("?raw") ? path.resolve(path.dirname(importer), id) : null },',
      '  load(id) { return null }, transform(code, id) { return id.endsWith("?raw") ? code : null } }',
      'export default { input: "main.js", output: { dir: "out", format: "es" }, plugins: [insitu(), raw] }',
      '',
    ].join('\n'),
  )
  const child = spawn(process.execPath, ['--import', TSX, ROLLUP, '-c', '-w'], {
    cwd: root,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, CI: 'true' },
  })
  vite = child
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  await expect.poll(() => output, { ...WAIT, message: 'rollup is watching' }).toMatch(/waiting for changes/i)
  await expect.poll(() => childrenOf(child.pid!).length, { ...WAIT, message: 'both extensions run' }).toBe(2)
  seen = childrenOf(child.pid!)
  return { process: child, extensions: seen }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once('exit', () => resolve()))
}

describe('vite dev server stopped by a signal', () => {
  test.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s leaves no extension process behind', async (signal) => {
    const { process: child, extensions } = await startVite()
    expect(extensions).toHaveLength(2)
    for (const pid of extensions) expect(isAlive(pid)).toBe(true)
    child.kill(signal)
    await exited(child)
    for (const pid of extensions) {
      await expect.poll(() => isAlive(pid), { ...WAIT, message: `extension ${pid} is gone` }).toBe(false)
    }
  })
})

describe('rollup -c -w stopped by a signal', () => {
  test.each(['SIGINT', 'SIGTERM'] as const)('%s ends rollup and leaves no extension process behind', async (signal) => {
    const { process: child, extensions } = await startRollupWatch()
    expect(extensions).toHaveLength(2)
    child.kill(signal)
    await expect.poll(() => child.exitCode !== null || child.signalCode !== null, { ...WAIT, message: 'rollup exits' }).toBe(true)
    for (const pid of extensions) {
      await expect.poll(() => isAlive(pid), { ...WAIT, message: `extension ${pid} is gone` }).toBe(false)
    }
  })
})
