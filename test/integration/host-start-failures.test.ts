/**
 * What a user reads when an extension cannot run at all (src/host/process.ts, host.ts), with
 * real fixtures from test/fixtures/python/failures/*: a command that does not exist (a
 * program on no PATH, a file path that is missing), a Python program that crashes before the
 * handshake (stderr lines, exit code 3), and one that exits in the middle of a frame. Each
 * error names the extension and the cause, once. And `abortInFlight` (the host's side of a
 * closing dev server): a hanging request fails at once with the given reason, with the
 * default timeout. After every test no extension process is alive (host-project.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { HostLogger } from '../../src/host/process.js'
import { DOC, finishTest, makeProject, PYTHON_FIXTURES, rememberPid, startHost, writeConfig } from './host-project.js'

afterEach(finishTest)

const failure = (name: string): string => path.join(PYTHON_FIXTURES, 'failures', name)
const manifestOf = (name: string): string => fs.realpathSync(path.join(failure(name), 'insitu-extension.toml'))

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  )
  expect(outcome).toBeInstanceOf(Error)
  return outcome as Error
}

/** A logger that records the host's error lines (the start failures it reports). */
function errorLog(): { logger: HostLogger; errors: string[] } {
  const errors: string[] = []
  return { errors, logger: { info() {}, warn() {}, error: (line) => void errors.push(line) } }
}

describe('a command that does not exist', () => {
  it('says the program was not found, which, and from which manifest; its capabilities fail with that', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('missing_program') }])
    const { logger, errors } = errorLog()
    const host = await startHost(project, { logger })
    const message = `acme/missing-program: command not found: insitu-no-such-program-7f3a (from ${manifestOf('missing_program')})`
    expect(host.startFailures.map((f) => [f.extension, f.error.message])).toEqual([['acme/missing-program', message]])
    expect(errors).toEqual([
      `extension acme/missing-program failed to start: command not found: insitu-no-such-program-7f3a (from ${manifestOf('missing_program')})`,
    ])
    // As every start failure: its capabilities fail with it, not retried.
    expect((await rejection(host.transform('absent', {}, DOC))).message).toBe(message)
    expect(host.pids().size).toBe(0)
  })

  it('says a missing file path was not found, lazily started too, and does not retry it', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('missing_file') }])
    const host = await startHost(project, { eager: false })
    const message = `acme/missing-file: command not found: ./bin/no-such-extension (from ${manifestOf('missing_file')})`
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await rejection(host.transform('absent_file', {}, DOC))).message).toBe(
        `transform:absent_file (acme/missing-file): ${message}`,
      )
    }
    expect(host.pids().size).toBe(0)
  })

  it('says a command that is not executable cannot be run', async () => {
    const project = makeProject()
    const dir = path.join(project.root, 'tools', 'plain')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'run.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o644 })
    fs.writeFileSync(
      path.join(dir, 'insitu-extension.toml'),
      'name = "acme/plain"\nversion = "1.0.0"\n\n[extension]\ncommand = ["./run.sh"]\n\n[[capabilities]]\nkind = "transform"\nname = "plain"\n',
    )
    writeConfig(project, [{ path: dir }])
    const host = await startHost(project)
    expect(host.startFailures.map((f) => f.error.message)).toEqual([
      `acme/plain: command is not executable: ./run.sh (from ${path.join(dir, 'insitu-extension.toml')})`,
    ])
  })
})

describe('a crash before the handshake', () => {
  it('reports the exit code and the last stderr lines, in the start failure and in the log', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('start_crash') }])
    const { logger, errors } = errorLog()
    const host = await startHost(project, { logger })
    const exit = 'exited with code 3\nlast stderr lines:\nstart line 1\nstart line 2\nstart line 3'
    expect(host.startFailures.map((f) => [f.extension, f.error.message])).toEqual([
      ['acme/start-crash', `extension acme/start-crash ${exit}`],
    ])
    expect(errors).toEqual([`extension acme/start-crash failed to start: ${exit}`])
    expect((await rejection(host.transform('never', {}, DOC))).message).toBe(`extension acme/start-crash ${exit}`)
  })

  it('reports the exit code when started on first use, and again on the retry', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('start_crash') }])
    const host = await startHost(project, { eager: false })
    const expected = 'transform:never (acme/start-crash): extension acme/start-crash exited with code 3\nlast stderr lines:\nstart line 1\nstart line 2\nstart line 3'
    expect((await rejection(host.transform('never', {}, DOC))).message).toBe(expected)
    expect((await rejection(host.transform('never', {}, DOC))).message).toBe(expected)
  })
})

describe('a stream that ends inside a frame', () => {
  it('says the frame was incomplete, with the exit code and the stderr tail', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('cut_frame') }])
    const host = await startHost(project)
    rememberPid(host.pids().get('acme/cut-frame'))
    const error = await rejection(host.transform('cut', {}, DOC))
    expect(error.message).toBe(
      'transform:cut (acme/cut-frame): extension acme/cut-frame exited with code 0 inside a frame ' +
        '(incomplete frame: stream ended after 10 of 100 body bytes)\nlast stderr lines:\ncutting the frame',
    )
  })
})

describe('abortInFlight', () => {
  it('fails a hanging request at once with the reason, and every later invocation', async () => {
    const project = makeProject()
    writeConfig(project, [{ path: failure('hang') }])
    const host = await startHost(project)
    const pid = host.pids().get('acme/hang')
    const hanging = rejection(host.transform('hang', {}, DOC))
    const reason = new Error('vite-plugin-insitu is closing')
    // The request is on the wire before the abort (its process already runs).
    await Promise.resolve()
    host.abortInFlight(reason)
    const error = await hanging
    expect(error.message).toBe('transform:hang (acme/hang): vite-plugin-insitu is closing')
    expect(error.cause).toBe(reason)
    expect(await rejection(host.transform('hang', {}, DOC))).toBe(reason)
    // Only local state was dropped: the process runs until the host closes.
    expect(host.pids().get('acme/hang')).toBe(pid)
  })
})
