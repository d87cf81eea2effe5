/**
 * `defineExtension()`: declare an insitu extension's capabilities and answer the host.
 *
 * Contract:
 * - `transform|resource|renderer|validator(name, spec, handler)` register one capability
 *   (a name is unique per kind). `spec.params` (default `z.record(z.string(), z.unknown())`)
 *   validates `InvocationRequest.options`; `spec.value` (renderers) validates
 *   `InvocationRequest.value`; `spec.result` (resources) validates the returned value.
 * - `insitu.initialize` (validated `InitializeRequest`) answers `{ name, version, protocol: 1,
 *   capabilities }` with all four kind keys (`{}` when empty); each entry is `{ params }`
 *   plus `value` (renderers) / `result` (resources) when declared: JSON Schemas from
 *   `z.toJSONSchema` without `$schema` (params/value with `io: 'input'`, so defaulted fields
 *   are not required; result with `io: 'output'`). Invocations before initialize are allowed
 *   (`ctx.root` is `''` then); a repeated initialize updates the root.
 * - `insitu.transform|resource|render|validate`: the request is checked against the strict
 *   `InvocationRequest` (-32602), the capability is looked up by `name`
 *   (`unknown <kind>: <name>`, -32000), options/value are checked (-32602, the message names
 *   the field path), then the handler runs (sync or async; a throw answers -32000 with its
 *   message). The reply is a complete InvocationResult: diagnostics added through the context
 *   first, then returned ones; dependencies = returned ones, then `ctx.dependOn` ones, then
 *   those recorded by `ctx.resource` reads, de-duplicated in first-seen order. A handler
 *   result that fails the schema answers -32000 `invalid result of <node>: <path: reason>`.
 * - `insitu.shutdown` answers null, then closes the connection (which ends the output).
 */
import type { Readable, Writable } from 'node:stream'
import { z } from 'zod'
import { ErrorCodes, RpcPeer, RpcResponseError } from '../protocol/peer.js'
import {
  CAPABILITY_KINDS,
  type CapabilityKind,
  Diagnostic,
  InitializeRequest,
  type InitializeResult,
  InvocationRequest,
  InvocationResult,
  parseBoundary,
} from '../protocol/schemas.js'
import { type DiagnosticInput, type HandlerContext, InvocationContext } from './context.js'
import { serveStdio } from './serve.js'

/** The params schema of a capability that declares none: any options object passes. */
export const DEFAULT_PARAMS = z.record(z.string(), z.unknown())
export type DefaultParams = typeof DEFAULT_PARAMS

export type Awaitable<T> = T | Promise<T>

export interface ExtensionInfo {
  /** Must equal the manifest's `name`. */
  name: string
  /** Must equal the manifest's `version`. */
  version: string
}

/** What a transform or renderer may return instead of a plain string. */
export interface ContentOutput {
  content: string | null
  value?: unknown
  diagnostics?: DiagnosticInput[]
  dependencies?: string[]
}

export interface TransformSpec<P extends z.ZodType> {
  /** Validates the region's options. @default z.record(z.string(), z.unknown()) */
  params?: P
}
export type TransformHandler<P extends z.ZodType> = (
  params: z.output<P>,
  ctx: HandlerContext,
) => Awaitable<string | ContentOutput>

export interface ResourceSpec<P extends z.ZodType, R extends z.ZodType> {
  /** Validates the options (the `?k=v` query of `resource:<name>`). @default z.record(z.string(), z.unknown()) */
  params?: P
  /** Validates the returned value and is reported as the capability's `result` schema. */
  result?: R
}
/** A resource handler returns its value (any JSON); diagnostics and dependencies go through `ctx`. */
export type ResourceHandler<P extends z.ZodType, R extends z.ZodType> = (
  params: z.output<P>,
  ctx: HandlerContext,
) => Awaitable<z.input<R>>

export interface RendererSpec<P extends z.ZodType, V extends z.ZodType> {
  /** Validates the renderer's options. @default z.record(z.string(), z.unknown()) */
  params?: P
  /** Validates the value to render. @default none (any JSON value) */
  value?: V
}
export type RendererHandler<P extends z.ZodType, V extends z.ZodType> = (
  value: z.output<V>,
  params: z.output<P>,
  ctx: HandlerContext,
) => Awaitable<string | ContentOutput>

// Validators get options `{}` (SPEC §4), so they declare no params schema.
export type ValidatorSpec = Record<string, never>
export type ValidatorHandler = (ctx: HandlerContext) => Awaitable<DiagnosticInput[] | void>

