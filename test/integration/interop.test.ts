/**
 * Interop of the wire layer (src/protocol/framing.ts, peer.ts) with real Python 3 processes
 * through real pipes. Fixtures: test/fixtures/python/wire_extension.py (well-behaved, speaks
 * framing + JSON-RPC 2.0 directly, no SDK) and misbehaving_extension.py <mode> (one protocol
 * violation per mode). Every test waits for its child's `exit`; afterEach fails the test if a
 * spawned child is still alive (and kills it).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { encodeFrame, FramingError } from '../../src/protocol/framing.js'
import { RpcClosedError, RpcPeer, RpcResponseError, RpcTimeoutError } from '../../src/protocol/peer.js'
import { parseBoundary, ResourceGetParams } from '../../src/protocol/schemas.js'

const FIXTURES = fileURLToPath(new URL('../fixtures/python/', import.meta.url))

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

interface Extension {
  child: ChildProcessWithoutNullStreams
  peer: RpcPeer
  /** Every byte the child wrote to stdout, in order. */
  stdout: () => Buffer
  stderr: () => string
  /** The child's `exit` event. */
  exited: Promise<Exit>
  /** The child's `close` event: it has exited and its stdio streams are fully read. */
  drained: Promise<void>
}

const spawned: Extension[] = []

