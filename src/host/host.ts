/**
 * The insitu host: extensions and builtins behind one API (SPEC §3, §6, §9).
 *
 * Contract:
 * - `InsituHost.start()` checks `.insitu/extensions/` against `insitu.lock` first (SPEC §12,
 *   host/lock-check.ts): locked extensions that are missing throw a `LockError`
 *   (`<insitu.lock>: locked extension is missing: <a, b>`); an installed extension that is not
 *   locked, or whose version, protocol or content hash differs, is never spawned and fails like
 *   a start failure (listed, logged once, its capabilities failing with that `LockError`).
 *   It then discovers the project's enabled extensions, builds the capability
 *   registry (composition errors and dependency errors throw), and starts the extensions in
 *   dependency order, independent ones in parallel. An extension that fails to start does
 *   not stop the others: it is listed in `startFailures` and its capabilities fail with
 *   that error when invoked.
 * - `transform` / `resource` / `render` / `validate` run a capability by name and return an
 *   `InvocationResult` whose `dependencies` are flattened: what the provider reported, then
 *   the dependencies of every resource it read through the host, transitively,
 *   de-duplicated in first-seen order.
 * - `readResource()` is the `host.resource.get` path: the permission check (only for reads
 *   made by an extension), the trace and cycle check, then `resource:` through the registry
 *   and every other scheme through the caller's `resolve`.
 * - `onExtensionInvoke(name)` hears every request to an extension's capability (the engine's
 *   job memo records which extensions a job involved).
 * - `abortInFlight(reason)` fails every pending extension request with `reason` at once, and
 *   every later invocation. `close()` stops every extension (SPEC §3.6); idempotent.
 */
import { type InstalledExtensions, inspectInstalledExtensions, LockError, lockMissingMessage } from './lock-check.js'
import {
  type CapabilityKind,
  type Diagnostic,
  InvocationResult,
  type Location,
  parseBoundary,
  type ResourceRead,
} from '../protocol/schemas.js'
import { errorDependencies, withDependencies } from '../documents/dependency-errors.js'
import { isPermitted, permissionDeniedMessage } from '../resources/permissions.js'
import { splitQuery } from '../resources/identifiers.js'
import type { ResolveResource } from '../resources/resolver.js'
import type { ProjectConfig } from './config.js'
import { type DiscoveredExtension, type DiscoveryOptions, discoverExtensions, type Manifest, resolveCommand, resolveExtensionCwd } from './manifest.js'
import { ExtensionProcess, type HostLogger, untilAborted } from './process.js'
import { BUILTIN_OWNER, type CapabilityProvider, CapabilityRegistry, extensionStartOrder } from './registry.js'
import { realPathSync } from '../documents/real-path.js'

/** What `HostOptions.resolve` is: resolves every scheme except `resource:` (which the host serves itself). */
export type { ResolveResource as ResourceResolver }

/** What an in-process builtin receives besides its request. */
export interface BuiltinContext {
  host: InsituHost
  location: Location
  /** The trace of this invocation (it ends with this invocation's node). */
  trace: readonly string[]
  /** Read a resource through the host (no permission check); its dependencies are recorded. */
  read(identifier: string): Promise<unknown>
  /** Record a dependency directly. */
  depend(identifier: string): void
}

export interface BuiltinCapability {
  kind: CapabilityKind
  name: string
  invoke(
    request: { name: string; options: Record<string, unknown>; location: Location; value: unknown; trace: readonly string[] },
    context: BuiltinContext,
  ): Promise<Partial<InvocationResult>> | Partial<InvocationResult>
}

export interface HostOptions {
  config: ProjectConfig
  /** Resolver for `fs:`, `sql:`, `git://`, `index:`… identifiers. @default rejects every identifier */
  resolve?: ResolveResource
  builtins?: readonly BuiltinCapability[]
  /** Python interpreter for the `{python}` command token. @default 'python3' */
  python?: string
  /** Per-request timeout for extension calls, in ms. @default 30000 */
  timeoutMs?: number
  logger?: HostLogger
  /**
   * Turn an extension on (`true`) or off (`false`) by manifest name, over `enabled` in
   * insitu.toml; `undefined` keeps insitu.toml's choice. @default insitu.toml decides
   */
  enableExtension?: DiscoveryOptions['enabled']
  /** Start extension processes in `start()` (else on first use). @default true */
  eager?: boolean
  /**
   * Aborting it makes a `start()` still waiting for handshakes stop the processes it started
   * and reject with the signal's reason (e.g. the dev server closes while an extension hangs).
   */
  signal?: AbortSignal
  /** Called with the extension's name before each request to one of its capabilities. */
  onExtensionInvoke?: (extension: string) => void
}

