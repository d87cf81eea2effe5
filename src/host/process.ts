/**
 * One supervised extension process (SPEC §3).
 *
 * Contract:
 * - `start()` spawns the manifest's command in its confined cwd, speaks protocol v1 on
 *   stdin/stdout, runs the initialize handshake and checks it against the manifest
 *   (identity, declared capabilities, pinned schemas), with SPEC's exact messages. A command
 *   the OS cannot run fails before anything is written, for good (no respawn):
 *   `<ext>: command not found: <cmd> (from <manifest>)` (or `command is not executable`). A
 *   process that dies during the handshake fails the start like a crash (exit code or signal
 *   and stderr tail); it is started again on the next request.
 * - stderr is forwarded line by line to `logger.info` as `[<name>] <line>`; the last 20
 *   lines are kept for crash reports. stdout carries protocol only.
 * - `request()` starts the process on demand. When the process dies, every pending request
 *   fails at once with an `ExtensionCrashError` naming the extension, the exit code or
 *   signal, and the stderr tail (`… exited with code 0 inside a frame (incomplete frame: …)`
 *   when its stdout ended in the middle of a frame); the next request restarts it, at most 5
 *   times in 3 minutes, after which requests fail with the budget message.
 * - A protocol violation kills the process and fails its requests with the violation, named
 *   for the extension: `extension <ext> broke the protocol: <rule> <stderr tail>`; output that is
 *   not a frame (a print to stdout, header-shaped or not) fails them with exactly
 *   `stdout must carry only protocol frames; <ext> wrote "<line>" (log to stderr)`, without the
 *   stderr tail (the extension's own log, already forwarded, says nothing about its stdout). The
 *   same output while the process is being stopped is logged once with `logger.warn`.
 * - `abort(reason)` fails every request in flight (or waiting for the start) with `reason` at
 *   once, and every later one; `stop()` still shuts the process down.
 * - `stop()`: `insitu.shutdown` (2 s; only after a completed handshake: a process still in its
 *   handshake is not waited for), close stdin, SIGTERM, wait 2 s, SIGKILL. Idempotent.
 *   Every live child is also SIGKILLed synchronously when this process ends (on `exit` and on
 *   a fatal signal, see process-end.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { setMaxListeners } from 'node:events'
import { isDeepStrictEqual } from 'node:util'
import { FramingError } from '../protocol/framing.js'
import { DEFAULT_TIMEOUT_MS, RpcClosedError, RpcPeer, type RequestOptions, RpcResponseError, RpcTimeoutError } from '../protocol/peer.js'
import { isObject } from '../protocol/object-guards.js'
import { InitializeResult, parseBoundary, ResourceGetParams, type ResourceRead } from '../protocol/schemas.js'
import { wireJson } from '../values/wire-json.js'
import type { Manifest } from './manifest.js'
import { onProcessEnd } from '../sandbox/process-end.js'
import { isFolder } from '../documents/file-kinds.js'

export const RESTART_LIMIT = 5
export const RESTART_WINDOW_MS = 3 * 60_000
export const STDERR_TAIL_LINES = 20
export const MIN_INITIALIZE_TIMEOUT_MS = 10_000
const KILL_GRACE_MS = 2_000

export interface HostLogger {
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

export interface ExtensionProcessOptions {
  manifest: Manifest
  /** The command with `{python}`/`{node}` already resolved. */
  command: readonly string[]
  /** Absolute, already confined to the manifest folder. */
  cwd: string
  /** Absolute project root (POSIX) sent at initialize. */
  root: string
  /** Default per-request timeout. @default 30000 */
  timeoutMs?: number
  logger: HostLogger
  /** Serves `host.resource.get` from the extension; throw to answer with an error. */
  onResourceGet: (params: ResourceGetParams) => Promise<ResourceRead>
  /** Extra environment variables for the child. */
  env?: Record<string, string>
}

/** The process died (or broke the protocol) while requests were pending or on start. */
export class ExtensionCrashError extends Error {
  override name = 'ExtensionCrashError'
}

/** Handshake or manifest-consistency failure; not retried (later requests fail with it). */
export class ExtensionStartError extends Error {
  override name = 'ExtensionStartError'
}

/**
 * Live extension children of this Node process, shared through `globalThis` so that every
 * copy of this module (Vite bundles `vite.config` with its own copy, once per restart)
 * feeds one set, killed once when the process ends (see process-end.ts).
 */
interface ChildRegistry {
  children: Set<ChildProcess>
}
const REGISTRY = Symbol.for('vite-plugin-insitu.extension-children')

