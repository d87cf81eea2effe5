/**
 * A pool of sandbox processes (src/sandbox-child.ts): where work that may never end runs, the
 * project's SQL queries and the templates that outrun their slice of this process, so that it
 * can be stopped when its time is up and never holds the process that serves pages (issue #34;
 * DESIGN.md says why processes and not threads: better-sqlite3 cannot interrupt a query, and a
 * worker thread stuck in SQLite keeps its process from exiting).
 *
 * Contract:
 * - `run(payload, { timeoutMs, timedOut })` sends a task to a process and resolves to its value,
 *   or rejects with a `SandboxTaskError` (the task's own error: message, `code`, `data`), or with
 *   `timedOut()` once the task has run `timeoutMs` (its process is then killed: SIGKILL), or with
 *   what happened when its process ended by itself (`the sandbox process ended (SIGKILL): …`,
 *   with the tail of its stderr).
 * - A task's time counts from the moment its process starts it (the process says so). A task
 *   that has run `SLOW_MS` holds its process: the tasks waiting behind it move to another
 *   process (started when needed, at most `MAX_PROCESSES`), so one runaway task delays no other
 *   for its whole budget; the process is told to skip them. A task sent `slow` (work that
 *   already outran its slice in the parent) holds its process from the start: no task is queued
 *   behind it while another process can take it. A process whose task is out of time is killed,
 *   and the tasks waiting in it move on.
 * - Processes start on demand (`fork`, V8 serialization); `prepare()` starts one ahead. Each new
 *   process gets `hooks.setup(process)` first (a copy of the document index, say), and before
 *   each task `hooks.catchUp(process)` (the index's writes since); a process `hooks.usable`
 *   refuses takes no new task and ends once its own are answered. Extra processes end after
 *   `IDLE_MS` without work; the last one stays until `close()`.
 * - `close()` ends every process and fails what is pending; it resolves once they are gone.
 *   Processes also end when this one does (they exit when their IPC channel closes, and are
 *   killed at exit). `liveSandboxPids()` lists the ones alive (tests check none survives).
 * - The child's program: `dist/sandbox-child.js` from the published bundle; from source (`.ts`:
 *   tests, benchmarks) a bundle of src/sandbox-child.ts made once per process (`sourceChild`).
 */
import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** What the parent sends a sandbox process, handled in order (`skip` at once). */
export type SandboxMessage =
  | { type: 'setup'; payload: unknown }
  | { type: 'task'; id: number; payload: unknown }
  | { type: 'skip'; ids: number[] }

/** What a sandbox process answers. */
export type SandboxReply =
  | { type: 'start'; id: number }
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; message: string; code: string | null; data: unknown }

/** A task's own failure, as its process reported it. */
export class SandboxTaskError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
    readonly data: unknown,
  ) {
    super(message)
  }
}

/** One process of the pool, as the hooks see it: `state` is theirs. */
export interface SandboxProcess {
  readonly pid: number | undefined
  state: unknown
}

export interface PoolHooks {
  /** The messages a new process gets before anything else. */
  setup?(process: SandboxProcess): unknown[]
  /** The messages a process gets before each task (to catch it up). */
  catchUp?(process: SandboxProcess): unknown[]
  /** Whether a process may take new tasks. @default always */
  usable?(process: SandboxProcess): boolean
  /** A process ended (killed, or by itself). */
  ended?(process: SandboxProcess): void
}

/** How long a task runs before the tasks behind it move to another process. */
export const SLOW_MS = 250
/**
 * How long work that may never end (a template render, a SQL model's template) runs in the
 * process that serves pages before it is stopped and done again in the sandbox with the rest of
 * its budget: the most it holds that process's event loop.
 */
export const IN_PROCESS_SLICE_MS = SLOW_MS
/** How much longer than its own deadline a task that bounds itself (a render) may run before its process is killed. */
export const SANDBOX_GRACE_MS = 1_000
/** Processes at most (one per task running long at once, plus one). */
export const MAX_PROCESSES = 4
/** How long an extra process waits for work before it ends. */
export const IDLE_MS = 10_000

interface Task {
  id: number
  payload: unknown
  /** See `run`'s `slow`. */
  slow: boolean
  timeoutMs: number
  timedOut: () => Error
  resolve(value: unknown): void
  reject(error: Error): void
}

interface Process extends SandboxProcess {
  child: ChildProcess
  /** Tasks sent to it and not answered, in the order sent. */
  assigned: Map<number, Task>
  /** The task it runs now (from its `start` message), and since when. */
  running: { id: number; since: number } | null
  timers: NodeJS.Timeout[]
  idleTimer: NodeJS.Timeout | null
  exited: boolean
  /** The tail of what it printed on stderr (for a process that ends by itself). */
  stderr: string
}

