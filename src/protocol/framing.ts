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
 * - Header lines: names are case-insensitive (whitespace around a name is ignored);
 *   `Content-Length` is the body length, `Content-Type` is accepted and ignored. Any other line
 *   in a header block (a header-shaped `DEBUG: x`, a line without `:`, a blank line) is output
 *   that is not a frame: rule `malformed-header`, message
 *   `stdout must carry only protocol frames; <writer> wrote "<line>" (log to stderr)`, where
 *   `<writer>` is the decoder's `writer` option (`the peer` by default) and the quote is that line
 *   without its line break (a blank line: the header block up to and including it). Such a line
 *   decides before any other fault of its header block, so chunking never changes the rule.
 * - A line is known to be no header as soon as its bytes rule it out (`D` starts no accepted
 *   name), but is reported whole: once its line break comes, once it is longer than a quote
 *   shows (200 bytes), when the header buffer is full, at `end()`, or when `rejectHeldJunk()` is
 *   called (`holdsJunk` says such a line is waiting; the peer calls it after a short grace, so a
 *   print without a line break fails at once). The error is thus the same however the bytes
 *   are chunked.
 * - Quotes (`quoteBytes`) show at most 200 bytes, cut between characters, `…` after a cut, as a
 *   JSON string with control and invisible formatting characters escaped (`\u001b`, `\u202e`)
 *   and invalid UTF-8 shown as U+FFFD: safe to print in a terminal or a page.
 * - Memory: after `push` returns, the decoder holds less than one header block
 *   (8 KiB + terminator) or less than the declared body (≤ 16 MiB), and no chunk: a header
 *   block is copied into one fixed 8 KiB buffer, a body that spans chunks into one buffer of
 *   its declared size (allocated when the header is read), so a frame costs about its own size
 *   however small the writes are. A body inside one chunk is returned without a copy. Time is
 *   linear in the bytes pushed (each header byte is judged once; searches resume where they stopped).
 */

export const MAX_HEADER_BYTES = 8 * 1024
export const MAX_BODY_BYTES = 16 * 1024 * 1024
/** How many leading bytes an error quotes when a peer writes non-protocol output. */
export const QUOTED_BYTES = 200

const TERMINATOR = Buffer.from('\r\n\r\n', 'latin1')
const LF = 0x0a
const CR = 0x0d
const COLON = 0x3a
/** The header names a reader accepts, lowercase: the body length, and the type JSON-RPC's base protocol allows. */
const CONTENT_LENGTH = 'content-length'
const CONTENT_TYPE = 'content-type'
const HEADER_NAMES = [CONTENT_LENGTH, CONTENT_TYPE]
const DEFAULT_WRITER = 'the peer'

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