/** An extension's invocation failed: `<node> (<extension>): <reason>`. */
export class InvocationError extends Error {
  override name = 'InvocationError'
  constructor(
    /** The trace node, e.g. `transform:hello`. */
    readonly node: string,
    readonly extension: string,
    /** What went wrong, without the node and extension. */
    readonly reason: string,
    cause?: unknown,
  ) {
    super(`${node} (${extension}): ${reason}`, { cause })
  }
}

export interface StartFailure {
  extension: string
  error: Error
}

const VALIDATOR_LOCATION: Location = { path: '', directory: '', root: '.', depth: 0 }

const TRACE_NODE: Record<CapabilityKind, string> = {
  transform: 'transform',
  resource: 'resource',
  renderer: 'render',
  validator: 'validate',
}

const silentLogger: HostLogger = { info() {}, warn() {}, error() {} }

export class InsituHost {
  readonly startFailures: StartFailure[] = []
  private readonly processes = new Map<string, ExtensionProcess>()
  private readonly startErrors = new Map<string, Error>()
  /** Open invocations of extensions, by `extension + trace + location`, collecting what their reads depend on. */
  private readonly recorders = new Map<string, Set<string[]>>()
  private closing: Promise<void> | undefined
  private aborted: Error | undefined

  private constructor(
    readonly config: ProjectConfig,
    readonly extensions: readonly DiscoveredExtension[],
    private registry: CapabilityRegistry,
    private readonly options: HostOptions,
  ) {}

  static async start(options: HostOptions): Promise<InsituHost> {
    const { config } = options
    // The lock first (SPEC §12): a locked extension that is missing fails the start as a whole.
    const lockState = inspectInstalledExtensions(config.root)
    if (lockState.missing.length > 0) {
      throw new LockError(lockState.lockFile, lockMissingMessage(lockState.missing), lockState.missing.join(', '))
    }
    const extensions = discoverExtensions(config, { enabled: options.enableExtension })
    const host = new InsituHost(config, extensions, undefined!, options)
    const providers: CapabilityProvider[] = [
      ...(options.builtins ?? []).map((b) => host.builtinProvider(b)),
      ...extensions.flatMap((e) => e.manifest.capabilities.map((c) => host.extensionProvider(e.manifest, c))),
    ]
    const approvals = new Map(extensions.map((e) => [e.manifest.name, e.allowReplace]))
    host.registry = CapabilityRegistry.build(providers, approvals)
    const owners = new Map<string, string>()
    for (const p of providers) {
      owners.set(`${p.kind}:${p.name}`, p.owner)
      if (!owners.has(p.name)) owners.set(p.name, p.owner)
    }
    const layers = extensionStartOrder(
      extensions.map((e) => e.manifest),
      owners,
    )
    for (const e of extensions) host.processes.set(e.manifest.name, host.createProcess(e.manifest))
    // An installed extension that does not match insitu.lock never runs: it fails like a start failure.
    for (const problem of lockProblems(extensions, lockState)) host.recordStartFailure(problem.manifest.name, problem.error)
    if (options.eager ?? true) {
      try {
        for (const layer of layers) {
          const started = Promise.all(layer.map((manifest) => host.startExtension(manifest)))
          await (options.signal ? untilAborted(started, options.signal) : started)
        }
      } catch (error) {
        await host.close()
        throw error
      }
    }
    return host
  }

  get logger(): HostLogger {
    return this.options.logger ?? silentLogger
  }

  /** PIDs of running extension processes, by extension name. */
  pids(): Map<string, number> {
    const pids = new Map<string, number>()
    for (const [name, process] of this.processes) if (process.pid !== undefined) pids.set(name, process.pid)
    return pids
  }

  hasCapability(kind: CapabilityKind, name: string): boolean {
    return this.registry.has(kind, name)
  }

