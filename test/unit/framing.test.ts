/**
 * Unit and property tests of the wire framing (SPEC §1): src/protocol/framing.ts.
 *
 * Every reader rule is exercised with the byte vector that violates it, asserting the exact
 * `FramingError` message and rule; output that is not a frame (a header-shaped print, any header
 * but Content-Length/Content-Type, a line without ':', a blank line) before, between and inside
 * frames, quoted safely; the writer's byte counting and 16 MiB cap; and fast-check properties
 * (chunking never changes what decodes nor which error with which message; arbitrary bytes only
 * ever raise FramingError, synchronously, within the buffering caps); and the memory a frame costs when
 * it arrives one byte per chunk, fed by hand and from a real child process writing one byte
 * per write() (test/fixtures/python/byte_writer).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  encodeFrame,
  FrameDecoder,
  FramingError,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
  type FramingRule,
} from '../../src/protocol/framing.js'

const MiB = 1024 * 1024
const TERMINATOR = '\r\n\r\n'

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8')

/** A frame written by hand, with the length counted in bytes. */
function rawFrame(body: string | Buffer): Buffer {
  const payload = typeof body === 'string' ? bytes(body) : body
  return Buffer.concat([Buffer.from(`Content-Length: ${payload.length}${TERMINATOR}`, 'latin1'), payload])
}

/** Push `input` (optionally in pieces) into a fresh decoder; return the error it throws. */
function decodeError(input: Buffer | Buffer[], end = false): FramingError {
  const decoder = new FrameDecoder()
  try {
    for (const chunk of Array.isArray(input) ? input : [input]) decoder.push(chunk)
    if (end) decoder.end()
  } catch (error) {
    expect(error).toBeInstanceOf(FramingError)
    return error as FramingError
  }
  throw new Error('expected the decoder to throw a FramingError')
}

function expectFramingError(error: FramingError, rule: FramingRule, message: string): void {
  expect(error).toBeInstanceOf(FramingError)
  expect(error.name).toBe('FramingError')
  expect(error.rule).toBe(rule)
  expect(error.message).toBe(message)
}

/** A header block of exactly `size` bytes (without the terminator) declaring a `bodyLength` body. */
function headerBlockOfSize(size: number, bodyLength: number): string {
  const first = `Content-Length: ${bodyLength}\r\nContent-Type: `
  const block = first + 'a'.repeat(size - first.length)
  expect(block.length).toBe(size)
  return block
}

/** The message for output that is not a frame, `quoted` already quoted. */
const notFrames = (quoted: string, writer = 'the peer'): string =>
  `stdout must carry only protocol frames; ${writer} wrote ${quoted} (log to stderr)`

describe('encodeFrame', () => {
  it('writes exactly one Content-Length header and compact JSON', () => {
    const frame = encodeFrame({ jsonrpc: '2.0', id: 1, method: 'm', params: { a: [1, 2], b: null } })
    expect(frame.toString('utf8')).toBe(
      'Content-Length: 67\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2],"b":null}}',
    )
    expect(Buffer.byteLength('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2],"b":null}}')).toBe(67)
  })

  it('counts bytes, not characters, and leaves non-ASCII unescaped', () => {
    const message = { text: 'é日本😀' }
    const json = '{"text":"é日本😀"}'
    expect(json.length).toBe(16)
    expect(Buffer.byteLength(json)).toBe(23)
    const frame = encodeFrame(message)
    expect(frame.equals(Buffer.concat([Buffer.from('Content-Length: 23\r\n\r\n', 'latin1'), bytes(json)]))).toBe(true)
    expect(frame.includes(Buffer.from([0xc3, 0xa9]))).toBe(true) // é as raw UTF-8
    expect(frame.includes(Buffer.from([0xf0, 0x9f, 0x98, 0x80]))).toBe(true) // 😀 as raw UTF-8
    expect(frame.includes(bytes('\\u'))).toBe(false)
  })

  it('accepts a body of exactly 16 MiB', () => {
    const message = 'a'.repeat(MAX_BODY_BYTES - 2) // JSON adds the two quotes
    const frame = encodeFrame(message)
    const header = `Content-Length: ${MAX_BODY_BYTES}\r\n\r\n`
    expect(frame.length).toBe(header.length + MAX_BODY_BYTES)
    expect(frame.subarray(0, header.length).toString('latin1')).toBe(header)
    expect(frame[header.length]).toBe(0x22)
    expect(frame[frame.length - 1]).toBe(0x22)
  })

  it('refuses one byte more with `JSON-RPC message exceeds 16 MiB`', () => {
    let error: unknown
    try {
      encodeFrame('a'.repeat(MAX_BODY_BYTES - 1))
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'body-too-large', 'JSON-RPC message exceeds 16 MiB')
  })

  it('applies the 16 MiB cap to bytes, not characters', () => {
    // 8 Mi two-byte characters: half the limit in characters, one quote pair over it in bytes.
    const message = 'é'.repeat(MAX_BODY_BYTES / 2)
    expect(JSON.stringify(message).length).toBeLessThan(MAX_BODY_BYTES)
    expect(() => encodeFrame(message)).toThrow('JSON-RPC message exceeds 16 MiB')
  })

  it('refuses a value with no JSON form', () => {
    expect(() => encodeFrame(undefined)).toThrow(TypeError)
  })
})

