/**
 * A pool of sandbox processes (src/sandbox-child.ts): where work that may never end runs, the
 * project's SQL queries and the templates that outrun their slice of this process, so that it
 * can be stopped when its time is up and never holds the process that serves pages (issue #34;
 * DESIGN.md says why processes and not threads: better-sqlite3 cannot interrupt a query, and a
 * worker thread stuck in SQLite keeps its process from exiting).
 *
 * Contract:
 * - `run(payload, { timeoutMs, timedOut, slow })` sends a task to a process and resolves to its
 *   value, or rejects with a `SandboxTaskError` (the task's own error: message, `code`, `data`),
 *   or with `timedOut()` once the task has run `timeoutMs` (its process is then killed:
 *   SIGKILL), or with a `SandboxCrashError` when its process ended while it ran (with the tail
 *   of its stderr).
 * - A task's time counts from the moment its process starts it (the process says so, for each
 *   sending of it: a task moved to another process is a new sending there). A task that has run
 *   `SLOW_MS` holds its process: the tasks waiting behind it move to another process (started
 *   when needed, at most `MAX_PROCESSES`), and the process is told to skip them; one that starts
 *   one of them all the same (the skip came late) is running work nobody waits for, and is
 *   killed. A task sent `slow` (work that already outran its slice in the parent) takes a
 *   process of its own; at most `MAX_PROCESSES - 1` processes hold slow work (running such a
 *   task, or one that has run `SLOW_MS`): further slow tasks wait here, so one process is always
 *   left for the others. A process whose task is out of time is killed, and the tasks waiting in
 *   it move on. A process that ends by itself fails its running task; the others move on (a task
 *   that was in two processes that ended fails).
 * - Processes start on demand (`fork`, V8 serialization); `prepare(payload?)` starts one ahead
 *   (and brings it up to date for such a task). The hooks are the constructor's, or those given
 *   to `useHooks` (a pool made before its index, before any task). Before
 *   each task a process gets `hooks.catchUp(process, payload)` (its copy of the document index
 *   made or brought up to date); a process `hooks.usable` refuses takes no new task and ends once
 *   its own are answered. Extra processes end after `IDLE_MS` without work; the last one stays
 *   until `close()`, or ends after the constructor's `lastIdleMs` without work when given (a
 *   later task starts another).
 * - `close()` ends every process and fails what is pending; it resolves once they are gone;
 *   `run` fails after it. Processes also end when this one does, however it ends (they are
 *   killed by sandbox/process-end.ts, and exit when their IPC channel closes while idle).
 *   `liveSandboxPids()` lists the ones alive (tests check none survives).
 * - The child's program: `dist/sandbox-child.js` from the published bundle; from source (`.ts`:
 *   tests, benchmarks) a bundle of src/sandbox-child.ts (child-programs.ts).
 */
import { type ChildProcess, fork } from 'node:child_process'
import { onProcessEnd } from './process-end.js'
import { childProgram } from './child-programs.js'

/** What the parent sends a sandbox process, handled in order (`skip` at once). */
export type SandboxMessage =
  | { type: 'setup'; payload: unknown }
  | { type: 'task'; id: number; payload: unknown }
  | { type: 'skip'; ids: number[] }

/** What a sandbox process answers (`id`: the sending's, see the contract). */
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

/** The process running a task ended before it answered. */
export class SandboxCrashError extends Error {
  readonly crashed = true
}

/** One process of the pool, as the hooks see it: `state` is theirs. */
export interface SandboxProcess {
  readonly pid: number | undefined
  state: unknown
}

export interface PoolHooks {
  /** The messages a process gets before a task (to make or catch up what the task needs). */
  catchUp?(process: SandboxProcess, payload: unknown): unknown[]
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
 * its budget: the most one job holds that process's event loop.
 */
export const IN_PROCESS_SLICE_MS = SLOW_MS
/** How much longer than its own deadline a task that bounds itself (a render) may run before its process is killed. */
export const SANDBOX_GRACE_MS = 1_000
/** Processes at most; one of them is always left to tasks that are not slow. */
export const MAX_PROCESSES = 4
/** How long an extra process waits for work before it ends. */
export const IDLE_MS = 10_000
/** A task is failed after this many processes ended under it. */
const MAX_CRASHES = 2

interface Task {
  payload: unknown
  /** See `run`'s `slow`. */
  slow: boolean
  timeoutMs: number
  timedOut: () => Error
  /** How many processes it was in when they ended. */
  crashes: number
  resolve(value: unknown): void
  reject(error: Error): void
}

interface Process extends SandboxProcess {
  child: ChildProcess
  /** Tasks sent to it and not answered, by sending id, in the order sent. */
  assigned: Map<number, Task>
  /** The sending it runs now (from its `start` message), and since when. */
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

let endHookInstalled = false
function killAtEnd(): void {
  if (endHookInstalled) return
  endHookInstalled = true
  onProcessEnd(() => {
    for (const child of live) child.kill('SIGKILL')
  })
}

export class ProcessPool {
  private readonly processes: Process[] = []
  /** Slow tasks waiting for a process of their own (see the contract). */
  private readonly waitingSlow: Task[] = []
  /** Processes killed and not yet gone (each resolves at its exit). */
  private readonly ending = new Set<Promise<void>>()
  private nextSending = 1
  private closed = false