  /**
   * The JSON Schema of a capability's options: the manifest's pinned `params_schema`, else the
   * `params` its runtime declared in the handshake (the SDK's), else undefined (a builtin, an
   * extension not started). For the language server's completion.
   */
  paramsSchema(kind: CapabilityKind, name: string): Record<string, unknown> | undefined {
    const owner = this.ownerOf(kind, name)
    const manifest = this.extensions.find((e) => e.manifest.name === owner)?.manifest
    const pinned = manifest?.capabilities.find((c) => c.kind === kind && c.name === name)?.params_schema
    if (pinned) return pinned
    const declared = owner === undefined ? undefined : this.processes.get(owner)?.declared?.[kind]
    const entry = declared !== null && typeof declared === 'object' ? (declared as Record<string, unknown>)[name] : undefined
    const params = entry !== null && typeof entry === 'object' ? (entry as { params?: unknown }).params : undefined
    return params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : undefined
  }

  /** Every capability name of a kind, sorted (the language server's completion). */
  capabilityNames(kind: CapabilityKind): string[] {
    return this.registry.names(kind)
  }

  /** The owner (extension name or `insitu`) of the base provider of a capability. */
  ownerOf(kind: CapabilityKind, name: string): string | undefined {
    return this.registry.has(kind, name) ? this.registry.chain(kind, name).base.owner : undefined
  }

  /** Whether a capability is a builtin that no extension contributes to, decorates or replaces. */
  isBareBuiltin(kind: CapabilityKind, name: string): boolean {
    if (!this.registry.has(kind, name)) return false
    const chain = this.registry.chain(kind, name)
    return chain.base.owner === BUILTIN_OWNER && chain.contributors.length === 0 && chain.decorators.length === 0
  }

  transform(name: string, options: Record<string, unknown>, location: Location, trace: readonly string[] = []): Promise<InvocationResult> {
    return this.invoke('transform', name, options, location, null, trace)
  }

  resource(name: string, options: Record<string, unknown>, location: Location, trace: readonly string[] = []): Promise<InvocationResult> {
    return this.invoke('resource', name, options, location, null, trace)
  }

  render(name: string, value: unknown, options: Record<string, unknown>, location: Location, trace: readonly string[] = []): Promise<InvocationResult> {
    return this.invoke('renderer', name, options, location, value, trace)
  }

  /** Run every validator concurrently; their diagnostics are reported, dependencies ignored. */
  async validate(): Promise<Diagnostic[]> {
    const names = this.registry.names('validator')
    const results = await Promise.all(
      names.map((name) =>
        this.invoke('validator', name, {}, VALIDATOR_LOCATION, null, []).then(
          (result) => result.diagnostics,
          (error: Error): Diagnostic[] => [{ severity: 'error', message: error.message, path: null, line: null, code: null }],
        ),
      ),
    )
    return results.flat()
  }

  /**
   * `host.resource.get`: read `identifier` on behalf of `reader` (an extension manifest; omit
   * for the host's own reads, which are not permission-checked).
   */
  async readResource(identifier: string, location: Location, trace: readonly string[], reader?: Manifest): Promise<ResourceRead> {
    if (reader && !isPermitted(reader.permissions, identifier)) {
      throw new Error(permissionDeniedMessage(reader.name, identifier))
    }
    if (trace.includes(identifier)) throw new Error(`dependency cycle: ${[...trace, identifier].join(' -> ')}`)
    const next = [...trace, identifier]
    if (identifier.startsWith('resource:')) {
      const { name, query } = splitQuery(identifier.slice('resource:'.length))
      const result = await this.invoke('resource', name, query, location, null, next)
      return { value: result.value, dependencies: unique([identifier, ...result.dependencies]) }
    }
    if (!this.options.resolve) throw new Error(`unsupported host resource: ${identifier}`)
    const read = await this.options.resolve(identifier, location, next)
    return { value: read.value, dependencies: unique(read.dependencies) }
  }

  /**
   * Fail every extension request in flight with `reason` at once, and every later invocation
   * (e.g. when the dev server starts closing: nothing should wait for a hanging extension).
   * Idempotent; `close()` still stops the processes.
   */
  abortInFlight(reason: Error): void {
    this.aborted ??= reason
    for (const process of this.processes.values()) process.abort(this.aborted)
  }