describe('FrameDecoder: well-formed input', () => {
  it('decodes one frame and a pipelined sequence in one chunk', () => {
    const decoder = new FrameDecoder()
    const out = decoder.push(Buffer.concat([rawFrame('{"a":1}'), rawFrame('[]'), rawFrame('"x"')]))
    expect(out.map((b) => b.toString('utf8'))).toEqual(['{"a":1}', '[]', '"x"'])
    expect(decoder.bufferedBytes).toBe(0)
    expect(() => decoder.end()).not.toThrow()
  })

  it('decodes a frame delivered one byte at a time', () => {
    const decoder = new FrameDecoder()
    const frame = rawFrame('{"hello":"wörld"}')
    const out: string[] = []
    for (let i = 0; i < frame.length; i++) {
      const bodies = decoder.push(frame.subarray(i, i + 1))
      out.push(...bodies.map((b) => b.toString('utf8')))
      if (i < frame.length - 1) expect(bodies).toEqual([])
    }
    expect(out).toEqual(['{"hello":"wörld"}'])
  })

  it('treats header names case-insensitively', () => {
    for (const name of ['content-length', 'CONTENT-LENGTH', 'cOnTeNt-LeNgTh']) {
      const decoder = new FrameDecoder()
      const out = decoder.push(Buffer.from(`${name}: 2\r\n\r\n{}`, 'latin1'))
      expect(out.map((b) => b.toString())).toEqual(['{}'])
    }
  })

  it('accepts and ignores Content-Type in any letter case, before or after Content-Length', () => {
    const stream = Buffer.concat(
      [
        'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}',
        'Content-Length: 3\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1]',
        'content-type: application/json\r\nCONTENT-LENGTH: 1\r\n\r\n1',
        'CONTENT-TYPE: x\r\ncontent-length: 1\r\ncOnTeNt-TyPe: y\r\n\r\n2',
        ' Content-Type :\r\nContent-Length: 1\r\n\r\n3', // whitespace around the name, an empty value
      ].map((frame) => Buffer.from(frame, 'latin1')),
    )
    const whole = new FrameDecoder()
    expect(whole.push(stream).map(String)).toEqual(['{}', '[1]', '1', '2', '3'])
    // The same, one byte at a time (the incremental judge of header lines agrees).
    const bytewise = new FrameDecoder()
    const out: string[] = []
    for (let i = 0; i < stream.length; i++) out.push(...bytewise.push(stream.subarray(i, i + 1)).map(String))
    expect(out).toEqual(['{}', '[1]', '1', '2', '3'])
    expect(() => bytewise.end()).not.toThrow()
  })

  it('reads multi-byte UTF-8 bodies by byte length', () => {
    const texts = ['"é"', '"日本"', '"😀"', '{"mix":"é日本😀 ok"}']
    const decoder = new FrameDecoder()
    // Back to back: a reader counting characters would cut the next frame's header.
    const out = decoder.push(Buffer.concat(texts.map((t) => rawFrame(t))))
    expect(out.map((b) => b.toString('utf8'))).toEqual(texts)
    expect(out.map((b) => b.length)).toEqual([4, 8, 6, 25])
  })

  it('round-trips encodeFrame output', () => {
    const messages = [{ jsonrpc: '2.0', id: 1, method: 'x', params: { s: 'é日本😀', n: [1.5, -2, null, true] } }, 'plain', 0]
    const decoder = new FrameDecoder()
    const out = decoder.push(Buffer.concat(messages.map((m) => encodeFrame(m))))
    expect(out.map((b) => JSON.parse(b.toString('utf8')))).toEqual(messages)
  })

  it('accepts a header block of exactly 8192 bytes', () => {
    const block = headerBlockOfSize(MAX_HEADER_BYTES, 2)
    const decoder = new FrameDecoder()
    const out = decoder.push(Buffer.from(block + TERMINATOR + '{}', 'latin1'))
    expect(out.map((b) => b.toString())).toEqual(['{}'])
  })

  it('accepts a body of exactly 16 MiB, and the frame after it', () => {
    const body = Buffer.alloc(MAX_BODY_BYTES, 0x61)
    body[0] = 0x22
    body[body.length - 1] = 0x22
    const decoder = new FrameDecoder()
    const stream = Buffer.concat([rawFrame(body), rawFrame('{}')])
    const out: Buffer[] = []
    for (let i = 0; i < stream.length; i += MiB) out.push(...decoder.push(stream.subarray(i, i + MiB)))
    expect(out.length).toBe(2)
    expect(out[0]!.length).toBe(MAX_BODY_BYTES)
    expect(out[0]!.equals(body)).toBe(true)
    expect(out[1]!.toString()).toBe('{}')
  })

  it('accepts Content-Length: 0 as an empty body', () => {
    const decoder = new FrameDecoder()
    expect(decoder.push(Buffer.from('Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}', 'latin1')).map(String)).toEqual([
      '',
      '{}',
    ])
  })

  it('closes cleanly between frames: end() does not throw', () => {
    expect(() => new FrameDecoder().end()).not.toThrow()
    const decoder = new FrameDecoder()
    decoder.push(rawFrame('{}'))
    expect(() => decoder.end()).not.toThrow()
  })

  it('stays linear on 64 pipelined 1 MiB frames pushed in 64 KiB chunks', () => {
    const bodies: Buffer[] = []
    for (let i = 0; i < 64; i++) {
      const body = Buffer.alloc(MiB, 0x61 + (i % 26))
      body.writeUInt32BE(i, 4) // a distinct marker inside each body
      bodies.push(body)
    }
    const stream = Buffer.concat(bodies.map((b) => rawFrame(b)))
    const decoder = new FrameDecoder()
    const out: Buffer[] = []
    const chunk = 64 * 1024
    for (let i = 0; i < stream.length; i += chunk) {
      out.push(...decoder.push(stream.subarray(i, i + chunk)))
      expect(decoder.bufferedBytes).toBeLessThan(MiB + MAX_HEADER_BYTES)
    }
    expect(out.length).toBe(64)
    out.forEach((body, i) => expect(body.equals(bodies[i]!)).toBe(true))
    expect(decoder.bufferedBytes).toBe(0)
    expect(() => decoder.end()).not.toThrow()
  })
})

