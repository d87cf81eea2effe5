/**
 * The bounds of every document input (issue #34 "Every input is bounded"): each limit, why it
 * has its value, and the message that names it. A document past a limit fails with a clear
 * error at its file and line, in bounded time and memory, instead of exhausting the process.
 *
 * Contract:
 * - Each limit is a named constant below; no other module hard-codes one.
 * - Messages name the measured size and the limit, never the file: the caller adds it (a
 *   diagnostic carries the path, `docs/big.md:1: error: …`; the index's warning prefixes it).
 * - `InputLimitError` is a `LineError` (1-based document line): the renderers that catch
 *   `LineError` report it as a document error at that line without knowing about limits.
 * - `documentBytesProblem(bytes)`: why these bytes are not a document's text, or null: larger
 *   than `MAX_DOCUMENT_BYTES`, not valid UTF-8 (the first invalid byte's line and offset), or
 *   holding a NUL byte (its line and offset). Python's `read_text(encoding="utf-8")` raises on
 *   invalid UTF-8; a NUL byte makes a file binary for git, CommonMark replaces it, and SQLite
 *   leaves the result of string functions over text holding one undefined. Decoding either
 *   with replacement characters would lose the user's bytes, so neither is read as text.
 * - `checkDocumentText(text)`: the same bounds for a text already decoded (size in UTF-8
 *   bytes, NUL characters); throws `InputLimitError`. Costs one scan for a NUL (memchr speed)
 *   and, only for a text that might be over the size limit, one byte count.
 * - `utf8BytesOver(text, max)`: the UTF-8 size of a text over `max` bytes, else null (counted
 *   only when it may be over).
 * - `formatSize(bytes)`: `512 bytes`, `64 KiB`, `1.5 MiB` (binary units, at most one decimal).
 * - `readBounded(file)`: the file's bytes, or its size when it is larger than
 *   `MAX_DOCUMENT_BYTES` (then it is not read); throws what opening it throws.
 */
import { isUtf8 } from 'node:buffer'
import fs from 'node:fs'
import { LineError } from './line-error.js'

/**
 * A document's size. The Astro docs' 2,569 pages are all well under 1 MiB; a changelog generated
 * over many years of releases, or a reference page generated from a large API, reaches a few
 * MiB: 16 MiB leaves room for those. A document is held several times over while it is indexed
 * and rendered (its bytes, its text, its body, SQLite's copy, the served module), so this also
 * keeps one document's share of memory far below the 1 GiB any input may cost.
 */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024

/**
 * The YAML between the front-matter fences. Written by hand it is a few KiB at most; generated
 * values (a materialization's rows) make it larger, and 128 KiB is still a thousand rows of a
 * few fields. The `yaml` package parses some shapes slowly (an alias node costs it several
 * microseconds, most of it garbage collection): 128 KiB of the densest of them, `*a,` repeated
 * (43,000 aliases), takes it about half a second of CPU, so even that stays within the 2 s
 * a document may cost, read by the index and again by a render.
 */
export const MAX_FRONT_MATTER_BYTES = 128 * 1024

/**
 * One region's TOML header (between `insitu:begin` and `-->`). Headers are a few options; a
 * template or SQL query written inline takes a few KiB at most. 64 KiB is far beyond that, and
 * still parsed in milliseconds.
 */
export const MAX_REGION_HEADER_BYTES = 64 * 1024

/**
 * Regions in one document. Each region is a job run at every render; a page with a region per
 * table or per section has tens of them, the largest generated reference pages a few hundred.
 * Past 1,000 a document is a runaway generator (or a region pasted in a loop), and rendering
 * it would hold every other page behind it.
 */
export const MAX_REGIONS = 1000

/**
 * Values YAML aliases add to the front matter when expanded (`*a` counts the values of what it
 * refers to, nested aliases multiplied through). A value is built once and shared, but every
 * consumer that writes it out (the index's JSON, an extension's request, a template) expands it:
 * nine levels of nine aliases ("billion laughs") are 387 million values from 10 lines. The
 * `yaml` package's guard (`maxAliasCount`, 100) counts uses of one anchor times its own
 * nested aliases, and so refuses a plain scalar anchor used 101 times, which ruamel (the
 * Python implementation's reader) reads and real front matter does (a defaults mapping merged
 * into each of many entries). Counting the values expanded refuses exactly what is expensive:
 * 100,000 values is a few MiB of JSON, far beyond any hand-written use of anchors.
 */
export const MAX_ALIAS_EXPANSION = 100_000

/**
 * How deep collections nest in front matter (the root mapping is level 1). The `yaml` package
 * composes nested collections recursively and reports a stack overflow at about 800 levels
 * from an empty stack; every reader after it (the value builder, the JSON writer, templates)
 * recurses too. 128 leaves that margin for callers' stacks; hand-written front matter nests
 * fewer than 10 levels. (ruamel, at Python's default recursion limit, fails past 245 levels.)
 */
export const MAX_FRONT_MATTER_DEPTH = 128

/** A document input past one of the limits above, at a 1-based document line. */
export class InputLimitError extends LineError {
  override name = 'InputLimitError'
}

