/**
 * YAML text of generated front-matter values, as ruamel.yaml's round-trip dumper writes fresh
 * values with the Python implementation's settings (SPEC §11): `indent(mapping=2, sequence=4,
 * offset=2)`, `preserve_quotes`, `allow_unicode`, and no line folding (an unbounded `width`).
 *
 * Contract:
 * - Values are JSON values in the model of values/python-float.ts (strings, booleans, null, int
 *   numbers and bigints, floats as non-integral numbers or `PythonFloat` boxes, arrays, plain
 *   objects), and bytes (a Buffer, as an SQL BLOB reads: `!!binary |` and base64 lines, as ruamel
 *   writes Python's bytes). Anything else throws a `TypeError` naming its type.
 * - `afterKey(value, column, style?)` is the text that follows `key:` for a key at `column` in a
 *   block mapping: ` scalar`, nothing for null, ` []` / ` {}` for empty collections, else a line
 *   break and the block lines (a mapping's keys at column + 2; a sequence's dashes at column + 2;
 *   a mapping in a sequence starts on the dash line, `- key: v`; a sequence in a sequence too,
 *   `-   - x`; null items are `- `). `style` is the style of the string the value replaces:
 *   ruamel keeps it (`"…"`, `'…'`, `|`, `>`) when the new value is a string too.
 * - `blockEntry(key, value, column)` is `key:` + `afterKey(...)` with the key written as a simple
 *   key, or as `? key` / `: value` lines where ruamel writes a complex key (128 characters or
 *   more, or a line break; the value then follows `:` as an item follows a dash).
 * - `flowValue(value)` / `flowEntry(key, value)` write the same in flow style (`{a: 1, b: [x]}`,
 *   null as `null`, a one-key mapping inside a sequence without braces: `[k: v]`).
 * - Strings are plain where ruamel's `analyze_scalar` allows it and the plain text reads back as
 *   a string (yaml-scalars.ts); else double-quoted when they hold `'` or a line break, else
 *   single-quoted where allowed, else double-quoted with ruamel's escapes. Floats are Python's
 *   `repr` (`2.0`, `1e+16`, `.inf`, `.nan`), ints their digits, booleans `true`/`false`.
 * - Lines are joined with `\n`; the caller converts line ends. No text ends with a line break.
 */
import { isPlainObject } from '../protocol/object-guards.js'
import { PythonFloat } from '../values/python-float.js'
import { pythonFloatRepr } from '../values/python-json.js'
import { resolvePlain } from './yaml-scalars.js'

/** How a string scalar was written (ruamel keeps it for a new string at the same key). */
export type ScalarStyle = 'plain' | 'single' | 'double' | 'literal' | 'folded'

const BREAKS = '\n\x85\u2028\u2029'
const WHITESPACE = '\0 \t\r\n\x85\u2028\u2029'
/** ruamel's MAX_SIMPLE_KEY_LENGTH */
const MAX_SIMPLE_KEY = 128

interface ScalarContext {
  flow: boolean
  simpleKey: boolean
  /** the column continuation lines of a quoted or block scalar are indented to */
  indent: number
  style?: ScalarStyle | undefined
}

export function afterKey(value: unknown, column: number, style?: ScalarStyle): string {
  if (value === null) return ''
  if (value instanceof Uint8Array) return ' ' + binary(value, column + 2)
  if (Array.isArray(value)) return value.length === 0 ? ' []' : '\n' + sequenceLines(value, column + 2)
  if (isMapping(value)) return Object.keys(value).length === 0 ? ' {}' : '\n' + mappingLines(value, column + 2)
  return ' ' + scalarText(value, { flow: false, simpleKey: false, indent: column + 2, style })
}

export function blockEntry(key: string, value: unknown, column: number): string {
  if (isSimpleKey(key)) return scalarText(key, { flow: false, simpleKey: true, indent: column + 2 }) + ':' + afterKey(value, column)
  // the value of a complex key follows `:` as an item follows a sequence dash (`:   - x`, `: k: v`)
  const keyText = scalarText(key, { flow: false, simpleKey: false, indent: column + 2 })
  return `? ${keyText}\n${' '.repeat(column)}:${value === null ? '' : afterDash(value, column)}`
}

