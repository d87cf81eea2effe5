/**
 * insitu protocol v1 framing (SPEC §1): `Content-Length: <n>\r\n\r\n<n bytes of UTF-8 JSON>`.
 *
 * Contract:
 * - `encodeFrame(message)` returns one buffer holding exactly one frame (one `Content-Length`
 *   header, compact JSON, non-ASCII unescaped). A body over 16 MiB throws
 *   `JSON-RPC message exceeds 16 MiB` and nothing is produced.
 * - `FrameDecoder.push(chunk)` returns the bodies of every frame completed by `chunk`, in
 *   order. Any rule violation throws a `FramingError` naming the rule; the decoder is then
 *   dead and every later call throws the same error. `end()` reports an incomplete frame
 *   when the stream stops inside a header block or a body; between frames it is a clean close.
 * - Memory: after `push` returns, the decoder holds less than one header block
 *   (8 KiB + terminator) or less than the declared body (≤ 16 MiB). Chunks are kept in a list
 *   and joined once per frame, so pipelined large frames cost linear time.
 */

export const MAX_HEADER_BYTES = 8 * 1024
export const MAX_BODY_BYTES = 16 * 1024 * 1024
/** How many leading bytes an error quotes when a peer writes non-protocol output. */
export const QUOTED_BYTES = 200

const TERMINATOR = Buffer.from('\r\n\r\n', 'latin1')
const CONTENT_LENGTH = 'content-length'

export type FramingRule =
  | 'header-too-large'
  | 'body-too-large'
  | 'missing-content-length'
  | 'invalid-content-length'
  | 'duplicate-content-length'
  | 'malformed-header'
  | 'incomplete-frame'

export class FramingError extends Error {
  override name = 'FramingError'
  constructor(
    message: string,
    readonly rule: FramingRule,
  ) {
    super(message)
  }
}

/** Encode one message as one frame. Throws when the body exceeds 16 MiB. */
export function encodeFrame(message: unknown): Buffer {
  const json = JSON.stringify(message)
  if (json === undefined) throw new TypeError('cannot encode undefined as a JSON-RPC message')
  return encodeJsonFrame(json)
}

/** Encode an already serialized JSON text as one frame. */
export function encodeJsonFrame(json: string): Buffer {
  const length = Buffer.byteLength(json, 'utf8')
  if (length > MAX_BODY_BYTES) {
    throw new FramingError('JSON-RPC message exceeds 16 MiB', 'body-too-large')
  }
  const header = `Content-Length: ${length}\r\n\r\n`
  const frame = Buffer.allocUnsafe(header.length + length)
  frame.write(header, 0, 'latin1')
  frame.write(json, header.length, 'utf8')
  return frame
}

/** Quote the first bytes of what a peer wrote, for errors about non-protocol output. */
export function quoteBytes(bytes: Buffer): string {
  const shown = bytes.subarray(0, QUOTED_BYTES).toString('utf8')
  return JSON.stringify(shown) + (bytes.length > QUOTED_BYTES ? '…' : '')
}

/** Parse a complete header block (without its terminator) into the body length. */
export function parseHeaderBlock(block: Buffer, seen: Buffer = block): number {
  const lines = block.toString('latin1').split(/\r?\n/)
  let length: number | undefined
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon < 0) throw malformedHeader(seen)
    const name = line.slice(0, colon).trim().toLowerCase()
    if (name !== CONTENT_LENGTH) continue
    if (length !== undefined) {
      throw new FramingError('duplicate Content-Length header', 'duplicate-content-length')
    }
    const value = line.slice(colon + 1).trim()
    if (!/^\d+$/.test(value)) {
      throw new FramingError(`invalid Content-Length: ${JSON.stringify(value)}`, 'invalid-content-length')
    }
    // More than 9 digits cannot be <= 16 MiB; avoid precision loss on absurd values.
    length = value.replace(/^0+(?=\d)/, '').length > 9 ? Number.POSITIVE_INFINITY : Number(value)
  }
  if (length === undefined) {
    throw new FramingError('frame header has no Content-Length', 'missing-content-length')
  }
  if (length > MAX_BODY_BYTES) {
    const shown = Number.isFinite(length) ? `${length} bytes` : 'a length'
    throw new FramingError(`frame body of ${shown} exceeds 16 MiB`, 'body-too-large')
  }
  return length
}

