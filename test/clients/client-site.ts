/**
 * Real client sites for the client tests: a temporary copy of a fixture site, its real CLI
 * (dev server or build) as a child process, and real Chromium.
 *
 * Contract: `copySite(fixture)` copies test/clients/<fixture> (its sources, not its build
 * output) to a fresh folder under the OS temp folder and symlinks the fixture's installed
 * `node_modules` into it (the global setup installed it), so edits never touch the fixture.
 * `startDev` spawns the CLI in its own process group on a free port and resolves once the
 * server answers; `stopDev` ends that group and fails if any process of it survives.
 * `runBuild` runs a CLI to completion and throws its output when it fails. `removeSites()`
 * deletes every copy. Chromium is the house headless one (test/e2e/chromium.ts). `tableRowsOf(html)`
 * reads the cells of the first table of an HTML text (header row excluded).
 * `useDevSession(options)`, called in a `describe`, declares its hooks: before all, a copy of
 * the fixture, its dev server and a Chromium page (then `ready`); after all, the browser
 * closed, the server's processes ended and the copies deleted. A failed test prints the dev
 * server's output (not one declared to fail, `it.fails`).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach } from 'vitest'
import { launchChromium } from '../e2e/chromium.js'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const NOT_COPIED = new Set(['node_modules', 'dist', 'cache', '.astro', '.insitu'])
const START_TIMEOUT = 60_000
const copies: string[] = []

/** Environment of every client CLI: no telemetry, no update checks, colourless output. */
const CLIENT_ENV = { ASTRO_TELEMETRY_DISABLED: '1', NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' }

/**
 * The test runner's own variables, which a user's CLI never sees: with NODE_ENV=test Astro
 * turns HMR off (so Vite runs no hot update at all), and VITEST changes how it compiles.
 */
const RUNNER_VARIABLES = /^(NODE_ENV|TEST|VITEST(_.*)?)$/

/** The environment of a client CLI: this process's, without the runner's variables, plus `extra`. */
function clientEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !RUNNER_VARIABLES.test(name))
  return { ...Object.fromEntries(inherited), ...CLIENT_ENV, ...extra }
}

export interface DevServer {
  child: ChildProcess
  url: string
  output: () => string
}

export function copySite(fixture: string): string {
  const source = path.join(HERE, fixture)
  const copy = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `insitu-client-${fixture}-`)))
  copies.push(copy)
  fs.cpSync(source, copy, { recursive: true, filter: (file) => !NOT_COPIED.has(path.basename(file)) })
  fs.symlinkSync(path.join(source, 'node_modules'), path.join(copy, 'node_modules'), 'dir')
  return copy
}

export function removeSites(): void {
  for (const copy of copies.splice(0)) fs.rmSync(copy, { recursive: true, force: true })
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** Spawns `node <bin> ...args` in `cwd` (its own process group) and waits until `url` answers. */
export async function startDev(
  cwd: string,
  bin: string,
  args: string[],
  url: string,
  env: Record<string, string> = {},
): Promise<DevServer> {
  let output = ''
  const child = spawn(process.execPath, [path.join(cwd, 'node_modules', bin), ...args], {
    cwd,
    detached: true,
    env: clientEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const deadline = Date.now() + START_TIMEOUT
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode}:\n${output}`)
    try {
      const response = await fetch(url)
      if (response.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${bin} did not answer at ${url}:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return { child, url, output: () => output }
}

/** Process ids whose process group is `group` (read from /proc). */
export function processGroupMembers(group: number): number[] {
  const found: number[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === group && fields[0] !== 'Z') found.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return found
}

/** Ends the dev server's whole process group (SIGTERM, then SIGKILL) and checks none survives. */
export async function stopDev(server: DevServer | undefined): Promise<void> {
  const group = server?.child.pid
  if (group === undefined) return
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-group, name)
    } catch {
      // the group is gone
    }
  }
  signal('SIGTERM')
  const deadline = Date.now() + 10_000
  while (processGroupMembers(group).length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  signal('SIGKILL')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const survivors = processGroupMembers(group)
  if (survivors.length > 0) throw new Error(`processes of the dev server survived: ${survivors.join(', ')}`)
}

/** Runs `node <bin> ...args` in `cwd` to completion; throws its output when it fails. */
export async function runBuild(
  cwd: string,
  bin: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(cwd, 'node_modules', bin), ...args],
      { cwd, env: clientEnv(env), maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${bin} ${args.join(' ')} failed:\n${stdout}${stderr}`))
        else resolve(stdout + stderr)
      },
    )
  })
}

export function tableRowsOf(html: string): string[][] {
  const table = /<table[\s\S]*?<\/table>/.exec(html)?.[0] ?? ''
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? ''
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => (cell[1] ?? '').trim()),
  )
}

/** A fixture site's dev server seen by Chromium; the fields are set once the before-all hook ran. */
export interface DevSession {
  site: string
  server: DevServer
  page: Page
}

export interface DevSessionOptions {
  fixture: string
  /** The CLI, relative to the site's node_modules (`astro/astro.js`). */
  bin: string
  /** The CLI's arguments, given the free port it must listen on. */
  args: (port: number) => string[]
  /** Added to the CLI's environment (`{ INSITU_WRITE: '1' }`). */
  env?: Record<string, string>
  /** Timeout of each of the two hooks. */
  timeout: number
  /** What to wait for once the page is open (the first page shown). */
  ready?: (session: DevSession) => Promise<void>
}

export function useDevSession(options: DevSessionOptions): DevSession {
  const session = {} as DevSession
  let browser: Browser | undefined
  beforeAll(async () => {
    session.site = copySite(options.fixture)
    const port = await freePort()
    session.server = await startDev(session.site, options.bin, options.args(port), `http://localhost:${port}/`, options.env)
    browser = await launchChromium()
    session.page = await browser.newPage()
    await options.ready?.(session)
  }, options.timeout)
  // A failed test shows what the dev server printed (its errors, its reloads); not one that is
  // expected to fail (`it.fails`: a known bug), whose failure is the news of every run.
  beforeEach(({ onTestFailed, task }) => {
    if (task.fails) return
    onTestFailed(() => console.error(`${options.fixture} dev server output:\n${session.server?.output() ?? '(not started)'}`))
  })
  afterAll(async () => {
    await browser?.close()
    await stopDev(session.server)
    removeSites()
  }, options.timeout)
  return session
}