export function flowValue(value: unknown): string {
  if (value === null) return 'null'
  if (value instanceof Uint8Array) return '!!binary ' + doubleQuoted(encodeBytes(value))
  if (Array.isArray(value)) return '[' + value.map(flowItem).join(', ') + ']'
  if (isMapping(value)) return '{' + Object.entries(value).map(([key, item]) => flowEntry(key, item)).join(', ') + '}'
  return scalarText(value, { flow: true, simpleKey: false, indent: 0 })
}

export function flowEntry(key: string, value: unknown): string {
  if (isSimpleKey(key)) return scalarText(key, { flow: true, simpleKey: true, indent: 0 }) + ': ' + flowValue(value)
  return `? ${scalarText(key, { flow: true, simpleKey: false, indent: 0 })} : ${flowValue(value)}`
}

/** A sequence item in flow: a one-key mapping without braces (ruamel's single-pair mapping). */
function flowItem(item: unknown): string {
  if (isMapping(item)) {
    const entries = Object.entries(item)
    if (entries.length === 1) return flowEntry(entries[0]![0], entries[0]![1])
  }
  return flowValue(item)
}

function mappingLines(map: Record<string, unknown>, column: number): string {
  return Object.entries(map)
    .map(([key, item]) => ' '.repeat(column) + blockEntry(key, item, column))
    .join('\n')
}

function sequenceLines(items: readonly unknown[], dash: number): string {
  return items.map((item) => ' '.repeat(dash) + '-' + afterDash(item, dash)).join('\n')
}

/** What follows a sequence dash at column `dash`. */
function afterDash(item: unknown, dash: number): string {
  if (item === null) return ' '
  if (item instanceof Uint8Array) return ' ' + binary(item, dash + 2)
  if (Array.isArray(item)) return item.length === 0 ? ' []' : '   ' + sequenceLines(item, dash + 4).trimStart()
  if (isMapping(item)) return Object.keys(item).length === 0 ? ' {}' : ' ' + mappingLines(item, dash + 2).trimStart()
  return ' ' + scalarText(item, { flow: false, simpleKey: false, indent: dash + 2 })
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value)
}

function isSimpleKey(key: string): boolean {
  return codePoints(key).length < MAX_SIMPLE_KEY && !analyze(key).multiline
}

function scalarText(value: unknown, context: ScalarContext): string {
  if (typeof value === 'string') return stringText(value, context)
  if (value === true) return 'true'
  if (value === false) return 'false'
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number' || value instanceof PythonFloat) {
    const n = typeof value === 'number' ? value : value.value
    if (typeof value === 'number' && Number.isSafeInteger(n)) return String(n)
    if (Number.isNaN(n)) return '.nan'
    if (n === Infinity) return '.inf'
    if (n === -Infinity) return '-.inf'
    return pythonFloatRepr(n).toLowerCase()
  }
  if (value === undefined) throw new TypeError('undefined has no YAML form')
  const name = (value as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof value
  throw new TypeError(`a value of type ${name} has no YAML form`)
}

/** ruamel's `choose_scalar_style` for a string, then its writer. */
function stringText(text: string, context: ScalarContext): string {
  const analysis = analyze(text)
  const kept = context.style === 'plain' ? undefined : context.style
  if (kept === 'double') return doubleQuoted(text)
  if (kept === undefined && resolvePlain(text) === 'str') {
    const allowed = context.flow ? analysis.allowFlowPlain : analysis.allowBlockPlain
    if (!(context.simpleKey && (analysis.empty || analysis.multiline)) && allowed) return text
  }
  if ((kept === 'literal' || kept === 'folded') && !context.flow && !context.simpleKey) {
    return kept === 'literal' ? literal(text, context.indent) : folded(text, context.indent)
  }
  if (kept === undefined && analysis.allowDoubleQuoted && (text.includes("'") || text.includes('\n'))) return doubleQuoted(text)
  if ((kept === undefined || kept === 'single') && analysis.allowSingleQuoted && !(context.simpleKey && analysis.multiline)) {
    return singleQuoted(text, context.indent)
  }
  return doubleQuoted(text)
}

/** Bytes (a Buffer) as ruamel's `represent_binary`: `!!binary` and a literal of base64 lines. */
function binary(bytes: Uint8Array, indent: number): string {
  return '!!binary ' + literal(encodeBytes(bytes), indent)
}

/** Python's `base64.encodebytes`: lines of 76 characters, each ending with a line break. */
function encodeBytes(bytes: Uint8Array): string {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
  return text.replace(/.{1,76}/g, '$&\n')
}