function childRegistry(): ChildRegistry {
  const global = globalThis as { [REGISTRY]?: ChildRegistry }
  let registry = global[REGISTRY]
  if (!registry) {
    const created: ChildRegistry = { children: new Set() }
    registry = created
    global[REGISTRY] = created
    onProcessEnd(() => {
      for (const survivor of created.children) {
        try {
          survivor.kill('SIGKILL')
        } catch {
          // already gone
        }
      }
    })
  }
  return registry
}

function trackChild(child: ChildProcess): void {
  const { children } = childRegistry()
  children.add(child)
  child.once('exit', () => children.delete(child))
  // A command that could not be spawned may never report 'exit'.
  child.once('error', () => {
    if (child.pid === undefined) children.delete(child)
  })
}

/** PIDs of every extension child this Node process still has alive (for tests and diagnostics). */
export function liveExtensionPids(): number[] {
  return [...childRegistry().children].map((child) => child.pid).filter((pid): pid is number => pid !== undefined)
}

interface Running {
  child: ChildProcess
  /** Set when the host itself is ending the process (stop or failed start). */
  closing: boolean
  peer: RpcPeer
  stderrTail: string[]
  /** Settles with the error pending requests should see once the process is gone. */
  failure: Promise<Error>
  exited: Promise<void>
  /** The initialize handshake succeeded (only then is `insitu.shutdown` sent on stop). */
  initialized: boolean
}

export class ExtensionProcess {
  /** The capabilities its runtime declared in the handshake (kind → name → description: `params` schema…), once started. */
  declared: Record<string, unknown> | undefined
  readonly name: string
  private running: Running | undefined
  private starting: Promise<Running> | undefined
  /** While a launch runs: its process once spawned (before the handshake), or undefined if it failed first. */
  private spawned: Promise<Running | undefined> | undefined
  private restarts: number[] = []
  private lastFailure: Error | undefined
  /** A handshake/manifest failure: permanent, every later request fails with it (no respawn). */
  private startError: Error | undefined
  private stopped = false
  private stopping: Promise<void> | undefined
  private readonly aborting = new AbortController()

  constructor(private readonly options: ExtensionProcessOptions) {
    this.name = options.manifest.name
    // Every request in flight listens to this one signal (a document with a dozen extension
    // regions waits on a dozen): not a leak, so no MaxListenersExceededWarning past ten.
    setMaxListeners(0, this.aborting.signal)
  }

  /** PID of the live process; undefined before start and once it has exited. */
  get pid(): number | undefined {
    const child = this.running?.child
    return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined
  }

  /** Start (or return the running process) and run the initialize handshake. */
  async start(): Promise<void> {
    await this.ensureRunning()
  }

  async request(method: string, params: unknown, options: RequestOptions = {}): Promise<unknown> {
    const aborted = this.aborting.signal
    if (aborted.aborted) throw aborted.reason
    const running = await untilAborted(this.ensureRunning(), aborted)
    const signal = options.signal ? AbortSignal.any([options.signal, aborted]) : aborted
    try {
      return await running.peer.request(method, params, { ...options, signal })
    } catch (error) {
      // Only a closed connection means the process went away: then report why. Anything
      // else (an error answer, a timeout, an abort, a message that cannot be encoded) is
      // this request's own failure, and the process is still fine.
      if (!running.peer.isClosed) throw error
      throw await running.failure
    }
  }

  /**
   * Fail every request in flight with `reason` now, and every later one at once (SPEC §2: only
   * local state is dropped, nothing is sent). The process keeps running until `stop()`.
   */
  abort(reason: Error): void {
    if (!this.aborting.signal.aborted) this.aborting.abort(reason)
  }

  /** Shut the process down (SPEC §3.6). Idempotent; later requests fail. */
  stop(): Promise<void> {
    this.stopped = true
    this.stopping ??= this.shutdown()
    return this.stopping
  }

  private async shutdown(): Promise<void> {
    // A process still in its handshake is stopped without waiting for the handshake.
    const running = this.running ?? (this.starting ? await this.spawned : undefined)
    if (!running) return
    const { child, peer } = running
    running.closing = true
    if (running.initialized && child.exitCode === null && child.signalCode === null) {
      await peer.request('insitu.shutdown', null).catch(() => undefined)
    }
    peer.close()
    await terminate(child, running.exited)
  }