describe('FrameDecoder: reader rules', () => {
  it('rejects a header block of 8193 bytes (terminator present)', () => {
    const block = headerBlockOfSize(MAX_HEADER_BYTES + 1, 2)
    expectFramingError(
      decodeError(Buffer.from(block + TERMINATOR + '{}', 'latin1')),
      'header-too-large',
      'frame header block exceeds 8 KiB',
    )
  })

  it('rejects a header block whose terminator never comes once 8196 bytes are buffered', () => {
    const text = Buffer.from(headerBlockOfSize(MAX_HEADER_BYTES + 4, 2), 'latin1')
    const decoder = new FrameDecoder()
    expect(decoder.push(text.subarray(0, MAX_HEADER_BYTES + 3))).toEqual([])
    expect(decoder.bufferedBytes).toBe(MAX_HEADER_BYTES + 3)
    let error: unknown
    try {
      decoder.push(text.subarray(MAX_HEADER_BYTES + 3))
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'header-too-large', 'frame header block exceeds 8 KiB')
    // A larger single chunk is rejected as well.
    expectFramingError(
      decodeError(Buffer.from(headerBlockOfSize(20_000, 2), 'latin1')),
      'header-too-large',
      'frame header block exceeds 8 KiB',
    )
  })

  it('rejects a body of 16777217 bytes as soon as the header is read', () => {
    const decoder = new FrameDecoder()
    let error: unknown
    try {
      decoder.push(Buffer.from(`Content-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`, 'latin1'))
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'body-too-large', 'frame body of 16777217 bytes exceeds 16 MiB')
  })

  it('rejects an absurdly large Content-Length without losing precision', () => {
    expectFramingError(
      decodeError(Buffer.from('Content-Length: 123456789012345678901234567890\r\n\r\n', 'latin1')),
      'body-too-large',
      'frame body of a length exceeds 16 MiB',
    )
    // Leading zeros do not make a small length large.
    const decoder = new FrameDecoder()
    expect(decoder.push(Buffer.from('Content-Length: 0000000000002\r\n\r\n{}', 'latin1')).map(String)).toEqual(['{}'])
  })

  it('rejects a header block without Content-Length', () => {
    expectFramingError(
      decodeError(Buffer.from('Content-Type: application/json\r\n\r\n{}', 'latin1')),
      'missing-content-length',
      'frame header has no Content-Length',
    )
  })

  it.each([
    ['-1', '"-1"'],
    ['1.5', '"1.5"'],
    ['0x10', '"0x10"'],
    ['', '""'],
    ['12a', '"12a"'],
    ['+5', '"+5"'],
    ['1 2', '"1 2"'],
  ])('rejects Content-Length %j (not ^\\d+$)', (value, quoted) => {
    expectFramingError(
      decodeError(Buffer.from(`Content-Length: ${value}\r\n\r\n{}`, 'latin1')),
      'invalid-content-length',
      `invalid Content-Length: ${quoted}`,
    )
  })

  it('rejects Content-Length present twice in different letter case', () => {
    expectFramingError(
      decodeError(Buffer.from('content-length: 2\r\nCONTENT-LENGTH: 2\r\n\r\n{}', 'latin1')),
      'duplicate-content-length',
      'duplicate Content-Length header',
    )
    expectFramingError(
      decodeError(Buffer.from('Content-Length: 2\r\nContent-Type: x\r\ncontent-length: 3\r\n\r\n{}', 'latin1')),
      'duplicate-content-length',
      'duplicate Content-Length header',
    )
  })

  it('rejects a header line without a colon, quoting the line', () => {
    expectFramingError(
      decodeError(Buffer.from('Content-Length: 2\r\nbogus\r\n\r\n{}', 'latin1')),
      'malformed-header',
      notFrames('"bogus"'),
    )
  })

  it('rejects ordinary printed text at once, quoting its line', () => {
    expectFramingError(decodeError(bytes('Hello from my extension!\n')), 'malformed-header', notFrames('"Hello from my extension!"'))
  })

  it('rejects a header-shaped print (`DEBUG: counting words`), naming the writer', () => {
    const decoder = new FrameDecoder({ writer: 'probe/junk' })
    let error: unknown
    try {
      decoder.push(bytes('DEBUG: counting words\n'))
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'malformed-header', notFrames('"DEBUG: counting words"', 'probe/junk'))
    // Followed by a real frame in the same chunk (the whole block parsed at once): the same error.
    expectFramingError(
      decodeError(Buffer.concat([bytes('DEBUG: counting words\n'), rawFrame('{}')])),
      'malformed-header',
      notFrames('"DEBUG: counting words"'),
    )
  })

  it.each([
    ['Content-Length first', 'Content-Length: 2\r\nX-Debug: on\r\n\r\n{}'],
    ['the unknown header first', 'X-Debug: on\r\nContent-Length: 2\r\n\r\n{}'],
    ['Content-Type and the unknown header in lower case', 'content-type: x\r\ncontent-length: 2\r\nx-debug: on\r\n\r\n{}'],
  ])('rejects any header but Content-Length and Content-Type (%s), however it is chunked', (_, frame) => {
    const quoted = JSON.stringify(/x-debug: on/i.exec(frame)![0])
    const stream = Buffer.from(frame, 'latin1')
    expectFramingError(decodeError(stream), 'malformed-header', notFrames(quoted))
    expectFramingError(decodeError([...stream].map((byte) => Buffer.from([byte]))), 'malformed-header', notFrames(quoted))
    expectFramingError(decodeError(stream, true), 'malformed-header', notFrames(quoted))
  })

  it('rejects header-shaped lines that only resemble the accepted names', () => {
    for (const line of ['Content-Lengths: 2', 'Content-Len: 2', 'Content Length: 2', 'Content-Length 2', ': 2', 'Content-Type2: x']) {
      const frame = `${line}\r\nContent-Length: 2\r\n\r\n{}`
      expectFramingError(decodeError(Buffer.from(frame, 'latin1')), 'malformed-header', notFrames(JSON.stringify(line)))
      const bytewise = [...Buffer.from(frame, 'latin1')].map((byte) => Buffer.from([byte]))
      expectFramingError(decodeError(bytewise), 'malformed-header', notFrames(JSON.stringify(line)))
    }
  })

  it('lets output that is not a frame decide before any other fault of its header block', () => {
    for (const frame of [
      'Content-Length: x\r\nDEBUG: y\r\n\r\n{}',
      'Content-Length: 2\r\nContent-Length: 2\r\nDEBUG: y\r\n\r\n{}',
      'Content-Length: 99999999999\r\nDEBUG: y\r\n\r\n{}',
      'Content-Type: x\r\nDEBUG: y\r\n\r\n{}',
    ]) {
      const stream = Buffer.from(frame, 'latin1')
      expectFramingError(decodeError(stream), 'malformed-header', notFrames('"DEBUG: y"'))
      expectFramingError(decodeError([...stream].map((byte) => Buffer.from([byte]))), 'malformed-header', notFrames('"DEBUG: y"'))
    }
  })

  it('quotes output that is not a frame before the first frame, between frames and after a partial header alike', () => {
    const print = bytes('DEBUG: counting words\n')
    // Each case: its chunks, and the bodies delivered before the error (none after the print).
    const positions: [Buffer[], string[]][] = [
      [[print, rawFrame('{}')], []], // before the first frame
      [[rawFrame('{}'), print, rawFrame('{}')], ['{}']], // between frames, separate chunks
      [[Buffer.concat([rawFrame('{}'), print, rawFrame('{}')])], []], // between frames, one chunk (the push throws)
      [[Buffer.from('Content-Length: 2\r\n', 'latin1'), print, Buffer.from('\r\n{}', 'latin1')], []], // after a partial header
      [[Buffer.from('Content-Length: 2\r\nDEBUG: counting words\n\r\n{}', 'latin1')], []], // inside one header block
    ]
    for (const [chunks, delivered] of positions) {
      const decoder = new FrameDecoder({ writer: 'probe/junk' })
      const bodies: string[] = []
      let error: unknown
      try {
        for (const chunk of chunks) bodies.push(...decoder.push(chunk).map(String))
      } catch (caught) {
        error = caught
      }
      expectFramingError(error as FramingError, 'malformed-header', notFrames('"DEBUG: counting words"', 'probe/junk'))
      expect(bodies).toEqual(delivered)
    }
  })

  it('waits for the rest of a line that can be no header, so the quote holds it whole', () => {
    const decoder = new FrameDecoder()
    expect(decoder.push(bytes('DEB'))).toEqual([])
    expect(decoder.holdsJunk).toBe(true)
    expect(decoder.push(bytes('UG:'))).toEqual([])
    let error: unknown
    try {
      decoder.push(bytes(' counting words\r\nContent-Length: 2\r\n\r\n{}'))
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'malformed-header', notFrames('"DEBUG: counting words"'))
    expect(decoder.holdsJunk).toBe(false)
    // A possible header start is no junk: `C`, `content-le`, whitespace, a complete accepted name.
    for (const start of ['C', 'content-le', '  ', 'Content-Length: 2\r\n\r', 'Content-Length:', 'Content-Length: 2\r\nContent-Ty', 'Content-Type  ']) {
      const possible = new FrameDecoder()
      expect(possible.push(Buffer.from(start, 'latin1'))).toEqual([])
      expect(possible.holdsJunk, start).toBe(false)
    }
  })

  it('reports a held line when asked (rejectHeldJunk), at end(), or once more than 200 bytes of it came', () => {
    const asked = new FrameDecoder({ writer: 'probe/junk' })
    asked.push(bytes('working...'))
    let error: unknown
    try {
      asked.rejectHeldJunk()
    } catch (caught) {
      error = caught
    }
    expectFramingError(error as FramingError, 'malformed-header', notFrames('"working..."', 'probe/junk'))
    expect(() => asked.push(rawFrame('{}'))).toThrow(error as Error)
    // Nothing held: a no-op.
    const idle = new FrameDecoder()
    idle.push(bytes('Content-Len'))
    expect(() => idle.rejectHeldJunk()).not.toThrow()
    expect(idle.push(bytes('gth: 2\r\n\r\n{}')).map(String)).toEqual(['{}'])

    // At end of stream it is output that is not a frame, not an incomplete frame.
    expectFramingError(decodeError(bytes('working...'), true), 'malformed-header', notFrames('"working..."'))
    // More than 200 bytes of one line, fed in small pieces: reported without waiting for its end.
    const long = new FrameDecoder()
    let thrown: unknown
    let fed = 0
    try {
      for (; fed < 1000; fed += 10) long.push(bytes('DEBUG ' + 'x'.repeat(4)))
    } catch (caught) {
      thrown = caught
    }
    expect(fed).toBe(200) // the push that brought the 210th byte
    expectFramingError(thrown as FramingError, 'malformed-header', notFrames(`"${'DEBUG xxxx'.repeat(20)}"…`))
  })

  it('quotes at most 200 bytes of a long printed text and marks the cut with …', () => {
    const printed = 'x'.repeat(199) + 'y' + 'z'.repeat(300) + '\n'
    expectFramingError(decodeError(bytes(printed)), 'malformed-header', notFrames(`"${'x'.repeat(199)}y"…`))
    // A line longer than the header buffer, in one chunk: output that is not a frame, not a header over 8 KiB.
    expectFramingError(decodeError(bytes('y'.repeat(20_000))), 'malformed-header', notFrames(`"${'y'.repeat(200)}"…`))
    expectFramingError(decodeError(bytes(`DEBUG: ${'y'.repeat(20_000)}\n`)), 'malformed-header', notFrames(`"DEBUG: ${'y'.repeat(193)}"…`))
  })

  it('quotes a blank line with the header lines before it and its line break', () => {
    expectFramingError(decodeError(bytes('\n')), 'malformed-header', notFrames('"\\n"'))
    expectFramingError(decodeError(bytes('\r\n\r\n{}')), 'malformed-header', notFrames('"\\r\\n"'))
    // A writer that ends its header block with LF LF instead of CRLF CRLF.
    expectFramingError(
      decodeError(bytes('Content-Length: 2\n\n{}')),
      'malformed-header',
      notFrames('"Content-Length: 2\\n\\n"'),
    )
    expectFramingError(
      decodeError(bytes('Content-Length: 2\r\n \t\r\n\r\n{}')),
      'malformed-header',
      notFrames('"Content-Length: 2\\r\\n \\t\\r\\n"'),
    )
  })

  it('quotes odd bytes safely: controls and invisible formatting escaped, invalid UTF-8 as U+FFFD, no character cut', () => {
    const odd = Buffer.concat([bytes('\u001b[31mred\u0000 '), Buffer.from([0xff, 0xfe, 0xc3]), bytes(' \u202egnp.exe \u009b2J \u2028 é\n')])
    expectFramingError(
      decodeError(odd),
      'malformed-header',
      notFrames('"\\u001b[31mred\\u0000 \ufffd\ufffd\ufffd \\u202egnp.exe \\u009b2J \\u2028 é"'),
    )
    // 199 ASCII bytes and a two-byte é across the 200-byte mark: the é is left out whole.
    expectFramingError(decodeError(bytes(`${'a'.repeat(199)}é${'b'.repeat(50)}\n`)), 'malformed-header', notFrames(`"${'a'.repeat(199)}"…`))
    // A four-byte character ending exactly at 200 bytes stays.
    expectFramingError(decodeError(bytes(`${'a'.repeat(196)}😀${'b'.repeat(50)}\n`)), 'malformed-header', notFrames(`"${'a'.repeat(196)}😀"…`))
  })

  it('reports end of stream inside a header block as an incomplete frame', () => {
    expectFramingError(
      decodeError(Buffer.from('Content-Len', 'latin1'), true),
      'incomplete-frame',
      'incomplete frame: stream ended inside a header block after 11 bytes "Content-Len"',
    )
    expectFramingError(
      decodeError(Buffer.from('Content-Length: 2\r\n', 'latin1'), true),
      'incomplete-frame',
      'incomplete frame: stream ended inside a header block after 19 bytes "Content-Length: 2\\r\\n"',
    )
    const long = 'Content-Type: ' + 'a'.repeat(300)
    expectFramingError(
      decodeError(Buffer.from(long, 'latin1'), true),
      'incomplete-frame',
      `incomplete frame: stream ended inside a header block after 314 bytes "Content-Type: ${'a'.repeat(186)}"…`,
    )
  })

  it('reports end of stream inside a body as an incomplete frame', () => {
    expectFramingError(
      decodeError(Buffer.from('Content-Length: 10\r\n\r\n{"a"', 'latin1'), true),
      'incomplete-frame',
      'incomplete frame: stream ended after 4 of 10 body bytes',
    )
    expectFramingError(
      decodeError([rawFrame('{}'), Buffer.from('Content-Length: 10\r\n\r\n', 'latin1')], true),
      'incomplete-frame',
      'incomplete frame: stream ended after 0 of 10 body bytes',
    )
  })

  it('keeps throwing the same error after a failure', () => {
    const decoder = new FrameDecoder()
    let first: unknown
    try {
      decoder.push(Buffer.from('Content-Length: x\r\n\r\n', 'latin1'))
    } catch (caught) {
      first = caught
    }
    expectFramingError(first as FramingError, 'invalid-content-length', 'invalid Content-Length: "x"')
    expect(() => decoder.push(rawFrame('{}'))).toThrow(first as Error)
    let again: unknown
    try {
      decoder.push(rawFrame('{}'))
    } catch (caught) {
      again = caught
    }
    expect(again).toBe(first)
    let atEnd: unknown
    try {
      decoder.end()
    } catch (caught) {
      atEnd = caught
    }
    expect(atEnd).toBe(first)
    expect(decoder.bufferedBytes).toBe(0)
  })

  it('keeps throwing the incomplete-frame error after end()', () => {
    const decoder = new FrameDecoder()
    decoder.push(Buffer.from('Content-Length: 5\r\n\r\n', 'latin1'))
    let first: unknown
    try {
      decoder.end()
    } catch (caught) {
      first = caught
    }
    expectFramingError(first as FramingError, 'incomplete-frame', 'incomplete frame: stream ended after 0 of 5 body bytes')
    let again: unknown
    try {
      decoder.push(bytes('abcde'))
    } catch (caught) {
      again = caught
    }
    expect(again).toBe(first)
  })
})

