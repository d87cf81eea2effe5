/**
 * Run records: the reason each owner (re-)ran, attributed through a real DependencyGraph.
 */
import { describe, expect, it } from 'vitest'
import { DependencyGraph, type FileEvent } from '../../src/engine/dependency-graph.js'
import {
  type CompletedRun,
  describeReason,
  MAX_CAUSES,
  mergeCauses,
  type OwnerRecord,
  RunRecords,
} from '../../src/engine/run-records.js'

function run(inputHash: string, outputHash: string | null = `out-${inputHash}`): CompletedRun {
  return {
    type: 'document',
    file: 'README.md',
    startedAt: RunRecords.now(),
    inputHash,
    outputHash,
    jobs: [{ id: 'open', kind: 'sql', line: 3, target: 'region', provider: 'insitu', reused: false, error: null, dependencies: ['index:documents'] }],
    dependencies: ['index:documents'],
    diagnostics: [],
    error: null,
  }
}

/** Records with a graph: README reads the documents view and a.md; NOTES reads b.md; GIT reads git://HEAD. */
function setup() {
  const graph = new DependencyGraph()
  graph.set('README.md', ['index:documents', 'fs:file:tasks/a.md'])
  graph.set('NOTES.md', ['fs:file:tasks/b.md'])
  graph.set('GIT.md', ['git://HEAD'])
  const records = new RunRecords()
  const select = (events: FileEvent[], git: boolean, documents = false) => {
    const owners = graph.affected(events, { documents, git })
    records.selected(owners, events, git, (some, g) => graph.affected(some, { documents: false, git: g }))
    return owners
  }
  return { records, select }
}

describe('RunRecords', () => {
  it('names the first run, a cached request, an own-text change and a run without a kept result', () => {
    const records = new RunRecords()
    records.ran('README.md', run('a'))
    expect(records.get('README.md')).toMatchObject({ reason: { kind: 'first' }, runs: 1, cachedRequests: 0 })
    records.cached('README.md')
    expect(records.get('README.md')).toMatchObject({ reason: { kind: 'cached' }, runs: 1, cachedRequests: 1 })
    expect(records.get('README.md')?.lastRun.reason).toEqual({ kind: 'first' })
    records.ran('README.md', run('b'))
    expect(records.get('README.md')?.reason).toEqual({ kind: 'source' })
    records.ran('README.md', run('b'))
    expect(records.get('README.md')?.reason).toEqual({ kind: 'uncached' })
    expect(['first', 'cached', 'source', 'uncached'].map((kind) => describeReason({ kind } as OwnerRecord['reason']))).toEqual([
      'first request',
      'cached',
      'own text changed',
      'not cached',
    ])
  })

  it('a single event is the reason of every owner it selects, pending until the owner runs', () => {
    const { records, select } = setup()
    for (const owner of ['README.md', 'NOTES.md', 'GIT.md']) records.ran(owner, run(owner))
    select([{ type: 'update', path: 'tasks/a.md' }], false)
    expect(records.get('README.md')?.pending).toEqual({ kind: 'selected', causes: [{ type: 'update', path: 'tasks/a.md' }], more: 0, batch: 1 })
    expect(records.get('NOTES.md')?.pending).toBeNull()
    records.ran('README.md', run('README.md'))
    const readme = records.get('README.md')!
    expect(describeReason(readme.reason)).toBe('tasks/a.md changed')
    expect(readme.pending).toBeNull()
    expect(readme.lastRun.outputChanged).toBe(false)
  })

  it('a batch attributes each owner to the events that select it; projection-only selections get the whole batch', () => {
    const { records, select } = setup()
    for (const owner of ['README.md', 'NOTES.md', 'GIT.md']) records.ran(owner, run(owner))
    select(
      [
        { type: 'update', path: 'tasks/b.md' },
        { type: 'create', path: 'tasks/c.md' },
      ],
      true,
      true,
    )
    const pending = (owner: string) => describeReason(records.get(owner)!.pending!)
    expect(pending('NOTES.md')).toBe('tasks/b.md changed')
    expect(pending('GIT.md')).toBe('git changed')
    // README is selected through the documents view only: every cause of the batch.
    expect(pending('README.md')).toBe('tasks/b.md changed, tasks/c.md created, git changed')
  })

  it('merges pending reasons of several batches until the owner runs', () => {
    const { records, select } = setup()
    records.ran('README.md', run('r'))
    select([{ type: 'update', path: 'tasks/a.md' }], false)
    select([{ type: 'delete', path: 'tasks/a.md' }], false)
    select([{ type: 'update', path: 'tasks/a.md' }], false)
    records.ran('README.md', run('r'))
    expect(records.get('README.md')?.reason).toEqual({
      kind: 'selected',
      causes: [
        { type: 'update', path: 'tasks/a.md' },
        { type: 'delete', path: 'tasks/a.md' },
      ],
      more: 0,
      batch: 3,
    })
  })

  it(`names at most ${MAX_CAUSES} causes and counts the rest`, () => {
    const causes = Array.from({ length: MAX_CAUSES + 3 }, (_, i) => ({ type: 'create' as const, path: `n${i}.md` }))
    const merged = mergeCauses(null, causes)
    expect(merged.causes).toEqual(causes.slice(0, MAX_CAUSES))
    expect(merged.more).toBe(3)
    expect(describeReason({ kind: 'selected', ...merged, batch: 1 })).toBe(
      `${causes.slice(0, MAX_CAUSES).map((c) => `${c.path} created`).join(', ')} (+3 more)`,
    )
  })

  it('tells listeners of runs (not of cached requests), survives a throwing listener, forgets owners', () => {
    const records = new RunRecords()
    const seen: string[] = []
    records.onRun(() => {
      throw new Error('listener failed')
    })
    const stop = records.onRun((record) => seen.push(`${record.owner} ${record.runs}`))
    records.ran('README.md', run('a'))
    records.cached('README.md')
    records.ran('README.md', run('b'))
    stop()
    records.ran('README.md', run('c'))
    expect(seen).toEqual(['README.md 1', 'README.md 2'])
    expect(records.get('README.md')?.lastRun.outputChanged).toBe(true)
    records.ran('B.md', run('x'))
    expect(records.list().map((r) => r.owner)).toEqual(['B.md', 'README.md'])
    records.forget('README.md')
    expect(records.list().map((r) => r.owner)).toEqual(['B.md'])
    // A forgotten owner starts over.
    records.ran('README.md', run('c'))
    expect(records.get('README.md')?.reason).toEqual({ kind: 'first' })
  })
})