export function readBounded(file: string): Buffer | number {
  const fd = fs.openSync(file, 'r')
  try {
    const size = fs.fstatSync(fd).size
    return size > MAX_DOCUMENT_BYTES ? size : fs.readFileSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} ${bytes === 1 ? 'byte' : 'bytes'}`
  const [unit, size] = bytes < 1024 * 1024 ? ['KiB', bytes / 1024] : ['MiB', bytes / (1024 * 1024)]
  const rounded = Math.round(size * 10) / 10
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)} ${unit}`
}

/** `100 MiB (104,857,600 bytes)`: the measured size, exact. */
function measured(bytes: number): string {
  return `${formatSize(bytes)} (${bytes.toLocaleString('en-US')} bytes)`
}

export function documentTooLargeMessage(bytes: number): string {
  return `document is ${measured(bytes)}, over the limit of ${formatSize(MAX_DOCUMENT_BYTES)}`
}

export function frontMatterTooLargeMessage(bytes: number): string {
  return `front matter is ${measured(bytes)}, over the limit of ${formatSize(MAX_FRONT_MATTER_BYTES)}`
}

export function regionHeaderTooLargeMessage(line: number, bytes: number): string {
  return `Insitu region header at line ${line} is ${measured(bytes)}, over the limit of ${formatSize(MAX_REGION_HEADER_BYTES)}`
}

export function tooManyRegionsMessage(line: number): string {
  return `document has more than ${MAX_REGIONS.toLocaleString('en-US')} Insitu regions (region ${(MAX_REGIONS + 1).toLocaleString('en-US')} begins at line ${line})`
}

export function aliasExpansionMessage(line: number): string {
  return `front matter expands YAML aliases to more than ${MAX_ALIAS_EXPANSION.toLocaleString('en-US')} values (line ${line}): an alias bomb?`
}

export function nestingDepthMessage(line: number): string {
  return `front matter nests collections deeper than ${MAX_FRONT_MATTER_DEPTH} levels (line ${line})`
}

/** Why a document's bytes cannot be read as its text (see the header), or null. */
export function documentBytesProblem(bytes: Buffer): { message: string; line: number } | null {
  if (bytes.length > MAX_DOCUMENT_BYTES) return { message: documentTooLargeMessage(bytes.length), line: 1 }
  const nul = bytes.indexOf(0)
  if (!isUtf8(bytes)) {
    const offset = firstInvalidUtf8(bytes)
    if (nul === -1 || offset < nul) {
      const line = lineOfByte(bytes, offset)
      return { message: `not valid UTF-8 at line ${line} (the byte at offset ${offset.toLocaleString('en-US')} is 0x${bytes[offset]!.toString(16).padStart(2, '0')})`, line }
    }
  }
  if (nul !== -1) {
    const line = lineOfByte(bytes, nul)
    return { message: `holds a NUL byte at line ${line} (offset ${nul.toLocaleString('en-US')}): not a text document`, line }
  }
  return null
}

/** The bounds of `documentBytesProblem` for a decoded text; throws `InputLimitError`. */
export function checkDocumentText(text: string): void {
  const bytes = utf8BytesOver(text, MAX_DOCUMENT_BYTES)
  if (bytes !== null) throw new InputLimitError(documentTooLargeMessage(bytes), 1)
  const nul = text.indexOf('\0')
  if (nul !== -1) {
    const line = lineOfIndex(text, nul)
    throw new InputLimitError(`holds a NUL character at line ${line}: not a text document`, line)
  }
}

/**
 * `text`'s size in UTF-8 bytes when it is over `max`, else null. Each UTF-16 unit is 1–3 UTF-8
 * bytes (a surrogate pair 4 for 2): the bytes are counted only when they may be over.
 */
export function utf8BytesOver(text: string, max: number): number | null {
  if (text.length * 3 <= max) return null
  const bytes = Buffer.byteLength(text, 'utf8')
  return bytes > max ? bytes : null
}

/** 1-based line of a UTF-16 offset in `text`. */
function lineOfIndex(text: string, offset: number): number {
  let line = 1
  for (let index = text.indexOf('\n'); index !== -1 && index < offset; index = text.indexOf('\n', index + 1)) line++
  return line
}

function lineOfByte(bytes: Buffer, offset: number): number {
  let line = 1
  for (let index = bytes.indexOf(10); index !== -1 && index < offset; index = bytes.indexOf(10, index + 1)) line++
  return line
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence (bytes known invalid). */
function firstInvalidUtf8(bytes: Buffer): number {
  let index = 0
  while (index < bytes.length) {
    const lead = bytes[index]!
    let length: number
    let min: number
    if (lead < 0x80) {
      index++
      continue
    } else if (lead >= 0xc2 && lead <= 0xdf) [length, min] = [2, 0x80]
    else if (lead >= 0xe0 && lead <= 0xef) [length, min] = [3, 0x800]
    else if (lead >= 0xf0 && lead <= 0xf4) [length, min] = [4, 0x10000]
    else return index
    if (index + length > bytes.length) return index
    let code = lead & (0xff >> (length + 1))
    for (let k = 1; k < length; k++) {
      const next = bytes[index + k]!
      if ((next & 0xc0) !== 0x80) return index
      code = (code << 6) | (next & 0x3f)
    }
    if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return index
    index += length
  }
  return bytes.length
}
