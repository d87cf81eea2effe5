/**
 * Capability composition and extension dependencies through the host (src/host/host.ts,
 * registry.ts) with real manifests written per test and real processes of
 * test/fixtures/python/composable.py (whose runtime mirrors the manifest; decorators answer
 * `<name>(<content>)`, so the order of a decorator chain shows in the final content).
 * After every test no extension process is alive (host-project.ts).
 */
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ComposableSpec,
  DOC,
  type ExtensionEntry,
  finishTest,
  makeProject,
  type Project,
  startHost,
  startsLog,
  writeComposable,
  writeConfig,
} from './host-project.js'

afterEach(finishTest)

/** A project configuring one composable extension per spec (in order), each in `<root>/ext/<i>`. */
function composedProject(specs: readonly (ComposableSpec & { allow_replace?: string[] })[]): Project {
  const project = makeProject()
  const entries: ExtensionEntry[] = specs.map((spec, i) => ({
    path: writeComposable(path.join(project.root, 'ext', String(i)), spec),
    ...(spec.allow_replace ? { allow_replace: spec.allow_replace } : {}),
  }))
  writeConfig(project, entries)
  return project
}

async function startFailure(project: Project): Promise<string> {
  const outcome = await startHost(project).then(
    () => 'started',
    (error: Error) => error.message,
  )
  return outcome
}

const base: ComposableSpec = { name: 'acme/base', capabilities: [{ kind: 'transform', name: 'page', output: 'base' }] }

describe('composition errors', () => {
  it('rejects a second provider of the same capability', async () => {
    const project = composedProject([base, { name: 'acme/other', capabilities: [{ kind: 'transform', name: 'page' }] }])
    expect(await startFailure(project)).toBe('capability already provided: page')
  })

  it('rejects a replacement the project did not approve, also when the approval sits on another entry', async () => {
    const replacer = { name: 'acme/replacer', capabilities: [{ kind: 'transform' as const, name: 'mine', mode: 'replace' as const, target: 'page' }] }
    expect(await startFailure(composedProject([base, replacer]))).toBe('replacement requires project approval: page')
    expect(await startFailure(composedProject([{ ...base, allow_replace: ['page'] }, replacer]))).toBe(
      'replacement requires project approval: page',
    )
  })

  it('runs an approved replacement instead of the original', async () => {
    const project = composedProject([
      base,
      {
        name: 'acme/replacer',
        allow_replace: ['page'],
        capabilities: [{ kind: 'transform', name: 'mine', mode: 'replace', target: 'page', output: 'replaced' }],
      },
    ])
    const host = await startHost(project)
    expect(host.ownerOf('transform', 'page')).toBe('acme/replacer')
    expect(await host.transform('page', {}, DOC)).toEqual({ content: 'replaced', value: null, diagnostics: [], dependencies: [] })
  })

  it('rejects contribute and decorate for kinds other than transforms', async () => {
    const resourceBase = { name: 'acme/data', capabilities: [{ kind: 'resource' as const, name: 'rows' }] }
    expect(
      await startFailure(
        composedProject([resourceBase, { name: 'acme/more', capabilities: [{ kind: 'resource', name: 'rows', mode: 'contribute' }] }]),
      ),
    ).toBe('contribute is supported only for transforms')
    expect(
      await startFailure(
        composedProject([
          { name: 'acme/render', capabilities: [{ kind: 'renderer', name: 'card' }] },
          { name: 'acme/wrap', capabilities: [{ kind: 'renderer', name: 'frame', mode: 'decorate', target: 'card' }] },
        ]),
      ),
    ).toBe('decorate is supported only for transforms')
  })

  it('rejects a decorator (or an approved replacement) of a transform nobody provides', async () => {
    expect(
      await startFailure(
        composedProject([{ name: 'acme/wrap', capabilities: [{ kind: 'transform', name: 'frame', mode: 'decorate', target: 'missing' }] }]),
      ),
    ).toBe('unknown transform: missing')
    expect(
      await startFailure(
        composedProject([
          {
            name: 'acme/replacer',
            allow_replace: ['absent'],
            capabilities: [{ kind: 'resource', name: 'mine', mode: 'replace', target: 'absent' }],
          },
        ]),
      ),
    ).toBe('unknown resource: absent')
  })

  it('fails an invocation of an unknown capability', async () => {
    const host = await startHost(composedProject([base]))
    await expect(host.transform('nope', {}, DOC)).rejects.toThrow('unknown transform: nope')
    await expect(host.resource('nope', {}, DOC)).rejects.toThrow('unknown resource: nope')
    await expect(host.render('nope', null, {}, DOC)).rejects.toThrow('unknown renderer: nope')
  })
})

