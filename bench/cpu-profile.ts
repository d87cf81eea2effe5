/**
 * Reading V8 CPU profiles (`.cpuprofile`, node:inspector's `Profiler.stop`), for the profiling
 * scripts of bench/ (profile-edits.ts, profile-build.ts).
 *
 * Contract: `inclusiveTimes(profile)` is the inclusive microseconds per frame name (a name
 * counted once per stack; names are `function file:line`, files shortened to `src/…` or
 * `node_modules/…`) and the busy time (samples not idle, program or root); `selfTimesBy(profile)`
 * the self microseconds per package: `src` (the plugin), a `node_modules` package name, `node:`
 * (Node's own JS), or V8's pseudo frames (`(garbage collector)`, `(idle)`, `(program)`).
 */
export interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

export interface CpuProfile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

export function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url.replace(/^.*\/(node_modules|src)\//, '$1/').replace(/^file:\/\//, '')
  return `${functionName || '(anonymous)'} ${file}${file ? `:${lineNumber + 1}` : ''}`
}

function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  return self
}

export function inclusiveTimes(profile: CpuProfile): { inclusive: Map<string, number>; busy: number } {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const self = selfTimes(profile)
  const inclusive = new Map<string, number>()
  let busy = 0
  const walk = (node: ProfileNode, onStack: Set<string>): number => {
    const name = frameName(node)
    const own = self.get(node.id) ?? 0
    if (!['(idle) ', '(root) ', '(program) '].includes(name)) busy += own
    const nested = new Set(onStack).add(name)
    let total = own
    for (const child of node.children ?? []) total += walk(byId.get(child)!, nested)
    if (!onStack.has(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + total)
    return total
  }
  walk(profile.nodes[0]!, new Set())
  return { inclusive, busy }
}

function packageOf(node: ProfileNode): string {
  const { url, functionName } = node.callFrame
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`
  if (/\/src\//.test(url) && !url.includes('node_modules')) return 'src (the plugin)'
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (dependency) return dependency[1]!
  return url.startsWith('node:') ? 'node:' : 'other'
}

export function selfTimesBy(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  for (const [id, us] of selfTimes(profile)) {
    const name = packageOf(byId.get(id)!)
    totals.set(name, (totals.get(name) ?? 0) + us)
  }
  return totals
}