const live = new Set<ChildProcess>()

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

export class ProcessPool {
  private readonly processes: Process[] = []
  /** Processes killed and not yet gone (each resolves at its exit). */
  private readonly ending = new Set<Promise<void>>()
  private nextId = 1
  private closed = false

  constructor(private readonly hooks: PoolHooks = {}) {}

  run(
    payload: unknown,
    options: {
      timeoutMs: number
      timedOut: () => Error
      /** Known to take long (work that outran its slice elsewhere): no task waits behind it. @default false */
      slow?: boolean
    },
  ): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the sandbox is closed'))
    return new Promise((resolve, reject) => {
      this.dispatch({ id: this.nextId++, payload, timeoutMs: options.timeoutMs, timedOut: options.timedOut, slow: options.slow ?? false, resolve, reject })
    })
  }

  /** Start a process ahead of the first task (its start overlaps other work). */
  prepare(): void {
    if (!this.closed && this.processes.length === 0) this.spawn()
  }

  /** How many processes are alive or starting. */
  get size(): number {
    return this.processes.length
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true
      for (const proc of [...this.processes]) this.end(proc, new Error('the sandbox is closed'))
    }
    await Promise.all(this.ending)
  }

  private dispatch(task: Task, except?: Process): void {
    const proc = this.pick(except)
    if (process.env.DBG_POOL) console.error('DBG dispatch', task.id, (task.payload as { kind?: string }).kind, 'to', proc.pid, 'procs', this.processes.map((p) => `${p.pid}:${p.assigned.size}:${p.running ? Date.now() - p.running.since : '-'}`).join(' '))
    this.send(proc, task)
  }

  /** An idle process, else one whose task is not slow (fewest tasks first), else a new one, else the least busy. */
  private pick(except?: Process): Process {
    const now = Date.now()
    for (const proc of [...this.processes]) this.retireIfUnusable(proc)
    const candidates = this.processes.filter((proc) => proc !== except && !proc.exited && this.usable(proc))
    const idle = candidates.find((proc) => proc.assigned.size === 0)
    if (idle) return idle
    const quick = candidates
      .filter((proc) => (proc.running === null || now - proc.running.since < SLOW_MS) && ![...proc.assigned.values()].some((task) => task.slow))
      .sort((a, b) => a.assigned.size - b.assigned.size)[0]
    if (quick) return quick
    if (this.processes.length < MAX_PROCESSES) return this.spawn()
    return candidates.sort((a, b) => a.assigned.size - b.assigned.size)[0] ?? this.spawn()
  }

  private usable(proc: Process): boolean {
    return this.hooks.usable?.(proc) ?? true
  }

  private send(proc: Process, task: Task): void {
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    proc.idleTimer = null
    for (const payload of this.hooks.catchUp?.(proc) ?? []) post(proc, { type: 'setup', payload })
    proc.assigned.set(task.id, task)
    post(proc, { type: 'task', id: task.id, payload: task.payload })
  }

  private spawn(): Process {
    killAtExit()
    const { file, execArgv } = childEntry()
    const child = fork(file, [], { serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'], execArgv })
    live.add(child)
    const proc: Process = {
      pid: child.pid,
      state: undefined,
      child,
      assigned: new Map(),
      running: null,
      timers: [],
      idleTimer: null,
      exited: false,
      stderr: '',
    }
    this.processes.push(proc)
    child.stderr?.on('data', (chunk: Buffer) => {
      proc.stderr = (proc.stderr + chunk.toString()).slice(-2000)
    })
    child.on('message', (reply) => this.answer(proc, reply as SandboxReply))
    child.on('exit', (code, signal) => {
      live.delete(child)
      if (proc.exited) return
      const said = proc.stderr.trim().split('\n').slice(-3).join(' ').trim()
      this.end(proc, new Error(`the sandbox process ended (${signal ?? `exit code ${code}`})${said ? `: ${said}` : ''}`))
    })
    child.on('error', () => {}) // its exit follows
    for (const payload of this.hooks.setup?.(proc) ?? []) post(proc, { type: 'setup', payload })
    return proc
  }

  private answer(proc: Process, reply: SandboxReply): void {
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
    if (reply.type === 'result') task.resolve(reply.value)
    else task.reject(new SandboxTaskError(reply.message, reply.code, reply.data))
    if (proc.assigned.size === 0 && !this.retireIfUnusable(proc)) this.idle(proc)
  }

  /** The running task's clocks: at `SLOW_MS` the tasks behind it move on; out of time its process is killed. */
  private watch(proc: Process, id: number): void {
    this.clearTimers(proc)
    const task = proc.assigned.get(id)
    if (!task) return
    proc.timers.push(
      setTimeout(() => this.moveWaiting(proc, id), SLOW_MS),
      setTimeout(() => {
        if (proc.running?.id !== id || !proc.assigned.has(id)) return
        proc.assigned.delete(id)
        task.reject(task.timedOut())
        this.end(proc, null)
      }, task.timeoutMs),
    )
  }

  /** The tasks waiting behind a slow one go to another process. */
  private moveWaiting(proc: Process, runningId: number): void {
    if (proc.exited || proc.running?.id !== runningId) return
    const waiting = [...proc.assigned.values()].filter((task) => task.id !== runningId)
    if (waiting.length === 0) return
    for (const task of waiting) proc.assigned.delete(task.id)
    post(proc, { type: 'skip', ids: waiting.map((task) => task.id) })
    for (const task of waiting) this.dispatch(task, proc)
  }

  /** End a process (killed); its tasks fail with `error`, or move to another process when null. */
  private end(proc: Process, error: Error | null): void {
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
    this.hooks.ended?.(proc)
    const tasks = [...proc.assigned.values()]
    proc.assigned.clear()
    for (const task of tasks) {
      if (error || this.closed) task.reject(error ?? new Error('the sandbox is closed'))
      else this.dispatch(task)
    }
  }

  /** A process its hooks refuse ends once its tasks are answered (see `pick`). */
  private retireIfUnusable(proc: Process): boolean {
    if (this.usable(proc) || proc.assigned.size > 0) return false
    this.end(proc, null)
    return true
  }

  private idle(proc: Process): void {
    // The last process stays (the next task needs no start); extra ones end when left idle.
    if (this.processes.length <= 1) return
    proc.idleTimer = setTimeout(() => {
      if (proc.assigned.size === 0 && this.processes.length > 1) this.end(proc, null)
    }, IDLE_MS)
    proc.idleTimer.unref()
  }

  private clearTimers(proc: Process): void {
    for (const timer of proc.timers) clearTimeout(timer)
    proc.timers = []
  }
}

function post(proc: Process, message: SandboxMessage): void {
  if (proc.exited || !proc.child.connected) return
  proc.child.send(message)
}

/** The child's program: `dist/sandbox-child.js` when bundled; from source (tests), a bundle made once per process. */
function childEntry(): { file: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url)
  // Its heap is bounded (SQLite's too: the index copy's setup): a runaway task fails, it does not swell.
  const execArgv = ['--max-old-space-size=512']
  if (here.endsWith('.ts')) return { file: sourceChild(path.resolve(path.dirname(here), '../sandbox-child.ts')), execArgv }
  for (let folder = path.dirname(here); ; folder = path.dirname(folder)) {
    const file = path.join(folder, 'sandbox-child.js')
    if (fs.existsSync(file)) return { file, execArgv }
    if (path.dirname(folder) === folder) throw new Error(`the sandbox's program is missing (looked for sandbox-child.js above ${here})`)
  }
}

