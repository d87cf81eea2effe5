/**
 * The Node SDK (src/sdk) end to end: the fixture extension test/fixtures/node/sdk-extension.ts
 * runs as a real child process (`node --import tsx`), driven by a real RpcPeer acting as the host.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { FrameDecoder } from '../../src/protocol/framing.js'
import { RpcPeer, RpcResponseError } from '../../src/protocol/peer.js'

const PROJECT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const FIXTURE = path.join(PROJECT, 'test/fixtures/node/sdk-extension.ts')
const ROOT = '/tmp/insitu-project'

const DOC = { path: 'docs/a/b.md', directory: 'docs/a', depth: 2 }
const DOC_LOCATION = { path: 'docs/a/b.md', directory: 'docs/a', root: '.', depth: 2 }
const PROJECT_LOCATION = { path: '', directory: '', root: '.', depth: 0 }
const ANY_OPTIONS_SCHEMA = { type: 'object', propertyNames: { type: 'string' }, additionalProperties: {} }
const READ_DEPENDENCIES = ['resource:base', 'fs:file:shared.md', 'fs:file:base.md', 'resource:base']

interface Running {
  child: ChildProcessWithoutNullStreams
  peer: RpcPeer
  /** Every `host.resource.get` params object the extension sent. */
  reads: unknown[]
  stdout: Buffer[]
  stderr: () => string
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const children: ChildProcessWithoutNullStreams[] = []

afterEach(() => {
  const alive = children.filter((child) => child.exitCode === null && child.signalCode === null)
  children.length = 0
  for (const child of alive) child.kill('SIGKILL')
  if (alive.length > 0) throw new Error(`child processes still alive after the test: ${alive.map((c) => c.pid).join(', ')}`)
})

function start(): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], { cwd: PROJECT, stdio: ['pipe', 'pipe', 'pipe'] })
  children.push(child)
  const stdout: Buffer[] = []
  const stderr: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  )
  const peer = new RpcPeer(child.stdout, child.stdin, { name: 'acme/sdk-fixture', timeoutMs: 20_000 })
  const reads: unknown[] = []
  peer.onRequest('host.resource.get', (params) => {
    reads.push(params)
    const resource = (params as { resource: string }).resource
    if (resource === 'resource:denied') throw new Error(`acme/sdk-fixture may not read resource ${resource}`)
    return { value: { greeting: 'hi', asked: resource }, dependencies: READ_DEPENDENCIES }
  })
  return { child, peer, reads, stdout, stderr: () => Buffer.concat(stderr).toString('utf8'), exited }
}

async function initialize(run: Running): Promise<unknown> {
  return run.peer.request('insitu.initialize', { protocol: 1, root: ROOT, extension: 'acme/sdk-fixture' })
}

