/**
 * DependencyGraph (src/engine/dependency-graph.ts): which owners a file event may affect, per
 * dependency kind, and how `set` / `delete` keep the reverse index exact (stale edges removed,
 * reference-counted groups).
 */
import { describe, expect, it } from 'vitest'
import { DependencyGraph, type FileEvent, type ProjectionChanges } from '../../src/engine/dependency-graph.js'

const NONE = { documents: false, git: false }
const PROJECTION = { documents: true, git: false }
const GIT = { documents: false, git: true }

function create(path: string, directory = false): FileEvent {
  return { type: 'create', path, directory }
}
function update(path: string): FileEvent {
  return { type: 'update', path }
}
function remove(path: string, directory = false): FileEvent {
  return { type: 'delete', path, directory }
}

/** The owners one event selects, sorted. */
function selected(graph: DependencyGraph, events: FileEvent[], changes: ProjectionChanges = NONE): string[] {
  return [...graph.affected(events, changes)].sort()
}

function graphOf(entries: Record<string, string[]>): DependencyGraph {
  const graph = new DependencyGraph()
  for (const [owner, dependencies] of Object.entries(entries)) graph.set(owner, dependencies)
  return graph
}

describe('fs:file: dependencies', () => {
  const graph = graphOf({ 'README.md': ['fs:file:snippets/answer.py'], 'docs/a.md': ['fs:file:./docs/shared.md'] })

  it('select their owner on any event on the file', () => {
    expect(selected(graph, [update('snippets/answer.py')])).toEqual(['README.md'])
    expect(selected(graph, [create('snippets/answer.py')])).toEqual(['README.md'])
    expect(selected(graph, [remove('snippets/answer.py')])).toEqual(['README.md'])
  })

  it('select their owner on an event on a folder holding the file', () => {
    expect(selected(graph, [remove('snippets', true)])).toEqual(['README.md'])
    expect(selected(graph, [create('docs', true)])).toEqual(['docs/a.md'])
  })

  it('key on the path that is read: .. segments resolved, a ?query dropped', () => {
    const graph = graphOf({ 'up.md': ['fs:file:docs/../a.txt'], 'query.md': ['fs:file:c.txt?x=1'] })
    expect(selected(graph, [update('a.txt')])).toEqual(['up.md'])
    expect(selected(graph, [update('c.txt')])).toEqual(['query.md'])
    expect(selected(graph, [update('docs/a.txt')])).toEqual([])
  })

  it('normalize a leading ./ in the identifier', () => {
    expect(selected(graph, [update('docs/shared.md')])).toEqual(['docs/a.md'])
  })

  it('ignore other paths, including prefixes that are not folders and files below the file', () => {
    expect(selected(graph, [update('snippets/answer.pyc')])).toEqual([])
    expect(selected(graph, [update('snip')])).toEqual([])
    expect(selected(graph, [remove('snippets/answer.py/x')])).toEqual([])
    expect(selected(graph, [update('answer.py')])).toEqual([])
  })

  it('are not selected by projection or git changes alone', () => {
    expect(selected(graph, [], { documents: true, entries: true, git: true })).toEqual([])
  })
})

describe('index:entries dependencies', () => {
  it('select their owner only when the entries listing changed, and index:documents only when documents did', () => {
    const graph = graphOf({ 'listing.md': ['index:entries'], 'table.md': ['index:documents'], 'model.md': ['sql:model:x'] })
    expect(selected(graph, [], { documents: false, entries: true, git: false })).toEqual(['listing.md'])
    expect(selected(graph, [], { documents: true, entries: false, git: false })).toEqual(['model.md', 'table.md'])
    expect(selected(graph, [], GIT)).toEqual([])
  })
})

