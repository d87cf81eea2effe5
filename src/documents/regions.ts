/**
 * Insitu regions in managed Markdown (SPEC §7): parse them, format their generated bodies.
 *
 * In:  the full text of a Markdown document (front matter included; a region is only ever found
 *      where its begin comment starts outside a fenced code block).
 * Out: `Region`s in document order with UTF-16 offsets; `regionBodyText`, the text that replaces
 *      `[bodyStart, bodyEnd)` of a region (the engine splices it, see engine/render-document.ts),
 *      so every directive comment is kept byte for byte; and `blankRegionBodies`, the document
 *      with every region body blanked.
 * Pure: no I/O, no state.
 *
 * Failures, one region at a time (issue #18: one broken region must not hide the others):
 * `scanRegions` throws only for a document past the region limit (below). A region whose
 * header is not valid TOML, or is longer than `MAX_REGION_HEADER_BYTES` (`Insitu region header
 * at line <n> is 1 MiB (… bytes), over the limit of 64 KiB`, not parsed), is still a region (its
 * begin and end are found as usual) with `problem` set and empty options, so the engine fails
 * that region alone and renders the others; a begin comment that no end closes is reported as
 * `unterminated` and ends the scan: the regions before it are found, and nothing after it can be
 * a region (any later begin would lack an end too). `parseRegions` is the strict form: it throws
 * a `RegionError` (carrying the 1-based line of the begin comment) for the first problem.
 * Limits (input-limits.ts): a document with more than `MAX_REGIONS` regions makes `scanRegions`
 * (and `parseRegions`) throw an `InputLimitError` at the first region past the limit (`document
 * has more than 1,000 Insitu regions (region 1,001 begins at line <n>)`): each region is a job,
 * and the document fails as a whole rather than run thousands. `blankRegionBodies` and
 * `strayEndLines` have no limit: both take time linear in the text, whatever it holds (a begin
 * comment that no `-->` closes is never searched past the last `-->`).
 *
 * Syntax
 *   begin  `<!--`, optional whitespace, `insitu:begin`, optional kind token `[\w.-]+` (Unicode
 *          letters/digits, as Python's `\w`) on the same line, then a line break and a TOML header
 *          running up to the first `-->`. Also accepted, with an empty header (`{}`): the one-line
 *          form `<!-- insitu:begin include -->`. (The Python implementation's pattern requires the
 *          line break and silently ignores the one-line form; a user writing it clearly means a
 *          region, so it is one here.) A begin-looking comment matching neither form, e.g.
 *          `<!-- insitu:begin include path="x" -->`, is not a directive and is ignored, as in Python.
 *   end    `<!--\s*insitu:end\s*-->`; the first end outside a fence after a begin closes it, so
 *          regions never nest (a begin inside a body is body text). An end with no open region
 *          is not an error: `strayEndLines` gives the lines of those (outside fences) so the
 *          engine can warn. A begin with no end → `unterminated Insitu region at line <n>`.
 *   header parsed with smol-toml (unsafe keys such as `__proto__` rejected); a failure →
 *          `invalid TOML in Insitu region at line <n>: <reason> (line <l>, column <c>)` where n is
 *          the begin comment's line and l/c locate the error in the document (1-based, as an
 *          editor counts); when the line is `key = value` with a bare word that would be valid
 *          quoted, `; strings need quotes: key = "value"` follows (`; booleans are lowercase:
 *          raw = true` for `True`/`FALSE`). TOML dates become strings so that options stay JSON
 *          (they are sent over the wire verbatim): the text Python's `str()` gives the date,
 *          datetime or time tomllib reads (`2024-01-02 10:20:30+00:00`); numbers are read as
 *          tomllib reads them: `2.0` is a float (a `PythonFloat` box), an integer of any size exact.
 *   id     options.id (when truthy, stringified) else a default id that does not depend on the
 *          region's position: `<kind>-<hash of its header>` (region-ids.ts; Python: `region-<n>`).
 *   kind   the inline kind, else options.kind (when truthy, stringified), else `sql`.
 *
 * Fences: a line indented ≤ 3 spaces opening with ≥ 3 backticks or tildes (a backtick opener's
 * info string may not contain a backtick, as in CommonMark) starts a fence; a line indented ≤ 3
 * spaces with at least as many of the same character and nothing but whitespace after closes it;
 * an unclosed fence runs to the end of the document. Fences are found over the whole text, region
 * bodies included (as Python does), so generated content must close the fences it opens.
 * Fences inside block quotes or list items are not recognised (as in Python).
 *
 * Line endings: LF and CRLF are both understood. Replacement text is written with the document's
 * line ending (`lineEndingOf`: that of its first line break; LF when it has none), and line breaks
 * inside replacement content are converted to it, so an LF document gets exactly SPEC's
 * `"\n\n" + c + "\n\n"` and a CRLF document stays CRLF. Replacing is idempotent: splicing the
 * same content twice gives the same text, and parsing the result gives the same regions (ids,
 * kinds, options, lines).
 */
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml'
import { isObject } from '../protocol/object-guards.js'
import { pythonFloat } from '../values/python-float.js'
import { InputLimitError, MAX_REGION_HEADER_BYTES, MAX_REGIONS, regionHeaderTooLargeMessage, tooManyRegionsMessage, utf8BytesOver } from './input-limits.js'
import { LineError } from './line-error.js'
import { isTruthyOption, namedOption, optionText } from './option-values.js'
import { defaultRegionIds } from './region-ids.js'

