/**
 * Where the project's SQL queries run: child processes, each with a copy of the document index
 * (sandbox-child.ts), so that a query that never ends (a recursive CTE without an end, a join of
 * every document with every document three times) is stopped when its time is up and never holds
 * the process that serves pages (issue #34; DESIGN.md says why a process and not a thread:
 * better-sqlite3 cannot interrupt a query, and a worker thread stuck in SQLite keeps its process
 * from exiting).
 *
 * Contract:
 * - `query(sql, params)` runs a read-only query (read-only-sql.ts) on a copy of the index as it
 *   is when `query` is called (the copies replay the index's writes in order: index-journal.ts)
 *   and resolves to its rows, read as the index reads them (sql-values.ts), or rejects with
 *   SQLite's error (message and `code`), a `QueryTimeoutError` once the query has run
 *   `timeoutMs`, or a `QueryTooLargeError` when its rows would hold more than `maxRowBytes`.
 * - The time of a query counts from the moment its process starts it. A query that has run
 *   `SLOW_MS` holds its process: the queries waiting behind it move to another process (started
 *   when needed, at most `MAX_PROCESSES`), so one runaway query delays no other for its whole
 *   budget. A process whose query is out of time is killed (SIGKILL); the queries waiting in it
 *   move on. A process that ends by itself fails its running query with what it printed.
 * - Processes start on demand (`fork`, V8 serialization): the first query pays the start (about
 *   80 ms here) and sends the index's bytes; `prepare()` starts one ahead. Extra processes end
 *   after `IDLE_MS` without work; the last one stays until `close()`. A copy that can no longer
 *   follow (the journal dropped writes it had not received: index-journal.ts) takes no new query
 *   and ends once its own are answered; new ones go to a fresh copy.
 * - `close()` ends every process and fails what is pending; idempotent. Processes also end when
 *   this one does (they exit when their IPC channel closes, and are killed at exit).
 * - The child's program: `dist/sandbox-child.js` from the published bundle; from source (`.ts`:
 *   tests, benchmarks) a bundle of sandbox-child.ts made once per process (`sourceChild`).
 */
import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { IndexJournal } from './index-journal.js'
import type { SandboxReply, SandboxRequest } from './sandbox-child.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'

/** A query ran out of its time (the caller names the model: sql-models.ts). */
export class QueryTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than ${describeDuration(timeoutMs)}`)
  }
}

/** A query's rows would hold more than the sandbox lets one query hold. */
export class QueryTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the query returned more than ${describeBytes(maxBytes)} of rows`)
  }
}

export interface QuerySandboxOptions {
  journal: IndexJournal
  /** Milliseconds a query may run. */
  timeoutMs: number
  /** The most a query's rows may hold (texts and blobs by length). @default 64 MiB */
  maxRowBytes?: number
}

/** How long a query runs before the queries behind it move to another process. */
export const SLOW_MS = 250
/** Processes at most (one per query running long at once, plus one). */
export const MAX_PROCESSES = 4
/** How long an extra process waits for work before it ends. */
export const IDLE_MS = 10_000
const DEFAULT_MAX_ROW_BYTES = 64 * 1024 * 1024
/** What SQLite in a process may allocate beyond twice the index's size. */
const HEAP_HEADROOM = 256 * 1024 * 1024

interface Task {
  id: number
  sql: string
  params: unknown
  resolve(rows: Record<string, unknown>[]): void
  reject(error: Error): void
}

interface SandboxProcess {
  child: ChildProcess
  /** The journal position its copy has received. */
  position: number
  /** Tasks sent to it and not answered, in the order sent. */
  assigned: Map<number, Task>
  /** The query it is running now (from its `start` message), and since when. */
  running: { id: number; since: number } | null
  timers: NodeJS.Timeout[]
  idleTimer: NodeJS.Timeout | null
  exited: boolean
  /** The tail of what it printed on stderr (for a process that ends by itself). */
  stderr: string
}

const live = new Set<ChildProcess>()

/** Process ids of the sandbox processes alive in this process (tests check none survives). */
export function liveSandboxPids(): number[] {
  return [...live].flatMap((child) => (child.pid === undefined || child.exitCode !== null || child.signalCode !== null ? [] : [child.pid]))
}

let exitHookInstalled = false
function killAtExit(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL')
  })
}

export class QuerySandbox {
  private readonly processes: SandboxProcess[] = []
  /** Processes killed and not yet gone (each resolves at its exit). */
  private readonly ending = new Set<Promise<void>>()
  private nextId = 1
  private closed = false
  private readonly maxRowBytes: number

  constructor(private readonly options: QuerySandboxOptions) {
    this.maxRowBytes = options.maxRowBytes ?? DEFAULT_MAX_ROW_BYTES
  }