  close(): Promise<void> {
    this.closing ??= Promise.all([...this.processes.values()].map((p) => p.stop())).then(() => undefined)
    return this.closing
  }

  private async invoke(
    kind: CapabilityKind,
    name: string,
    options: Record<string, unknown>,
    location: Location,
    value: unknown,
    trace: readonly string[],
  ): Promise<InvocationResult> {
    if (this.aborted) throw this.aborted
    if (this.closing) throw new Error('insitu host is closed')
    const node = `${TRACE_NODE[kind]}:${name}`
    let nodeTrace: readonly string[] = trace
    if (trace.at(-1) !== node) {
      if (trace.includes(node)) throw new Error(`dependency cycle: ${[...trace, node].join(' -> ')}`)
      nodeTrace = [...trace, node]
    }
    const chain = this.registry.chain(kind, name)
    const request = (provider: CapabilityProvider, opts: Record<string, unknown>) => ({
      name: provider.name,
      options: opts,
      location,
      value: value ?? null,
      trace: [...nodeTrace],
    })
    const results: InvocationResult[] = []
    let result = await chain.base.invoke(request(chain.base, options))
    results.push(result)
    let content = result.content
    for (const contributor of chain.contributors) {
      const contribution = await contributor.invoke(request(contributor, options))
      results.push(contribution)
      content = [content, contribution.content].filter((c): c is string => !!c).map((c) => c.trimEnd()).join('\n\n')
    }
    for (const decorator of chain.decorators) {
      const decorated = await decorator.invoke(request(decorator, { ...options, content: content ?? '' }))
      results.push(decorated)
      content = decorated.content
    }
    result = {
      content,
      value: result.value,
      diagnostics: results.flatMap((r) => r.diagnostics),
      dependencies: unique(results.flatMap((r) => r.dependencies)),
    }
    return result
  }

  private createProcess(manifest: Manifest): ExtensionProcess {
    return new ExtensionProcess({
      manifest,
      command: resolveCommand(manifest, { python: this.options.python, root: this.config.root }),
      cwd: resolveExtensionCwd(manifest),
      root: this.config.root,
      timeoutMs: this.options.timeoutMs,
      logger: this.logger,
      onResourceGet: async (params) => {
        const record = (dependencies: readonly string[]) => {
          const recorders = this.recorders.get(recorderKey(manifest.name, params.trace, params.location))
          for (const deps of recorders ?? []) deps.push(...dependencies)
        }
        // A failed read (a file that does not exist yet) is still a dependency of the invocation.
        record([params.resource])
        try {
          const read = await this.readResource(params.resource, params.location, params.trace, manifest)
          record(read.dependencies)
          return read
        } catch (error) {
          record(errorDependencies(error))
          throw error
        }
      },
    })
  }

  private recordStartFailure(extension: string, failure: Error): void {
    this.startErrors.set(extension, failure)
    this.startFailures.push({ extension, error: failure })
    this.logger.error(`extension ${extension} failed to start: ${withoutOwnName(extension, failure.message)}`)
  }

  private async startExtension(manifest: Manifest): Promise<void> {
    if (this.startErrors.has(manifest.name)) return // refused by the lock check
    try {
      await this.processes.get(manifest.name)!.start()
    } catch (error) {
      if (this.closing) return // stopped during its handshake: no news
      this.recordStartFailure(manifest.name, error as Error)
    }
  }

  private extensionProvider(manifest: Manifest, capability: Manifest['capabilities'][number]): CapabilityProvider {
    const method = `insitu.${TRACE_NODE[capability.kind]}`
    return {
      ...capability,
      owner: manifest.name,
      invoke: async (request) => {
        this.options.onExtensionInvoke?.(manifest.name)
        const startError = this.startErrors.get(manifest.name)
        if (startError) throw startError
        const process = this.processes.get(manifest.name)!
        const key = recorderKey(manifest.name, request.trace, request.location)
        const reads: string[] = []
        let open = this.recorders.get(key)
        if (!open) this.recorders.set(key, (open = new Set()))
        open.add(reads)
        let raw: unknown
        try {
          raw = await process.request(method, request)
        } catch (error) {
          const node = request.trace.at(-1) ?? method
          throw withDependencies(new InvocationError(node, manifest.name, (error as Error).message, error), reads)
        } finally {
          open.delete(reads)
          if (open.size === 0) this.recorders.delete(key)
        }
        const result = parseBoundary(InvocationResult, raw, `${method} result from ${manifest.name}`)
        return { ...result, dependencies: unique([...result.dependencies, ...reads]) }
      },
    }
  }