function malformedHeader(seen: Buffer): FramingError {
  return new FramingError(
    `malformed frame header: a line without ':' (stdout must carry only protocol frames; the peer wrote ${quoteBytes(seen)})`,
    'malformed-header',
  )
}

/** Incremental decoder: feed it chunks, get complete frame bodies back. */
export class FrameDecoder {
  private chunks: Buffer[] = []
  /** Bytes of `chunks[0]` already consumed. */
  private offset = 0
  /** Unconsumed bytes across `chunks`. */
  private available = 0
  /** Body length of the frame being read; -1 while reading a header block. */
  private bodyLength = -1
  /** Header bytes already searched for the terminator (the search resumes near here). */
  private scanned = 0
  private failure: FramingError | undefined

  /** Unconsumed bytes currently held (for tests and diagnostics). */
  get bufferedBytes(): number {
    return this.available
  }

  push(chunk: Buffer): Buffer[] {
    if (this.failure) throw this.failure
    if (chunk.length === 0) return []
    this.chunks.push(chunk)
    this.available += chunk.length
    const bodies: Buffer[] = []
    try {
      for (;;) {
        if (this.bodyLength < 0 && !this.readHeader()) break
        if (this.available < this.bodyLength) break
        bodies.push(this.take(this.bodyLength))
        this.bodyLength = -1
      }
    } catch (error) {
      this.fail(error as FramingError)
    }
    return bodies
  }

  /** The stream ended: a clean close only between frames. */
  end(): void {
    if (this.failure) throw this.failure
    if (this.available === 0 && this.bodyLength < 0) return
    const error =
      this.bodyLength < 0
        ? new FramingError(
            `incomplete frame: stream ended inside a header block after ${this.peek(this.available).length} bytes ${quoteBytes(this.peek(QUOTED_BYTES + 1))}`,
            'incomplete-frame',
          )
        : new FramingError(
            `incomplete frame: stream ended after ${this.available} of ${this.bodyLength} body bytes`,
            'incomplete-frame',
          )
    this.fail(error)
  }

  private fail(error: FramingError): never {
    this.failure = error
    this.chunks = []
    this.available = 0
    this.offset = 0
    throw error
  }

  /** Try to consume a header block; true when `bodyLength` is now known. */
  private readHeader(): boolean {
    const limit = MAX_HEADER_BYTES + TERMINATOR.length
    const head = this.peek(Math.min(this.available, limit))
    const from = Math.max(0, this.scanned - (TERMINATOR.length - 1))
    const end = head.indexOf(TERMINATOR, from)
    if (end < 0) {
      // Every complete line must be a header line: fail fast on ordinary text.
      const lastNewline = head.lastIndexOf(0x0a)
      if (lastNewline >= 0) {
        const complete = head.subarray(0, lastNewline).toString('latin1').split('\n')
        for (const line of complete) {
          if (!line.replace(/\r$/, '').includes(':')) throw malformedHeader(head)
        }
      }
      if (head.length >= limit) {
        throw new FramingError(`frame header block exceeds 8 KiB`, 'header-too-large')
      }
      this.scanned = head.length
      return false
    }
    if (end > MAX_HEADER_BYTES) {
      throw new FramingError(`frame header block exceeds 8 KiB`, 'header-too-large')
    }
    const length = parseHeaderBlock(head.subarray(0, end), head)
    this.skip(end + TERMINATOR.length)
    this.scanned = 0
    this.bodyLength = length
    return true
  }

  /** The next `n` unconsumed bytes (n <= available), without consuming them. */
  private peek(n: number): Buffer {
    const first = this.chunks[0]
    if (!first) return Buffer.alloc(0)
    if (first.length - this.offset >= n) return first.subarray(this.offset, this.offset + n)
    const out = Buffer.allocUnsafe(n)
    let written = 0
    let start = this.offset
    for (const chunk of this.chunks) {
      if (written >= n) break
      written += chunk.copy(out, written, start, Math.min(chunk.length, start + n - written))
      start = 0
    }
    return out.subarray(0, written)
  }

  /** Consume `n` bytes and return them: zero-copy when they sit in one chunk, else one join. */
  private take(n: number): Buffer {
    const bytes = this.peek(n)
    this.skip(n)
    return bytes
  }

  private skip(n: number): void {
    this.available -= n
    while (n > 0) {
      const first = this.chunks[0]!
      const rest = first.length - this.offset
      if (n < rest) {
        this.offset += n
        return
      }
      n -= rest
      this.chunks.shift()
      this.offset = 0
    }
  }
}