  query(sql: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    if (this.closed) return Promise.reject(new Error('the query sandbox is closed'))
    return new Promise((resolve, reject) => {
      this.dispatch({ id: this.nextId++, sql, params: toCloneable(params), resolve, reject })
    })
  }

  /** Start a process ahead of the first query (its start overlaps other work). */
  prepare(): void {
    if (!this.closed && this.processes.length === 0) this.spawn()
  }

  /** End every process and fail what is pending; resolves once the processes are gone. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true
      for (const proc of [...this.processes]) this.end(proc, new Error('the query sandbox is closed'))
      this.options.journal.reset()
    }
    await Promise.all(this.ending)
  }

  private dispatch(task: Task, except?: SandboxProcess): void {
    const proc = this.pick(except)
    this.send(proc, task)
  }

  /** An idle process, else one whose query is not slow (fewest tasks first), else a new one, else the least busy. */
  private pick(except?: SandboxProcess): SandboxProcess {
    const now = Date.now()
    // A copy that missed writes the journal dropped takes no new query; idle, it goes now.
    const start = this.options.journal.start
    for (const proc of [...this.processes]) this.retireIfBehind(proc)
    const candidates = this.processes.filter((proc) => proc !== except && !proc.exited && proc.position >= start)
    const idle = candidates.find((proc) => proc.assigned.size === 0)
    if (idle) return idle
    const quick = candidates
      .filter((proc) => proc.running === null || now - proc.running.since < SLOW_MS)
      .sort((a, b) => a.assigned.size - b.assigned.size)[0]
    if (quick) return quick
    if (this.processes.length < MAX_PROCESSES) return this.spawn()
    return candidates.sort((a, b) => a.assigned.size - b.assigned.size)[0] ?? this.spawn()
  }

  private send(proc: SandboxProcess, task: Task): void {
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    proc.idleTimer = null
    const journal = this.options.journal
    if (journal.end > proc.position) {
      post(proc, { type: 'apply', entries: journal.since(proc.position) })
      proc.position = journal.end
      this.forgetApplied()
    }
    proc.assigned.set(task.id, task)
    post(proc, { type: 'query', id: task.id, sql: task.sql, params: task.params })
  }

  private spawn(): SandboxProcess {
    killAtExit()
    const journal = this.options.journal
    const { file, execArgv } = childEntry()
    const child = fork(file, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv })
    live.add(child)
    const { bytes, position } = journal.snapshot()
    const proc: SandboxProcess = { child, position, assigned: new Map(), running: null, timers: [], idleTimer: null, exited: false, stderr: '' }
    this.processes.push(proc)
    child.stderr?.on('data', (chunk: Buffer) => {
      proc.stderr = (proc.stderr + chunk.toString()).slice(-2000)
    })
    child.on('message', (reply) => this.answer(proc, reply as SandboxReply))
    child.on('exit', (code, signal) => {
      live.delete(child)
      if (proc.exited) return
      const said = proc.stderr.trim().split('\n').slice(-3).join(' ').trim()
      this.end(proc, new Error(`the query's process ended (${signal ?? `exit code ${code}`})${said ? `: ${said}` : ''}`))
    })
    child.on('error', () => {}) // its exit follows
    post(proc, { type: 'init', bytes, maxRowBytes: this.maxRowBytes, heapLimit: 2 * bytes.length + HEAP_HEADROOM })
    return proc
  }

  private answer(proc: SandboxProcess, reply: SandboxReply): void {
    if (reply.type === 'start') {
      proc.running = { id: reply.id, since: Date.now() }
      this.watch(proc, reply.id)
      return
    }
    if (proc.running?.id === reply.id) proc.running = null
    const task = proc.assigned.get(reply.id)
    if (!task) return // moved to another process meanwhile: its answer is the one that counts
    proc.assigned.delete(reply.id)
    this.clearTimers(proc)
    if (reply.type === 'result') task.resolve(fromCloneable(reply.rows) as Record<string, unknown>[])
    else if (reply.tooLarge !== undefined) task.reject(new QueryTooLargeError(reply.tooLarge))
    else task.reject(Object.assign(new Error(reply.message), reply.code === null ? {} : { code: reply.code }))
    if (proc.assigned.size === 0 && !this.retireIfBehind(proc)) this.idle(proc)
  }

  /** The running query's clocks: at `SLOW_MS` the tasks behind it move on; at the timeout the process is killed. */
  private watch(proc: SandboxProcess, id: number): void {
    this.clearTimers(proc)
    const task = proc.assigned.get(id)
    if (!task) return
    proc.timers.push(
      setTimeout(() => this.moveWaiting(proc, id), SLOW_MS),
      setTimeout(() => {
        if (proc.running?.id !== id || !proc.assigned.has(id)) return
        proc.assigned.delete(id)
        task.reject(new QueryTimeoutError(this.options.timeoutMs))
        this.end(proc, null)
      }, this.options.timeoutMs),
    )
  }

  /** The tasks waiting behind a slow query go to another process. */
  private moveWaiting(proc: SandboxProcess, runningId: number): void {
    if (proc.exited || proc.running?.id !== runningId) return
    const waiting = [...proc.assigned.values()].filter((task) => task.id !== runningId)
    if (waiting.length === 0) return
    for (const task of waiting) proc.assigned.delete(task.id)
    post(proc, { type: 'skip', ids: waiting.map((task) => task.id) })
    for (const task of waiting) this.dispatch(task, proc)
  }

  /** End a process (killed); its tasks fail with `error`, or move to another process when null. */
  private end(proc: SandboxProcess, error: Error | null): void {
    if (proc.exited) return
    proc.exited = true
    this.clearTimers(proc)
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    const index = this.processes.indexOf(proc)
    if (index >= 0) this.processes.splice(index, 1)
    if (proc.child.exitCode === null && proc.child.signalCode === null) {
      const gone = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()))
      this.ending.add(gone)
      void gone.then(() => this.ending.delete(gone))
    }
    proc.child.kill('SIGKILL')
    const tasks = [...proc.assigned.values()]
    proc.assigned.clear()
    for (const task of tasks) {
      if (error || this.closed) task.reject(error ?? new Error('the query sandbox is closed'))
      else this.dispatch(task)
    }
    if (this.processes.length === 0) this.options.journal.reset()
    else this.forgetApplied()
  }

  /** A copy that can no longer follow ends once its queries are answered (see `pick`). */
  private retireIfBehind(proc: SandboxProcess): boolean {
    if (proc.position >= this.options.journal.start || proc.assigned.size > 0) return false
    this.end(proc, null)
    return true
  }

  private idle(proc: SandboxProcess): void {
    // The last process stays (the next query needs no start); extra ones end when left idle.
    if (this.processes.length <= 1) return
    proc.idleTimer = setTimeout(() => {
      if (proc.assigned.size === 0 && this.processes.length > 1) this.end(proc, null)
    }, IDLE_MS)
    proc.idleTimer.unref()
  }

  private clearTimers(proc: SandboxProcess): void {
    for (const timer of proc.timers) clearTimeout(timer)
    proc.timers = []
  }

  /** The journal keeps only what some copy has not received. */
  private forgetApplied(): void {
    if (this.processes.length === 0) return
    this.options.journal.forget(Math.min(...this.processes.map((proc) => proc.position)))
  }
}