  private builtinProvider(builtin: BuiltinCapability): CapabilityProvider {
    return {
      kind: builtin.kind,
      name: builtin.name,
      mode: 'provide',
      target: null,
      before: [],
      after: [],
      owner: BUILTIN_OWNER,
      invoke: async (request) => {
        const dependencies: string[] = []
        const context: BuiltinContext = {
          host: this,
          location: request.location,
          trace: request.trace,
          read: async (identifier) => {
            // A failed read (e.g. a file that does not exist yet) is still a dependency.
            dependencies.push(identifier)
            const read = await this.readResource(identifier, request.location, request.trace)
            dependencies.push(...read.dependencies)
            return read.value
          },
          depend: (identifier) => void dependencies.push(identifier),
        }
        let partial: Partial<InvocationResult>
        try {
          partial = await builtin.invoke(request, context)
        } catch (error) {
          // Keep what the builtin depended on so far: the caller watches it and retries.
          throw withDependencies(error, dependencies)
        }
        // A builtin's value is the host's own data in the value model (PythonFloat boxes, bigints:
        // values/python-float.ts), which the wire writes as Python does; only its shape is checked.
        const { value = null, ...shape } = partial
        const result = plainBuiltinResult(shape) ?? parseBoundary(InvocationResult, shape, `result of builtin ${builtin.kind} ${builtin.name}`)
        return { ...result, value, dependencies: unique([...dependencies, ...result.dependencies]) }
      },
    }
  }
}

/**
 * The shape most builtin results have (content text or null, dependency strings, no
 * diagnostics, nothing else), checked without the schema (issue #17: hundreds of jobs per
 * build); anything else (a diagnostic, an unexpected field) is left to the schema: undefined.
 */
function plainBuiltinResult(shape: Partial<Omit<InvocationResult, 'value'>>): InvocationResult | undefined {
  for (const key in shape) if (key !== 'content' && key !== 'dependencies' && key !== 'diagnostics') return undefined
  const { content = null, dependencies = [], diagnostics = [] } = shape
  if (content !== null && typeof content !== 'string') return undefined
  if (!Array.isArray(diagnostics) || diagnostics.length > 0) return undefined
  if (!Array.isArray(dependencies) || !dependencies.every((dependency) => typeof dependency === 'string')) return undefined
  return { content, value: null, diagnostics: [], dependencies }
}

/** The discovered extensions that are installed under `.insitu/extensions/` and fail the lock check. */
function lockProblems(extensions: readonly DiscoveredExtension[], state: InstalledExtensions): { manifest: Manifest; error: LockError }[] {
  const problems = new Map<string, string>()
  for (const installed of state.installed) {
    if (installed.problem) problems.set(realFolder(installed.dir), installed.problem)
  }
  const found: { manifest: Manifest; error: LockError }[] = []
  if (problems.size === 0) return found
  for (const extension of extensions) {
    const problem = problems.get(realFolder(extension.manifest.dir))
    if (problem) found.push({ manifest: extension.manifest, error: new LockError(state.lockFile, problem, extension.manifest.name) })
  }
  return found
}

function realFolder(dir: string): string {
  try {
    return realPathSync(dir)
  } catch {
    return dir
  }
}

/**
 * Reads are matched to open invocations by what `host.resource.get` echoes back: trace and
 * location. Concurrent invocations with the same trace and location share a key, so each of
 * them gets the union of their reads (a safe over-approximation).
 */
function recorderKey(extension: string, trace: readonly string[], location: Location): string {
  return `${extension}\u0000${JSON.stringify(trace)}\u0000${JSON.stringify([location.path, location.directory, location.root, location.depth])}`
}

/** A failure's message without the extension name it starts with (the log line names it already). */
function withoutOwnName(extension: string, message: string): string {
  for (const prefix of [`extension ${extension} `, `${extension}: `]) {
    if (message.startsWith(prefix)) return message.slice(prefix.length)
  }
  return message
}

export function unique(items: readonly string[]): string[] {
  return [...new Set(items)]
}