function launch(script: string, args: string[], name: string): Extension {
  const child = spawn('python3', [FIXTURES + script, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const exited = new Promise<Exit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  const drained = new Promise<void>((resolve) => child.on('close', () => resolve()))
  const out: Buffer[] = []
  const err: Buffer[] = []
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
  const peer = new RpcPeer(child.stdout, child.stdin, { name })
  const extension: Extension = {
    child,
    peer,
    stdout: () => Buffer.concat(out),
    stderr: () => Buffer.concat(err).toString('utf8'),
    exited,
    drained,
  }
  spawned.push(extension)
  return extension
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

afterEach(async () => {
  const leaked: number[] = []
  for (const { child, peer, exited } of spawned.splice(0)) {
    peer.close()
    if (child.exitCode === null && child.signalCode === null) {
      leaked.push(child.pid!)
      child.kill('SIGKILL')
      await exited
    }
    expect(isAlive(child.pid!)).toBe(false)
  }
  expect(leaked, 'children still running when their test ended').toEqual([])
})

const DOC_LOCATION = { path: 'docs/a/b.md', directory: 'docs/a', root: '.', depth: 2 }

describe('wire_extension.py (well-behaved)', () => {
  it('echoes unicode params with byte-counted, compact, unescaped frames and logs only to stderr', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const params = { text: 'héllo — 世界 🌍', nested: { list: [1, 'ü', null, true] } }
    expect(await ext.peer.request('echo', params)).toEqual(params)
    await ext.peer.request('insitu.shutdown')
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    // Byte-exact: one Content-Length header counting bytes, compact JSON, non-ASCII unescaped.
    expect(ext.stdout().equals(Buffer.concat([
      encodeFrame({ jsonrpc: '2.0', id: 1, result: params }),
      encodeFrame({ jsonrpc: '2.0', id: 2, result: null }),
    ]))).toBe(true)
    expect(ext.stdout().toString('utf8')).toContain('"text":"héllo — 世界 🌍"')
    expect(ext.stderr()).toBe(
      'wire_extension: ready\nwire_extension: request 1 echo\nwire_extension: shutdown\n',
    )
  })

  it('answers concurrent requests out of order', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const order: string[] = []
    const track = (promise: Promise<unknown>) =>
      promise.then((result) => {
        order.push((result as { tag: string }).tag)
        return result
      })
    const results = await Promise.all([
      track(ext.peer.request('sleep', { ms: 300, tag: 'slow' })),
      track(ext.peer.request('sleep', { ms: 150, tag: 'middle' })),
      track(ext.peer.request('sleep', { ms: 10, tag: 'fast' })),
    ])
    expect(results).toEqual([{ tag: 'slow' }, { tag: 'middle' }, { tag: 'fast' }])
    expect(order).toEqual(['fast', 'middle', 'slow'])
    expect(ext.peer.pendingCount).toBe(0)
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('carries large and many pipelined messages across pipe chunk boundaries', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const big = 'ß'.repeat(1_500_000) // 3 MB of UTF-8, 1.5 M characters
    const sizes = [0, 1, 100, 70_000, 200_000]
    const [bigResult, ...small] = await Promise.all([
      ext.peer.request('echo', { big }),
      ...sizes.map((n, i) => ext.peer.request('echo', { i, s: 'x'.repeat(n) })),
    ])
    expect((bigResult as { big: string }).big === big).toBe(true)
    expect(small).toEqual(sizes.map((n, i) => ({ i, s: 'x'.repeat(n) })))
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('calls host.resource.get back while the host request is pending, with its own ids', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const calls: unknown[] = []
    const pendingDuringCall: number[] = []
    ext.peer.onRequest('host.resource.get', (params) => {
      calls.push(parseBoundary(ResourceGetParams, params, 'host.resource.get params'))
      pendingDuringCall.push(ext.peer.pendingCount)
      return { value: 'body of b.md — ✓', dependencies: ['fs:file:docs/a/b.md'] }
    })
    const result = await ext.peer.request('read', { resource: 'fs:file:docs/a/b.md', location: DOC_LOCATION })
    expect(result).toEqual({ value: 'body of b.md — ✓', dependencies: ['fs:file:docs/a/b.md'] })
    expect(calls).toEqual([{ resource: 'fs:file:docs/a/b.md', location: DOC_LOCATION, trace: [] }])
    expect(pendingDuringCall).toEqual([1])
    // The extension numbers its own requests from 1, independently of ours.
    const frames = ext.stdout().toString('utf8')
    expect(frames).toContain(
      '{"jsonrpc":"2.0","id":1,"method":"host.resource.get","params":{"resource":"fs:file:docs/a/b.md",' +
        '"location":{"path":"docs/a/b.md","directory":"docs/a","root":".","depth":2},"trace":[]}}',
    )
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('forwards a host.resource.get failure as an error response', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    ext.peer.onRequest('host.resource.get', (params) => {
      throw new Error(`missing file: ${(params as { resource: string }).resource}`)
    })
    const failure = await ext.peer
      .request('read', { resource: 'fs:file:nope.md', location: DOC_LOCATION })
      .catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RpcResponseError)
    expect((failure as RpcResponseError).message).toBe('host.resource.get failed: missing file: fs:file:nope.md')
    expect((failure as RpcResponseError).code).toBe(-32000)
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('answers an unknown method with -32601', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const failure = await ext.peer.request('frobnicate', { x: 1 }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RpcResponseError)
    expect((failure as RpcResponseError).message).toBe('unknown method: frobnicate')
    expect((failure as RpcResponseError).code).toBe(-32601)
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('exchanges notifications in both directions', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const logged: unknown[] = []
    ext.peer.onNotification('log', (params) => {
      logged.push(params)
    })
    await ext.peer.notify('note', { n: 1 })
    await ext.peer.notify('note', { n: 'ž' })
    expect(await ext.peer.request('notes')).toEqual([{ n: 1 }, { n: 'ž' }])
    // The extension writes its notification before its reply, so it has arrived by now.
    expect(await ext.peer.request('announce', { message: 'hi from python' })).toBe(null)
    expect(logged).toEqual([{ message: 'hi from python' }])
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('replies null to insitu.shutdown, exits, and the peer then closes cleanly', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    expect(await ext.peer.request('insitu.shutdown', null)).toBe(null)
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    const reason = await ext.peer.closed
    expect(reason).toBeInstanceOf(RpcClosedError)
    expect(reason.message).toBe('RPC peer closed')
    await expect(ext.peer.request('echo', 1)).rejects.toBe(reason)
  })

  it('exits on stdin EOF, failing the request still pending with `RPC peer closed`', async () => {
    const ext = launch('wire_extension.py', [], 'wire')
    const pending = ext.peer.request('sleep', { ms: 60_000, tag: 'never' })
    expect(ext.peer.pendingCount).toBe(1)
    ext.peer.close()
    await expect(pending).rejects.toThrow(new RpcClosedError('RPC peer closed'))
    expect(ext.peer.pendingCount).toBe(0)
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    expect(ext.stderr()).toContain('wire_extension: stdin closed, exiting\n')
  })
})

describe('misbehaving_extension.py', () => {
  /** The peer closes with `expected`; the pending request and later ones fail with that very error. */
  async function expectClosedWith(ext: Extension, pending: Promise<unknown>, check: (reason: Error) => void) {
    const reason = await ext.peer.closed
    check(reason)
    await expect(pending).rejects.toBe(reason)
    await expect(ext.peer.request('echo', 1)).rejects.toBe(reason)
    expect(ext.peer.pendingCount).toBe(0)
    expect(ext.peer.isClosed).toBe(true)
  }

  it('stdout-print: quotes the stray output in the error', async () => {
    const ext = launch('misbehaving_extension.py', ['stdout-print'], 'acme/chatty')
    // Nothing else reaches stdout while this sleeps, so the quote is exactly the printed line.
    const pending = ext.peer.request('sleep', { ms: 60_000, tag: 'x' })
    await expectClosedWith(ext, pending, (reason) => {
      expect(reason).toBeInstanceOf(FramingError)
      expect((reason as FramingError).rule).toBe('malformed-header')
      expect(reason.message).toBe(`stdout must carry only protocol frames; acme/chatty wrote "Loading model..." (log to stderr)`)
    })
    expect(await ext.exited).toEqual({ code: 0, signal: null })
  })

  it('duplicate-header: rejects a frame with two Content-Length headers', async () => {
    const ext = launch('misbehaving_extension.py', ['duplicate-header'], 'acme/dup')
    const length = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'hi' } }))
    const pending = ext.peer.request('echo', { text: 'hi' })
    await expectClosedWith(ext, pending, (reason) => {
      expect(reason).toBeInstanceOf(FramingError)
      expect((reason as FramingError).rule).toBe('duplicate-content-length')
      expect(reason.message).toBe('duplicate Content-Length header')
    })
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    expect(ext.stdout().toString('latin1')).toBe(
      `Content-Length: ${length}\r\nContent-Length: ${length}\r\n\r\n{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}`,
    )
  })

  it('truncate: a body cut short by the process exiting is an incomplete frame', async () => {
    const ext = launch('misbehaving_extension.py', ['truncate'], 'acme/cut')
    const params = { text: 'hello — ✂' }
    const length = Buffer.byteLength(JSON.stringify({ jsonrpc: '2.0', id: 1, result: params }))
    const half = Math.floor(length / 2)
    const pending = ext.peer.request('echo', params)
    await expectClosedWith(ext, pending, (reason) => {
      expect(reason).toBeInstanceOf(FramingError)
      expect((reason as FramingError).rule).toBe('incomplete-frame')
      expect(reason.message).toBe(`incomplete frame: stream ended after ${half} of ${length} body bytes`)
    })
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    expect(ext.stderr()).toContain(`misbehaving_extension: wrote ${half} of ${length} body bytes, exiting\n`)
  })

  it('invalid-json: a body that is not JSON terminates the connection', async () => {
    const ext = launch('misbehaving_extension.py', ['invalid-json'], 'acme/garbled')
    let parseMessage = ''
    try {
      JSON.parse('{not json')
    } catch (error) {
      parseMessage = (error as Error).message
    }
    const pending = ext.peer.request('echo', { text: 'hi' })
    await expectClosedWith(ext, pending, (reason) => {
      expect(reason).toBeInstanceOf(RpcClosedError)
      expect(reason.message).toBe(`frame body is not valid JSON: ${parseMessage}`)
    })
    // Closing the peer ended the child's stdin, and it exits on EOF.
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    expect(ext.stdout().toString('latin1')).toBe('Content-Length: 9\r\n\r\n{not json')
  })

  it('never-answer: the request times out naming method, peer and limit; EOF then ends the child', async () => {
    const ext = launch('misbehaving_extension.py', ['never-answer'], 'acme/silent')
    const failure = await ext.peer.request('echo', { text: 'hi' }, { timeoutMs: 200 }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(RpcTimeoutError)
    expect((failure as RpcTimeoutError).message).toBe('echo to acme/silent timed out after 200 ms')
    expect(ext.peer.pendingCount).toBe(0)
    expect(ext.peer.isClosed).toBe(false)
    expect(ext.child.exitCode).toBe(null)
    ext.peer.close()
    expect(await ext.exited).toEqual({ code: 0, signal: null })
    await ext.drained
    expect((await ext.peer.closed).message).toBe('RPC peer closed')
    expect(ext.stdout().length).toBe(0)
    expect(ext.stderr()).toBe(
      'misbehaving_extension: mode never-answer\nmisbehaving_extension: ignoring echo\nmisbehaving_extension: stdin closed, exiting\n',
    )
  })
})