export interface Region {
  /** options.id, else the default id `<kind>-<hash of the header>` (region-ids.ts) */
  id: string
  /** the transform the region invokes: inline kind, else options.kind, else `sql` */
  kind: string
  /** 1-based line of the begin comment */
  line: number
  /** the TOML header table, verbatim (dates as the text Python's str() gives them) */
  options: Record<string, unknown>
  /** offset of the begin comment's `<!--` */
  start: number
  /** offset just after the begin comment's `-->` */
  bodyStart: number
  /** offset of the end comment's `<!--` */
  bodyEnd: number
  /** offset just after the end comment's `-->` */
  end: number
  /** Why the header could not be read (`options` is then `{}`); null when it could. */
  problem: RegionProblem | null
}

/** A problem of one region: its message and where it is (1-based line and column in the document). */
export interface RegionProblem {
  message: string
  line: number
  column: number
}

export interface RegionScan {
  /** Every region in document order, those with a `problem` included. */
  regions: Region[]
  /** A begin comment no end closes (`unterminated Insitu region at line <n>`); nothing after it is a region. */
  unterminated: RegionProblem | null
}

/** A region problem; `line` is the 1-based line of the begin comment of the region at fault. */
export class RegionError extends LineError {
  override name = 'RegionError'
}

type Range = readonly [start: number, end: number]

const BEGIN = /<!--\s*insitu:begin(?:[ \t]+([\p{L}\p{N}_.-]+))?[ \t]*(?:\r?\n([\s\S]*?))?-->/gu
const END = /<!--\s*insitu:end\s*-->/g

/**
 * Every region of `text` in document order, and the begin comment no end closes (if any). Scanning
 * starts at offset `from` (e.g. a front matter's body offset); lines and offsets stay relative to
 * the whole text. A problem belongs to its region (see the header); it throws only for a document
 * over `MAX_REGIONS` regions (input-limits.ts: the document fails as a whole).
 */
export function scanRegions(text: string, from = 0): RegionScan {
  const { spans, unterminatedAt } = regionSpans(text, from, MAX_REGIONS + 1)
  const lineAt = spans.length > 0 || unterminatedAt !== null ? lineCounter(text) : undefined
  if (spans.length > MAX_REGIONS) {
    const line = lineAt!(spans[MAX_REGIONS]!.begin.index)
    throw new InputLimitError(tooManyRegionsMessage(line), line)
  }
  const found: (Omit<Region, 'id'> & { header: string; named: boolean })[] = []
  for (const { begin, end } of spans) {
    const line = lineAt!(begin.index)
    const bodyStart = begin.index + begin[0].length
    const header = begin[2] ?? ''
    const headerLine = lineAt!(bodyStart - header.length - 3)
    const parsed = oversizeHeader(header, line, headerLine) ?? parseHeader(header, line, headerLine)
    const options = 'options' in parsed ? parsed.options : {}
    found.push({
      kind: begin[1] ?? namedOption(options.kind, 'sql'),
      line,
      options,
      start: begin.index,
      bodyStart,
      bodyEnd: end.index,
      end: end.index + end[0].length,
      problem: 'problem' in parsed ? parsed.problem : null,
      header,
      named: isTruthyOption(options.id),
    })
  }
  let unterminated: RegionProblem | null = null
  if (unterminatedAt !== null) {
    const line = lineAt!(unterminatedAt)
    unterminated = { message: `unterminated Insitu region at line ${line}`, line, column: 1 }
  }
  if (found.length === 0) return { regions: [], unterminated }
  const ids = defaultRegionIds(found.map((r) => ({ kind: r.kind, options: r.problem ? null : r.options, header: r.header })))
  const regions = found.map(({ header: _header, named, ...region }, i): Region => ({
    id: named ? optionText(region.options.id) : ids[i]!,
    ...region,
  }))
  return { regions, unterminated }
}