describe('fs:glob: dependencies', () => {
  const graph = graphOf({
    'all.md': ['fs:glob:**/*.md'],
    'tasks.md': ['fs:glob:tasks/*.md'],
    'api.md': ['fs:glob:docs/api/*.md'],
  })

  it('select their owner when a matching file is created or deleted', () => {
    expect(selected(graph, [create('notes.md')])).toEqual(['all.md'])
    expect(selected(graph, [create('deep/er/notes.md')])).toEqual(['all.md'])
    expect(selected(graph, [remove('tasks/gamma.md')])).toEqual(['all.md', 'tasks.md'])
    expect(selected(graph, [create('docs/api/x.md')])).toEqual(['all.md', 'api.md'])
  })

  it('do not select on an update (the matched set is unchanged)', () => {
    expect(selected(graph, [update('tasks/gamma.md')])).toEqual([])
  })

  it('do not select on a file the pattern does not match', () => {
    expect(selected(graph, [create('notes.txt')])).toEqual([])
    expect(selected(graph, [create('tasks/sub/gamma.md')])).toEqual(['all.md'])
    expect(selected(graph, [create('other/gamma.md')])).toEqual(['all.md'])
  })

  it('are case-sensitive', () => {
    expect(selected(graph, [create('NOTES.MD')])).toEqual([])
    expect(selected(graph, [create('Tasks/gamma.md')])).toEqual(['all.md'])
  })

  it('select conservatively on a folder event at, above or below the static base folder', () => {
    expect(selected(graph, [create('tasks', true)])).toEqual(['all.md', 'tasks.md'])
    expect(selected(graph, [remove('tasks/sub', true)])).toEqual(['all.md', 'tasks.md'])
    expect(selected(graph, [remove('docs', true)])).toEqual(['all.md', 'api.md'])
    expect(selected(graph, [create('docs/api/v2', true)])).toEqual(['all.md', 'api.md'])
  })

  it('do not select on a folder event beside the base (only a base-less pattern can match anywhere)', () => {
    expect(selected(graph, [create('other', true)])).toEqual(['all.md'])
    expect(selected(graph, [create('docs/guide', true)])).toEqual(['all.md'])
  })
})

describe('fs:dir: dependencies', () => {
  const graph = graphOf({ 'README.md': ['fs:dir:.'], 'docs/index.md': ['fs:dir:docs'] })

  it('select their owner on a create or delete at or under the folder', () => {
    expect(selected(graph, [create('docs/new.txt')])).toEqual(['README.md', 'docs/index.md'])
    expect(selected(graph, [remove('docs/sub/deep.txt')])).toEqual(['README.md', 'docs/index.md'])
    expect(selected(graph, [create('docs', true)])).toEqual(['README.md', 'docs/index.md'])
    expect(selected(graph, [create('top.txt')])).toEqual(['README.md'])
  })

  it('do not select on updates, or on a sibling whose name starts like the folder', () => {
    expect(selected(graph, [update('docs/new.txt')])).toEqual([])
    expect(selected(graph, [create('docs2/x.txt')])).toEqual(['README.md'])
  })
})

describe('index:documents and sql:model: dependencies', () => {
  const graph = graphOf({
    'README.md': ['index:documents', 'fs:file:insitu/models/open.sql'],
    'report.md': ['sql:model:open?status=done'],
    'plain.md': ['fs:file:plain.txt'],
  })

  it('select their owners only when the projection changed', () => {
    expect(selected(graph, [update('tasks/a.md')])).toEqual([])
    expect(selected(graph, [update('tasks/a.md')], PROJECTION)).toEqual(['README.md', 'report.md'])
    expect(selected(graph, [], PROJECTION)).toEqual(['README.md', 'report.md'])
  })

  it('are reference counted: an owner stays selected while any of its identifiers of the group remains', () => {
    const counted = graphOf({ doc: ['index:documents', 'sql:model:a', 'sql:model:b'] })
    counted.set('doc', ['sql:model:b'])
    expect(selected(counted, [], PROJECTION)).toEqual(['doc'])
    counted.set('doc', ['fs:file:x'])
    expect(selected(counted, [], PROJECTION)).toEqual([])
  })
})