  /**
   * @param hooks See the contract.
   * @param lastIdleMs Milliseconds after which the last process, too, ends when left idle (a
   *   one-shot build, which may not query again: its memory is given back); undefined: it stays
   *   until `close()`.
   */
  constructor(
    private hooks: PoolHooks = {},
    private readonly lastIdleMs?: number,
  ) {}

  /**
   * The hooks, given after the pool was made: a pool started ahead of its document index (its
   * first process boots while the index is scanned: engine.ts), before any task.
   */
  useHooks(hooks: PoolHooks): void {
    this.hooks = hooks
  }

  run(
    payload: unknown,
    options: {
      timeoutMs: number
      timedOut: () => Error
      /** Known to take long (work that outran its slice elsewhere): it takes a process of its own. @default false */
      slow?: boolean
    },
  ): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the sandbox is closed'))
    return new Promise((resolve, reject) => {
      this.dispatch({ payload, timeoutMs: options.timeoutMs, timedOut: options.timedOut, slow: options.slow ?? false, crashes: 0, resolve, reject })
    })
  }

  /**
   * Start a process ahead of the first task (its start overlaps other work); with `payload`,
   * also bring it up to date for a task like it now (`hooks.catchUp`: a copy of the document
   * index made ahead of the first query).
   */
  prepare(payload?: unknown): void {
    if (this.closed) return
    const proc = this.processes.find((candidate) => this.usable(candidate)) ?? this.spawn()
    if (payload !== undefined) for (const setup of this.hooks.catchUp?.(proc, payload) ?? []) post(proc, { type: 'setup', payload: setup })
    // Started or brought up to date ahead, with nothing to do yet: its idle time counts from now.
    if (proc.assigned.size === 0) this.idle(proc)
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true
      const closed = new Error('the sandbox is closed')
      for (const task of this.waitingSlow.splice(0)) task.reject(closed)
      for (const proc of [...this.processes]) this.end(proc, closed)
    }
    await Promise.all(this.ending)
  }

  private dispatch(task: Task, except?: Process): void {
    if (this.closed) return task.reject(new Error('the sandbox is closed'))
    const proc = task.slow ? this.pickForSlow() : this.pick(except)
    if (proc) this.send(proc, task)
    else this.waitingSlow.push(task)
  }

  /** An idle process, else one whose running task is young and that holds no slow work (fewest tasks first), else a new one, else the least busy. */
  private pick(except?: Process): Process {
    for (const proc of [...this.processes]) this.retireIfUnusable(proc)
    const candidates = this.processes.filter((proc) => proc !== except && this.usable(proc))
    const idle = candidates.find(isIdle)
    if (idle) return idle
    const quick = candidates.filter((proc) => !this.holdsSlow(proc)).sort((a, b) => a.assigned.size - b.assigned.size)[0]
    if (quick) return quick
    if (this.processes.length < MAX_PROCESSES) return this.spawn()
    return candidates.sort((a, b) => a.assigned.size - b.assigned.size)[0] ?? this.spawn()
  }

  /** A process of its own for a slow task, unless `MAX_PROCESSES - 1` hold slow work already (then null: it waits). */
  private pickForSlow(): Process | null {
    for (const proc of [...this.processes]) this.retireIfUnusable(proc)
    if (this.processes.filter((proc) => this.holdsSlow(proc)).length >= MAX_PROCESSES - 1) return null
    const idle = this.processes.find((proc) => this.usable(proc) && isIdle(proc))
    if (idle) return idle
    return this.processes.length < MAX_PROCESSES ? this.spawn() : null
  }

  /** Running a slow task, or one that has run `SLOW_MS`, or waiting to. */
  private holdsSlow(proc: Process): boolean {
    if (proc.running !== null && Date.now() - proc.running.since >= SLOW_MS) return true
    for (const task of proc.assigned.values()) if (task.slow) return true
    return false
  }

  private usable(proc: Process): boolean {
    return this.hooks.usable?.(proc) ?? true
  }

  private send(proc: Process, task: Task): void {
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    proc.idleTimer = null
    for (const payload of this.hooks.catchUp?.(proc, task.payload) ?? []) post(proc, { type: 'setup', payload })
    const id = this.nextSending++
    proc.assigned.set(id, task)
    post(proc, { type: 'task', id, payload: task.payload })
  }