/**
 * Where the regions of `text` are, without reading their headers: each begin and end comment's
 * match, and the offset of a begin no end closes (null when none). What `scanRegions` and
 * `blankRegionBodies` share (blanking needs the bodies only, not the options or ids).
 */
function regionSpans(
  text: string,
  from: number,
  most = Infinity,
): { spans: { begin: RegExpExecArray; end: RegExpExecArray }[]; unterminatedAt: number | null } {
  const spans: { begin: RegExpExecArray; end: RegExpExecArray }[] = []
  // Both markers spell `insitu:`: most documents hold none (no fence scan needed).
  if (!text.includes('insitu:', from)) return { spans, unterminatedAt: null }
  const fences = fencedRanges(text, from)
  const begins = beginSearchText(text)
  let cursor = from
  while (spans.length < most) {
    const begin = nextOutside(BEGIN, begins, cursor, fences)
    if (begin === null) return { spans, unterminatedAt: null }
    const end = nextOutside(END, text, begin.index + begin[0].length, fences)
    if (end === null) return { spans, unterminatedAt: begin.index }
    spans.push({ begin, end })
    cursor = end.index + end[0].length
  }
  return { spans, unterminatedAt: null }
}

/**
 * The text begin comments are searched in: up to its last `-->`. A begin comment matches up to
 * the first `-->` after it; searched in the whole text, each `<!-- insitu:begin` followed by a
 * line break but by no `-->` would be read to the end of the text, once per such comment.
 * (A prefix: offsets are those of the text.)
 */
function beginSearchText(text: string): string {
  const close = text.lastIndexOf('-->')
  return close === -1 ? '' : text.slice(0, close + 3)
}

/** The regions of `text` (see `scanRegions`); throws a `RegionError` for the first problem. */
export function parseRegions(text: string, from = 0): Region[] {
  const { regions, unterminated } = scanRegions(text, from)
  const broken = regions.find((region) => region.problem !== null)
  if (broken) throw new RegionError(broken.problem!.message, broken.line)
  if (unterminated) throw new RegionError(unterminated.message, unterminated.line)
  return regions
}

/**
 * 1-based lines of the end comments (outside fences, at or after `from`) that close no region:
 * those before the first begin, or between one region's end and the next begin. Call it on text
 * `parseRegions` accepted (after an unterminated begin nothing more is reported).
 */
export function strayEndLines(text: string, from = 0): number[] {
  const fences = fencedRanges(text, from)
  const lineAt = lineCounter(text)
  const begins = beginSearchText(text)
  const stray: number[] = []
  let cursor = from
  for (;;) {
    const begin = nextOutside(BEGIN, begins, cursor, fences)
    const limit = begin === null ? text.length : begin.index
    for (let end = nextOutside(END, text, cursor, fences); end !== null && end.index < limit; ) {
      stray.push(lineAt(end.index))
      end = nextOutside(END, text, end.index + end[0].length, fences)
    }
    if (begin === null) return stray
    const closing = nextOutside(END, text, begin.index + begin[0].length, fences)
    if (closing === null) return stray
    cursor = closing.index + closing[0].length
  }
}

/** `"\n\n" + c.trimEnd() + "\n\n"`, or `"\n\n"` when that is empty; `eol` replaces every line break. */
export function regionBodyText(content: string, eol: '\n' | '\r\n' = '\n'): string {
  const trimmed = content.trimEnd().replace(/\r?\n/g, eol)
  return trimmed === '' ? eol + eol : eol + eol + trimmed + eol + eol
}