let sourceChildFile: string | undefined

/**
 * From source (the repository's tests and benchmarks): src/sandbox-child.ts bundled with esbuild
 * (tsx's own compiler), better-sqlite3 imported by its absolute path, into the OS's temporary
 * folder once per process, removed at its exit (a child started through tsx would take five
 * times as long to start).
 */
function sourceChild(entry: string): string {
  if (sourceChildFile) return sourceChildFile
  const require = createRequire(import.meta.url)
  const esbuild = require('esbuild') as typeof import('esbuild')
  const sqlite = pathToFileURL(require.resolve('better-sqlite3')).href
  const outfile = path.join(os.tmpdir(), `insitu-sandbox-child-${process.pid}.mjs`)
  const { outputFiles } = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3'],
    // CommonJS dependencies (yaml) require Node's builtins.
    banner: { js: "import { createRequire as __insituCreateRequire } from 'node:module'; const require = __insituCreateRequire(import.meta.url);" },
    write: false,
    logLevel: 'silent',
  })
  const code = outputFiles[0]!.text.replaceAll('from "better-sqlite3"', `from ${JSON.stringify(sqlite)}`)
  if (/from "better-sqlite3"|\("better-sqlite3"\)/.test(code)) throw new Error('the sandbox bundle imports better-sqlite3 in an unexpected way')
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
