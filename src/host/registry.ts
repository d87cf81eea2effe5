/**
 * Capability registry and composition (SPEC §9), and extension dependency order.
 *
 * Contract:
 * - `CapabilityRegistry.build(providers, approvals)` registers every provider (builtins and
 *   manifest capabilities) and throws on the first composition error, with SPEC's messages:
 *   `capability already provided: <name>`, `replacement requires project approval: <target>`,
 *   `<mode> is supported only for transforms`, `unknown <kind>: <name>` (an invocation's unknown
 *   name adds `; did you mean <nearest name of that kind>?` when one is close).
 * - `chain(kind, name)` gives what an invocation runs: the base provider (the provider or
 *   its approved replacement), then, for transforms, contributors (outputs appended, in
 *   registration order) and decorators (each receives `content`, applied in order: a
 *   decorator runs before those named in its `before` and after those named in its `after`
 *   (by capability or extension name); ties by name; cycles reported).
 * - `extensionStartOrder(manifests, capabilityOwners)` checks `[[dependencies]]` (package
 *   with a version range (PEP 440 or npm, see host/version-spec.ts), or a capability) and returns layers: every extension comes after
 *   what it depends on; extensions of one layer can start in parallel.
 */
import { versionSatisfies } from './version-spec.js'
import type { CapabilityKind, InvocationRequest, InvocationResult } from '../protocol/schemas.js'
import type { CapabilityMode, Manifest } from './manifest.js'
import { didYouMean } from '../values/did-you-mean.js'

/** Something that can run one capability: an extension process or an in-process builtin. */
export interface CapabilityProvider {
  kind: CapabilityKind
  name: string
  mode: CapabilityMode
  target: string | null
  before: readonly string[]
  after: readonly string[]
  /** The extension name, or `insitu` for builtins. */
  owner: string
  invoke(request: InvocationRequest): Promise<InvocationResult>
}

export interface CapabilityChain {
  kind: CapabilityKind
  name: string
  base: CapabilityProvider
  contributors: CapabilityProvider[]
  decorators: CapabilityProvider[]
}

export const BUILTIN_OWNER = 'insitu'

export class CompositionError extends Error {
  override name = 'CompositionError'
}

const key = (kind: CapabilityKind, name: string): string => `${kind}:${name}`

export class CapabilityRegistry {
  private constructor(private readonly chains: Map<string, CapabilityChain>) {}

  /**
   * @param approvals capability names each owner's project entry approves for `replace`
   *   (from `allow_replace` in `insitu.toml`).
   */
  static build(
    providers: readonly CapabilityProvider[],
    approvals: ReadonlyMap<string, readonly string[]> = new Map(),
  ): CapabilityRegistry {
    const chains = new Map<string, CapabilityChain>()
    for (const provider of providers) {
      if (provider.kind !== 'transform' && (provider.mode === 'contribute' || provider.mode === 'decorate')) {
        throw new CompositionError(`${provider.mode} is supported only for transforms`)
      }
    }
    const byMode = (mode: CapabilityMode) => providers.filter((p) => p.mode === mode)
    for (const provider of byMode('provide')) {
      const k = key(provider.kind, provider.name)
      if (chains.has(k)) throw new CompositionError(`capability already provided: ${provider.name}`)
      chains.set(k, { kind: provider.kind, name: provider.name, base: provider, contributors: [], decorators: [] })
    }
    const target = (provider: CapabilityProvider): CapabilityChain => {
      const name = provider.mode === 'contribute' ? provider.name : provider.target!
      const chain = chains.get(key(provider.kind, name))
      if (!chain) throw new CompositionError(`unknown ${provider.kind}: ${name}`)
      return chain
    }
    for (const provider of byMode('replace')) {
      const chain = target(provider)
      if (!(approvals.get(provider.owner) ?? []).includes(chain.name)) {
        throw new CompositionError(`replacement requires project approval: ${chain.name}`)
      }
      if (chain.base.mode === 'replace') {
        throw new CompositionError(`capability already replaced: ${chain.name}`)
      }
      chain.base = provider
    }
    for (const provider of byMode('contribute')) target(provider).contributors.push(provider)
    for (const provider of byMode('decorate')) target(provider).decorators.push(provider)
    for (const chain of chains.values()) chain.decorators = orderDecorators(chain)
    return new CapabilityRegistry(chains)
  }

  has(kind: CapabilityKind, name: string): boolean {
    return this.chains.has(key(kind, name))
  }

  chain(kind: CapabilityKind, name: string): CapabilityChain {
    const chain = this.chains.get(key(kind, name))
    // `; did you mean include?`: the nearest name of that kind (issue #18).
    if (!chain) throw new CompositionError(`unknown ${kind}: ${name}${didYouMean(name, this.names(kind))}`)
    return chain
  }

  names(kind: CapabilityKind): string[] {
    return [...this.chains.values()].filter((c) => c.kind === kind).map((c) => c.name).sort()
  }
}

/** Which names a decorator answers to in `before`/`after` lists: its capability name and its owner. */
function aliases(provider: CapabilityProvider): string[] {
  return [provider.name, provider.owner]
}