  private ensureRunning(): Promise<Running> {
    if (this.stopped) return Promise.reject(new ExtensionCrashError(`extension ${this.name} is stopped`))
    if (this.startError) return Promise.reject(this.startError)
    if (this.running && !this.running.peer.isClosed) return Promise.resolve(this.running)
    if (this.starting) return this.starting
    if (this.running || this.lastFailure) {
      // A restart: keep within the budget.
      const now = Date.now()
      this.restarts = this.restarts.filter((at) => now - at < RESTART_WINDOW_MS)
      if (this.restarts.length >= RESTART_LIMIT) {
        return Promise.reject(
          new ExtensionCrashError(
            `extension ${this.name} restart budget spent (${RESTART_LIMIT} restarts in 3 minutes); last failure: ${this.lastFailure?.message ?? 'unknown'}`,
          ),
        )
      }
      this.restarts.push(now)
    }
    this.running = undefined
    let reportSpawned!: (running: Running | undefined) => void
    this.spawned = new Promise((resolve) => (reportSpawned = resolve))
    this.starting = this.launch(reportSpawned).finally(() => {
      reportSpawned(undefined) // a launch that failed before its process ran
      this.starting = undefined
    })
    return this.starting
  }

  private async launch(reportSpawned: (running: Running) => void): Promise<Running> {
    const { manifest, command, cwd, logger } = this.options
    const [file, ...args] = command
    if (!file) throw new ExtensionStartError(`extension command cannot be empty`)
    const child = spawn(file, args, {
      cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONUNBUFFERED: '1', ...this.options.env },
      windowsHide: true,
    })
    trackChild(child)
    // Nothing is written before the OS ran the command: a missing or unusable one is named as such.
    const spawnFailure = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      child.once('spawn', () => resolve(undefined))
      child.once('error', resolve)
    })
    if (spawnFailure) {
      this.startError = describeSpawnFailure(manifest, file, cwd, spawnFailure)
      throw this.startError
    }
    const stderrTail: string[] = []
    forwardStderr(child, this.name, stderrTail, logger)
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve()
      else child.once('exit', () => resolve())
    })
    // After the spawn, 'error' means the process could not be signalled: it is gone for us.
    const childError = new Promise<Error>((resolve) => child.once('error', resolve))
    // wireJson: rows and values keep Python's number kinds on the wire (`2.0`, big ints; issue #15).
    const peer = new RpcPeer(child.stdout!, child.stdin!, { name: this.name, timeoutMs: this.options.timeoutMs, stringify: wireJson })
    peer.onRequest('host.resource.get', async (params) => {
      const request = parseBoundary(ResourceGetParams, params, 'host.resource.get params')
      return this.options.onResourceGet(request)
    })
    const running: Running = { child, peer, stderrTail, failure: undefined!, exited, closing: false, initialized: false }
    running.failure = Promise.race([
      childError.then((error) => new ExtensionCrashError(`extension ${this.name} failed: ${error.message}`)),
      peer.closed.then(async (reason) => {
        // EOF on stdout usually precedes the exit event; a protocol error leaves the child alive
        // (and closing the peer ends its stdin, so it may exit 0 soon: that is still a violation).
        const violation = isProtocolViolation(reason)
        const exitedSoon = !violation && (await Promise.race([exited.then(() => true), delay(500).then(() => false)]))
        const notFrames = isOutputNotFrames(reason)
        if (running.closing) {
          // Its shutdown goes on (terminate); the author still learns where the output went.
          if (notFrames) logger.warn(reason.message)
          return new ExtensionCrashError(`extension ${this.name} is stopped`)
        }
        if (!exitedSoon) {
          child.kill('SIGKILL')
          await exited
          // The decoder already named the extension and quoted what it wrote.
          if (notFrames) return new ExtensionCrashError(reason.message)
          return new ExtensionCrashError(`extension ${this.name} broke the protocol: ${reason.message}${formatTail(stderrTail)}`)
        }
        await stderrDrained(child)
        const cut = reason instanceof FramingError ? ` inside a frame (${reason.message})` : ''
        return new ExtensionCrashError(`extension ${this.name} ${describeExit(child)}${cut}${formatTail(stderrTail)}`)
      }),
    ]).then((error) => {
      this.lastFailure = error
      peer.close(error)
      return error
    })
    this.running = running
    reportSpawned(running)
    let result: unknown
    try {
      result = await Promise.race([
        peer.request(
          'insitu.initialize',
          { protocol: 1, root: this.options.root, extension: manifest.name },
          // Start-up (interpreter, imports) gets at least 10 s even when requests are held shorter.
          { timeoutMs: Math.max(this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS, MIN_INITIALIZE_TIMEOUT_MS) },
        ),
        running.failure.then((error) => Promise.reject(error)),
      ])
    } catch (error) {
      // The connection went away (a crash at start): report why, as for a request.
      const reason = error instanceof RpcResponseError || error instanceof RpcTimeoutError
        ? new ExtensionStartError(`extension ${this.name} failed to initialize: ${(error as Error).message}`)
        : running.peer.isClosed
          ? await running.failure
          : (error as Error)
      if (reason instanceof ExtensionStartError) this.startError = reason
      await this.abandon(running)
      throw reason
    }
    try {
      this.declared = checkInitializeResult(manifest, result)
    } catch (error) {
      this.startError = error as Error
      await this.abandon(running)
      throw error
    }
    running.initialized = true
    return running
  }

  private async abandon(running: Running): Promise<void> {
    running.closing = true
    running.peer.close()
    await terminate(running.child, running.exited)
  }
}

