/**
 * insitu protocol v1 framing (SPEC §1): `Content-Length: <n>\r\n\r\n<n bytes of UTF-8 JSON>`.
 *
 * Contract:
 * - `encodeFrame(message, stringify?)` returns one buffer holding exactly one frame (one
 *   `Content-Length` header, compact JSON, non-ASCII unescaped; `stringify` writes the JSON,
 *   `JSON.stringify` unless given). A body over 16 MiB throws
 *   `JSON-RPC message exceeds 16 MiB` and nothing is produced.
 * - `FrameDecoder.push(chunk)` returns the bodies of every frame completed by `chunk`, in
 *   order. Any rule violation throws a `FramingError` naming the rule; the decoder is then
 *   dead and every later call throws the same error. `end()` reports an incomplete frame
 *   when the stream stops inside a header block or a body; between frames it is a clean close.
 * - Memory: after `push` returns, the decoder holds less than one header block
 *   (8 KiB + terminator) or less than the declared body (≤ 16 MiB), and no chunk: a header
 *   block is copied into one fixed 8 KiB buffer, a body that spans chunks into one buffer of
 *   its declared size (allocated when the header is read), so a frame costs about its own size
 *   however small the writes are. A body inside one chunk is returned without a copy. Time is
 *   linear in the bytes pushed (header and line searches resume where they stopped).
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
export function encodeFrame(message: unknown, stringify: (message: unknown) => string | undefined = JSON.stringify): Buffer {
  const json = stringify(message)
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
  /** The header block being read, copied out of the chunks (at most 8 KiB + terminator). */
  private readonly header = Buffer.allocUnsafe(MAX_HEADER_BYTES + TERMINATOR.length)
  private headerLength = 0
  /** Where the terminator search resumes in `header`. */
  private terminatorScan = 0
  /** Where the newline search resumes in `header`, and where the line being read starts. */
  private newlineScan = 0
  private lineStart = 0
  /** The body being read, allocated once its length is known, and how much of it is filled. */
  private body: Buffer | undefined
  private bodyFilled = 0
  private failure: FramingError | undefined

  /** Unconsumed bytes currently held (for tests and diagnostics). */
  get bufferedBytes(): number {
    return this.headerLength + this.bodyFilled
  }

  push(chunk: Buffer): Buffer[] {
    if (this.failure) throw this.failure
    const bodies: Buffer[] = []
    let position = 0
    try {
      while (position < chunk.length) {
        if (this.body) {
          position += this.fillBody(chunk, position, bodies)
          continue
        }
        const header = this.readHeader(chunk, position)
        position = header.next
        if (header.length < 0) break
        if (chunk.length - position >= header.length) {
          // The whole body is in this chunk: no copy.
          bodies.push(chunk.subarray(position, position + header.length))
          position += header.length
        } else {
          this.body = Buffer.allocUnsafe(header.length)
          this.bodyFilled = 0
        }
      }
    } catch (error) {
      this.fail(error as FramingError)
    }
    return bodies
  }

  /** The stream ended: a clean close only between frames. */
  end(): void {
    if (this.failure) throw this.failure
    if (this.body) {
      this.fail(
        new FramingError(
          `incomplete frame: stream ended after ${this.bodyFilled} of ${this.body.length} body bytes`,
          'incomplete-frame',
        ),
      )
    }
    if (this.headerLength === 0) return
    const held = this.header.subarray(0, this.headerLength)
    this.fail(
      new FramingError(
        `incomplete frame: stream ended inside a header block after ${held.length} bytes ${quoteBytes(held.subarray(0, QUOTED_BYTES + 1))}`,
        'incomplete-frame',
      ),
    )
  }

  private fail(error: FramingError): never {
    this.failure = error
    this.body = undefined
    this.bodyFilled = 0
    this.headerLength = 0
    throw error
  }

  /** Copy body bytes from `chunk`; returns how many it took. */
  private fillBody(chunk: Buffer, position: number, bodies: Buffer[]): number {
    const body = this.body!
    const taken = chunk.copy(body, this.bodyFilled, position, Math.min(chunk.length, position + body.length - this.bodyFilled))
    this.bodyFilled += taken
    if (this.bodyFilled === body.length) {
      bodies.push(body)
      this.body = undefined
      this.bodyFilled = 0
    }
    return taken
  }

  /**
   * Read header bytes from `chunk` at `position`. Returns where reading goes on and the body
   * length, or -1 (with every byte of the chunk consumed) while the terminator has not come.
   */
  private readHeader(chunk: Buffer, position: number): { next: number; length: number } {
    if (this.headerLength === 0) {
      // The common case: a whole header block inside one chunk, parsed in place.
      const end = chunk.indexOf(TERMINATOR, position)
      if (end >= 0 && end - position <= MAX_HEADER_BYTES) {
        const seen = chunk.subarray(position, Math.min(chunk.length, position + MAX_HEADER_BYTES + TERMINATOR.length))
        return { next: end + TERMINATOR.length, length: parseHeaderBlock(chunk.subarray(position, end), seen) }
      }
    }
    const before = this.headerLength
    const copied = chunk.copy(this.header, before, position, Math.min(chunk.length, position + this.header.length - before))
    this.headerLength += copied
    const held = this.header.subarray(0, this.headerLength)
    const end = held.indexOf(TERMINATOR, this.terminatorScan)
    if (end >= 0) {
      const length = parseHeaderBlock(held.subarray(0, end), held)
      this.headerLength = 0
      this.terminatorScan = 0
      this.newlineScan = 0
      this.lineStart = 0
      return { next: position + end + TERMINATOR.length - before, length }
    }
    this.terminatorScan = Math.max(0, this.headerLength - (TERMINATOR.length - 1))
    // Every complete line must be a header line: fail fast on ordinary text (each line checked once).
    for (let newline = held.indexOf(0x0a, this.newlineScan); newline >= 0; newline = held.indexOf(0x0a, newline + 1)) {
      if (!held.subarray(this.lineStart, newline).includes(0x3a)) throw malformedHeader(held)
      this.lineStart = newline + 1
    }
    this.newlineScan = this.headerLength
    if (this.headerLength >= this.header.length) {
      throw new FramingError(`frame header block exceeds 8 KiB`, 'header-too-large')
    }
    return { next: position + copied, length: -1 }
  }
}