/** Topological order by `before`/`after`, ties broken by name; a cycle is an error. */
function orderDecorators(chain: CapabilityChain): CapabilityProvider[] {
  const decorators = [...chain.decorators].sort((a, b) => compare(a.name, b.name) || compare(a.owner, b.owner))
  if (decorators.length < 2) return decorators
  const edges = new Map<CapabilityProvider, Set<CapabilityProvider>>(decorators.map((d) => [d, new Set()]))
  const named = (name: string) => decorators.filter((d) => aliases(d).includes(name))
  for (const decorator of decorators) {
    for (const name of decorator.before) for (const other of named(name)) if (other !== decorator) edges.get(decorator)!.add(other)
    for (const name of decorator.after) for (const other of named(name)) if (other !== decorator) edges.get(other)!.add(decorator)
  }
  const indegree = new Map(decorators.map((d) => [d, 0]))
  for (const targets of edges.values()) for (const t of targets) indegree.set(t, indegree.get(t)! + 1)
  const ready = decorators.filter((d) => indegree.get(d) === 0)
  const ordered: CapabilityProvider[] = []
  while (ready.length > 0) {
    const next = ready.shift()!
    ordered.push(next)
    for (const t of edges.get(next)!) {
      indegree.set(t, indegree.get(t)! - 1)
      if (indegree.get(t) === 0) {
        ready.push(t)
        ready.sort((a, b) => compare(a.name, b.name) || compare(a.owner, b.owner))
      }
    }
  }
  if (ordered.length < decorators.length) {
    const cycle = findCycle(decorators.filter((d) => !ordered.includes(d)), (d) => [...edges.get(d)!])
    throw new CompositionError(
      `decorator order cycle for transform ${chain.name}: ${cycle.map((d) => d.name).join(' -> ')}`,
    )
  }
  return ordered
}

/** A cycle among `nodes` (which are known to contain one), as a path whose last item repeats the first. */
export function findCycle<T>(nodes: readonly T[], next: (node: T) => readonly T[]): T[] {
  const state = new Map<T, 'visiting' | 'done'>()
  const stack: T[] = []
  const visit = (node: T): T[] | undefined => {
    state.set(node, 'visiting')
    stack.push(node)
    for (const n of next(node)) {
      if (state.get(n) === 'visiting') return [...stack.slice(stack.indexOf(n)), n]
      if (!state.has(n)) {
        const found = visit(n)
        if (found) return found
      }
    }
    stack.pop()
    state.set(node, 'done')
    return undefined
  }
  for (const node of nodes) {
    if (state.has(node)) continue
    const found = visit(node)
    if (found) return found
  }
  return []
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Check every extension's `[[dependencies]]` and order the extensions for start-up.
 * @param capabilityOwners `kind:name` (and plain `name`) → owner, for every registered capability.
 * @returns layers; each extension appears after every extension it depends on.
 */
export function extensionStartOrder(
  manifests: readonly Manifest[],
  capabilityOwners: ReadonlyMap<string, string>,
): Manifest[][] {
  const byName = new Map(manifests.map((m) => [m.name, m]))
  const requires = new Map<Manifest, Manifest[]>()
  for (const manifest of manifests) {
    const needed: Manifest[] = []
    for (const dependency of manifest.dependencies) {
      if (dependency.capability) {
        const owner = capabilityOwners.get(dependency.name)
        if (owner === undefined) {
          throw new CompositionError(
            `${manifest.name} depends on capability ${dependency.name}, which nothing provides`,
          )
        }
        const provider = byName.get(owner)
        if (provider && provider !== manifest) needed.push(provider)
        continue
      }
      const provider = byName.get(dependency.name)
      if (!provider) {
        throw new CompositionError(`${manifest.name} depends on extension ${dependency.name}, which is not configured`)
      }
      // PEP 440 ranges as the Python tool reads them, npm ranges otherwise (host/version-spec.ts).
      if (dependency.version !== '*' && !dependencyVersionSatisfied(manifest, provider.version, dependency.version)) {
        throw new CompositionError(
          `${manifest.name} depends on ${dependency.name} ${dependency.version}, but version ${provider.version} is configured`,
        )
      }
      needed.push(provider)
    }
    requires.set(manifest, needed)
  }
  const layers: Manifest[][] = []
  const placed = new Set<Manifest>()
  while (placed.size < manifests.length) {
    const layer = manifests.filter((m) => !placed.has(m) && requires.get(m)!.every((d) => placed.has(d)))
    if (layer.length === 0) {
      const rest = manifests.filter((m) => !placed.has(m))
      const cycle = findCycle(rest, (m) => requires.get(m)!)
      throw new CompositionError(`dependency cycle: ${cycle.map((m) => m.name).join(' -> ')}`)
    }
    for (const m of layer) placed.add(m)
    layers.push(layer)
  }
  return layers
}

function dependencyVersionSatisfied(manifest: Manifest, version: string, spec: string): boolean {
  try {
    return versionSatisfies(version, spec)
  } catch (error) {
    throw new CompositionError(`${manifest.name}: ${(error as Error).message}`)
  }
}
