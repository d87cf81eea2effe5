/**
 * An editor saving prose edits of a document while its dependency changes, against a real host
 * in write mode (issue #14.1): a Vite dev server, or the command line's `watch`. Shared by the
 * suite's bounded stress tests (write-race.test.ts, cli-watch.test.ts) and the soak in
 * bench/write-race.ts.
 *
 * Contract: `runWriteRace({ cycles, style, host, maxOffsetMs, settleTimeoutMs, idleMs })` makes a
 * project in a temporary folder (README.md with prose and an `include` region of part.txt), starts
 * the host, and per cycle: writes a new part.txt, and 0..maxOffsetMs later a separate editor
 * process (fixtures/node/racing-editor.mjs) saves README.md with new prose over the text it last
 * saw, in place (`fs.writeFile`) or as a temporary file renamed over it. A cycle is settled when
 * README.md holds the editor's prose and the region shows the current part.txt; if that does
 * not happen within settleTimeoutMs, the cycle counts as a LOST save (the prose is not the
 * editor's) or a STALE region (the prose is, the region is not). After the last cycle the host
 * idles for idleMs and every change of README.md then counts as an IDLE write. The temporary
 * folder is removed and the host stopped whatever happens.
 * Hosts (`host`, default 'dev-server'):
 * - 'dev-server': `createServer` with `insitu({ write: true })` and Vite's default watcher (fs
 *   events, as users run it); idle writes are the changes of README.md its watcher reports.
 * - 'watch': the built command line (`node dist/cli/bin.js watch --root <project>`, or
 *   `watchCommand`), ready once it prints `watching <root>`, stopped with SIGINT (it must print
 *   `stopped` and exit 0); idle writes are the changes of README.md a chokidar watcher of the
 *   harness (fs events) reports.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { watch as watchFiles } from 'chokidar'
import { createServer } from 'vite'
import insitu from '../../src/index.js'

const EDITOR = path.resolve(import.meta.dirname, '../fixtures/node/racing-editor.mjs')
/** The built command line (`npm run build`). */
export const BUILT_BIN = path.resolve(import.meta.dirname, '../../dist/cli/bin.js')

export type WriteRaceHost = 'dev-server' | 'watch'

export interface WriteRaceOptions {
  cycles: number
  style: 'in-place' | 'rename'
  /** @default 'dev-server' */
  host?: WriteRaceHost
  /** The `watch` host's command before its arguments. @default [node, BUILT_BIN] */
  watchCommand?: readonly string[]
  /** The editor saves 0..maxOffsetMs after the dependency changed. @default 30 */
  maxOffsetMs?: number
  /** @default 5000 */
  settleTimeoutMs?: number
  /** @default 2000 */
  idleMs?: number
}

export interface WriteRaceReport {
  cycles: number
  lostSaves: number
  staleRegions: number
  idleWrites: number
  /**
   * The first few unsettled cycles, for the failure message: the text at the timeout, and for the
   * first stale region, how long after the timeout the host still settled it by itself (null: not
   * within LATE_SETTLE_MS more, stale for good), which tells a slow cycle from a missed change.
   */
  failures: { cycle: number; text: string; settledLateByMs?: number | null }[]
  /** Median milliseconds from the dependency change to a settled document. */
  medianSettleMs: number
}

const PROSE_LINE = 2

/** How long a cycle that missed the settle timeout is still watched (for `settledLateByMs`). */
const LATE_SETTLE_MS = 20_000

function documentText(prose: string, body: string): string {
  return `# Race\n\n${prose}\n\n<!-- insitu:begin include\npath = "part.txt"\nraw = true\n-->\n${body}<!-- insitu:end -->\n`
}

/** The region body the include transform writes for part.txt's text (SPEC §7: "\n\n" + content + "\n\n"). */
function regionBody(part: string): string {
  return `\n${part}\n\n`
}