describe('contributors and decorators', () => {
  it('appends contributions, then applies decorators ordered by name when unconstrained', async () => {
    const project = composedProject([
      base,
      {
        name: 'acme/one',
        capabilities: [
          { kind: 'transform', name: 'page', mode: 'contribute', output: 'extra' },
          { kind: 'transform', name: 'wrap_b', mode: 'decorate', target: 'page' },
        ],
      },
      { name: 'acme/two', capabilities: [{ kind: 'transform', name: 'wrap_a', mode: 'decorate', target: 'page' }] },
    ])
    const host = await startHost(project)
    expect(await host.transform('page', {}, DOC)).toEqual({
      content: 'wrap_b(wrap_a(base\n\nextra))',
      value: null,
      diagnostics: [],
      dependencies: [],
    })
  })

  it('orders decorators by before/after (by capability or extension name) before names', async () => {
    const project = composedProject([
      base,
      {
        name: 'acme/deco',
        capabilities: [
          // Unconstrained, the order would be wrap_a, wrap_m, wrap_z.
          { kind: 'transform', name: 'wrap_a', mode: 'decorate', target: 'page', after: ['wrap_m'] },
          { kind: 'transform', name: 'wrap_z', mode: 'decorate', target: 'page', before: ['wrap_a'] },
        ],
      },
      { name: 'acme/middle', capabilities: [{ kind: 'transform', name: 'wrap_m', mode: 'decorate', target: 'page' }] },
    ])
    const host = await startHost(project)
    expect((await host.transform('page', {}, DOC)).content).toBe('wrap_a(wrap_z(wrap_m(base)))')

    const byOwner = composedProject([
      base,
      { name: 'acme/first', capabilities: [{ kind: 'transform', name: 'wrap_y', mode: 'decorate', target: 'page', before: ['acme/second'] }] },
      { name: 'acme/second', capabilities: [{ kind: 'transform', name: 'wrap_x', mode: 'decorate', target: 'page' }] },
    ])
    const other = await startHost(byOwner)
    expect((await other.transform('page', {}, DOC)).content).toBe('wrap_x(wrap_y(base))')
  })

  it('rejects a cycle in decorator order', async () => {
    const project = composedProject([
      base,
      {
        name: 'acme/deco',
        capabilities: [
          { kind: 'transform', name: 'wrap_a', mode: 'decorate', target: 'page', before: ['wrap_b'] },
          { kind: 'transform', name: 'wrap_b', mode: 'decorate', target: 'page', before: ['wrap_a'] },
        ],
      },
    ])
    expect(await startFailure(project)).toBe('decorator order cycle for transform page: wrap_a -> wrap_b -> wrap_a')
  })
})

describe('extension dependencies', () => {
  it('rejects a dependency on an extension that is not configured', async () => {
    const project = composedProject([{ name: 'acme/app', dependencies: [{ name: 'acme/missing' }] }])
    expect(await startFailure(project)).toBe('acme/app depends on extension acme/missing, which is not configured')
  })

  it('rejects a dependency whose version range the configured extension does not satisfy', async () => {
    const project = composedProject([
      { name: 'acme/app', dependencies: [{ name: 'acme/lib', version: '^2.0.0' }] },
      { name: 'acme/lib', version: '1.4.0' },
    ])
    expect(await startFailure(project)).toBe('acme/app depends on acme/lib ^2.0.0, but version 1.4.0 is configured')
  })

  it('rejects a dependency on a capability nothing provides', async () => {
    const project = composedProject([{ name: 'acme/app', dependencies: [{ name: 'transform:nothing', capability: true }] }])
    expect(await startFailure(project)).toBe('acme/app depends on capability transform:nothing, which nothing provides')
  })

  it('rejects a dependency cycle', async () => {
    const project = composedProject([
      { name: 'acme/a', dependencies: [{ name: 'acme/b' }] },
      { name: 'acme/b', dependencies: [{ name: 'acme/a' }] },
    ])
    expect(await startFailure(project)).toBe('dependency cycle: acme/a -> acme/b -> acme/a')
  })

  it('starts an extension only after what it depends on (extensions and capabilities)', async () => {
    // Configured dependents first; each one depends on the next.
    const project = composedProject([
      { name: 'acme/app', dependencies: [{ name: 'acme/lib', version: '>=1.2 <2' }] },
      { name: 'acme/lib', version: '1.4.0', dependencies: [{ name: 'transform:core_page', capability: true }] },
      { name: 'acme/core', capabilities: [{ kind: 'transform', name: 'core_page' }] },
    ])
    const host = await startHost(project)
    expect(host.startFailures).toEqual([])
    const pids = host.pids()
    // Each extension appends to starts.log while answering insitu.initialize; the host awaits
    // that answer before launching a dependent, so the file order is the start order.
    expect(startsLog(project.root)).toEqual([
      { name: 'acme/core', pid: pids.get('acme/core') },
      { name: 'acme/lib', pid: pids.get('acme/lib') },
      { name: 'acme/app', pid: pids.get('acme/app') },
    ])
  })
})
