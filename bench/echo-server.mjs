/**
 * The benchmark's echo child: ONE implementation serving both JSON-RPC clients, so neither side
 * gets a server tuned to it. Plain Node, no dependencies, no code shared with src/.
 *
 * Contract:
 * - Reads `Content-Length: <n>\r\n\r\n<body>` frames from stdin and answers every request
 *   `{"jsonrpc":"2.0","id":N,"method":M,"params":P}` with `{"jsonrpc":"2.0","id":N,"result":P}`
 *   (one Content-Length header, compact JSON). Notifications get no reply.
 * - Fast path: when the body is exactly `{"jsonrpc":"2.0","id":<digits>,"method":"<name>","params":P}`
 *   (the shape both clients send), P's bytes are spliced into the reply without parsing.
 *   Anything else goes through JSON.parse/JSON.stringify. Both paths are the same for both clients.
 * - Every reply completed by one input chunk goes out in one stdout write.
 * - On stdin EOF it writes `echo-server: <frames> frames, <slow> parsed` to stderr and exits 0.
 *   A malformed header writes a message to stderr and exits 1.
 */

const TERMINATOR = Buffer.from('\r\n\r\n')
const PREFIX = Buffer.from('{"jsonrpc":"2.0","id":')
const METHOD = Buffer.from(',"method":"')
const PARAMS = Buffer.from('","params":')
const RESULT = Buffer.from(',"result":')

/** Unconsumed input, as a list of chunks (joined only when a frame straddles chunks). */
let chunks = []
let buffered = 0
/** Body length of the frame being read; -1 while reading its header block. */
let bodyLength = -1
let frames = 0
let parsed = 0

function take(n) {
  const first = chunks[0]
  if (first.length >= n) {
    chunks[0] = first.subarray(n)
    if (chunks[0].length === 0) chunks.shift()
    buffered -= n
    return first.subarray(0, n)
  }
  const out = Buffer.allocUnsafe(n)
  let written = 0
  while (written < n) {
    const chunk = chunks[0]
    const used = Math.min(chunk.length, n - written)
    chunk.copy(out, written, 0, used)
    written += used
    if (used === chunk.length) chunks.shift()
    else chunks[0] = chunk.subarray(used)
  }
  buffered -= n
  return out
}

/** Try to read a header block; true once `bodyLength` is known. */
function readHeader() {
  while (chunks.length > 1 && chunks[0].length < 8192 + TERMINATOR.length) {
    chunks.splice(0, 2, Buffer.concat([chunks[0], chunks[1]]))
  }
  const head = chunks[0]
  const end = head.indexOf(TERMINATOR)
  if (end < 0) return false
  const match = /content-length:\s*(\d+)/i.exec(head.toString('latin1', 0, end))
  if (!match) {
    process.stderr.write(`echo-server: bad header ${JSON.stringify(head.toString('latin1', 0, end))}\n`)
    process.exit(1)
  }
  take(end + TERMINATOR.length)
  bodyLength = Number(match[1])
  return true
}

function startsWithAt(body, part, at) {
  return body.length >= at + part.length && body.compare(part, 0, part.length, at, at + part.length) === 0
}

function frame(parts) {
  let length = 0
  for (const part of parts) length += part.length
  const header = `Content-Length: ${length}\r\n\r\n`
  const out = Buffer.allocUnsafe(header.length + length)
  let at = out.write(header, 0, 'latin1')
  for (const part of parts) at += part.copy(out, at)
  return out
}

/** The reply frame for one request body, or undefined for a notification. */
function reply(body) {
  if (startsWithAt(body, PREFIX, 0)) {
    let at = PREFIX.length
    while (at < body.length && body[at] >= 0x30 && body[at] <= 0x39) at++
    if (at > PREFIX.length && startsWithAt(body, METHOD, at)) {
      const quote = body.indexOf(0x22, at + METHOD.length)
      const nameHasEscape = body.subarray(at + METHOD.length, quote).includes(0x5c)
      if (quote > 0 && !nameHasEscape && startsWithAt(body, PARAMS, quote) && body[body.length - 1] === 0x7d) {
        const id = body.subarray(PREFIX.length, at)
        const params = body.subarray(quote + PARAMS.length, body.length - 1)
        return frame([PREFIX, id, RESULT, params, Buffer.from('}')])
      }
    }
  }
  parsed++
  const message = JSON.parse(body.toString('utf8'))
  if (message.id === undefined) return undefined
  return frame([Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: message.params ?? null }))])
}

process.stdin.on('data', (chunk) => {
  chunks.push(chunk)
  buffered += chunk.length
  const replies = []
  for (;;) {
    if (bodyLength < 0 && (buffered === 0 || !readHeader())) break
    if (buffered < bodyLength) break
    const body = take(bodyLength)
    bodyLength = -1
    frames++
    const out = reply(body)
    if (out) replies.push(out)
  }
  if (replies.length === 1) process.stdout.write(replies[0])
  else if (replies.length > 1) process.stdout.write(Buffer.concat(replies))
})

process.stdin.on('end', () => {
  process.stderr.write(`echo-server: ${frames} frames, ${parsed} parsed\n`)
  process.exit(0)
})
