/**
 * A symmetric JSON-RPC 2.0 peer over a pair of byte streams (SPEC §2).
 *
 * Contract:
 * - Both sides send requests and notifications at any time; outbound request ids are
 *   integers from 1. Inbound messages with `method` are requests (with `id`) or
 *   notifications; the rest are responses matched by id (unknown or settled ids ignored).
 * - Inbound requests run concurrently. Outbound messages go through one ordered queue: each
 *   is encoded when its turn comes (so params must not be mutated after the call) and written
 *   with one `write`, so frames never interleave; after every 64 KiB written the queue yields
 *   to the event loop, and it waits for `drain` past 32 MiB buffered.
 * - Handler failures answer `-32601 unknown method: <m>`, `-32602 <field path: reason>` (a
 *   `BoundaryError`), or `-32000 <message>`; notifications never get a reply.
 * - Outbound requests time out after 30 s (2 s for `insitu.shutdown`) unless overridden;
 *   a timeout or an abort only drops local state: nothing is sent to the other side.
 * - An outbound message over 16 MiB fails its caller before anything is written or recorded.
 * - On EOF, a framing/JSON error, a stream error, or the output stream closing, the peer
 *   closes: every pending request and queued message fails with the reason (`RPC peer closed`
 *   on a clean EOF or a closed output) and later requests fail at once.
 * - Messages nothing asked for or handles (a response to no pending request: a late answer after
 *   a timeout, an id never sent; a notification or request of a method with no handler; an error
 *   for id null) are ignored (a request is still answered), up to `MAX_IGNORED_BYTES` of them
 *   since a response last settled a request: past it the peer closes (`<name> sent 64 MiB of
 *   messages nothing asked for (the last: a response for id 1000000000)`), so a peer flooding its
 *   output cannot keep this process parsing.
 * - Output that is not a frame is named for `name` (`stdout must carry only protocol frames;
 *   <name> wrote "…"`, see framing.ts); a line of it that has no line break yet is reported
 *   50 ms after it came if nothing completes it first (a print without a newline fails at once,
 *   a print written in pieces is quoted whole).
 */
import type { Readable, Writable } from 'node:stream'
import { encodeFrame, FrameDecoder } from './framing.js'
import { isObject } from './object-guards.js'
import { BoundaryError } from './schemas.js'

export const DEFAULT_TIMEOUT_MS = 30_000
export const SHUTDOWN_TIMEOUT_MS = 2_000

export const ErrorCodes = {
  MethodNotFound: -32601,
  InvalidParams: -32602,
  HandlerFailed: -32000,
} as const

/** An error response from the other side (or one a handler wants to send with its code). */
export class RpcResponseError extends Error {
  override name = 'RpcResponseError'
  constructor(
    message: string,
    readonly code: number = ErrorCodes.HandlerFailed,
    readonly data?: unknown,
  ) {
    super(message)
  }
}

export class RpcTimeoutError extends Error {
  override name = 'RpcTimeoutError'
  /** Out of time (the engine does not run such a job again because an input changed meanwhile). */
  readonly timedOut = true
  constructor(
    readonly method: string,
    readonly peerName: string,
    readonly timeoutMs: number,
  ) {
    super(`${method} to ${peerName} timed out after ${timeoutMs} ms`)
  }
}

/** The connection is gone: EOF, a protocol violation, a stream error, or `close()`. */
export class RpcClosedError extends Error {
  override name = 'RpcClosedError'
}

export interface RequestContext {
  /** Aborted when the peer closes. */
  signal: AbortSignal
}
export type RequestHandler = (params: unknown, context: RequestContext) => unknown
export type NotificationHandler = (params: unknown) => void

export interface RequestOptions {
  /** Milliseconds before the request fails; `0` or `Infinity` disables the timer. @default 30000 (2000 for insitu.shutdown) */
  timeoutMs?: number
  signal?: AbortSignal
}