/** Cut `stream` at the given positions (taken modulo its length + 1). */
function cut(stream: Buffer, positions: number[]): Buffer[] {
  const cuts = [...new Set(positions.map((p) => p % (stream.length + 1)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let from = 0
  for (const at of [...cuts, stream.length]) {
    chunks.push(stream.subarray(from, at))
    from = at
  }
  return chunks
}

/**
 * The caps, checked without looking inside the decoder: fewer than 8192 + 4 bytes may wait for a
 * header terminator; holding more is only legal while reading a body, i.e. when the bytes just
 * before the buffered ones end a header block that declares a longer body (<= 16 MiB).
 */
function expectWithinCaps(stream: Buffer, buffered: number): void {
  expect(buffered).toBeGreaterThanOrEqual(0)
  expect(buffered).toBeLessThanOrEqual(MAX_BODY_BYTES)
  if (buffered < MAX_HEADER_BYTES + 4) return
  const before = stream.subarray(0, stream.length - buffered)
  expect(before.subarray(-4).toString('latin1')).toBe(TERMINATOR)
  const window = before.subarray(Math.max(0, before.length - 4 - MAX_HEADER_BYTES), before.length - 4).toString('latin1')
  const declared = [...window.matchAll(/content-length:[ \t]*(\d+)[ \t]*(?:\r?\n|$)/gi)].map((m) => Number(m[1]))
  expect(declared.some((n) => n > buffered && n <= MAX_BODY_BYTES)).toBe(true)
}

describe('FrameDecoder: properties', () => {
  const jsonMessage = fc.jsonValue({ stringUnit: 'binary', maxDepth: 3 })

  it('decodes any sequence of valid frames the same way, however it is chunked', () => {
    fc.assert(
      fc.property(fc.array(jsonMessage, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 40 }), (messages, positions) => {
        const stream = Buffer.concat(messages.map((m) => encodeFrame(m)))
        const decoder = new FrameDecoder()
        const bodies: Buffer[] = []
        for (const chunk of cut(stream, positions)) bodies.push(...decoder.push(chunk))
        expect(bodies.map((b) => JSON.parse(b.toString('utf8')))).toEqual(messages.map((m) => JSON.parse(JSON.stringify(m))))
        expect(bodies.map((b) => b.toString('utf8'))).toEqual(messages.map((m) => JSON.stringify(m)))
        expect(decoder.bufferedBytes).toBe(0)
        decoder.end()
      }),
      { numRuns: 200 },
    )
  })

  const noNewline = fc.uint8Array({ minLength: 0, maxLength: 20_000 }).map((a) => a.map((b) => (b === 0x0a ? 0x20 : b)))
  const headerPrefix = fc.oneof(
    fc.constant('Content-Length: '),
    fc.constant('Content-Length: 5\r\n'),
    fc.constant('Content-Type: text/plain\r\n'),
    fc.nat({ max: 30_000 }).map((n) => `Content-Length: ${n}\r\n\r\n`),
    fc.constant(`content-length: ${MAX_BODY_BYTES}\r\n\r\n`),
    fc.constant(`Content-Length: ${MAX_BODY_BYTES + 1}\r\n\r\n`),
    fc.constantFrom('Content-Length: 2\r\n\r\n{}', 'Content-Length: 0\r\n\r\n'),
  )
  const arbitraryStream = fc.oneof(
    fc.uint8Array({ maxLength: 20_000 }).map((a) => Buffer.from(a)),
    noNewline.map((a) => Buffer.from(a)),
    fc
      .tuple(headerPrefix, fc.uint8Array({ maxLength: 20_000 }))
      .map(([prefix, rest]) => Buffer.concat([Buffer.from(prefix, 'latin1'), Buffer.from(rest)])),
    fc
      .tuple(fc.array(jsonMessage, { maxLength: 3 }), headerPrefix, noNewline)
      .map(([messages, prefix, rest]) =>
        Buffer.concat([...messages.map((m) => encodeFrame(m)), Buffer.from(prefix, 'latin1'), Buffer.from(rest)]),
      ),
  )

  it('only ever throws FramingError on arbitrary bytes, synchronously and within the caps', () => {
    fc.assert(
      fc.property(arbitraryStream, fc.array(fc.nat(), { maxLength: 20 }), fc.boolean(), (stream, positions, end) => {
        const decoder = new FrameDecoder()
        let pushed = 0
        let failure: unknown
        for (const chunk of cut(stream, positions)) {
          let result: unknown
          try {
            result = decoder.push(chunk)
          } catch (error) {
            failure = error
            break
          }
          pushed += chunk.length
          expect(Array.isArray(result)).toBe(true)
          for (const body of result as unknown[]) expect(Buffer.isBuffer(body)).toBe(true)
          expectWithinCaps(stream.subarray(0, pushed), decoder.bufferedBytes)
        }
        if (failure === undefined && end) {
          try {
            expect(decoder.end()).toBeUndefined()
          } catch (error) {
            failure = error
          }
        }
        if (failure !== undefined) {
          expect(failure).toBeInstanceOf(FramingError)
          // Dead from now on, with the same error.
          expect(() => decoder.push(Buffer.from('x'))).toThrow(failure as Error)
        }
      }),
      { numRuns: 200 },
    )
  })
})

describe('FrameDecoder: the same error however the bytes come', () => {
  /** Streams made of header-ish pieces: accepted headers, prints, blank lines, frames, odd bytes. */
  const lineStream = fc
    .array(
      fc.constantFrom(
        'Content-Length: 2\r\n',
        'content-type: x\r\n',
        'Content-Length: 2\r\n\r\n{}',
        'DEBUG: y\n',
        'DEBUG',
        '\r\n',
        '\n',
        '\r',
        ' ',
        ':',
        'C',
        'ontent-',
        'Length',
        'Type',
        'x'.repeat(150),
        '\u00e9',
        '\u001b',
      ),
      { maxLength: 30 },
    )
    .map((pieces) => Buffer.from(pieces.join(''), 'utf8'))

  function outcome(chunks: Buffer[], end: boolean): { bodies: string[]; error?: string } {
    const decoder = new FrameDecoder({ writer: 'probe/junk' })
    const bodies: string[] = []
    try {
      for (const chunk of chunks) bodies.push(...decoder.push(chunk).map(String))
      if (end) decoder.end()
    } catch (error) {
      expect(error).toBeInstanceOf(FramingError)
      const { rule, message } = error as FramingError
      // Quotes never carry a raw control or invisible formatting character.
      expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028-\u202e]/)
      return { bodies, error: `${rule}: ${message}` }
    }
    return { bodies }
  }

  it('delivers the same bodies and fails with the same rule and message, whole or in pieces', () => {
    fc.assert(
      fc.property(fc.oneof(lineStream, lineStream, fc.uint8Array({ maxLength: 2_000 }).map((a) => Buffer.from(a))), fc.array(fc.nat(), { maxLength: 20 }), fc.boolean(), (stream, positions, end) => {
        const whole = outcome([stream], end)
        const pieces = outcome(cut(stream, positions), end)
        expect(pieces.error).toBe(whole.error)
        // Before a failure, the chunk that fails keeps its bodies: pieces may deliver more of the same.
        if (whole.error === undefined) expect(pieces.bodies).toEqual(whole.bodies)
        else expect(pieces.bodies.slice(0, whole.bodies.length)).toEqual(whole.bodies)
      }),
      { numRuns: 500 },
    )
  })
})