function post(proc: SandboxProcess, message: SandboxRequest): void {
  if (proc.exited || !proc.child.connected) return
  proc.child.send(message)
}

/** The child's program: `dist/sandbox-child.js` when bundled; from source (tests), a bundle made once per process. */
function childEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url)
  const execArgv = ['--max-old-space-size=512']
  if (here.endsWith('.ts')) return { file: sourceChild(here), execArgv }
  for (let folder = path.dirname(here); ; folder = path.dirname(folder)) {
    const file = path.join(folder, 'sandbox-child.js')
    if (fs.existsSync(file)) return { file, execArgv }
    if (path.dirname(folder) === folder) throw new Error(`the query sandbox's program is missing (looked for sandbox-child.js above ${here})`)
  }
}

let sourceChildFile: string | undefined

/**
 * From source (the repository's tests and benchmarks): sandbox-child.ts bundled with esbuild
 * (tsx's own compiler), better-sqlite3 imported by its absolute path, into the OS's temporary
 * folder once per process, removed at its exit (a child started through tsx would take five
 * times as long to start).
 */
function sourceChild(here: string): string {
  if (sourceChildFile) return sourceChildFile
  const require = createRequire(import.meta.url)
  const esbuild = require('esbuild') as typeof import('esbuild')
  const sqlite = pathToFileURL(require.resolve('better-sqlite3')).href
  const outfile = path.join(os.tmpdir(), `insitu-sandbox-child-${process.pid}.mjs`)
  const { outputFiles } = esbuild.buildSync({
    entryPoints: [path.join(path.dirname(here), 'sandbox-child.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3'],
    write: false,
    logLevel: 'silent',
  })
  const code = outputFiles[0]!.text.replaceAll('from "better-sqlite3"', `from ${JSON.stringify(sqlite)}`)
  if (/from "better-sqlite3"|\("better-sqlite3"\)/.test(code)) throw new Error('the query sandbox bundle imports better-sqlite3 in an unexpected way')
  fs.writeFileSync(outfile, code)
  process.on('exit', () => fs.rmSync(outfile, { force: true }))
  sourceChildFile = outfile
  return outfile
}

/** `30 s`, `1.5 s`, `250 ms`. */
export function describeDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  const seconds = ms / 1000
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`
}

function describeBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`
}