export interface RpcPeerOptions {
  /** Who is on the other side, as errors should name it (e.g. the extension name). @default 'peer' */
  name?: string
  /** Default timeout of outbound requests. @default 30000 */
  timeoutMs?: number
  /** Called once when the peer closes, with the reason. */
  onClose?: (reason: Error) => void
  /** Called when a notification handler or a reply write fails (never thrown). */
  onError?: (error: Error) => void
  /**
   * Writes a message's compact JSON (the host passes values/wire-json.ts, which keeps Python's
   * float kind: `2.0`). @default JSON.stringify
   */
  stringify?: (message: unknown) => string | undefined
}

/** How many bytes of responses to no pending request are ignored before the peer closes (see the contract). */
export const MAX_IGNORED_BYTES = 64 * 1024 * 1024

/** How long a line that is not a frame may wait for the rest of itself before it is reported. */
export const JUNK_GRACE_MS = 50

/** Bytes buffered in the output stream past which the outbox waits for `drain`. */
const OUTBOX_HIGH_WATER = 32 * 1024 * 1024
/** After writing this many bytes in one go, let the event loop run before encoding more. */
const YIELD_AFTER_BYTES = 64 * 1024

interface Outbound {
  /** The frame to write, or null to skip the message. Runs when the message's turn comes. */
  encode: () => Buffer | null
  /** Called once: with an error when encoding or writing failed, else when written. */
  done: (error?: Error) => void
}

interface Pending {
  method: string
  resolve: (value: unknown) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout | undefined
  signal: AbortSignal | undefined
  onAbort: (() => void) | undefined
}

type Id = number | string