export async function runWriteRace(options: WriteRaceOptions): Promise<WriteRaceReport> {
  const maxOffsetMs = options.maxOffsetMs ?? 30
  const settleTimeoutMs = options.settleTimeoutMs ?? 5000
  const idleMs = options.idleMs ?? 2000
  const root = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'insitu-write-race-'))
  const readme = path.join(root, 'README.md')
  const part = path.join(root, 'part.txt')
  fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
  fs.writeFileSync(part, 'part 0')
  fs.writeFileSync(readme, documentText('prose 0', '\n'))
  const editor: ChildProcessWithoutNullStreams = spawn(process.execPath, [EDITOR], { stdio: ['pipe', 'pipe', 'pipe'] })
  const replies = readline.createInterface({ input: editor.stdout })[Symbol.asyncIterator]()
  const host = options.host === 'watch' ? await startWatchHost(root, options.watchCommand) : await startDevServerHost(root)
  const report: WriteRaceReport = { cycles: 0, lostSaves: 0, staleRegions: 0, idleWrites: 0, failures: [], medianSettleMs: 0 }
  const settleTimes: number[] = []
  try {
    await host.started() // starts the plugin, which writes the region
    await until(() => fs.readFileSync(readme, 'utf8') === documentText('prose 0', regionBody('part 0')), settleTimeoutMs)
    await host.watcherReady()
    for (let cycle = 1; cycle <= options.cycles; cycle++) {
      const prose = `prose ${cycle} (${options.style})`
      const dependency = `part ${cycle}${'.'.repeat(cycle % 5)}`
      const seen = fs.readFileSync(readme, 'utf8').split('\n')
      seen[PROSE_LINE] = prose
      const started = performance.now()
      fs.writeFileSync(part, dependency)
      editor.stdin.write(`${JSON.stringify({ file: readme, text: seen.join('\n'), style: options.style, delayUs: Math.random() * maxOffsetMs * 1000 })}\n`)
      const reply = await replies.next()
      if (reply.done || reply.value !== 'saved') throw new Error(`the editor process failed: ${reply.value}`)
      const isSettled = () => {
        const lines = readText(readme).split('\n')
        return lines[PROSE_LINE] === prose && readText(readme).includes(`-->\n${regionBody(dependency)}<!-- insitu:end -->`)
      }
      const settled = await until(isSettled, settleTimeoutMs)
      report.cycles = cycle
      if (settled) {
        settleTimes.push(performance.now() - started)
        continue
      }
      const text = readText(readme)
      const lost = text.split('\n')[PROSE_LINE] !== prose
      if (lost) report.lostSaves++
      else report.staleRegions++
      if (report.failures.length < 5) {
        // A stale region may still be written late; a lost save never comes back. Only the first
        // stale failure is watched longer, so a bounded test's time budget holds.
        const watchLate = !lost && !report.failures.some((failure) => failure.settledLateByMs !== undefined)
        const lateStart = performance.now()
        const late = watchLate ? await until(isSettled, LATE_SETTLE_MS) : false
        report.failures.push({ cycle, text, settledLateByMs: watchLate ? (late ? Math.round(performance.now() - lateStart) : null) : undefined })
      }
      // Start the next cycle from a settled document: the plugin must write it once more.
      fs.writeFileSync(readme, documentText(prose, '\n'))
      await until(() => readText(readme) === documentText(prose, regionBody(dependency)), settleTimeoutMs)
    }
    let idleWrites = 0
    const count = (file: string) => {
      if (path.resolve(file) === readme) idleWrites++
    }
    await new Promise((resolve) => setTimeout(resolve, 500)) // the last cycle's late re-check
    host.watcher.on('change', count).on('add', count)
    await new Promise((resolve) => setTimeout(resolve, idleMs))
    host.watcher.off('change', count).off('add', count)
    report.idleWrites = idleWrites
  } finally {
    editor.kill()
    try {
      await host.close()
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
  settleTimes.sort((a, b) => a - b)
  report.medianSettleMs = settleTimes.length > 0 ? Math.round(settleTimes[Math.floor(settleTimes.length / 2)]!) : 0
  return report
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return '' // in the microseconds a write-back moves the file aside
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    if (check()) return true
    if (performance.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

interface FileWatcher {
  once(event: 'ready', listener: () => void): unknown
  getWatched(): Record<string, string[]>
  on(event: 'change' | 'add', listener: (file: string) => void): FileWatcher
  off(event: 'change' | 'add', listener: (file: string) => void): FileWatcher
}

function watcherReady(watcher: FileWatcher): Promise<void> {
  if (Object.keys(watcher.getWatched()).length > 0) return Promise.resolve()
  return new Promise((resolve) => watcher.once('ready', () => resolve()))
}

/** A host in write mode, and a watcher of the project that counts writes while it idles. */
interface RaceHost {
  /** Resolves once the host has started (and begun writing the stale document). */
  started(): Promise<void>
  /** Resolves once `watcher` reports changes. */
  watcherReady(): Promise<void>
  watcher: FileWatcher
  close(): Promise<void>
}

async function startDevServerHost(root: string): Promise<RaceHost> {
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [insitu({ write: true })],
    server: { port: 0 },
  })
  return {
    started: async () => {
      await server.environments.client.transformRequest('/README.md?raw')
    },
    watcherReady: () => watcherReady(server.watcher),
    watcher: server.watcher,
    close: () => server.close(),
  }
}

async function startWatchHost(root: string, command: readonly string[] = [process.execPath, BUILT_BIN]): Promise<RaceHost> {
  if (command[1] === BUILT_BIN && !fs.existsSync(BUILT_BIN)) throw new Error(`${BUILT_BIN} is missing: run npm run build`)
  const child = spawn(command[0]!, [...command.slice(1), 'watch', '--root', root], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const watcher = watchFiles(root, { ignoreInitial: true, ignored: (file: string) => file.includes(`${path.sep}.insitu`) })
  return {
    started: async () => {
      const readyLine = `watching ${root}\n`
      const gone = exited.then((code) => {
        throw new Error(`watch exited with ${code} before it was ready:\n${stdout}${stderr}`)
      })
      const ready = await Promise.race([gone, until(() => stdout.includes(readyLine), 60_000)])
      if (!ready) throw new Error(`watch did not print ${JSON.stringify(readyLine)} within 60 s:\n${stdout}${stderr}`)
    },
    watcherReady: () => watcherReady(watcher),
    watcher,
    close: async () => {
      await watcher.close()
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT')
      const code = await exited
      if (code !== 0 || !stdout.endsWith('stopped\n')) throw new Error(`watch stopped with exit code ${code}:\n${stdout}${stderr}`)
    },
  }
}
