/**
 * Unit tests of the symmetric JSON-RPC 2.0 peer (SPEC §2): src/protocol/peer.ts.
 *
 * Two RpcPeer instances are connected with `node:stream` PassThrough pairs, or one peer is driven
 * by hand (frames written into its input, its output decoded frame by frame) so the exact bytes
 * on the wire can be asserted: ids, params, response shapes, error codes, and the absence of any
 * reply or cancel message where SPEC forbids one. Timeouts use vitest fake timers.
 */
import { PassThrough, type Readable, Writable } from 'node:stream'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { encodeFrame, FrameDecoder, FramingError } from '../../src/protocol/framing.js'
import {
  DEFAULT_TIMEOUT_MS,
  ErrorCodes,
  JUNK_GRACE_MS,
  RpcClosedError,
  RpcPeer,
  RpcResponseError,
  RpcTimeoutError,
  SHUTDOWN_TIMEOUT_MS,
} from '../../src/protocol/peer.js'
import { parseBoundary, ResourceGetParams } from '../../src/protocol/schemas.js'

const MAX_BODY_BYTES = 16 * 1024 * 1024

interface WireLog {
  /** Frame bodies seen on the stream, as UTF-8 text, in order. */
  frames: string[]
  /** Total bytes seen on the stream. */
  bytes: () => number
}

/** Watch a stream and decode every frame that passes through it (fails the test on bad framing). */
function wireLog(stream: Readable): WireLog {
  const decoder = new FrameDecoder()
  const frames: string[] = []
  let total = 0
  stream.on('data', (chunk: Buffer) => {
    total += chunk.length
    for (const body of decoder.push(chunk)) frames.push(body.toString('utf8'))
  })
  return { frames, bytes: () => total }
}

/** Two peers wired to each other, with a log of each direction. */
function connectedPair() {
  const aToB = new PassThrough()
  const bToA = new PassThrough()
  const aSent = wireLog(aToB)
  const bSent = wireLog(bToA)
  const a = new RpcPeer(bToA, aToB, { name: 'peer-b' })
  const b = new RpcPeer(aToB, bToA, { name: 'peer-a' })
  return { a, b, aSent, bSent }
}

/** One peer whose other side is this test: `send` writes into its input, `sent` logs its output. */
function handDriven(options: ConstructorParameters<typeof RpcPeer>[2] = { name: 'ext-a' }) {
  const input = new PassThrough()
  const output = new PassThrough()
  const sent = wireLog(output)
  const peer = new RpcPeer(input, output, options)
  return {
    peer,
    input,
    output,
    sent,
    send: (message: unknown) => input.write(encodeFrame(message)),
    sendRaw: (bytes: string | Buffer) => input.write(typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes),
  }
}

/** Let streams, handlers and promise chains run (setImmediate is never faked here). */
async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/** Observe a promise without awaiting it. */
function track<T>(promise: Promise<T>) {
  const state: { status: 'pending' | 'resolved' | 'rejected'; value?: T; error?: unknown } = { status: 'pending' }
  promise.then(
    (value) => Object.assign(state, { status: 'resolved', value }),
    (error: unknown) => Object.assign(state, { status: 'rejected', error }),
  )
  return state
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error('expected the promise to reject')
}

afterEach(() => {
  vi.useRealTimers()
})