/** The line ending of the first line break in `text` (`\n` when there is none). */
export function lineEndingOf(text: string): '\n' | '\r\n' {
  const newline = text.indexOf('\n')
  return newline > 0 && text[newline - 1] === '\r' ? '\r\n' : '\n'
}

/**
 * Every region body becomes a single line break (directives kept): generated text never becomes
 * input. Regions whose header is not valid TOML are blanked too; text after an unterminated begin
 * is kept as it is.
 */
export function blankRegionBodies(text: string): string {
  const { spans } = regionSpans(text, 0)
  if (spans.length === 0) return text
  const eol = lineEndingOf(text)
  // Pieces joined once: splicing each body into the whole text would copy it once per region.
  const pieces: string[] = []
  let cursor = 0
  for (const { begin, end } of spans) {
    pieces.push(text.slice(cursor, begin.index + begin[0].length), eol)
    cursor = end.index
  }
  pieces.push(text.slice(cursor))
  return pieces.join('')
}

/** [start, end) offsets of the fenced code blocks whose opening line starts at or after `from`. */
export function fencedRanges(text: string, from = 0): Range[] {
  const ranges: Range[] = []
  let open: { marker: string; length: number; start: number } | null = null
  let offset = from
  while (offset < text.length) {
    const newline = text.indexOf('\n', offset)
    const next = newline === -1 ? text.length : newline + 1
    let line = text.slice(offset, newline === -1 ? text.length : newline)
    if (line.endsWith('\r')) line = line.slice(0, -1)
    const fence = fenceRun(line)
    if (open === null) {
      if (fence !== null && fence.length >= 3 && !(fence.marker === '`' && fence.rest.includes('`'))) {
        open = { marker: fence.marker, length: fence.length, start: offset }
      }
    } else if (fence !== null && fence.marker === open.marker && fence.length >= open.length && fence.rest.trim() === '') {
      ranges.push([open.start, next])
      open = null
    }
    offset = next
  }
  if (open !== null) ranges.push([open.start, text.length])
  return ranges
}

/** The run of backticks or tildes a line starts with (after ≤ 3 spaces), and what follows it. */
function fenceRun(line: string): { marker: string; length: number; rest: string } | null {
  let indent = 0
  while (line[indent] === ' ') indent++
  if (indent > 3) return null
  const marker = line[indent]
  if (marker !== '`' && marker !== '~') return null
  let end = indent
  while (line[end] === marker) end++
  return { marker, length: end - indent, rest: line.slice(end) }
}

/** The first match of `pattern` at or after `from` that does not start inside a fence. */
function nextOutside(pattern: RegExp, text: string, from: number, fences: readonly Range[]): RegExpExecArray | null {
  let cursor = from
  for (;;) {
    pattern.lastIndex = cursor
    const match = pattern.exec(text)
    if (match === null) return null
    const fence = fenceContaining(fences, match.index)
    if (fence === undefined) return match
    cursor = fence[1]
  }
}

function fenceContaining(fences: readonly Range[], offset: number): Range | undefined {
  let low = 0
  let high = fences.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const fence = fences[middle]!
    if (offset < fence[0]) high = middle - 1
    else if (offset >= fence[1]) low = middle + 1
    else return fence
  }
  return undefined
}

/** 1-based line of an offset; queries must come in non-decreasing offset order. */
function lineCounter(text: string): (offset: number) => number {
  let position = 0
  let line = 1
  return (offset) => {
    for (let newline = text.indexOf('\n', position); newline !== -1 && newline < offset; newline = text.indexOf('\n', newline + 1)) {
      line++
      position = newline + 1
    }
    if (position < offset) position = offset
    return line
  }
}

/** The problem of a header past `MAX_REGION_HEADER_BYTES` (null when it is within it): it is not parsed. */
function oversizeHeader(header: string, line: number, headerLine: number): { problem: RegionProblem } | null {
  const bytes = utf8BytesOver(header, MAX_REGION_HEADER_BYTES)
  if (bytes === null) return null
  return { problem: { message: regionHeaderTooLargeMessage(line, bytes), line: headerLine, column: 1 } }
}