interface Analysis {
  empty: boolean
  multiline: boolean
  allowFlowPlain: boolean
  allowBlockPlain: boolean
  allowSingleQuoted: boolean
  allowDoubleQuoted: boolean
}

function codePoints(text: string): string[] {
  return Array.from(text)
}

/** ruamel's `Emitter.analyze_scalar` (YAML 1.2, `allow_unicode`, supplementary planes allowed). */
function analyze(text: string): Analysis {
  if (text === '') {
    return { empty: true, multiline: false, allowFlowPlain: false, allowBlockPlain: true, allowSingleQuoted: true, allowDoubleQuoted: true }
  }
  const chars = codePoints(text)
  let blockIndicators = false
  let flowIndicators = false
  let lineBreaks = false
  let special = false
  let leadingSpace = false
  let leadingBreak = false
  let trailingSpace = false
  let trailingBreak = false
  let breakSpace = false
  let spaceBreak = false
  if (text.startsWith('---') || text.startsWith('...')) {
    blockIndicators = true
    flowIndicators = true
  }
  let precededByWhitespace = true
  let followedByWhitespace = chars.length === 1 || WHITESPACE.includes(chars[1]!)
  let previousSpace = false
  let previousBreak = false
  for (let index = 0; index < chars.length; index++) {
    const ch = chars[index]!
    if (index === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) {
        flowIndicators = true
        blockIndicators = true
      }
      if (ch === '?' || ch === ':') {
        if (chars.length === 1) flowIndicators = true
        if (followedByWhitespace) blockIndicators = true
      }
      if (ch === '-' && followedByWhitespace) {
        flowIndicators = true
        blockIndicators = true
      }
    } else {
      if (',[]{}'.includes(ch)) flowIndicators = true
      if (ch === ':' && followedByWhitespace) {
        flowIndicators = true
        blockIndicators = true
      }
      if (ch === '#' && precededByWhitespace) {
        flowIndicators = true
        blockIndicators = true
      }
    }
    if (BREAKS.includes(ch)) lineBreaks = true
    const code = ch.codePointAt(0)!
    if (!(ch === '\n' || (code >= 0x20 && code <= 0x7e))) {
      const printable = code === 0x85 || (code >= 0xa0 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || code >= 0x10000
      if (!printable || code === 0xfeff) special = true
    }
    if (ch === ' ') {
      if (index === 0) leadingSpace = true
      if (index === chars.length - 1) trailingSpace = true
      if (previousBreak) breakSpace = true
      previousSpace = true
      previousBreak = false
    } else if (BREAKS.includes(ch)) {
      if (index === 0) leadingBreak = true
      if (index === chars.length - 1) trailingBreak = true
      if (previousSpace) spaceBreak = true
      previousSpace = false
      previousBreak = true
    } else {
      previousSpace = false
      previousBreak = false
    }
    precededByWhitespace = WHITESPACE.includes(ch)
    followedByWhitespace = index + 2 >= chars.length || WHITESPACE.includes(chars[index + 2]!)
  }
  let allowFlowPlain = true
  let allowBlockPlain = true
  let allowSingleQuoted = true
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) allowFlowPlain = allowBlockPlain = false
  if (breakSpace) allowFlowPlain = allowBlockPlain = allowSingleQuoted = false
  if (special || spaceBreak) allowFlowPlain = allowBlockPlain = allowSingleQuoted = false
  if (lineBreaks) allowFlowPlain = allowBlockPlain = false
  if (flowIndicators) allowFlowPlain = false
  if (blockIndicators) allowBlockPlain = false
  return { empty: false, multiline: lineBreaks, allowFlowPlain, allowBlockPlain, allowSingleQuoted, allowDoubleQuoted: true }
}

const ESCAPES: Record<string, string> = {
  '\0': '0',
  '\x07': 'a',
  '\x08': 'b',
  '\x09': 't',
  '\x0A': 'n',
  '\x0B': 'v',
  '\x0C': 'f',
  '\x0D': 'r',
  '\x1B': 'e',
  '"': '"',
  '\\': '\\',
  '\x85': 'N',
  '\xA0': '_',
  '\u2028': 'L',
  '\u2029': 'P',
}

