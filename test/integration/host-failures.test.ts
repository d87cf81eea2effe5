/**
 * Extension failures through the host (src/host/host.ts, process.ts) with real Python
 * processes from test/fixtures/python/failures/*: start-up consistency checks (identity,
 * undeclared capability, pinned schema), permission denial, resource cycles, a crash in the
 * middle of a request and the restart after it, a hang (timeout), text on stdout (plain, header-
 * shaped, before the first frame), frames with a Content-Type header, and the restart budget. After every test no extension process is alive (host-project.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RESTART_LIMIT } from '../../src/host/process.js'
import { type FsResolveContext, resolveFsFile } from '../../src/resources/fs.js'
import { DOC, finishTest, logs, makeProject, NODE_FIXTURES, PYTHON_FIXTURES, rememberPid, startHost, writeConfig } from './host-project.js'

afterEach(finishTest)

const failure = (name: string): string => path.join(PYTHON_FIXTURES, 'failures', name)
const fourKinds = path.join(PYTHON_FIXTURES, 'four_kinds')

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(outcome).toBeInstanceOf(Error)
  return outcome as Error
}

describe('start-up checks against the manifest', () => {
  it('lists identity, undeclared-capability and schema mismatches in startFailures; the other extensions run', async () => {
    const project = makeProject({ 'notes.md': '- a\n' })
    writeConfig(project, [
      { path: failure('identity') },
      { path: failure('undeclared') },
      { path: failure('schema') },
      { path: fourKinds },
    ])
    const host = await startHost(project)
    const failures = host.startFailures
      .map((f) => ({ extension: f.extension, message: f.error.message }))
      .sort((a, b) => a.extension.localeCompare(b.extension))
    expect(failures).toEqual([
      { extension: 'acme/identity', message: 'manifest/runtime identity mismatch for acme/identity' },
      { extension: 'acme/schema', message: 'acme/schema runtime params schema mismatch for transform:pinned' },
      { extension: 'acme/undeclared', message: 'acme/undeclared did not register transform:x' },
    ])
    // The failed extensions' processes were stopped; the healthy one runs.
    expect([...host.pids().keys()]).toEqual(['acme/py'])
    expect((await host.resource('py_inner', {}, DOC)).value).toEqual(['a'])
  })

  it('fails an invocation of a capability whose extension failed to start, with the start error', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('identity') }, { path: failure('undeclared') }, { path: failure('schema') }])
    const host = await startHost(project)
    expect(host.pids().size).toBe(0)
    expect((await rejection(host.transform('identity_x', {}, DOC))).message).toBe(
      'manifest/runtime identity mismatch for acme/identity',
    )
    expect((await rejection(host.transform('x', {}, DOC))).message).toBe('acme/undeclared did not register transform:x')
    expect((await rejection(host.transform('pinned', {}, DOC))).message).toBe(
      'acme/schema runtime params schema mismatch for transform:pinned',
    )
    // Not retried: the same error again, and still no process.
    expect((await rejection(host.transform('x', {}, DOC))).message).toBe('acme/undeclared did not register transform:x')
    expect(host.pids().size).toBe(0)
  })

  it('does not respawn an extension whose lazy start failed the manifest check', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('identity') }])
    const host = await startHost(project, { eager: false })
    expect(host.startFailures).toEqual([])
    const messages: string[] = []
    // More attempts than the restart budget allows: a respawn each time would end in the budget message.
    for (let attempt = 0; attempt < 8; attempt++) messages.push((await rejection(host.transform('identity_x', {}, DOC))).message)
    expect(messages).toEqual(
      Array.from({ length: 8 }, () => 'transform:identity_x (acme/identity): manifest/runtime identity mismatch for acme/identity'),
    )
    expect(host.pids().size).toBe(0)
  })
})

describe('resource reads', () => {
  it('denies a read the manifest does not permit, naming extension and resource', async () => {
    const project = makeProject({ 'secret.txt': 'top secret\n', 'open.md': 'open\n' })
    writeConfig(project, [{ path: failure('denied') }])
    const host = await startHost(project)
    expect(await host.transform('peek', { file: 'open.md' }, DOC)).toEqual({
      content: 'open\n',
      value: null,
      diagnostics: [],
      dependencies: ['fs:file:open.md'],
    })
    const error = await rejection(host.transform('peek', { file: 'secret.txt' }, DOC))
    expect(error.message).toBe('transform:peek (acme/denied): acme/denied may not read resource fs:file:secret.txt')
    expect(error.message).not.toContain('top secret')
  })

  it('reports a path leaving the project root as an escape whatever the permissions say', async () => {
    const outside = makeProject({ 'secret.md': 'top secret\n' })
    const project = makeProject({ 'open.md': 'open\n' })
    fs.symlinkSync(path.join(outside.root, 'secret.md'), path.join(project.root, 'linked.md'))
    writeConfig(project, [{ path: failure('reads_all') }, { path: failure('denied') }])
    const ctx: FsResolveContext = { root: project.root, exclude: [], respectGitignore: false, isManagedDocument: () => false }
    const host = await startHost(project, { resolve: async (identifier) => resolveFsFile(identifier, ctx) })
    expect((await host.transform('peek_any', { file: 'open.md' }, DOC)).content).toBe('open\n')
    const escapes = [
      // fs:read:** (every project file permitted)
      ['peek_any', '../x', 'transform:peek_any (acme/reads-all): resource escapes project root: fs:file:../x'],
      ['peek_any', '/etc/passwd', 'transform:peek_any (acme/reads-all): resource escapes project root: fs:file:/etc/passwd'],
      ['peek_any', 'linked.md', 'transform:peek_any (acme/reads-all): resource escapes project root: fs:file:linked.md'],
      // fs:read:**/*.md (the escaping paths are not covered by the permission)
      ['peek', '../x', 'transform:peek (acme/denied): resource escapes project root: fs:file:../x'],
      ['peek', `${outside.root}/secret.md`, `transform:peek (acme/denied): resource escapes project root: fs:file:${outside.root}/secret.md`],
      ['peek', 'docs/../../secret.md', 'transform:peek (acme/denied): resource escapes project root: fs:file:docs/../../secret.md'],
    ]
    for (const [transform, file, message] of escapes) {
      const error = await rejection(host.transform(transform as string, { file }, DOC))
      expect(error.message).toBe(message)
    }
  })

  it('reports resource:loop reading itself as a cycle', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('loop') }])
    const host = await startHost(project)
    const error = await rejection(host.resource('loop', {}, DOC))
    expect(error.message).toBe('resource:loop (acme/loop): dependency cycle: resource:loop -> resource:loop')
    // The extension survives a failed invocation.
    const pid = host.pids().get('acme/loop')
    expect((await rejection(host.readResource('resource:loop', DOC, []))).message).toContain(
      'dependency cycle: resource:loop -> resource:loop',
    )
    expect(host.pids().get('acme/loop')).toBe(pid)
  })
})