describe('RpcPeer: requests and notifications', () => {
  it('numbers requests from 1 and always sends params (null when omitted)', async () => {
    const { peer, sent, send } = handDriven()
    const first = peer.request('first')
    const second = peer.request('second', { x: 1 })
    const third = peer.request('third', null)
    const fourth = peer.request('fourth', undefined)
    const notified = peer.notify('note')
    const notifiedWithParams = peer.notify('note', ['é'])
    await notified
    await notifiedWithParams
    await flush()
    expect(sent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"first","params":null}',
      '{"jsonrpc":"2.0","id":2,"method":"second","params":{"x":1}}',
      '{"jsonrpc":"2.0","id":3,"method":"third","params":null}',
      '{"jsonrpc":"2.0","id":4,"method":"fourth","params":null}',
      '{"jsonrpc":"2.0","method":"note","params":null}',
      '{"jsonrpc":"2.0","method":"note","params":["é"]}',
    ])
    expect(peer.pendingCount).toBe(4)
    // Responses are matched by id, in any order.
    send({ jsonrpc: '2.0', id: 3, result: 'three' })
    send({ jsonrpc: '2.0', id: 1, result: { one: 1 } })
    send({ jsonrpc: '2.0', id: 4, result: null })
    send({ jsonrpc: '2.0', id: 2, result: [2] })
    expect(await first).toEqual({ one: 1 })
    expect(await second).toEqual([2])
    expect(await third).toBe('three')
    expect(await fourth).toBeNull()
    expect(peer.pendingCount).toBe(0)
    peer.close()
  })

  it('sends requests and notifications both ways while requests are pending; both sides use id 1', async () => {
    const { a, b, aSent, bSent } = connectedPair()
    const seenByA: unknown[] = []
    const seenByB: unknown[] = []
    a.onNotification('progress', (params) => seenByA.push(params))
    b.onNotification('tick', (params) => seenByB.push(params))
    a.onRequest('inner', async (params) => {
      await a.notify('tick', 'from a while outer pending')
      const innermost = await a.request('innermost', params)
      return { inner: innermost }
    })
    b.onRequest('innermost', (params) => ({ innermost: params }))
    b.onRequest('outer', async (params) => {
      await b.notify('progress', 1)
      expect(b.pendingCount).toBe(0)
      const inner = await b.request('inner', { n: params })
      return { outer: inner }
    })

    const result = await a.request('outer', 7)
    expect(result).toEqual({ outer: { inner: { innermost: { n: 7 } } } })
    expect(seenByA).toEqual([1])
    expect(seenByB).toEqual(['from a while outer pending'])
    expect(aSent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"outer","params":7}',
      '{"jsonrpc":"2.0","method":"tick","params":"from a while outer pending"}',
      '{"jsonrpc":"2.0","id":2,"method":"innermost","params":{"n":7}}',
      '{"jsonrpc":"2.0","id":1,"result":{"inner":{"innermost":{"n":7}}}}',
    ])
    expect(bSent.frames).toEqual([
      '{"jsonrpc":"2.0","method":"progress","params":1}',
      '{"jsonrpc":"2.0","id":1,"method":"inner","params":{"n":7}}',
      '{"jsonrpc":"2.0","id":2,"result":{"innermost":{"n":7}}}',
      '{"jsonrpc":"2.0","id":1,"result":{"outer":{"inner":{"innermost":{"n":7}}}}}',
    ])
    expect(a.pendingCount).toBe(0)
    expect(b.pendingCount).toBe(0)
    a.close()
    await b.closed
  })

  it('runs inbound request handlers concurrently (barrier)', async () => {
    const { a, b } = connectedPair()
    let entered = 0
    let release!: () => void
    const barrier = new Promise<void>((resolve) => (release = resolve))
    b.onRequest('slow', async (params) => {
      entered += 1
      if (entered === 2) release()
      await barrier // a serializing peer would never let the second handler in
      return { params, entered }
    })
    const results = await Promise.all([
      a.request('slow', 'one', { timeoutMs: 10_000 }),
      a.request('slow', 'two', { timeoutMs: 10_000 }),
    ])
    expect(results).toEqual([
      { params: 'one', entered: 2 },
      { params: 'two', entered: 2 },
    ])
    a.close()
  })

  it('serializes outbound writes: many concurrent requests decode to whole frames in order', async () => {
    const { peer, sent } = handDriven()
    const sizes = Array.from({ length: 100 }, (_, i) => (i * 7919) % 200_000)
    const requests = sizes.map((size, i) => peer.request('bulk', { i, text: 'é'.repeat(size) }))
    // Large frames let the event loop run between them: wait for all of them.
    await expect.poll(() => sent.frames.length).toBe(100)
    sent.frames.forEach((frame, i) => {
      expect(JSON.parse(frame)).toEqual({ jsonrpc: '2.0', id: i + 1, method: 'bulk', params: { i, text: 'é'.repeat(sizes[i]!) } })
    })
    peer.close()
    await Promise.allSettled(requests)
  })

  it('serializes replies of handlers that finish in any order', async () => {
    const { a, b, bSent } = connectedPair()
    const gates: Array<() => void> = []
    b.onRequest('echo', (params) => new Promise((resolve) => gates.push(() => resolve({ echo: params, pad: 'x'.repeat(50_000) }))))
    const calls = Array.from({ length: 40 }, (_, i) => a.request('echo', i))
    await flush()
    expect(gates.length).toBe(40)
    for (let i = gates.length - 1; i >= 0; i--) gates[i]!() // finish in reverse order
    const results = await Promise.all(calls)
    expect(results.map((r) => (r as { echo: number }).echo)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    expect(bSent.frames.length).toBe(40)
    expect(bSent.frames.map((f) => (JSON.parse(f) as { id: number }).id)).toEqual(Array.from({ length: 40 }, (_, i) => 40 - i))
    a.close()
  })
})

