/**
 * The context a handler of an insitu extension receives (one per invocation).
 *
 * Contract:
 * - `location`, `root`, `trace` and `signal` describe the invocation: the request's
 *   Location, the project root from `insitu.initialize` (`''` before it), the request's
 *   trace, and a signal aborted when the connection to the host closes.
 * - `resource(id)` sends `host.resource.get` `{ resource, location, trace }` (the
 *   invocation's own location and trace), validates the reply as a `ResourceRead`, records
 *   its `dependencies` and returns its `value`. A host error rejects with the host's message.
 * - `dependOn(...ids)` declares dependencies; `diagnostic(d)` / `warn(message)` /
 *   `info(message)` add diagnostics (defaults filled, validated when the invocation ends).
 * - What it records is read back with `recorded()`: declared dependencies, read
 *   dependencies (both de-duplicated, first-seen order) and diagnostics in call order.
 */
import type { RpcPeer } from '../protocol/peer.js'
import { type Diagnostic, type Location, parseBoundary, ResourceRead } from '../protocol/schemas.js'

/** A diagnostic as handlers write it: `severity` and `message` are required, the rest default to null. */
export interface DiagnosticInput {
  severity: Diagnostic['severity']
  message: string
  path?: string | null
  line?: number | null
  code?: string | null
}

export interface HandlerContext {
  /** Where the invocation happens (the document's Location; the project root for validators). */
  readonly location: Location
  /** Absolute POSIX project root from `insitu.initialize`; `''` until the host initialized. */
  readonly root: string
  /** The invocation's trace, as sent by the host (it already ends with this invocation's node). */
  readonly trace: readonly string[]
  /** Aborted when the connection to the host closes. */
  readonly signal: AbortSignal
  /** Read a host resource (`fs:file:…`, `fs:glob:…`, `sql:model:…`, `resource:…`, `git://…`); its dependencies are recorded. */
  resource(id: string): Promise<unknown>
  /** Declare dependencies of this invocation (listed before the recorded read dependencies). */
  dependOn(...ids: string[]): void
  /** Add a diagnostic to this invocation's result. */
  diagnostic(diagnostic: DiagnosticInput): void
  /** Add a `warning` diagnostic. */
  warn(message: string, details?: Omit<DiagnosticInput, 'severity' | 'message'>): void
  /** Add an `info` diagnostic. */
  info(message: string, details?: Omit<DiagnosticInput, 'severity' | 'message'>): void
}

export interface RecordedEffects {
  declared: string[]
  reads: string[]
  diagnostics: DiagnosticInput[]
}

export interface InvocationContextInit {
  peer: RpcPeer
  location: Location
  root: string
  trace: readonly string[]
  signal: AbortSignal
}

export class InvocationContext implements HandlerContext {
  readonly location: Location
  readonly root: string
  readonly trace: readonly string[]
  readonly signal: AbortSignal
  private readonly peer: RpcPeer
  private readonly declared = new Set<string>()
  private readonly reads = new Set<string>()
  private readonly diagnostics: DiagnosticInput[] = []

  constructor(init: InvocationContextInit) {
    this.peer = init.peer
    this.location = Object.freeze({ ...init.location })
    this.root = init.root
    this.trace = Object.freeze([...init.trace])
    this.signal = init.signal
  }

  async resource(id: string): Promise<unknown> {
    const reply = await this.peer.request(
      'host.resource.get',
      { resource: id, location: this.location, trace: this.trace },
      { signal: this.signal },
    )
    const read = parseBoundary(ResourceRead, reply, `host.resource.get reply for ${id}`)
    for (const dependency of read.dependencies) this.reads.add(dependency)
    return read.value
  }

  dependOn(...ids: string[]): void {
    for (const id of ids) this.declared.add(id)
  }

  diagnostic(diagnostic: DiagnosticInput): void {
    this.diagnostics.push(diagnostic)
  }

  warn(message: string, details: Omit<DiagnosticInput, 'severity' | 'message'> = {}): void {
    this.diagnostics.push({ ...details, severity: 'warning', message })
  }

  info(message: string, details: Omit<DiagnosticInput, 'severity' | 'message'> = {}): void {
    this.diagnostics.push({ ...details, severity: 'info', message })
  }

  recorded(): RecordedEffects {
    return { declared: [...this.declared], reads: [...this.reads], diagnostics: [...this.diagnostics] }
  }
}