async function shutdown(run: Running): Promise<void> {
  expect(await run.peer.request('insitu.shutdown', null)).toBeNull()
  expect(await run.exited).toEqual({ code: 0, signal: null })
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await promise.then(
    () => {
      throw new Error('expected the request to fail')
    },
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(RpcResponseError)
  const { code, message } = error as RpcResponseError
  return { code, message }
}

/** Decode everything the child wrote on stdout: only complete JSON-RPC frames, nothing else. */
function stdoutMessages(run: Running): Array<Record<string, unknown>> {
  const decoder = new FrameDecoder()
  const bodies = decoder.push(Buffer.concat(run.stdout))
  decoder.end()
  return bodies.map((body) => JSON.parse(body.toString('utf8')) as Record<string, unknown>)
}

describe('SDK extension over stdio', () => {
  it('answers initialize with identity, all four kinds and JSON Schemas of params and values', async () => {
    const run = start()
    expect(await initialize(run)).toStrictEqual({
      name: 'acme/sdk-fixture',
      version: '1.2.3',
      protocol: 1,
      capabilities: {
        resource: {
          tasks: {
            params: {
              type: 'object',
              properties: { status: { type: 'string', enum: ['open', 'done'] } },
              additionalProperties: false,
            },
          },
        },
        transform: {
          echo: {
            params: {
              type: 'object',
              properties: { who: { default: 'world', type: 'string' }, read: { default: 'resource:base', type: 'string' } },
            },
          },
          fail: { params: ANY_OPTIONS_SCHEMA },
          bad: { params: ANY_OPTIONS_SCHEMA },
        },
        renderer: {
          card: {
            params: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
            value: {
              type: 'array',
              items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
            },
          },
        },
        validator: { links: { params: ANY_OPTIONS_SCHEMA } },
      },
    })
    await shutdown(run)
  })

  it('rejects an initialize request for another protocol', async () => {
    const run = start()
    const error = await failure(run.peer.request('insitu.initialize', { protocol: 2, root: ROOT, extension: 'x' }))
    expect(error).toEqual({ code: -32602, message: 'invalid insitu.initialize params: protocol: Invalid input: expected 1' })
    await shutdown(run)
  })

  it('runs a transform that reads a resource: location, root and trace echoed, dependencies merged', async () => {
    const run = start()
    await initialize(run)
    const result = await run.peer.request('insitu.transform', {
      name: 'echo',
      options: { who: 'Ada' },
      location: DOC,
      trace: ['resource:outer', 'transform:echo'],
    })
    expect(result).toStrictEqual({
      content: 'Hello Ada',
      value: {
        location: DOC_LOCATION,
        root: ROOT,
        trace: ['resource:outer', 'transform:echo'],
        read: { greeting: 'hi', asked: 'resource:base' },
      },
      diagnostics: [{ severity: 'warning', message: 'echo warning', path: null, line: 3, code: null }],
      // declared by the handler first (de-duplicated), then what the read reported
      dependencies: ['fs:file:declared.md', 'fs:file:shared.md', 'resource:base', 'fs:file:base.md'],
    })
    expect(run.reads).toStrictEqual([
      { resource: 'resource:base', location: DOC_LOCATION, trace: ['resource:outer', 'transform:echo'] },
    ])
    await shutdown(run)
    // console.log and process.stdout.write inside the handler went to stderr; stdout holds frames only.
    expect(run.stderr()).toContain('console.log from echo: Ada\n')
    expect(run.stderr()).toContain('process.stdout.write from echo\n')
    const messages = stdoutMessages(run)
    expect(messages.map((m) => m.method ?? `reply ${String(m.id)}`)).toEqual([
      'reply 1',
      'host.resource.get',
      'reply 2',
      'reply 3',
    ])
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true)
  })

  it('lets handlers run before initialize, with an empty root and defaults applied', async () => {
    const run = start()
    const result = (await run.peer.request('insitu.transform', { name: 'echo', location: DOC })) as {
      content: string
      value: { root: string; trace: string[] }
    }
    expect(result.content).toBe('Hello world')
    expect(result.value.root).toBe('')
    expect(result.value.trace).toEqual([])
    await shutdown(run)
  })

  it('runs a resource, a renderer and a validator, answering every InvocationResult field', async () => {
    const run = start()
    await initialize(run)
    expect(
      await run.peer.request('insitu.resource', { name: 'tasks', options: { status: 'open' }, location: DOC, trace: ['resource:tasks'] }),
    ).toStrictEqual({
      content: null,
      value: [{ id: 2, title: 'test sdk', status: 'open' }],
      diagnostics: [{ severity: 'info', message: 'status open', path: null, line: null, code: 'T1' }],
      dependencies: ['fs:glob:tasks/*.md'],
    })
    expect(
      await run.peer.request('insitu.render', {
        name: 'card',
        options: { title: 'Team' },
        location: DOC,
        value: [{ name: 'Ada' }, { name: 'Lin' }],
        trace: ['render:card'],
      }),
    ).toStrictEqual({ content: '## Team\n\n- Ada\n- Lin', value: null, diagnostics: [], dependencies: [] })
    expect(
      await run.peer.request('insitu.validate', { name: 'links', options: {}, location: PROJECT_LOCATION, trace: [] }),
    ).toStrictEqual({
      content: null,
      value: null,
      diagnostics: [
        { severity: 'warning', message: 'broken link in project', path: null, line: null, code: null },
        { severity: 'error', message: 'missing target', path: 'docs/a.md', line: 7, code: 'L001' },
      ],
      dependencies: [],
    })
    expect(run.reads).toEqual([])
    await shutdown(run)
  })

  it('answers -32602 naming the field path when options, values or the request itself are invalid', async () => {
    const run = start()
    await initialize(run)
    const { peer } = run
    expect(await failure(peer.request('insitu.transform', { name: 'echo', options: { who: 5 }, location: DOC }))).toEqual({
      code: -32602,
      message: 'invalid options of transform:echo: who: Invalid input: expected string, received number',
    })
    expect(await failure(peer.request('insitu.resource', { name: 'tasks', options: { colour: 'red' }, location: DOC }))).toEqual({
      code: -32602,
      message: 'invalid options of resource:tasks: unknown field colour',
    })
    expect(
      await failure(peer.request('insitu.render', { name: 'card', options: { title: 'T' }, value: [{ name: 1 }], location: DOC })),
    ).toEqual({
      code: -32602,
      message: 'invalid value of render:card: [0].name: Invalid input: expected string, received number',
    })
    expect(await failure(peer.request('insitu.render', { name: 'card', options: {}, value: [], location: DOC }))).toEqual({
      code: -32602,
      message: 'invalid options of render:card: title: field required',
    })
    expect(await failure(peer.request('insitu.transform', { name: 'echo', location: DOC, extra: true }))).toEqual({
      code: -32602,
      message: 'invalid insitu.transform params: unknown field extra',
    })
    expect(await failure(peer.request('insitu.validate', { name: 'links', location: { path: '', directory: '', depth: -1 } }))).toEqual({
      code: -32602,
      message: 'invalid insitu.validate params: location.depth: Too small: expected number to be >=0',
    })
    await shutdown(run)
  })

  it('answers -32000 for unknown capability names, handler errors, invalid results and host read errors', async () => {
    const run = start()
    await initialize(run)
    const { peer } = run
    const base = { name: 'nope', location: DOC }
    expect(await failure(peer.request('insitu.transform', base))).toEqual({ code: -32000, message: 'unknown transform: nope' })
    expect(await failure(peer.request('insitu.resource', base))).toEqual({ code: -32000, message: 'unknown resource: nope' })
    expect(await failure(peer.request('insitu.render', base))).toEqual({ code: -32000, message: 'unknown renderer: nope' })
    expect(await failure(peer.request('insitu.validate', base))).toEqual({ code: -32000, message: 'unknown validator: nope' })
    expect(await failure(peer.request('insitu.transform', { name: 'fail', location: DOC }))).toEqual({
      code: -32000,
      message: 'echo failed on purpose',
    })
    expect(await failure(peer.request('insitu.transform', { name: 'bad', location: DOC }))).toEqual({
      code: -32000,
      message: 'invalid result of transform:bad: content: Invalid input: expected string, received number',
    })
    expect(await failure(peer.request('insitu.transform', { name: 'echo', options: { read: 'resource:denied' }, location: DOC }))).toEqual({
      code: -32000,
      message: 'acme/sdk-fixture may not read resource resource:denied',
    })
    expect(await failure(peer.request('insitu.bogus', null))).toEqual({ code: -32601, message: 'unknown method: insitu.bogus' })
    // Still serving after the failures.
    expect(await peer.request('insitu.transform', { name: 'echo', location: DOC })).toMatchObject({ content: 'Hello world' })
    await shutdown(run)
  })

  it('exits with code 0 after answering insitu.shutdown', async () => {
    const run = start()
    await initialize(run)
    expect(await run.peer.request('insitu.shutdown', null)).toBeNull()
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(stdoutMessages(run).map((m) => [m.id, m.result])).toEqual([
      [1, expect.any(Object)],
      [2, null],
    ])
  })

  it('exits with code 0 on stdin EOF', async () => {
    const run = start()
    await initialize(run)
    run.child.stdin.end()
    expect(await run.exited).toEqual({ code: 0, signal: null })
    expect(run.stderr()).toBe('')
  })
})