export class RpcPeer {
  readonly name: string
  private readonly stringify: (message: unknown) => string | undefined
  private readonly decoder: FrameDecoder
  /** Reports a line that is not a frame once its grace ran out (see JUNK_GRACE_MS). */
  private junkTimer: NodeJS.Timeout | undefined
  private readonly pending = new Map<Id, Pending>()
  private readonly requestHandlers = new Map<string, RequestHandler>()
  private readonly notificationHandlers = new Map<string, NotificationHandler>()
  private readonly lifetime = new AbortController()
  private readonly defaultTimeoutMs: number
  private nextId = 1
  private readonly outbox: Outbound[] = []
  private outboxHead = 0
  /** Messages handed to `write` whose callback has not run yet. */
  private readonly writing = new Set<Outbound>()
  private flushing = false
  private bytesSinceYield = 0
  private closeReason: Error | undefined
  /** Bytes of responses ignored since a response last settled a request (see `MAX_IGNORED_BYTES`). */
  private ignoredBytes = 0
  private readonly closedPromise: Promise<Error>
  private resolveClosed!: (reason: Error) => void

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: RpcPeerOptions = {},
  ) {
    this.name = options.name ?? 'peer'
    this.decoder = new FrameDecoder({ writer: options.name })
    this.stringify = options.stringify ?? JSON.stringify
    this.defaultTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
    this.closedPromise = new Promise((resolve) => (this.resolveClosed = resolve))
    input.on('data', this.onData)
    input.on('end', this.onEnd)
    input.on('error', this.onStreamError)
    input.on('close', this.onEnd)
    output.on('error', this.onStreamError)
    output.on('close', this.onOutputClose)
  }

  /** Resolves with the reason once the peer has closed. */
  get closed(): Promise<Error> {
    return this.closedPromise
  }

  get isClosed(): boolean {
    return this.closeReason !== undefined
  }

  /** Outbound requests still waiting for a response. */
  get pendingCount(): number {
    return this.pending.size
  }

  onRequest(method: string, handler: RequestHandler): this {
    this.requestHandlers.set(method, handler)
    return this
  }

  onNotification(method: string, handler: NotificationHandler): this {
    this.notificationHandlers.set(method, handler)
    return this
  }

  request(method: string, params: unknown = null, options: RequestOptions = {}): Promise<unknown> {
    if (this.closeReason) return Promise.reject(this.closeReason)
    const { signal } = options
    if (signal?.aborted) return Promise.reject(abortError(method, signal))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? (method === 'insitu.shutdown' ? SHUTDOWN_TIMEOUT_MS : this.defaultTimeoutMs)
      const entry: Pending = { method, resolve, reject, timer: undefined, signal, onAbort: undefined }
      if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
        entry.timer = setTimeout(() => this.settle(id, new RpcTimeoutError(method, this.name, timeoutMs)), timeoutMs)
      }
      if (signal) {
        entry.onAbort = () => this.settle(id, abortError(method, signal))
        signal.addEventListener('abort', entry.onAbort, { once: true })
      }
      this.pending.set(id, entry)
      this.send({
        // A request dropped (timeout, abort, close) before its turn is never written.
        encode: () => (this.pending.has(id) ? encodeFrame({ jsonrpc: '2.0', id, method, params: params ?? null }, this.stringify) : null),
        done: (error) => {
          if (error) this.settle(id, error)
        },
      })
    })
  }

  /** Send a notification; resolves once it is handed to the stream. */
  notify(method: string, params: unknown = null): Promise<void> {
    if (this.closeReason) return Promise.reject(this.closeReason)
    return new Promise((resolve, reject) =>
      this.send({
        encode: () => encodeFrame({ jsonrpc: '2.0', method, params: params ?? null }, this.stringify),
        done: (error) => (error ? reject(error) : resolve()),
      }),
    )
  }

  /**
   * Close the connection: fail pending requests with `reason` (default `RPC peer closed`)
   * and end the output stream. Idempotent.
   */
  close(reason: Error = new RpcClosedError('RPC peer closed')): void {
    if (this.closeReason) return
    this.closeReason = reason
    this.input.off('data', this.onData)
    this.input.off('end', this.onEnd)
    this.input.off('close', this.onEnd)
    clearTimeout(this.junkTimer)
    // Keep swallowing stream errors (EPIPE after close) so they never become uncaught.
    this.lifetime.abort(reason)
    for (const id of [...this.pending.keys()]) this.settle(id, reason)
    const unsent = this.outbox.slice(this.outboxHead)
    this.outbox.length = 0
    this.outboxHead = 0
    for (const message of unsent) message.done(reason)
    // A destroyed stream may never call back the writes it still held: settle them here.
    const held = [...this.writing]
    this.writing.clear()
    for (const message of held) message.done(reason)
    this.output.off('drain', this.onDrain)
    this.output.off('close', this.onOutputClose)
    this.flushing = false
    if (!this.output.writableEnded && !this.output.destroyed) this.output.end()
    this.resolveClosed(reason)
    this.options.onClose?.(reason)
  }

  /**
   * Queue one outbound message. Messages are encoded and written in order, one `write` per
   * frame. Messages go out synchronously until 64 KiB were written in one go; then the queue
   * yields to the event loop (so the bytes flow and responses are read while the next one is encoded), and
   * past `OUTBOX_HIGH_WATER` buffered bytes it waits for `drain`.
   */
  private send(message: Outbound): void {
    let settled = false
    const done = message.done
    // Settled once: by the write callback, or by close() for a write the stream never finishes.
    message.done = (error) => {
      if (settled) return
      settled = true
      done(error)
    }
    this.outbox.push(message)
    if (!this.flushing) this.flush()
  }

  private flush(): void {
    this.flushing = true
    for (;;) {
      // An index instead of shift(): a long backlog stays linear.
      const message = this.outbox[this.outboxHead]
      if (!message) {
        this.outbox.length = 0
        this.outboxHead = 0
        this.flushing = false
        return
      }
      this.outbox[this.outboxHead++] = undefined!
      if (this.outboxHead > 1024 && this.outboxHead * 2 > this.outbox.length) {
        // A sustained backlog: drop the consumed head so the array does not keep growing.
        this.outbox.splice(0, this.outboxHead)
        this.outboxHead = 0
      }
      if (this.output.destroyed || this.output.writableEnded) {
        message.done(this.closeReason ?? new RpcClosedError('RPC peer closed'))
        continue
      }
      let frame: Buffer | null
      try {
        frame = message.encode()
      } catch (error) {
        message.done(error as Error)
        continue
      }
      if (frame === null) continue
      this.writing.add(message)
      const more = this.output.write(frame, (error) => {
        this.writing.delete(message)
        message.done(error ?? undefined)
      })
      // Stay "flushing" while paused, so messages sent meanwhile queue up behind this one.
      // ('drain' follows only a write that returned false; close() ends the wait.)
      if (!more && this.output.writableLength >= OUTBOX_HIGH_WATER) {
        this.output.once('drain', this.onDrain)
        return
      }
      this.bytesSinceYield += frame.length
      if (this.bytesSinceYield >= YIELD_AFTER_BYTES) {
        this.bytesSinceYield = 0
        setImmediate(() => this.flush())
        return
      }
    }
  }

  private settle(id: Id, error: Error | undefined, result?: unknown): void {
    const entry = this.pending.get(id)
    if (!entry) return
    this.pending.delete(id)
    if (entry.timer) clearTimeout(entry.timer)
    if (entry.onAbort) entry.signal?.removeEventListener('abort', entry.onAbort)
    if (error) entry.reject(error)
    else entry.resolve(result)
  }

  private readonly onData = (chunk: Buffer | string): void => {
    let bodies: Buffer[]
    try {
      bodies = this.decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    } catch (error) {
      this.close(error as Error)
      return
    }
    for (const body of bodies) {
      if (this.closeReason) return
      let message: unknown
      try {
        message = JSON.parse(body.toString('utf8'))
      } catch (error) {
        this.close(new RpcClosedError(`frame body is not valid JSON: ${(error as Error).message}`))
        return
      }
      this.dispatch(message, body.length)
    }
    if (this.decoder.holdsJunk && !this.junkTimer && !this.closeReason) {
      this.junkTimer = setTimeout(this.onJunkGrace, JUNK_GRACE_MS)
    }
  }

  private readonly onJunkGrace = (): void => {
    this.junkTimer = undefined
    try {
      this.decoder.rejectHeldJunk()
    } catch (error) {
      this.close(error as Error)
    }
  }

  private readonly onEnd = (): void => {
    if (this.closeReason) return
    try {
      this.decoder.end()
    } catch (error) {
      this.close(error as Error)
      return
    }
    this.close()
  }

  private readonly onDrain = (): void => this.flush()

  /** Nothing more can be sent (the other side's input is gone): the connection is over. */
  private readonly onOutputClose = (): void => this.close()

  private readonly onStreamError = (error: Error): void => {
    this.close(error)
  }

  private dispatch(message: unknown, bytes: number): void {
    if (!isObject(message) || message.jsonrpc !== '2.0') {
      this.close(new RpcClosedError('frame body is not a JSON-RPC 2.0 message'))
      return
    }
    const { id } = message
    if ('method' in message) {
      const hasId = 'id' in message
      if (typeof message.method !== 'string' || (hasId && !isId(id))) {
        this.close(new RpcClosedError('frame body is not a JSON-RPC 2.0 message'))
        return
      }
      const params = message.params ?? null
      const handled = hasId ? this.requestHandlers.has(message.method) : this.notificationHandlers.has(message.method)
      if (!handled && this.unasked(bytes, `${hasId ? 'a request' : 'a notification'} ${JSON.stringify(message.method)}`)) return
      if (hasId) void this.answer(id as Id, message.method, params)
      else this.deliver(message.method, params)
      return
    }
    if (id === null && 'error' in message) {
      // An error about a message the other side could not even read: nothing to settle.
      if (this.unasked(bytes, 'an error for id null')) return
      this.options.onError?.(new RpcResponseError(describeError(message.error)))
      return
    }
    if (!isId(id) || !('result' in message || 'error' in message)) {
      this.close(new RpcClosedError('frame body is not a JSON-RPC 2.0 message'))
      return
    }
    if (!this.pending.has(id)) {
      this.unasked(bytes, `a response for id ${JSON.stringify(id)}`)
      return
    }
    this.ignoredBytes = 0
    if ('error' in message && message.error !== undefined) {
      const error = isObject(message.error) ? message.error : {}
      const text = describeError(message.error)
      const code = typeof error.code === 'number' ? error.code : ErrorCodes.HandlerFailed
      this.settle(id, new RpcResponseError(text, code, error.data))
    } else {
      this.settle(id, undefined, message.result ?? null)
    }
  }

  /**
   * A message nothing asked for or handles (`what` it was): counted; past `MAX_IGNORED_BYTES`
   * since a response last settled a request the peer closes (true: closed, drop the message).
   */
  private unasked(bytes: number, what: string): boolean {
    this.ignoredBytes += bytes
    if (this.ignoredBytes <= MAX_IGNORED_BYTES) return false
    const mib = Math.round(MAX_IGNORED_BYTES / (1024 * 1024))
    this.close(new RpcClosedError(`${this.name} sent ${mib} MiB of messages nothing asked for (the last: ${what})`))
    return true
  }

  private deliver(method: string, params: unknown): void {
    const handler = this.notificationHandlers.get(method)
    if (!handler) return
    try {
      // An async handler's rejection must reach onError too, never become an unhandled rejection.
      const outcome: unknown = handler(params)
      if (outcome instanceof Promise) outcome.catch((error: unknown) => this.options.onError?.(error as Error))
    } catch (error) {
      this.options.onError?.(error as Error)
    }
  }

  private async answer(id: Id, method: string, params: unknown): Promise<void> {
    let reply: object
    const handler = this.requestHandlers.get(method)
    if (!handler) {
      reply = { jsonrpc: '2.0', id, error: { code: ErrorCodes.MethodNotFound, message: `unknown method: ${method}` } }
    } else {
      try {
        const result = await handler(params, { signal: this.lifetime.signal })
        if (typeof result === 'function' || typeof result === 'symbol') {
          throw new Error(`${method} handler returned a ${typeof result}, which is not JSON`)
        }
        reply = { jsonrpc: '2.0', id, result: result ?? null }
      } catch (error) {
        reply = { jsonrpc: '2.0', id, error: errorObject(error) }
      }
    }
    if (this.closeReason) return
    this.send({
      encode: () => {
        try {
          return encodeFrame(reply, this.stringify)
        } catch (error) {
          // The result itself is unsendable (too large, or not JSON): tell the caller instead.
          return encodeFrame({ jsonrpc: '2.0', id, error: errorObject(error) }, this.stringify)
        }
      },
      done: (error) => {
        if (error) this.options.onError?.(error)
      },
    })
  }
}

function describeError(error: unknown): string {
  return isObject(error) && typeof error.message === 'string' ? error.message : JSON.stringify(error)
}

function errorObject(error: unknown): { code: number; message: string } {
  if (error instanceof RpcResponseError) return { code: error.code, message: error.message }
  if (error instanceof BoundaryError) return { code: ErrorCodes.InvalidParams, message: error.message }
  const message = error instanceof Error ? error.message : String(error)
  return { code: ErrorCodes.HandlerFailed, message }
}

function abortError(method: string, signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  if (reason instanceof Error && reason.name !== 'AbortError') return reason
  const error = new Error(`${method} aborted`)
  error.name = 'AbortError'
  return error
}

function isId(value: unknown): value is Id {
  return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'string'
}