  private spawn(): Process {
    killAtEnd()
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
      this.crashed(proc, new SandboxCrashError(`the sandbox process ended (${signal ?? `exit code ${code}`})${said ? `: ${said}` : ''}`))
    })
    // A fork that fails (EAGAIN, EMFILE, ENOENT) emits `error` and never `exit`.
    child.on('error', (error) => {
      live.delete(child)
      if (!proc.exited) this.crashed(proc, new SandboxCrashError(`the sandbox process could not run: ${error.message}`))
    })
    return proc
  }

  private answer(proc: Process, reply: SandboxReply): void {
    if (reply.type === 'start') {
      // A sending moved away before it started (its skip came late): nobody waits for it, and it may never end.
      if (!proc.assigned.has(reply.id)) {
        this.end(proc, null)
        return
      }
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
    this.dispatchWaitingSlow()
  }

  /** The running sending's clocks: at `SLOW_MS` the tasks behind it move on; out of time its process is killed. */
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

  /** The tasks waiting behind a slow sending go to another process. */
  private moveWaiting(proc: Process, runningId: number): void {
    if (proc.exited || proc.running?.id !== runningId) return
    const waiting = [...proc.assigned].filter(([id]) => id !== runningId)
    if (waiting.length === 0) return
    for (const [id] of waiting) proc.assigned.delete(id)
    post(proc, { type: 'skip', ids: waiting.map(([id]) => id) })
    for (const [, task] of waiting) this.dispatch(task, proc)
  }

  /** A process ended by itself: its running task fails with `error`, the others move on (see the contract). */
  private crashed(proc: Process, error: SandboxCrashError): void {
    const runningId = proc.running?.id ?? proc.assigned.keys().next().value
    const running = runningId === undefined ? undefined : proc.assigned.get(runningId)
    if (running && runningId !== undefined) proc.assigned.delete(runningId)
    const givenUp = this.end(proc, null, (task) => ++task.crashes >= MAX_CRASHES)
    running?.reject(error)
    // Tasks that were in too many processes that ended fail with the last of them.
    for (const task of givenUp) task.reject(error)
  }

  /**
   * End a process (killed); its tasks fail with `error`, or move to another process when null,
   * except those `giveUp` accepts: they are returned (`crashed` fails them).
   */
  private end(proc: Process, error: Error | null, giveUp?: (task: Task) => boolean): Task[] {
    if (proc.exited) return []
    proc.exited = true
    this.clearTimers(proc)
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    const index = this.processes.indexOf(proc)
    if (index >= 0) this.processes.splice(index, 1)
    if (proc.child.exitCode === null && proc.child.signalCode === null && live.has(proc.child)) {
      const gone = new Promise<void>((resolve) => proc.child.once('exit', () => resolve()))
      this.ending.add(gone)
      void gone.then(() => this.ending.delete(gone))
    }
    proc.child.kill('SIGKILL')
    this.hooks.ended?.(proc)
    const tasks = [...proc.assigned.values()]
    proc.assigned.clear()
    const givenUp: Task[] = []
    for (const task of tasks) {
      if (error || this.closed) task.reject(error ?? new Error('the sandbox is closed'))
      else if (giveUp?.(task)) givenUp.push(task)
      else this.dispatch(task)
    }
    this.dispatchWaitingSlow()
    return givenUp
  }

  /** Slow tasks that waited go as processes free up. */
  private dispatchWaitingSlow(): void {
    while (this.waitingSlow.length > 0 && !this.closed) {
      const proc = this.pickForSlow()
      if (!proc) return
      this.send(proc, this.waitingSlow.shift()!)
    }
  }

  /** A process its hooks refuse ends once its tasks are answered (see `pick`). */
  private retireIfUnusable(proc: Process): boolean {
    if (this.usable(proc) || proc.assigned.size > 0) return false
    this.end(proc, null)
    return true
  }

  /** Starts (or starts again) `proc`'s idle countdown. */
  private idle(proc: Process): void {
    if (proc.idleTimer) clearTimeout(proc.idleTimer)
    proc.idleTimer = null
    // The last process stays (the next task needs no start), unless `lastIdleMs` says otherwise;
    // extra ones end when left idle.
    const last = this.processes.length <= 1
    if (last && this.lastIdleMs === undefined) return
    proc.idleTimer = setTimeout(
      () => {
        if (proc.assigned.size === 0 && (this.processes.length > 1 || this.lastIdleMs !== undefined)) this.end(proc, null)
      },
      last ? this.lastIdleMs : IDLE_MS,
    )
    proc.idleTimer.unref()
  }

  private clearTimers(proc: Process): void {
    for (const timer of proc.timers) clearTimeout(timer)
    proc.timers = []
  }
}

function isIdle(proc: Process): boolean {
  return proc.assigned.size === 0 && proc.running === null
}

function post(proc: Process, message: SandboxMessage): void {
  if (proc.exited || !proc.child.connected) return
  proc.child.send(message)
}

/** The child's program (child-programs.ts) and its Node options. */
function childEntry(): { file: string; execArgv: string[] } {
  // Its heap is bounded (SQLite's too: index-copy.ts): a runaway task fails, it does not swell.
  return { file: childProgram('sandbox-child'), execArgv: ['--max-old-space-size=512'] }
}

/** `30 s`, `1.5 s`, `250 ms`. */
export function describeDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  const seconds = ms / 1000
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`
}