/** Run a full garbage collection (V8's own `gc`, exposed for this process). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
}

/** Bytes this process holds in JS objects and buffers, after a full collection. */
function heldBytes(): number {
  collectGarbage()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

const BYTE_WRITER = fileURLToPath(new URL('../fixtures/python/byte_writer/write_frame.py', import.meta.url))

describe('FrameDecoder: memory under tiny writes', () => {
  it('holds a 2 MiB body fed one byte per chunk in less than 4 times its size', () => {
    const size = 2 * MiB
    const frame = rawFrame(Buffer.alloc(size, 0x62))
    const decoder = new FrameDecoder()
    const before = heldBytes()
    // A fresh buffer per byte, as a stream read delivers it (not views of one big buffer).
    let early = 0
    for (let i = 0; i < frame.length - 1; i++) early += decoder.push(Buffer.from([frame[i]!])).length
    expect(early).toBe(0)
    expect(decoder.bufferedBytes).toBe(size - 1)
    const growth = heldBytes() - before
    expect(growth).toBeLessThan(4 * size)
    const bodies = decoder.push(Buffer.from([frame.at(-1)!]))
    expect(bodies).toHaveLength(1)
    expect(bodies[0]!.equals(frame.subarray(frame.length - size))).toBe(true)
    expect(decoder.bufferedBytes).toBe(0)
    expect(() => decoder.end()).not.toThrow()
  })

  it('reads an 8 KiB header block fed one byte per chunk, then its body', () => {
    const block = headerBlockOfSize(MAX_HEADER_BYTES, 2)
    const frame = Buffer.from(block + TERMINATOR + '{}', 'latin1')
    const decoder = new FrameDecoder()
    const out: string[] = []
    for (let i = 0; i < frame.length; i++) {
      out.push(...decoder.push(Buffer.from([frame[i]!])).map(String))
      if (i < MAX_HEADER_BYTES) expect(decoder.bufferedBytes).toBe(i + 1)
    }
    expect(out).toEqual(['{}'])
    expect(decoder.bufferedBytes).toBe(0)
  })

  it('decodes a 3 MiB frame a real child writes one byte per write(), holding less than 4 times its size', async () => {
    const size = 3 * MiB
    const child = spawn('python3', [BYTE_WRITER, String(size)], { stdio: ['pipe', 'pipe', 'inherit'] })
    const decoder = new FrameDecoder()
    const bodies: Buffer[] = []
    let chunks = 0
    child.stdout.on('data', (chunk: Buffer) => {
      chunks++
      bodies.push(...decoder.push(chunk))
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const before = heldBytes()
    // The child now waits before the last body byte.
    await expect.poll(() => decoder.bufferedBytes, { timeout: 60_000, interval: 50 }).toBe(size - 1)
    const growth = heldBytes() - before
    expect(growth).toBeLessThan(4 * size)
    child.stdin.end('go\n')
    expect(await exited).toBe(0)
    await expect.poll(() => bodies.length).toBe(1)
    expect(bodies[0]!.length).toBe(size)
    expect(bodies[0]!.toString('latin1')).toBe(`"${'a'.repeat(size - 2)}"`)
    expect(chunks).toBeGreaterThan(1)
    expect(() => decoder.end()).not.toThrow()
  }, 120_000)
})