describe('RpcPeer: responses and error codes', () => {
  it('answers in exactly {"jsonrpc":"2.0","id":N,"result":R}, with null for undefined', async () => {
    const { peer, sent, send } = handDriven()
    peer.onRequest('nothing', () => undefined)
    peer.onRequest('object', async () => ({ b: 2, a: 'é' }))
    peer.onRequest('zero', () => 0)
    peer.onRequest('false', () => false)
    peer.onRequest('echo', (params) => params)
    send({ jsonrpc: '2.0', id: 1, method: 'nothing', params: null })
    send({ jsonrpc: '2.0', id: 2, method: 'object', params: null })
    send({ jsonrpc: '2.0', id: 3, method: 'zero', params: null })
    send({ jsonrpc: '2.0', id: 4, method: 'false', params: null })
    send({ jsonrpc: '2.0', id: 'str-id', method: 'echo' }) // params missing: the handler gets null
    await flush()
    expect([...sent.frames].sort()).toEqual(
      [
        '{"jsonrpc":"2.0","id":1,"result":null}',
        '{"jsonrpc":"2.0","id":2,"result":{"b":2,"a":"é"}}',
        '{"jsonrpc":"2.0","id":3,"result":0}',
        '{"jsonrpc":"2.0","id":4,"result":false}',
        '{"jsonrpc":"2.0","id":"str-id","result":null}',
      ].sort(),
    )
    peer.close()
  })

  it('answers an unknown method with -32601 `unknown method: <m>`', async () => {
    const { peer, sent, send } = handDriven()
    send({ jsonrpc: '2.0', id: 1, method: 'insitu.nope', params: null })
    await flush()
    expect(sent.frames).toEqual(['{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"unknown method: insitu.nope"}}'])
    peer.close()

    const { a, b } = connectedPair()
    const error = await rejectionOf(a.request('missing.method'))
    expect(error).toBeInstanceOf(RpcResponseError)
    expect(error.message).toBe('unknown method: missing.method')
    expect((error as RpcResponseError).code).toBe(ErrorCodes.MethodNotFound)
    expect(ErrorCodes.MethodNotFound).toBe(-32601)
    expect(b.isClosed).toBe(false)
    a.close()
  })

  it('answers a BoundaryError with -32602 naming the field path', async () => {
    const { peer, sent, send } = handDriven()
    peer.onRequest('host.resource.get', (params) => parseBoundary(ResourceGetParams, params, 'host.resource.get params'))
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'host.resource.get',
      params: { resource: 'fs:file:a.md', location: { path: 'a.md', directory: '', depth: -1 } },
    })
    send({
      jsonrpc: '2.0',
      id: 2,
      method: 'host.resource.get',
      params: { resource: 'fs:file:a.md', location: { path: 'a.md', directory: '', extra: true } },
    })
    await flush()
    expect(sent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"invalid host.resource.get params: location.depth: Too small: expected number to be >=0"}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"invalid host.resource.get params: unknown field location.extra"}}',
    ])
    peer.close()

    const { a, b } = connectedPair()
    b.onRequest('get', (params) => parseBoundary(ResourceGetParams, params, 'params'))
    const error = await rejectionOf(a.request('get', { location: { path: 'x', directory: '' } }))
    expect(error).toBeInstanceOf(RpcResponseError)
    expect((error as RpcResponseError).code).toBe(-32602)
    expect(error.message).toBe('invalid params: resource: field required')
    a.close()
  })

  it('answers any other handler failure with -32000 and the handler message', async () => {
    const { peer, sent, send } = handDriven()
    peer.onRequest('sync', () => {
      throw new Error('sync boom')
    })
    peer.onRequest('async', async () => {
      throw new TypeError('async boom')
    })
    peer.onRequest('string', () => {
      throw 'thrown text'
    })
    peer.onRequest('coded', () => {
      throw new RpcResponseError('custom failure', -32099)
    })
    send({ jsonrpc: '2.0', id: 1, method: 'sync', params: null })
    await flush()
    send({ jsonrpc: '2.0', id: 2, method: 'async', params: null })
    await flush()
    send({ jsonrpc: '2.0', id: 3, method: 'string', params: null })
    await flush()
    send({ jsonrpc: '2.0', id: 4, method: 'coded', params: null })
    await flush()
    expect(sent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"sync boom"}}',
      '{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"async boom"}}',
      '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"thrown text"}}',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32099,"message":"custom failure"}}',
    ])
    expect(peer.isClosed).toBe(false)
    peer.close()

    const { a, b } = connectedPair()
    b.onRequest('fail', () => {
      throw new Error('handler said no')
    })
    const error = await rejectionOf(a.request('fail'))
    expect(error).toBeInstanceOf(RpcResponseError)
    expect(error.message).toBe('handler said no')
    expect((error as RpcResponseError).code).toBe(-32000)
    // The connection survives handler failures.
    b.onRequest('ok', () => 'fine')
    expect(await a.request('ok')).toBe('fine')
    a.close()
  })

  it('fails the caller with the message of an error response', async () => {
    const { peer, send } = handDriven()
    const call = peer.request('x')
    send({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'remote says no', data: { detail: 1 } } })
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(RpcResponseError)
    expect(error.message).toBe('remote says no')
    expect((error as RpcResponseError).code).toBe(-32000)
    expect((error as RpcResponseError).data).toEqual({ detail: 1 })
    peer.close()
  })

  it('never replies to a notification, even when its method is unknown or its handler throws', async () => {
    const errors: Error[] = []
    const { peer, sent, send } = handDriven({ name: 'ext-a', onError: (error) => errors.push(error) })
    peer.onNotification('throws', () => {
      throw new Error('notification handler failed')
    })
    peer.onNotification('rejects', async () => {
      throw new Error('async notification handler failed')
    })
    peer.onRequest('ping', () => 'pong')
    peer.onRequest('known.request', () => 'never as a notification')
    send({ jsonrpc: '2.0', method: 'unknown.notification', params: null })
    send({ jsonrpc: '2.0', method: 'throws', params: 1 })
    send({ jsonrpc: '2.0', method: 'rejects', params: 2 })
    send({ jsonrpc: '2.0', method: 'known.request', params: 3 })
    await flush()
    send({ jsonrpc: '2.0', id: 1, method: 'ping', params: null })
    await flush()
    expect(sent.frames).toEqual(['{"jsonrpc":"2.0","id":1,"result":"pong"}'])
    expect(errors.map((e) => e.message)).toEqual(['notification handler failed', 'async notification handler failed'])
    expect(peer.isClosed).toBe(false)
    peer.close()
  })

  it('turns an oversize handler result into an error response', async () => {
    const { peer, sent, send } = handDriven()
    peer.onRequest('huge', () => 'a'.repeat(MAX_BODY_BYTES))
    send({ jsonrpc: '2.0', id: 1, method: 'huge', params: null })
    await flush()
    expect(sent.frames).toEqual(['{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"JSON-RPC message exceeds 16 MiB"}}'])
    expect(peer.isClosed).toBe(false)
    peer.close()
  })

  it('answers an error when a handler returns a function, instead of a response without result', async () => {
    const { peer, sent, send } = handDriven()
    peer.onRequest('fn', () => () => 1)
    send({ jsonrpc: '2.0', id: 1, method: 'fn', params: null })
    await flush()
    expect(sent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"fn handler returned a function, which is not JSON"}}',
    ])
    peer.close()
  })

  it('reports an error response with id null to onError and stays open', async () => {
    const errors: Error[] = []
    const { peer, send } = handDriven({ name: 'ext-a', onError: (error) => errors.push(error) })
    const call = track(peer.request('echo', 1))
    send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } })
    await flush()
    expect(errors.map((e) => e.message)).toEqual(['parse error'])
    expect(peer.isClosed).toBe(false)
    expect(call.status).toBe('pending')
    send({ jsonrpc: '2.0', id: 1, result: 'ok' })
    await flush()
    expect(call).toEqual({ status: 'resolved', value: 'ok' })
    peer.close()
  })

  it('writes large messages in order, one frame each, yielding between them', async () => {
    const { peer, sent, send } = handDriven()
    const big = 'b'.repeat(1024 * 1024)
    const calls = [1, 2, 3].map((n) => peer.request('big', { n, big }))
    // The first large frame goes out at once; the rest follow on later turns of the event loop.
    expect(sent.frames.length).toBeLessThanOrEqual(1)
    await flush(10)
    expect(sent.frames.map((f) => (JSON.parse(f) as { params: { n: number } }).params.n)).toEqual([1, 2, 3])
    for (const id of [1, 2, 3]) send({ jsonrpc: '2.0', id, result: id })
    expect(await Promise.all(calls)).toEqual([1, 2, 3])
    peer.close()
  })

  it('settles every queued message when the output closes while the queue waits for drain', async () => {
    // A stuck pipe: the first write never completes, so everything after it stays buffered.
    const output = new Writable({ write() {} })
    const peer = new RpcPeer(new PassThrough(), output, { name: 'stuck' })
    const big = 'b'.repeat(1024 * 1024)
    const sends = Array.from({ length: 40 }, (_, i) => track(peer.notify('big', { i, big })))
    await expect.poll(() => output.writableLength).toBeGreaterThanOrEqual(32 * 1024 * 1024)
    const late = track(peer.notify('late', null))
    await flush()
    expect(late.status).toBe('pending')
    output.destroy()
    await expect.poll(() => [...sends, late].every((send) => send.status === 'rejected')).toBe(true)
    expect(peer.isClosed).toBe(true)
    expect((await peer.closed).message).toBe('RPC peer closed')
    await expect(peer.notify('after', null)).rejects.toThrow('RPC peer closed')
  })

  it('never writes a queued request that was aborted before its turn', async () => {
    const { peer, sent, send } = handDriven()
    const big = 'b'.repeat(1024 * 1024)
    const first = peer.request('big', { big })
    const abort = new AbortController()
    const dropped = rejectionOf(peer.request('small', null, { signal: abort.signal }))
    abort.abort()
    expect((await dropped).message).toBe('small aborted')
    expect(peer.pendingCount).toBe(1)
    await flush(10)
    expect(sent.frames.map((f) => (JSON.parse(f) as { method: string }).method)).toEqual(['big'])
    send({ jsonrpc: '2.0', id: 1, result: null })
    expect(await first).toBeNull()
    peer.close()
  })
})