export interface FrameDecoderOptions {
  /** Who writes the stream, as errors about non-protocol output name it (e.g. the extension). @default 'the peer' */
  writer?: string
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

/** Characters a quote escapes beyond JSON's own: DEL, C1 controls, invisible and bidi formatting. */
const INVISIBLE = /[\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g

/** Quote the first bytes of what a peer wrote, for errors about non-protocol output. */
export function quoteBytes(bytes: Buffer): string {
  let end = Math.min(bytes.length, QUOTED_BYTES)
  if (end < bytes.length) {
    // Cut between characters: back up over the continuation bytes of a character cut in two.
    let lead = end
    while (lead > end - 3 && lead > 0 && (bytes[lead]! & 0xc0) === 0x80) lead--
    if (lead < end && bytes[lead]! >= 0xc0) end = lead
  }
  const text = JSON.stringify(bytes.toString('utf8', 0, end)).replace(
    INVISIBLE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  return text + (end < bytes.length ? '…' : '')
}

/** Whitespace around a header name: what `String.prototype.trim` removes from a latin1 line. */
function isHeaderSpace(byte: number): boolean {
  return byte === 0x20 || (byte >= 0x09 && byte <= 0x0d) || byte === 0xa0
}

/** Which accepted header name bytes [from, to) are, in any letter case (`whole`), or start: its index in HEADER_NAMES, or -1. */
function headerName(bytes: Buffer, from: number, to: number, whole: boolean): number {
  const length = to - from
  names: for (let index = 0; index < HEADER_NAMES.length; index++) {
    const name = HEADER_NAMES[index]!
    if (whole ? length !== name.length : length > name.length) continue
    for (let i = 0; i < length; i++) {
      const byte = bytes[from + i]!
      // The names hold only ASCII letters and '-': fold ASCII capitals, nothing else.
      if ((byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte) !== name.charCodeAt(i)) continue names
    }
    return index
  }
  return -1
}

/** The accepted name of a header line whose name part is [start, colon) (whitespace around it ignored), or -1. */
function acceptedName(bytes: Buffer, start: number, colon: number): number {
  let from = start
  let to = colon
  while (from < to && isHeaderSpace(bytes[from]!)) from++
  while (to > from && isHeaderSpace(bytes[to - 1]!)) to--
  return headerName(bytes, from, to, true)
}

/**
 * The error for a line that is no protocol header: line [start, newline) of a header block that
 * starts at `bytes[0]` (`newline`: its LF, or where the bytes held end).
 */
function notAFrame(writer: string, bytes: Buffer, start: number, newline: number): FramingError {
  let end = newline
  if (end > start && bytes[end - 1] === CR) end--
  let blank = true
  for (let i = start; i < end && blank; i++) blank = isHeaderSpace(bytes[i]!)
  // A blank line says nothing by itself: show the header block up to and including its line break.
  const shown = blank ? bytes.subarray(0, Math.min(bytes.length, newline + 1)) : bytes.subarray(start, end)
  return new FramingError(
    `stdout must carry only protocol frames; ${writer} wrote ${quoteBytes(shown)} (log to stderr)`,
    'malformed-header',
  )
}

/**
 * Parse a complete header block into the body length. `bytes` holds the block, its terminator
 * (`\r\n\r\n`) and nothing after.
 */
function parseHeaderBlock(bytes: Buffer, writer: string): number {
  const blockEnd = bytes.length - TERMINATOR.length
  // Every line first (output that is not a frame decides, whatever else is wrong), noting the
  // first Content-Length value and how many there are.
  let valueStart = 0
  let valueEnd = 0
  let lengths = 0
  for (let start = 0, newline = 0; start <= blockEnd; start = newline + 1) {
    // Always found: the last line's break is the terminator's first CRLF.
    newline = bytes.indexOf(LF, start)
    const end = newline > start && bytes[newline - 1] === CR ? newline - 1 : newline
    const colon = bytes.indexOf(COLON, start)
    const name = colon >= 0 && colon < end ? acceptedName(bytes, start, colon) : -1
    if (name < 0) throw notAFrame(writer, bytes, start, newline)
    if (HEADER_NAMES[name] === CONTENT_LENGTH && lengths++ === 0) {
      valueStart = colon + 1
      valueEnd = end
    }
    // Content-Type: accepted and ignored.
  }
  if (lengths === 0) {
    throw new FramingError('frame header has no Content-Length', 'missing-content-length')
  }
  const value = bytes.toString('latin1', valueStart, valueEnd).trim()
  if (!/^\d+$/.test(value)) {
    throw new FramingError(`invalid Content-Length: ${JSON.stringify(value)}`, 'invalid-content-length')
  }
  if (lengths > 1) {
    throw new FramingError('duplicate Content-Length header', 'duplicate-content-length')
  }
  // More than 9 digits cannot be <= 16 MiB; avoid precision loss on absurd values.
  const length = value.replace(/^0+(?=\d)/, '').length > 9 ? Number.POSITIVE_INFINITY : Number(value)
  if (length > MAX_BODY_BYTES) {
    const shown = Number.isFinite(length) ? `${length} bytes` : 'a length'
    throw new FramingError(`frame body of ${shown} exceeds 16 MiB`, 'body-too-large')
  }
  return length
}

/** Incremental decoder: feed it chunks, get complete frame bodies back. */
export class FrameDecoder {
  private readonly writer: string
  /** The header block being read, copied out of the chunks (at most 8 KiB + terminator). */
  private readonly header = Buffer.allocUnsafe(MAX_HEADER_BYTES + TERMINATOR.length)
  private headerLength = 0
  /** Where the terminator search resumes in `header`. */
  private terminatorScan = 0
  /**
   * The header line being judged, in `header`: where it starts, the next byte to judge, where
   * its name starts and ends (-1: not yet), whether a `:` came after an accepted name (the rest
   * is its value), and whether it can be no header (it waits to be quoted whole).
   */
  private lineStart = 0
  private lineScan = 0
  private nameStart = -1
  private nameEnd = -1
  private lineAccepted = false
  private junk = false
  /** The body being read, allocated once its length is known, and how much of it is filled. */
  private body: Buffer | undefined
  private bodyFilled = 0
  private failure: FramingError | undefined

  constructor(options: FrameDecoderOptions = {}) {
    this.writer = options.writer ?? DEFAULT_WRITER
  }

  /** Unconsumed bytes currently held (for tests and diagnostics). */
  get bufferedBytes(): number {
    return this.headerLength + this.bodyFilled
  }

  /** A line that is not a protocol header waits for its end before it is reported (see `rejectHeldJunk`). */
  get holdsJunk(): boolean {
    return this.junk && this.failure === undefined
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

  /** Report the line `holdsJunk` says is waiting, with what has come of it (the decoder is then dead). */
  rejectHeldJunk(): void {
    if (this.failure) throw this.failure
    if (this.junk) this.fail(notAFrame(this.writer, this.header.subarray(0, this.headerLength), this.lineStart, this.headerLength))
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
    this.rejectHeldJunk()
    const held = this.header.subarray(0, this.headerLength)
    this.fail(
      new FramingError(
        `incomplete frame: stream ended inside a header block after ${held.length} bytes ${quoteBytes(held)}`,
        'incomplete-frame',
      ),
    )
  }

  private fail(error: FramingError): never {
    this.failure = error
    this.body = undefined
    this.bodyFilled = 0
    this.headerLength = 0
    this.junk = false
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
        const next = end + TERMINATOR.length
        return { next, length: parseHeaderBlock(chunk.subarray(position, next), this.writer) }
      }
    }
    const before = this.headerLength
    const copied = chunk.copy(this.header, before, position, Math.min(chunk.length, position + this.header.length - before))
    this.headerLength += copied
    const held = this.header.subarray(0, this.headerLength)
    const end = held.indexOf(TERMINATOR, this.terminatorScan)
    if (end >= 0) {
      const length = parseHeaderBlock(held.subarray(0, end + TERMINATOR.length), this.writer)
      this.headerLength = 0
      this.terminatorScan = 0
      this.startLine(0)
      return { next: position + end + TERMINATOR.length - before, length }
    }
    this.terminatorScan = Math.max(0, this.headerLength - (TERMINATOR.length - 1))
    this.judgeLines(held)
    if (this.junk && (held.length - this.lineStart > QUOTED_BYTES + 1 || held.length >= this.header.length)) {
      // Enough of it to quote (more than 200 bytes even without a trailing CR), or no room for more.
      throw notAFrame(this.writer, held, this.lineStart, held.length)
    }
    if (this.headerLength >= this.header.length) {
      throw new FramingError(`frame header block exceeds 8 KiB`, 'header-too-large')
    }
    return { next: position + copied, length: -1 }
  }

  private startLine(at: number): void {
    this.lineStart = at
    this.lineScan = at
    this.nameStart = -1
    this.nameEnd = -1
    this.lineAccepted = false
    this.junk = false
  }

  /**
   * Judge the held bytes not judged yet, line by line, each byte once: a complete line that is
   * no protocol header throws; an incomplete one that can become none sets `junk`.
   */
  private judgeLines(held: Buffer): void {
    let i = this.lineScan
    while (i < held.length) {
      if (this.lineAccepted || this.junk) {
        // Nothing left to judge on this line: find its end.
        const newline = held.indexOf(LF, i)
        if (newline < 0) {
          i = held.length
          break
        }
        if (this.junk) throw notAFrame(this.writer, held, this.lineStart, newline)
        this.startLine(newline + 1)
        i = newline + 1
        continue
      }
      const byte = held[i]!
      if (byte === LF) {
        // The line ends without a ':' (or blank).
        this.junk = true
        continue
      }
      if (byte === COLON) {
        const accepted = this.nameStart >= 0 && headerName(held, this.nameStart, this.nameEnd < 0 ? i : this.nameEnd, true) >= 0
        if (accepted) this.lineAccepted = true
        else this.junk = true
      } else if (isHeaderSpace(byte)) {
        if (this.nameStart >= 0 && this.nameEnd < 0) this.nameEnd = i
      } else if (this.nameEnd >= 0) {
        this.junk = true // a second word before the ':'
      } else {
        if (this.nameStart < 0) this.nameStart = i
        if (headerName(held, this.nameStart, i + 1, false) < 0) this.junk = true
      }
      i++
    }
    this.lineScan = i
  }
}