describe('process failures', () => {
  it('reports a crash mid-request with the exit code and the last 20 stderr lines, then restarts', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('crash') }])
    const host = await startHost(project)
    const firstPid = host.pids().get('acme/crash')!
    expect((await host.transform('crashy', {}, DOC)).content).toBe(`alive ${firstPid}`)

    const error = await rejection(host.transform('crashy', { crash: true }, DOC))
    expect(error.message).toContain('acme/crash')
    expect(error.message).toContain('exited with code 3')
    for (let n = 6; n <= 25; n++) expect(error.message).toContain(`crash line ${String(n).padStart(2, '0')}`)
    for (let n = 1; n <= 5; n++) expect(error.message).not.toContain(`crash line ${String(n).padStart(2, '0')}`)
    const tail = Array.from({ length: 20 }, (_, i) => `crash line ${String(i + 6).padStart(2, '0')}`).join('\n')
    expect(error.message).toBe(`transform:crashy (acme/crash): extension acme/crash exited with code 3\nlast stderr lines:\n${tail}`)
    await expect.poll(() => isGone(firstPid)).toBe(true)

    // The next call starts a new process and succeeds.
    const result = await host.transform('crashy', {}, DOC)
    const secondPid = host.pids().get('acme/crash')!
    rememberPid(secondPid)
    expect(secondPid).not.toBe(firstPid)
    expect(result).toEqual({ content: `alive ${secondPid}`, value: null, diagnostics: [], dependencies: [] })
  })

  it('times out a request that never gets an answer, naming method, extension and limit', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('hang') }])
    const host = await startHost(project, { timeoutMs: 300 })
    const pid = host.pids().get('acme/hang')
    const error = await rejection(host.transform('hang', {}, DOC))
    expect(error.message).toBe('transform:hang (acme/hang): insitu.transform to acme/hang timed out after 300 ms')
    // A timeout does not kill the process.
    expect(host.pids().get('acme/hang')).toBe(pid)
  })

  it('fails on text printed to stdout, quoting the line and naming the extension; the process is killed', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('stdout') }])
    const host = await startHost(project)
    const pid = host.pids().get('acme/stdout')!
    const error = await rejection(host.transform('chatty', {}, DOC))
    expect(error.message).toBe(
      'transform:chatty (acme/stdout): stdout must carry only protocol frames; acme/stdout wrote "debug output from chatty" (log to stderr)',
    )
    await expect.poll(() => isGone(pid)).toBe(true)
  })

  it('fails on a header-shaped print (`DEBUG: counting words`) the same way, every time, then spends the restart budget', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('debug_print') }])
    const host = await startHost(project)
    const message =
      'transform:count_words (probe/junk): stdout must carry only protocol frames; probe/junk wrote "DEBUG: counting words" (log to stderr)'
    // Each request starts a fresh process (the last one was killed) and fails in well under a timeout.
    for (let attempt = 0; attempt <= RESTART_LIMIT; attempt++) {
      const pid = host.pids().get('probe/junk')
      rememberPid(pid)
      const started = Date.now()
      expect((await rejection(host.transform('count_words', { text: 'a b c' }, DOC))).message).toBe(message)
      expect(Date.now() - started).toBeLessThan(5_000)
      if (pid !== undefined) await expect.poll(() => isGone(pid)).toBe(true)
      expect(host.pids().has('probe/junk')).toBe(false)
    }
    expect((await rejection(host.transform('count_words', {}, DOC))).message).toBe(
      `transform:count_words (probe/junk): extension probe/junk restart budget spent (${RESTART_LIMIT} restarts in 3 minutes); last failure: ${message.slice(message.indexOf('stdout'))}`,
    )
  })

  it('fails the start of an extension that prints before its first frame, and its capabilities with it', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('startup_print') }])
    const host = await startHost(project)
    const message = 'stdout must carry only protocol frames; probe/startup wrote "DEBUG: loading the word list" (log to stderr)'
    expect(host.startFailures.map((f) => [f.extension, f.error.message])).toEqual([['probe/startup', message]])
    expect(host.pids().size).toBe(0)
    expect((await rejection(host.transform('count_words', {}, DOC))).message).toBe(message)
  })

  it('logs a print during shutdown as a warning, and still stops the process', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: path.join(NODE_FIXTURES, 'console_log') }])
    const host = await startHost(project)
    const pid = host.pids().get('probe/node-junk')!
    await host.close()
    expect(logs).toContain('stdout must carry only protocol frames; probe/node-junk wrote "DEBUG: shutting down" (log to stderr)')
    expect(isGone(pid)).toBe(true)
  })

  it('reads frames that carry a Content-Type header', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: path.join(PYTHON_FIXTURES, 'content_type') }])
    const host = await startHost(project)
    expect(await host.transform('count_words', { text: 'one two three four' }, DOC)).toEqual({
      content: '4 words',
      value: null,
      diagnostics: [],
      dependencies: [],
    })
  })

  it(`stops restarting after ${RESTART_LIMIT} restarts within 3 minutes`, async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('always_crash') }])
    const host = await startHost(project, { timeoutMs: 2_000 })
    const messages: string[] = []
    // The first start plus RESTART_LIMIT restarts: each process crashes on its request.
    for (let attempt = 0; attempt <= RESTART_LIMIT; attempt++) {
      rememberPid(host.pids().get('acme/always-crash'))
      messages.push((await rejection(host.transform('doomed', {}, DOC))).message)
      rememberPid(host.pids().get('acme/always-crash'))
    }
    expect(messages).toEqual(
      Array.from(
        { length: RESTART_LIMIT + 1 },
        () => 'transform:doomed (acme/always-crash): extension acme/always-crash exited with code 7\nlast stderr lines:\ndoomed: exiting',
      ),
    )
    const spent = await rejection(host.transform('doomed', {}, DOC))
    expect(spent.message).toContain('restart budget spent')
    expect(spent.message).toBe(
      'transform:doomed (acme/always-crash): extension acme/always-crash restart budget spent (5 restarts in 3 minutes); ' +
        'last failure: extension acme/always-crash exited with code 7\nlast stderr lines:\ndoomed: exiting',
    )
    // Still spent: no new process.
    expect((await rejection(host.transform('doomed', {}, DOC))).message).toContain('restart budget spent')
  })
})

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}