describe('RpcPeer: timeouts and cancellation', () => {
  it('times out after 30 s by default, naming method, peer and limit, and sends nothing more', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { peer, sent } = handDriven({ name: 'acme/hello' })
    const call = track(peer.request('insitu.transform', { name: 'hello' }))
    await flush()
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000)
    await vi.advanceTimersByTimeAsync(29_999)
    expect(call.status).toBe('pending')
    expect(peer.pendingCount).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(call.status).toBe('rejected')
    expect(call.error).toBeInstanceOf(RpcTimeoutError)
    expect((call.error as Error).message).toBe('insitu.transform to acme/hello timed out after 30000 ms')
    expect(call.error).toMatchObject({ method: 'insitu.transform', peerName: 'acme/hello', timeoutMs: 30_000 })
    expect(peer.pendingCount).toBe(0)
    await flush()
    // No cancel notification: the request is the only frame ever written.
    expect(sent.frames).toEqual(['{"jsonrpc":"2.0","id":1,"method":"insitu.transform","params":{"name":"hello"}}'])
    expect(peer.isClosed).toBe(false)
    peer.close()
  })

  it('honours a per-call override and a per-peer default', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { peer } = handDriven({ name: 'ext-a', timeoutMs: 5_000 })
    const quick = track(peer.request('quick', null, { timeoutMs: 250 }))
    const peerDefault = track(peer.request('default'))
    const patient = track(peer.request('patient', null, { timeoutMs: 60_000 }))
    await vi.advanceTimersByTimeAsync(249)
    expect(quick.status).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(quick.status).toBe('rejected')
    expect((quick.error as Error).message).toBe('quick to ext-a timed out after 250 ms')
    await vi.advanceTimersByTimeAsync(4_749)
    expect(peerDefault.status).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect((peerDefault.error as Error).message).toBe('default to ext-a timed out after 5000 ms')
    await vi.advanceTimersByTimeAsync(54_999)
    expect(patient.status).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect((patient.error as Error).message).toBe('patient to ext-a timed out after 60000 ms')
    expect(peer.pendingCount).toBe(0)
    peer.close()
  })

  it('gives insitu.shutdown 2 s unless overridden', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { peer } = handDriven({ name: 'acme/hello' })
    expect(SHUTDOWN_TIMEOUT_MS).toBe(2_000)
    const shutdown = track(peer.request('insitu.shutdown'))
    const longer = track(peer.request('insitu.shutdown', null, { timeoutMs: 3_000 }))
    await vi.advanceTimersByTimeAsync(1_999)
    expect(shutdown.status).toBe('pending')
    await vi.advanceTimersByTimeAsync(1)
    expect(shutdown.status).toBe('rejected')
    expect((shutdown.error as Error).message).toBe('insitu.shutdown to acme/hello timed out after 2000 ms')
    expect(longer.status).toBe('pending')
    await vi.advanceTimersByTimeAsync(1_000)
    expect((longer.error as Error).message).toBe('insitu.shutdown to acme/hello timed out after 3000 ms')
    peer.close()
  })

  it('ignores a late response for a timed-out id, and responses for unknown ids', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const closes: Error[] = []
    const { peer, sent, send } = handDriven({ name: 'ext-a', onClose: (reason) => closes.push(reason) })
    const timedOut = track(peer.request('first', null, { timeoutMs: 100 }))
    await vi.advanceTimersByTimeAsync(100)
    expect(timedOut.status).toBe('rejected')
    const second = track(peer.request('second'))
    await flush()
    send({ jsonrpc: '2.0', id: 1, result: 'late' })
    send({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'late failure' } })
    send({ jsonrpc: '2.0', id: 99, result: 'stranger' })
    await flush()
    expect(peer.isClosed).toBe(false)
    expect(closes).toEqual([])
    expect(second.status).toBe('pending')
    expect(peer.pendingCount).toBe(1)
    expect(timedOut.error).toBeInstanceOf(RpcTimeoutError)
    send({ jsonrpc: '2.0', id: 2, result: 'mine' })
    await flush()
    expect(second.status).toBe('resolved')
    expect(second.value).toBe('mine')
    // Already settled: ignored as well.
    send({ jsonrpc: '2.0', id: 2, result: 'again' })
    await flush()
    expect(peer.isClosed).toBe(false)
    expect(sent.frames.length).toBe(2)
    peer.close()
  })

  it('closes once it has ignored 64 MiB of messages nothing asked for since a response last settled a request (a flood), failing what is pending', async () => {
    const closes: Error[] = []
    const { peer, send } = handDriven({ name: 'ext-a', onClose: (reason) => closes.push(reason) })
    const pending = track(peer.request('work'))
    await flush()
    const flood = { jsonrpc: '2.0', id: 1_000_000_000, result: { content: 'x'.repeat(MAX_BODY_BYTES - 200) } }
    // Below the bound, ignored; a response that settles a request starts the count again.
    for (let i = 0; i < 3; i++) send(flood)
    await flush()
    expect(peer.isClosed).toBe(false)
    const settles = track(peer.request('quick'))
    await flush()
    send({ jsonrpc: '2.0', id: 2, result: 'done' })
    await flush()
    expect(settles.status).toBe('resolved')
    for (let i = 0; i < 4; i++) send(flood)
    await flush()
    expect(peer.isClosed).toBe(false)
    send(flood)
    await flush(10)
    expect(peer.isClosed).toBe(true)
    expect(closes.map((reason) => reason.message)).toEqual(['ext-a sent 64 MiB of messages nothing asked for (the last: a response for id 1000000000)'])
    expect(pending.status).toBe('rejected')
    expect((pending.error as Error).message).toBe('ext-a sent 64 MiB of messages nothing asked for (the last: a response for id 1000000000)')
  })

  it('counts notifications and requests nothing handles, and errors for id null, toward the same bound', async () => {
    const closes: Error[] = []
    const { peer, send } = handDriven({ name: 'ext-a', onClose: (reason) => closes.push(reason) })
    peer.onNotification('known', () => {})
    const big = 'x'.repeat(MAX_BODY_BYTES - 200)
    // A handled notification is no flood.
    for (let i = 0; i < 5; i++) send({ jsonrpc: '2.0', method: 'known', params: big })
    await flush()
    expect(peer.isClosed).toBe(false)
    send({ jsonrpc: '2.0', method: 'nobody.listens', params: big })
    send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: big } })
    send({ jsonrpc: '2.0', id: 7, method: 'no.such.method', params: big })
    send({ jsonrpc: '2.0', method: 'nobody.listens', params: big })
    await flush(10)
    expect(peer.isClosed).toBe(false)
    send({ jsonrpc: '2.0', method: 'nobody.listens', params: big })
    await flush(10)
    expect(closes.map((reason) => reason.message)).toEqual(['ext-a sent 64 MiB of messages nothing asked for (the last: a notification "nobody.listens")'])
  })

  it('rejects at once for an already aborted signal, writing nothing', async () => {
    const { peer, sent } = handDriven()
    const error = await rejectionOf(peer.request('m', { a: 1 }, { signal: AbortSignal.abort() }))
    expect(error.name).toBe('AbortError')
    expect(error.message).toBe('m aborted')
    const reason = new Error('user navigated away')
    expect(await rejectionOf(peer.request('m', null, { signal: AbortSignal.abort(reason) }))).toBe(reason)
    await flush()
    expect(sent.bytes()).toBe(0)
    expect(peer.pendingCount).toBe(0)
    peer.close()
  })

  it('drops a request aborted while pending, sending no cancel message', async () => {
    const { peer, sent, send } = handDriven()
    const controller = new AbortController()
    const call = peer.request('long', null, { signal: controller.signal })
    const other = peer.request('other')
    await flush()
    expect(peer.pendingCount).toBe(2)
    controller.abort()
    const error = await rejectionOf(call)
    expect(error.name).toBe('AbortError')
    expect(error.message).toBe('long aborted')
    expect(peer.pendingCount).toBe(1)
    const withReason = new AbortController()
    const reason = new Error('stop it')
    const third = peer.request('third', null, { signal: withReason.signal })
    withReason.abort(reason)
    expect(await rejectionOf(third)).toBe(reason)
    await flush()
    expect(sent.frames).toEqual([
      '{"jsonrpc":"2.0","id":1,"method":"long","params":null}',
      '{"jsonrpc":"2.0","id":2,"method":"other","params":null}',
      '{"jsonrpc":"2.0","id":3,"method":"third","params":null}',
    ])
    // A late answer to the aborted request is ignored; the other one still settles.
    send({ jsonrpc: '2.0', id: 1, result: 'late' })
    send({ jsonrpc: '2.0', id: 2, result: 'other result' })
    expect(await other).toBe('other result')
    expect(peer.isClosed).toBe(false)
    peer.close()
  })
})