function parseHeader(
  header: string,
  line: number,
  headerLine: number,
): { options: Record<string, unknown> } | { problem: RegionProblem } {
  let table = parsedHeaders.get(header)
  if (table) return { options: jsonSafe(table) as Record<string, unknown> }
  try {
    // Every integer as a bigint, so that `n = 2` and `f = 2.0` stay apart and `9007199254740993`
    // stays exact, as Python's tomllib reads them (issue #15); jsonSafe narrows them again.
    table = parseToml(header, { unsafeKeyBehaviour: 'throw', integersAsBigInt: true })
  } catch (error) {
    if (!(error instanceof TomlError)) throw error
    const reason = error.message.split('\n', 1)[0]!.replace(/^Invalid TOML document: /, '')
    const at = { line: headerLine + error.line - 1, column: error.column }
    const hint = quotingHint(header.split(/\r?\n/)[error.line - 1] ?? '')
    const message = `invalid TOML in Insitu region at line ${line}: ${reason} (line ${at.line}, column ${at.column})${hint}`
    return { problem: { message, ...at } }
  }
  if (parsedHeaders.size >= KEPT_HEADERS) parsedHeaders.clear()
  parsedHeaders.set(header, table)
  return { options: jsonSafe(table) as Record<string, unknown> }
}

/**
 * Headers parsed lately, by text: a project's many folder indexes repeat the same region headers,
 * and a render parses every header of its document (issue #17). Only tables that parsed are
 * kept, never handed out: each caller gets its own `jsonSafe` copy.
 */
const parsedHeaders = new Map<string, Record<string, unknown>>()
const KEPT_HEADERS = 512

/** `key = value` with a TOML key and whatever follows `=` (a `#` comment after a space taken off). */
const ASSIGNMENT = /^\s*((?:[A-Za-z0-9_-]+|"[^"\\]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"\\]*"|'[^']*'))*)\s*=\s*(.*?)\s*(?:\s#.*)?$/

/**
 * The fix for a header line whose value is a bare word: `; strings need quotes: path = "a.txt"`
 * when the quoted value parses (`; booleans are lowercase: raw = true` for `True`), else ''.
 */
export function quotingHint(headerLine: string): string {
  const assignment = ASSIGNMENT.exec(headerLine)
  if (!assignment) return ''
  const [, key, value] = assignment as unknown as [string, string, string]
  if (value === '' || /^["'[{]/.test(value)) return ''
  if (parses(`${key} = ${value}`)) return '' // the value is fine: the problem is something else (a repeated key…)
  if (/^(?:true|false)$/i.test(value)) return `; booleans are lowercase: ${key} = ${value.toLowerCase()}`
  const quoted = JSON.stringify(value)
  return parses(`${key} = ${quoted}`) ? `; strings need quotes: ${key} = ${quoted}` : ''
}

function parses(toml: string): boolean {
  try {
    parseToml(toml)
    return true
  } catch {
    return false
  }
}

/**
 * TOML values in the value model of values/python-float.ts: an int is a number (a bigint beyond
 * 2^53), a float whose value is integral (`2.0`, `-0.0`) a `PythonFloat` box, a date or time
 * the text Python's `str()` gives what tomllib reads (`pythonDateText`).
 */
/**
 * Python's `str()` of a TOML date, datetime or time as tomllib reads it, which is what the Python
 * implementation's templates print and its sqlite3 binds (issue #15): `2024-01-02`,
 * `2024-01-02 10:20:30`, `2024-01-02 10:20:30.500000+02:00` (`Z` is `+00:00`), `10:20:30`.
 * (A JavaScript Date keeps milliseconds: digits past them are lost.)
 */
export function pythonDateText(date: TomlDate): string {
  const iso = date.toISOString()
  if (date.isDate()) return iso
  const match = /^(?:(\d{4}-\d{2}-\d{2})T)?(\d{2}:\d{2}:\d{2})\.(\d{3})(Z|[-+]\d{2}:\d{2})?$/.exec(iso)
  if (!match) return iso
  const [, day, time, millis, offset] = match
  const fraction = millis === '000' ? '' : `.${millis}000`
  const zone = offset === undefined ? '' : offset === 'Z' || offset === '-00:00' ? '+00:00' : offset
  return `${day === undefined ? '' : `${day} `}${time}${fraction}${zone}`
}

function jsonSafe(value: unknown): unknown {
  if (value instanceof TomlDate) return pythonDateText(value)
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value
  if (typeof value === 'number') return pythonFloat(value)
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (isObject(value)) {
    const copy: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) copy[key] = jsonSafe(item)
    return copy
  }
  return value
}
