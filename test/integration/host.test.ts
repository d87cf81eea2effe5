/**
 * The extension host (src/host/host.ts, process.ts) with real extension processes: the
 * standard-library Python fixture test/fixtures/python/four_kinds (acme/py) and the Node SDK
 * fixture test/fixtures/node/four_kinds (acme/node), each through all four capability kinds,
 * with exact contents, values, diagnostics and transitively flattened dependencies.
 * After every test no extension process is alive (host-project.ts `finishTest`).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { DOC, finishTest, logs, makeProject, NODE_FIXTURES, PYTHON_FIXTURES, startHost, writeConfig, writeFile } from './host-project.js'

afterEach(finishTest)

const PROJECT_FILES = {
  'notes.md': '- alpha\n- beta\n',
  'README.md': 'readme\n',
  'docs/index.md': 'index\n',
  'docs/guide.md': 'guide\n',
  'docs/data.txt': 'not markdown\n',
}

describe('Python extension acme/py (standard library, SDK-style wire)', () => {
  const fixture = path.join(PYTHON_FIXTURES, 'four_kinds')

  it('starts with its manifest-declared capabilities and pinned schemas matching', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(host.startFailures).toEqual([])
    expect([...host.pids().keys()]).toEqual(['acme/py'])
    expect(host.ownerOf('transform', 'py_count')).toBe('acme/py')
    expect(host.ownerOf('resource', 'py_tasks')).toBe('acme/py')
    expect(host.ownerOf('renderer', 'py_card')).toBe('acme/py')
    expect(host.hasCapability('validator', 'py_lint')).toBe(true)
    expect(host.hasCapability('transform', 'py_tasks')).toBe(false)
    const pid = host.pids().get('acme/py')!
    await expect.poll(() => logs).toContain(`[acme/py] acme/py started ${pid}`)
  })

  it('transform py_count reads fs:glob through the host and reports the glob as its dependency', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(await host.transform('py_count', { pattern: 'docs/*.md' }, DOC)).toEqual({
      content: '2 files',
      value: null,
      diagnostics: [],
      dependencies: ['fs:glob:docs/*.md'],
    })
    expect(await host.transform('py_count', { pattern: '*.md' }, DOC)).toEqual({
      content: '4 files',
      value: null,
      diagnostics: [],
      dependencies: ['fs:glob:*.md'],
    })
  })

  it('resource py_tasks flattens the dependencies of the resource it read, transitively', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(await host.resource('py_tasks', {}, DOC)).toEqual({
      content: null,
      value: { inner: ['alpha', 'beta'], tasks: ['write', 'ship'] },
      diagnostics: [],
      dependencies: ['resource:py_inner', 'fs:file:notes.md'],
    })
    // Through host.resource.get's own path (as another extension or a builtin would read it).
    expect(await host.readResource('resource:py_tasks', DOC, [])).toEqual({
      value: { inner: ['alpha', 'beta'], tasks: ['write', 'ship'] },
      dependencies: ['resource:py_tasks', 'resource:py_inner', 'fs:file:notes.md'],
    })
    // The value follows the file (no caching in the host).
    writeFile(project.root, 'notes.md', '- gamma\n')
    expect((await host.resource('py_tasks', {}, DOC)).value).toEqual({ inner: ['gamma'], tasks: ['write', 'ship'] })
  })

  it('renderer py_card renders value and params, non-ASCII intact', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(await host.render('py_card', ['één', 'two ✓'], { title: 'Café ☕' }, DOC)).toEqual({
      content: '## Café ☕\n* één\n* two ✓',
      value: null,
      diagnostics: [],
      dependencies: [],
    })
  })

  it('validator py_lint reports a warning diagnostic, and none once the file has a title', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(await host.validate()).toEqual([
      { severity: 'warning', message: 'notes.md has no title', path: 'notes.md', line: 1, code: 'PY001' },
    ])
    writeFile(project.root, 'notes.md', '# Notes\n- alpha\n')
    expect(await host.validate()).toEqual([])
  })

  it('keeps the dependencies of concurrent invocations apart (different documents)', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    const other = { path: 'README.md', directory: '', root: '.', depth: 0 }
    const [a, b, tasks] = await Promise.all([
      host.transform('py_count', { pattern: 'docs/*.md' }, DOC),
      host.transform('py_count', { pattern: '*.md' }, other),
      host.resource('py_tasks', {}, other),
    ])
    expect(a).toEqual({ content: '2 files', value: null, diagnostics: [], dependencies: ['fs:glob:docs/*.md'] })
    expect(b).toEqual({ content: '4 files', value: null, diagnostics: [], dependencies: ['fs:glob:*.md'] })
    expect(tasks.dependencies).toEqual(['resource:py_inner', 'fs:file:notes.md'])
  })

  it('runs the interpreter a relative python path names from the project root (a virtual environment)', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    // The command runs in the extension's folder: a project-relative path must not be looked up there.
    fs.mkdirSync(path.join(project.root, '.venv', 'bin'), { recursive: true })
    fs.symlinkSync(execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim(), path.join(project.root, '.venv', 'bin', 'python'))
    const host = await startHost(project, { python: '.venv/bin/python' })
    expect(host.startFailures).toEqual([])
    expect((await host.transform('py_count', { pattern: 'docs/*.md' }, DOC)).content).toBe('2 files')
  })

  it('stops the extension with insitu.shutdown on close', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    await host.close()
    await expect.poll(() => logs).toContain('[acme/py] acme/py: shutdown')
    await expect(host.transform('py_count', { pattern: '*.md' }, DOC)).rejects.toThrow('insitu host is closed')
  })
})

describe('Node SDK extension acme/node (run with tsx)', () => {
  const fixture = path.join(NODE_FIXTURES, 'four_kinds')

  it('starts, matching the pinned params and value schemas its SDK reports', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(host.startFailures).toEqual([])
    const pid = host.pids().get('acme/node')!
    expect(pid).toBeGreaterThan(0)
    await expect.poll(() => logs).toContain(`[acme/node] acme/node started ${pid}`)
    expect(host.ownerOf('validator', 'node_lint')).toBe('acme/node')
  })

  it('runs all four kinds with exact results and flattened dependencies', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    expect(await host.transform('node_count', { pattern: 'docs/*.md' }, DOC)).toEqual({
      content: '2 files',
      value: null,
      diagnostics: [],
      dependencies: ['fs:glob:docs/*.md'],
    })
    expect(await host.resource('node_tasks', {}, DOC)).toEqual({
      content: null,
      value: { inner: ['alpha', 'beta'], tasks: ['build', 'test'] },
      diagnostics: [],
      dependencies: ['resource:node_inner', 'fs:file:notes.md'],
    })
    expect(await host.render('node_card', ['één', 'two ✓'], { title: 'Café ☕' }, DOC)).toEqual({
      content: '### Café ☕\n+ één\n+ two ✓',
      value: null,
      diagnostics: [],
      dependencies: [],
    })
    expect(await host.validate()).toEqual([
      { severity: 'info', message: 'notes.md has 2 lines', path: 'notes.md', line: null, code: 'NODE1' },
    ])
  })

  it('reports the SDK\'s own params validation failure as the invocation error', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    const error = await host.transform('node_count', {}, DOC).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).toBe('transform:node_count (acme/node): invalid options of transform:node_count: pattern: field required')
  })

  it('answers 24 requests in flight at once without a MaxListenersExceededWarning', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: fixture }])
    const host = await startHost(project)
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`)
    process.on('warning', onWarning)
    try {
      const results = await Promise.all(Array.from({ length: 24 }, () => host.transform('node_count', { pattern: 'docs/*.md' }, DOC)))
      expect(results.map((result) => result.content)).toEqual(Array(24).fill('2 files'))
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([])
  })
})

describe('Python and Node extensions together', () => {
  it('reads across extensions: a Node resource reading a Python resource gets its dependencies transitively', async () => {
    const project = makeProject(PROJECT_FILES)
    writeConfig(project, [{ path: path.join(NODE_FIXTURES, 'four_kinds') }, { path: path.join(PYTHON_FIXTURES, 'four_kinds') }])
    const host = await startHost(project)
    expect(host.startFailures).toEqual([])
    expect([...host.pids().keys()].sort()).toEqual(['acme/node', 'acme/py'])
    expect(await host.resource('node_mixed', {}, DOC)).toEqual({
      content: null,
      value: { python: { inner: ['alpha', 'beta'], tasks: ['write', 'ship'] } },
      diagnostics: [],
      dependencies: ['resource:py_tasks', 'resource:py_inner', 'fs:file:notes.md'],
    })
    // All validators run; their diagnostics are reported in validator-name order.
    expect(await host.validate()).toEqual([
      { severity: 'info', message: 'notes.md has 2 lines', path: 'notes.md', line: null, code: 'NODE1' },
      { severity: 'warning', message: 'notes.md has no title', path: 'notes.md', line: 1, code: 'PY001' },
    ])
  })
})