describe('RpcPeer: close and fatal read errors', () => {
  it('fails every pending request with `RPC peer closed` when the other side ends, and later ones at once', async () => {
    const { a, b } = connectedPair()
    b.onRequest('hang', () => new Promise(() => {}))
    const first = a.request('hang')
    const second = a.request('hang')
    await flush()
    expect(a.pendingCount).toBe(2)
    b.close()
    const error = await rejectionOf(first)
    expect(error).toBeInstanceOf(RpcClosedError)
    expect(error.message).toBe('RPC peer closed')
    expect(await rejectionOf(second)).toBe(error)
    expect(await a.closed).toBe(error)
    expect(a.isClosed).toBe(true)
    expect(a.pendingCount).toBe(0)
    expect(await rejectionOf(a.request('after', null, { timeoutMs: 1_000 }))).toBe(error)
    expect(await rejectionOf(a.notify('after'))).toBe(error)
  })

  it('fails pending requests on close() and aborts handler signals', async () => {
    const { peer, send, output } = handDriven()
    let handlerSignal: AbortSignal | undefined
    peer.onRequest('work', (_params, context) => {
      handlerSignal = context.signal
      return new Promise(() => {})
    })
    send({ jsonrpc: '2.0', id: 1, method: 'work', params: null })
    const call = peer.request('x')
    await flush()
    expect(handlerSignal?.aborted).toBe(false)
    peer.close()
    const error = await rejectionOf(call)
    expect(error.message).toBe('RPC peer closed')
    expect(handlerSignal?.aborted).toBe(true)
    expect(output.writableEnded).toBe(true)
  })

  it('fails pending requests with the FramingError of a malformed frame, and later requests too', async () => {
    const { peer, sendRaw, output } = handDriven()
    const call = peer.request('x')
    await flush()
    sendRaw('Traceback (most recent call last)\n')
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(FramingError)
    expect((error as FramingError).rule).toBe('malformed-header')
    expect(error.message).toBe(
      'stdout must carry only protocol frames; ext-a wrote "Traceback (most recent call last)" (log to stderr)',
    )
    expect(await peer.closed).toBe(error)
    expect(await rejectionOf(peer.request('y', null, { timeoutMs: 1_000 }))).toBe(error)
    expect(peer.pendingCount).toBe(0)
    expect(output.writableEnded).toBe(true)
  })

  it('reports a print without a line break after a short grace, quoting what came meanwhile', async () => {
    const { peer, sendRaw, output } = handDriven({ name: 'probe/junk' })
    const call = peer.request('x')
    await flush()
    const started = performance.now()
    sendRaw('DEBUG:') // an unbuffered print() writes its pieces one by one
    await flush()
    expect(peer.isClosed).toBe(false)
    sendRaw(' counting words')
    const error = await rejectionOf(call)
    expect(performance.now() - started).toBeGreaterThanOrEqual(JUNK_GRACE_MS - 5)
    expect(error).toBeInstanceOf(FramingError)
    expect(error.message).toBe('stdout must carry only protocol frames; probe/junk wrote "DEBUG: counting words" (log to stderr)')
    expect(await peer.closed).toBe(error)
    expect(output.writableEnded).toBe(true)
  })

  it('reports a print at once when its line break comes, and at EOF as output rather than an incomplete frame', async () => {
    const complete = handDriven()
    const call = complete.peer.request('x', null, { timeoutMs: 0 })
    await flush()
    complete.sendRaw('DEBUG: counting')
    complete.sendRaw(' words\nContent-Length: 2\r\n\r\n{}')
    const error = await rejectionOf(call)
    expect(error.message).toBe('stdout must carry only protocol frames; ext-a wrote "DEBUG: counting words" (log to stderr)')
    // The grace timer went with the close: nothing fires later.
    await new Promise((resolve) => setTimeout(resolve, JUNK_GRACE_MS * 2))
    expect(await complete.peer.closed).toBe(error)

    const ended = handDriven()
    const pending = ended.peer.request('x', null, { timeoutMs: 0 })
    await flush()
    ended.input.end(Buffer.from('working...', 'latin1'))
    expect((await rejectionOf(pending)).message).toBe('stdout must carry only protocol frames; ext-a wrote "working..." (log to stderr)')
  })

  it('fails pending requests with an incomplete-frame error on EOF inside a frame', async () => {
    const { peer, input } = handDriven()
    const call = peer.request('x')
    input.end(Buffer.from('Content-Length: 10\r\n\r\n{"js', 'latin1'))
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(FramingError)
    expect(error.message).toBe('incomplete frame: stream ended after 4 of 10 body bytes')
    expect(await rejectionOf(peer.request('y', null, { timeoutMs: 1_000 }))).toBe(error)
  })

  it('closes cleanly on EOF between frames', async () => {
    const { peer, input, send } = handDriven()
    const call = peer.request('x')
    send({ jsonrpc: '2.0', id: 1, result: 'done' })
    expect(await call).toBe('done')
    const pending = peer.request('y')
    input.end()
    const error = await rejectionOf(pending)
    expect(error).toBeInstanceOf(RpcClosedError)
    expect(error.message).toBe('RPC peer closed')
  })

  it('terminates on a body that is not valid JSON', async () => {
    const { peer, sendRaw } = handDriven()
    const call = peer.request('x')
    sendRaw('Content-Length: 5\r\n\r\n{oops')
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(RpcClosedError)
    expect(error.message.startsWith('frame body is not valid JSON: ')).toBe(true)
    expect(error.message.length).toBeGreaterThan('frame body is not valid JSON: '.length)
    expect(await rejectionOf(peer.request('y', null, { timeoutMs: 1_000 }))).toBe(error)
  })

  it('terminates on an empty body (Content-Length: 0)', async () => {
    const { peer, sendRaw } = handDriven()
    const call = peer.request('x')
    sendRaw('Content-Length: 0\r\n\r\n')
    const error = await rejectionOf(call)
    expect(error.message.startsWith('frame body is not valid JSON: ')).toBe(true)
  })

  it.each([
    ['an array', '[1,2]'],
    ['a string', '"hello"'],
    ['null', 'null'],
    ['an object without jsonrpc', '{"id":1,"result":1}'],
    ['a JSON-RPC 1.0 object', '{"jsonrpc":"1.0","id":1,"result":1}'],
    ['a 2.0 object with neither method nor result', '{"jsonrpc":"2.0","id":1}'],
    ['a 2.0 object with a non-string method', '{"jsonrpc":"2.0","id":1,"method":5}'],
    ['a 2.0 request with a fractional id', '{"jsonrpc":"2.0","id":1.5,"method":"m"}'],
  ])('terminates on a body that is JSON but not a JSON-RPC 2.0 message: %s', async (_label, body) => {
    const { peer, sendRaw } = handDriven()
    const call = peer.request('x')
    sendRaw(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    const error = await rejectionOf(call)
    expect(error).toBeInstanceOf(RpcClosedError)
    expect(error.message).toBe('frame body is not a JSON-RPC 2.0 message')
    expect(await rejectionOf(peer.request('y', null, { timeoutMs: 1_000 }))).toBe(error)
  })

  it('fails an oversize outbound request without writing or recording anything', async () => {
    const { peer, sent } = handDriven()
    const error = await rejectionOf(peer.request('big', 'a'.repeat(MAX_BODY_BYTES)))
    expect(error).toBeInstanceOf(FramingError)
    expect(error.message).toBe('JSON-RPC message exceeds 16 MiB')
    expect(peer.pendingCount).toBe(0)
    const notifyError = await rejectionOf(peer.notify('big', 'a'.repeat(MAX_BODY_BYTES)))
    expect(notifyError.message).toBe('JSON-RPC message exceeds 16 MiB')
    await flush()
    expect(sent.bytes()).toBe(0)
    expect(peer.isClosed).toBe(false)
    peer.close()
  })

  it('close() is idempotent and ends the output stream', async () => {
    const reasons: Error[] = []
    const { peer, output, send } = handDriven({ name: 'ext-a', onClose: (reason) => reasons.push(reason) })
    let finished = false
    output.on('finish', () => (finished = true))
    const call = peer.request('x')
    const first = new Error('first reason')
    peer.close(first)
    peer.close(new Error('second reason'))
    peer.close()
    expect(await rejectionOf(call)).toBe(first)
    expect(reasons).toEqual([first])
    expect(await peer.closed).toBe(first)
    expect(output.writableEnded).toBe(true)
    await flush()
    expect(finished).toBe(true)
    // Input after close is not processed (no handler runs, nothing is written).
    let ran = false
    peer.onRequest('late', () => (ran = true))
    send({ jsonrpc: '2.0', id: 1, method: 'late', params: null })
    await flush()
    expect(ran).toBe(false)
  })
})