describe('git:// dependencies', () => {
  it('select their owners when git metadata changed', () => {
    const graph = graphOf({ head: ['git://HEAD'], branch: ['git://branch'], other: ['fs:file:x'] })
    expect(selected(graph, [], GIT)).toEqual(['branch', 'head'])
    expect(selected(graph, [update('x')])).toEqual(['other'])
  })

  it('git://status/<p> and git://diff/<p> select on an event at p', () => {
    const graph = graphOf({ status: ['git://status/notes.txt'], diff: ['git:///diff/docs/a.md'] })
    expect(selected(graph, [update('notes.txt')])).toEqual(['status'])
    expect(selected(graph, [update('docs/a.md')])).toEqual(['diff'])
    expect(selected(graph, [update('docs/b.md')])).toEqual([])
  })

  it('git://status/<folder> selects on an event under the folder', () => {
    const graph = graphOf({ status: ['git://status/docs'], root: ['git://status/.'] })
    expect(selected(graph, [update('docs/a.md')])).toEqual(['root', 'status'])
    expect(selected(graph, [create('docs/sub/b.md')])).toEqual(['root', 'status'])
    expect(selected(graph, [update('docs2/a.md')])).toEqual(['root'])
    expect(selected(graph, [update('top.txt')])).toEqual(['root'])
  })

  it('git://status/<p> selects when a folder holding p is deleted', () => {
    const graph = graphOf({ status: ['git://status/docs/a.md'] })
    expect(selected(graph, [remove('docs', true)])).toEqual(['status'])
  })

  it('git://history and git://blob select only on git changes', () => {
    const graph = graphOf({ history: ['git://history/notes.txt'], blob: ['git://blob/HEAD/notes.txt'] })
    expect(selected(graph, [update('notes.txt')])).toEqual([])
    expect(selected(graph, [], GIT)).toEqual(['blob', 'history'])
  })

  it('git://ignore-rules selects on a .gitignore event anywhere', () => {
    const graph = graphOf({ rules: ['git://ignore-rules'], other: ['git://HEAD'] })
    expect(selected(graph, [update('.gitignore')])).toEqual(['rules'])
    expect(selected(graph, [create('docs/.gitignore')])).toEqual(['rules'])
    expect(selected(graph, [update('docs/not.gitignore')])).toEqual([])
  })

  it('are reference counted and drop path edges with their identifier', () => {
    const graph = graphOf({ doc: ['git://HEAD', 'git://status/a.txt', 'git://ignore-rules'] })
    graph.set('doc', ['git://status/a.txt'])
    expect(selected(graph, [], GIT)).toEqual(['doc'])
    expect(selected(graph, [update('.gitignore')])).toEqual([])
    expect(selected(graph, [update('a.txt')])).toEqual(['doc'])
    graph.set('doc', ['git://HEAD'])
    expect(selected(graph, [update('a.txt')])).toEqual([])
    expect(selected(graph, [], GIT)).toEqual(['doc'])
  })
})

describe('resource: and unknown identifiers', () => {
  it('select nothing themselves', () => {
    const graph = graphOf({ doc: ['resource:tasks', 'resource:tasks?status=open', 'web:https://example.com/x'] })
    expect(selected(graph, [create('tasks'), update('resource:tasks')], { documents: true, entries: true, git: true })).toEqual([])
    expect(graph.dependenciesOf('doc')).toEqual(['resource:tasks', 'resource:tasks?status=open', 'web:https://example.com/x'])
  })
})

describe('set and delete', () => {
  it('set replaces an owner\'s dependencies: stale edges select nothing', () => {
    const graph = graphOf({ doc: ['fs:file:old.txt', 'fs:glob:old/*.md', 'fs:dir:old', 'index:documents'] })
    graph.set('doc', ['fs:file:new.txt'])
    expect(selected(graph, [update('old.txt'), create('old/x.md'), create('old/y.txt')], PROJECTION)).toEqual([])
    expect(selected(graph, [update('new.txt')])).toEqual(['doc'])
    expect(graph.dependenciesOf('doc')).toEqual(['fs:file:new.txt'])
  })

  it('set de-duplicates and keeps first-seen order', () => {
    const graph = graphOf({ doc: ['fs:file:b', 'fs:file:a', 'fs:file:b'] })
    expect(graph.dependenciesOf('doc')).toEqual(['fs:file:b', 'fs:file:a'])
  })

  it('shared edges survive when one of their owners goes', () => {
    const graph = graphOf({
      one: ['fs:file:shared.txt', 'fs:glob:*.md', 'fs:dir:docs'],
      two: ['fs:file:shared.txt', 'fs:glob:*.md', 'fs:dir:docs'],
    })
    graph.delete('one')
    expect(selected(graph, [update('shared.txt')])).toEqual(['two'])
    expect(selected(graph, [create('x.md')])).toEqual(['two'])
    expect(selected(graph, [create('docs/x')])).toEqual(['two'])
    expect(graph.owners()).toEqual(['two'])
  })

  it('delete forgets an owner entirely; deleting an unknown owner is a no-op', () => {
    const graph = graphOf({ doc: ['fs:file:a.txt', 'git://HEAD', 'index:documents'] })
    graph.delete('doc')
    graph.delete('never')
    expect(selected(graph, [update('a.txt')], { documents: true, entries: true, git: true })).toEqual([])
    expect(graph.dependenciesOf('doc')).toEqual([])
    expect(graph.owners()).toEqual([])
  })

  it('several events select the union of their owners', () => {
    const graph = graphOf({ a: ['fs:file:a.txt'], b: ['fs:file:b.txt'], c: ['fs:file:c.txt'] })
    expect(selected(graph, [update('a.txt'), remove('c.txt')])).toEqual(['a', 'c'])
  })
})