export interface ConnectOptions {
  /** Called once when the connection closes (EOF, protocol error, or after `insitu.shutdown`). */
  onClose?: (reason: Error) => void
  /** Called when a reply cannot be written. */
  onError?: (error: Error) => void
}

interface Capability {
  kind: CapabilityKind
  name: string
  params: z.ZodType
  value: z.ZodType | undefined
  result: z.ZodType | undefined
  /** The capability entry reported at initialize. */
  description: Record<string, unknown>
  /** Runs the handler; resolves with a partial InvocationResult, validated by `assembleResult`. */
  run(params: unknown, value: unknown, ctx: InvocationContext): Promise<unknown>
}

/** Invocation method → capability kind and trace-node prefix (SPEC §6). */
const INVOCATIONS = {
  'insitu.transform': { kind: 'transform', node: 'transform' },
  'insitu.resource': { kind: 'resource', node: 'resource' },
  'insitu.render': { kind: 'renderer', node: 'render' },
  'insitu.validate': { kind: 'validator', node: 'validate' },
} as const satisfies Record<string, { kind: CapabilityKind; node: string }>
type InvocationMethod = keyof typeof INVOCATIONS

export class Extension {
  readonly name: string
  readonly version: string
  private readonly capabilities = new Map<CapabilityKind, Map<string, Capability>>(
    CAPABILITY_KINDS.map((kind) => [kind, new Map()]),
  )

  constructor(info: ExtensionInfo) {
    if (typeof info?.name !== 'string' || info.name === '') throw new TypeError('extension name must be a non-empty string')
    if (typeof info.version !== 'string' || info.version === '') {
      throw new TypeError('extension version must be a non-empty string')
    }
    this.name = info.name
    this.version = info.version
  }

  transform<P extends z.ZodType = DefaultParams>(name: string, spec: TransformSpec<P>, handler: TransformHandler<P>): this {
    return this.register('transform', name, spec.params, undefined, undefined, async (params, _value, ctx) =>
      contentOutcome(await handler(params as z.output<P>, ctx)),
    )
  }

  resource<P extends z.ZodType = DefaultParams, R extends z.ZodType = z.ZodUnknown>(
    name: string,
    spec: ResourceSpec<P, R>,
    handler: ResourceHandler<P, R>,
  ): this {
    const label = `result of resource:${name}`
    return this.register('resource', name, spec.params, undefined, spec.result, async (params, _value, ctx) => {
      const value: unknown = await handler(params as z.output<P>, ctx)
      return { value: spec.result ? checkOutput(spec.result, value, label) : value }
    })
  }

  renderer<P extends z.ZodType = DefaultParams, V extends z.ZodType = z.ZodUnknown>(
    name: string,
    spec: RendererSpec<P, V>,
    handler: RendererHandler<P, V>,
  ): this {
    return this.register('renderer', name, spec.params, spec.value, undefined, async (params, value, ctx) =>
      contentOutcome(await handler(value as z.output<V>, params as z.output<P>, ctx)),
    )
  }

  validator(name: string, _spec: ValidatorSpec, handler: ValidatorHandler): this {
    return this.register('validator', name, undefined, undefined, undefined, async (_params, _value, ctx) => ({
      diagnostics: (await handler(ctx)) ?? [],
    }))
  }

  /** The `insitu.initialize` result (all four kind keys, JSON Schemas per capability). */
  describe(): InitializeResult {
    const capabilities: Record<string, Record<string, unknown>> = {}
    for (const [kind, byName] of this.capabilities) {
      capabilities[kind] = Object.fromEntries([...byName].map(([name, capability]) => [name, capability.description]))
    }
    return { name: this.name, version: this.version, protocol: 1, capabilities }
  }

  /**
   * Answer a host over the given streams (the host writes to `input`, reads `output`).
   * Returns the peer; it closes on EOF, on a protocol error, or after `insitu.shutdown`.
   */
  connect(input: Readable, output: Writable, options: ConnectOptions = {}): RpcPeer {
    const peer = new RpcPeer(input, output, { name: 'host', onClose: options.onClose, onError: options.onError })
    const session = { root: '' }
    peer.onRequest('insitu.initialize', (params) => {
      const request = parseBoundary(InitializeRequest, params, 'insitu.initialize params')
      session.root = request.root
      return this.describe()
    })
    for (const method of Object.keys(INVOCATIONS) as InvocationMethod[]) {
      peer.onRequest(method, (params, { signal }) => this.invoke(peer, method, params, session.root, signal))
    }
    peer.onRequest('insitu.shutdown', () => {
      // The reply is written once this handler returns; close (and end the output) after it.
      setImmediate(() => peer.close())
      return null
    })
    return peer
  }