/** Why the OS could not run an extension's command: `<ext>: command not found: <cmd> (from <manifest>)`. */
function describeSpawnFailure(manifest: Manifest, file: string, cwd: string, error: NodeJS.ErrnoException): ExtensionStartError {
  const from = `(from ${manifest.file})`
  if (error.code === 'ENOENT' && !isFolder(cwd)) {
    return new ExtensionStartError(`${manifest.name}: extension cwd not found: ${cwd} ${from}`)
  }
  if (error.code === 'ENOENT') return new ExtensionStartError(`${manifest.name}: command not found: ${file} ${from}`)
  if (error.code === 'EACCES') return new ExtensionStartError(`${manifest.name}: command is not executable: ${file} ${from}`)
  return new ExtensionStartError(`${manifest.name}: command could not start: ${file}: ${error.message} ${from}`)
}

/** SPEC §3.3: the runtime must match the manifest. */
export function checkInitializeResult(manifest: Manifest, raw: unknown): Record<string, unknown> {
  const result = parseBoundary(InitializeResult, raw, `initialize result of ${manifest.name}`)
  if (result.name !== manifest.name || result.version !== manifest.version) {
    throw new ExtensionStartError(`manifest/runtime identity mismatch for ${manifest.name}`)
  }
  for (const capability of manifest.capabilities) {
    const byKind = result.capabilities[capability.kind]
    const entry = isObject(byKind) ? byKind[capability.name] : undefined
    if (!isObject(entry)) {
      throw new ExtensionStartError(`${manifest.name} did not register ${capability.kind}:${capability.name}`)
    }
    const pinned = [
      ['params', capability.params_schema],
      ['value', capability.value_schema],
      ['result', capability.result_schema],
    ] as const
    for (const [key, schema] of pinned) {
      if (schema === null || schema === undefined) continue
      if (!isDeepStrictEqual(entry[key], schema)) {
        throw new ExtensionStartError(
          `${manifest.name} runtime ${key} schema mismatch for ${capability.kind}:${capability.name}`,
        )
      }
    }
  }
  return result.capabilities
}

function forwardStderr(child: ChildProcess, name: string, tail: string[], logger: HostLogger): void {
  let partial = ''
  const emit = (line: string): void => {
    tail.push(line)
    if (tail.length > STDERR_TAIL_LINES) tail.shift()
    logger.info(`[${name}] ${line}`)
  }
  child.stderr!.setEncoding('utf8')
  child.stderr!.on('data', (text: string) => {
    const lines = (partial + text).split(/\r?\n/)
    partial = lines.pop() ?? ''
    for (const line of lines) emit(line)
  })
  child.stderr!.on('end', () => {
    if (partial) emit(partial)
    partial = ''
  })
}

function stderrDrained(child: ChildProcess): Promise<void> {
  const stderr = child.stderr
  if (!stderr || stderr.readableEnded || stderr.destroyed) return Promise.resolve()
  return Promise.race([new Promise<void>((resolve) => stderr.once('close', () => resolve())), delay(500)])
}

/** The peer closed because of what the extension wrote, not at EOF nor inside a frame cut short by an exit. */
function isProtocolViolation(reason: Error): boolean {
  if (reason instanceof FramingError) return reason.rule !== 'incomplete-frame'
  return reason instanceof RpcClosedError && reason.message !== 'RPC peer closed'
}

/** The extension wrote something that is not a frame (a print to stdout). */
function isOutputNotFrames(reason: Error): boolean {
  return reason instanceof FramingError && reason.rule === 'malformed-header'
}

function describeExit(child: ChildProcess): string {
  if (child.signalCode) return `was killed by signal ${child.signalCode}`
  return `exited with code ${child.exitCode}`
}

function formatTail(tail: readonly string[]): string {
  return tail.length ? `\nlast stderr lines:\n${tail.join('\n')}` : ' (no stderr output)'
}

/** Close stdin, then SIGTERM, wait 2 s, then SIGKILL. */
async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  const alive = (): boolean => child.exitCode === null && child.signalCode === null
  if (!alive()) return
  if (child.stdin && !child.stdin.destroyed) child.stdin.end()
  if (await Promise.race([exited.then(() => true), delay(100).then(() => false)])) return
  child.kill('SIGTERM')
  if (await Promise.race([exited.then(() => true), delay(KILL_GRACE_MS).then(() => false)])) return
  child.kill('SIGKILL')
  await exited
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