/** ruamel's `write_double_quoted` without line splitting. */
function doubleQuoted(text: string): string {
  let out = '"'
  for (const ch of text) {
    const code = ch.codePointAt(0)!
    const printable = (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || code >= 0x10000
    if (printable && !'"\\\x85\u2028\u2029\uFEFF'.includes(ch)) {
      out += ch
    } else if (ESCAPES[ch] !== undefined) {
      out += '\\' + ESCAPES[ch]
    } else {
      const hex = code.toString(16).toUpperCase()
      out += code <= 0xff ? '\\x' + hex.padStart(2, '0') : code <= 0xffff ? '\\u' + hex.padStart(4, '0') : '\\U' + hex.padStart(8, '0')
    }
  }
  return out + '"'
}

/** ruamel's `write_single_quoted` without line splitting: a line break is doubled, then indented. */
function singleQuoted(text: string, indent: number): string {
  const chars = codePoints(text)
  let out = "'"
  let spaces = false
  let breaks = false
  let start = 0
  for (let end = 0; end <= chars.length; end++) {
    const ch = end < chars.length ? chars[end]! : null
    if (spaces) {
      if (ch === null || ch !== ' ') {
        out += chars.slice(start, end).join('')
        start = end
      }
    } else if (breaks) {
      if (ch === null || !BREAKS.includes(ch)) {
        if (chars[start] === '\n') out += '\n'
        for (const br of chars.slice(start, end)) out += br
        out += ' '.repeat(indent)
        start = end
      }
    } else if (ch === null || ' \n\x85\u2028\u2029'.includes(ch) || ch === "'") {
      if (start < end) {
        out += chars.slice(start, end).join('')
        start = end
      }
    }
    if (ch === "'") {
      out += "''"
      start = end + 1
    }
    if (ch !== null) {
      spaces = ch === ' '
      breaks = BREAKS.includes(ch)
    }
  }
  return out + "'"
}

/** ruamel's `determine_block_hints` (not at the document root). */
function blockHints(chars: readonly string[]): string {
  if (chars.length === 0) return ''
  let hints = BREAKS.includes(chars[0]!) || chars[0] === ' ' ? '2' : ''
  const last = chars[chars.length - 1]!
  if (!BREAKS.includes(last)) hints += '-'
  else if (chars.length === 1 || BREAKS.includes(chars[chars.length - 2]!)) hints += '+'
  return hints
}

/** ruamel's `write_literal`, without its final line break. */
function literal(text: string, indent: number): string {
  const chars = codePoints(text)
  let out = '|' + blockHints(chars) + '\n'
  let breaks = true
  let start = 0
  for (let end = 0; end <= chars.length; end++) {
    const ch = end < chars.length ? chars[end]! : null
    if (breaks) {
      if (ch === null || !BREAKS.includes(ch)) {
        for (const br of chars.slice(start, end)) out += br
        if (ch !== null) out += ' '.repeat(indent)
        start = end
      }
    } else if (ch === null || BREAKS.includes(ch)) {
      out += chars.slice(start, end).join('')
      if (ch === null) out += '\n'
      start = end
    }
    if (ch !== null) breaks = BREAKS.includes(ch)
  }
  return out.slice(0, -1)
}

/** ruamel's `write_folded` for a string without fold marks, without its final line break. */
function folded(text: string, indent: number): string {
  const chars = codePoints(text)
  let out = '>' + blockHints(chars) + '\n'
  let leadingSpace = true
  let spaces = false
  let breaks = true
  let start = 0
  for (let end = 0; end <= chars.length; end++) {
    const ch = end < chars.length ? chars[end]! : null
    if (breaks) {
      if (ch === null || !BREAKS.includes(ch)) {
        if (!leadingSpace && ch !== null && ch !== ' ' && chars[start] === '\n') out += '\n'
        leadingSpace = ch === ' '
        for (const br of chars.slice(start, end)) out += br
        if (ch !== null) out += ' '.repeat(indent)
        start = end
      }
    } else if (spaces) {
      if (ch !== ' ') {
        out += chars.slice(start, end).join('')
        start = end
      }
    } else if (ch === null || ' \n\x85\u2028\u2029'.includes(ch)) {
      out += chars.slice(start, end).join('')
      if (ch === null) out += '\n'
      start = end
    }
    if (ch !== null) {
      breaks = BREAKS.includes(ch)
      spaces = ch === ' '
    }
  }
  return out.slice(0, -1)
}