  /**
   * Serve the host on stdin/stdout. stdout carries protocol only: `console.log` and any
   * `process.stdout.write` by user code go to stderr. The process exits with code 0 on
   * stdin EOF and after answering `insitu.shutdown` (once the reply is flushed), with
   * code 1 after a protocol error (reported on stderr).
   */
  serve(): Promise<void> {
    return serveStdio((input, output, options) => this.connect(input, output, options))
  }

  private register(
    kind: CapabilityKind,
    name: string,
    params: z.ZodType | undefined,
    value: z.ZodType | undefined,
    result: z.ZodType | undefined,
    run: Capability['run'],
  ): this {
    if (typeof name !== 'string' || name === '') throw new TypeError(`${kind} name must be a non-empty string`)
    const byName = this.capabilities.get(kind)!
    if (byName.has(name)) throw new Error(`capability already defined: ${kind}:${name}`)
    const paramsSchema = params ?? DEFAULT_PARAMS
    for (const [what, schema] of [['params', paramsSchema], ['value', value], ['result', result]] as const) {
      if (schema !== undefined && !isZodSchema(schema)) throw new TypeError(`${what} of ${kind}:${name} must be a zod schema`)
    }
    const description: Record<string, unknown> = { params: toJsonSchema(paramsSchema, 'input') }
    if (value) description.value = toJsonSchema(value, 'input')
    if (result) description.result = toJsonSchema(result, 'output')
    byName.set(name, { kind, name, params: paramsSchema, value, result, description, run })
    return this
  }

  private async invoke(
    peer: RpcPeer,
    method: InvocationMethod,
    params: unknown,
    root: string,
    signal: AbortSignal,
  ): Promise<InvocationResult> {
    const { kind, node: prefix } = INVOCATIONS[method]
    const request = parseBoundary(InvocationRequest, params, `${method} params`)
    const capability = this.capabilities.get(kind)!.get(request.name)
    if (!capability) throw new RpcResponseError(`unknown ${kind}: ${request.name}`, ErrorCodes.HandlerFailed)
    const node = `${prefix}:${request.name}`
    const options = parseBoundary(capability.params, request.options, `options of ${node}`)
    const value = capability.value ? parseBoundary(capability.value, request.value, `value of ${node}`) : request.value
    const ctx = new InvocationContext({ peer, location: request.location, root, trace: request.trace, signal })
    let outcome: unknown
    try {
      outcome = await capability.run(options, value, ctx)
    } catch (error) {
      throw handlerFailure(error)
    }
    return assembleResult(node, outcome, ctx)
  }
}

/** Start an extension: `defineExtension({ name, version })`, then register capabilities and `serve()`. */
export function defineExtension(info: ExtensionInfo): Extension {
  return new Extension(info)
}

function contentOutcome(output: string | ContentOutput): unknown {
  return typeof output === 'string' ? { content: output } : output
}

function assembleResult(node: string, outcome: unknown, ctx: InvocationContext): InvocationResult {
  const returned = checkOutput(InvocationResult, outcome, `result of ${node}`)
  const recorded = ctx.recorded()
  const diagnostics = checkOutput(z.array(Diagnostic), recorded.diagnostics, `diagnostics of ${node}`)
  return {
    content: returned.content,
    value: returned.value,
    diagnostics: [...diagnostics, ...returned.diagnostics],
    dependencies: [...new Set([...returned.dependencies, ...recorded.declared, ...recorded.reads])],
  }
}

/** Validate something the handler produced: a failure is the handler's (-32000), not the host's params. */
function checkOutput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  try {
    return parseBoundary(schema, value, what)
  } catch (error) {
    throw handlerFailure(error)
  }
}

function handlerFailure(error: unknown): RpcResponseError {
  // Every handler failure (a host error from ctx.resource or a BoundaryError included) is -32000:
  // left as a BoundaryError, the peer would answer -32602 as if the host's params were wrong.
  if (error instanceof RpcResponseError && error.code === ErrorCodes.HandlerFailed) return error
  const message = error instanceof Error ? error.message : String(error)
  return new RpcResponseError(message, ErrorCodes.HandlerFailed)
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>
  return rest
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && typeof (value as { safeParse?: unknown }).safeParse === 'function'
}
