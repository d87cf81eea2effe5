/**
 * A fast path for the front matter most documents have: a YAML mapping of plain scalars, lists
 * and mappings of them (Starlight's `sidebar:`, insitu's own `insitu: materializations:`).
 * Parsing with `yaml` costs about 40 µs per document, most of a cold index build, and its first
 * use in a process several milliseconds more (a dev server's first render of a README that
 * declares materializations).
 *
 * Contract:
 * - `parseSimpleMapping(raw)` returns exactly what `readYamlMapping(raw)` (yaml-read.ts: ruamel's
 *   round-trip reading, SPEC §11) returns, or `undefined` when `raw` is not in the subset below:
 *   the caller then reads it in full, which also reports every error. It never throws and never
 *   accepts text the full reader rejects (test/unit/simple-yaml.test.ts compares both on a corpus
 *   of tricky YAML and on generated text).
 * - The subset, line by line (LF or CRLF; no tab, control character, other `\r`, line separator,
 *   BOM or non-BMP character; at least one key):
 *   - blank lines, and comment lines (`#` after optional spaces);
 *   - `key: value` and `key:` at column 0, `key` an identifier (`[A-Za-z_][A-Za-z0-9_-]*`, not
 *     a null or boolean word, not `__proto__`), each key once in its mapping;
 *   - after `key:`, either block list items `- value` all at one column (the key's own column
 *     allowed), or a nested mapping of the same kind whose keys all start at one column, deeper
 *     than the key's (at most `MAX_NESTING` levels), or nothing (null);
 *   - a value is one of: `~`/`null`/`Null`/`NULL`, the booleans `true`/`True`/`TRUE` and
 *     `false`/`False`/`FALSE`, a decimal integer (`-0` is the int 0) or decimal fraction (a
 *     float: `2.0` a `PythonFloat`) without a sign other than `-`, leading zeros or exponent (at
 *     most 15 digits on each side), a valid `YYYY-MM-DD` date (its own text, as ruamel's date's
 *     `isoformat()`; an impossible date is left to the full reader, which rejects it), a word starting with a letter followed by letters, digits,
 *     marks, spaces and `_.,;/()'+=?!&*%@$-` (never `#`, quotes, brackets or braces; `:` only
 *     outside flow lists and never followed by a space or last, `frontmatter:/a/b`), a
 *     double-quoted string without `\` or `"` inside, a single-quoted string without `'` inside,
 *     or (not in a list item) a flow list `[a, b]` of such values without commas in them, or `[]`.
 */

import { pythonFloat } from '../values/python-float.js'

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$/
const BLANK_OR_COMMENT = /^ *(?:#.*)?$/
/** `WORD` restricted to ASCII: the same answer where it matches, without Unicode tables (faster). */
const ASCII_WORD = /^[A-Za-z][A-Za-z0-9 _.,;/()'+=?!&*%@$-]*$/
const WORD = /^\p{L}[\p{L}\p{N}\p{M} _.,;/()'+=?!&*%@$-]*$/u
const FLOW_WORD = /^\p{L}[\p{L}\p{N}\p{M} _./()'+=?!&*%@$-]*$/u
/** A path starting `./`, `../` or `/` (Astro's `layout: ../../layouts/Page.astro`): never a number, `.inf` or `.nan`. */
const PATH_WORD = /^(?:\.\.?\/|\/)[\p{L}\p{N}\p{M} _.,;/()'+=?!&*%@$-]*$/u
/** `WORD` with `:` in it (`frontmatter:/generated/counts`, `http://x`), in block context only: never `: ` nor a final `:` (those make a mapping). */
const COLON_WORD = /^\p{L}[\p{L}\p{N}\p{M} _.,;/()'+=?!&*%@$:-]*$/u
const colonWord = (text: string): boolean => text.includes(':') && !text.includes(': ') && !text.endsWith(':') && COLON_WORD.test(text)
const INTEGER = /^-?(?:0|[1-9][0-9]{0,14})$/
const FRACTION = /^-?(?:0|[1-9][0-9]{0,14})\.[0-9]{1,15}$/
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/
const DOUBLE_QUOTED = /^"([^"\\]*)"$/
const SINGLE_QUOTED = /^'([^']*)'$/

const KEYWORDS = new Map<string, unknown>([
  ['~', null],
  ['null', null],
  ['Null', null],
  ['NULL', null],
  ['true', true],
  ['True', true],
  ['TRUE', true],
  ['false', false],
  ['False', false],
  ['FALSE', false],
])

/** Marks "not in the subset" (a value can be `undefined` never, but `null` can). */
const UNSUPPORTED = Symbol('unsupported')

function scalar(text: string, flow: boolean): unknown {
  if (KEYWORDS.has(text)) return KEYWORDS.get(text)
  if (flow ? FLOW_WORD.test(text) : ASCII_WORD.test(text) || WORD.test(text) || PATH_WORD.test(text) || colonWord(text)) return text
  if (INTEGER.test(text)) return Number(text) || 0
  if (FRACTION.test(text)) return pythonFloat(Number(text))
  if (DATE.test(text)) return validDate(text) ? text : UNSUPPORTED
  const quoted = DOUBLE_QUOTED.exec(text) ?? SINGLE_QUOTED.exec(text)
  if (quoted && !(flow && quoted[1]!.includes(','))) return quoted[1]
  return UNSUPPORTED
}

/** A `YYYY-MM-DD` that Python's `datetime.date` accepts (year 1 to 9999, a real day of the month). */
function validDate(text: string): boolean {
  const year = Number(text.slice(0, 4))
  const month = Number(text.slice(5, 7))
  const day = Number(text.slice(8, 10))
  if (year < 1 || month < 1 || month > 12 || day < 1) return false
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31
  return day <= days
}

function value(text: string): unknown {
  if (!text.startsWith('[')) return scalar(text, false)
  if (text === '[]') return []
  if (!text.endsWith(']')) return UNSUPPORTED
  const items: unknown[] = []
  for (const part of text.slice(1, -1).split(',')) {
    const item = scalar(part.trim(), true)
    if (item === UNSUPPORTED || part.trim() === '') return UNSUPPORTED
    items.push(item)
  }
  return items
}

/** Tabs, controls, line separators, BOMs and lone surrogates: left to `yaml`. */
const AWKWARD = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]/

/** Mappings nested deeper than this are left to the full reader (hand-written front matter nests a few levels). */
const MAX_NESTING = 16

/** A line that is neither blank nor a comment: its indentation (spaces) and the rest, trailing spaces removed. */
interface Line {
  indent: number
  text: string
}

export function parseSimpleMapping(raw: string): Record<string, unknown> | undefined {
  if (AWKWARD.test(raw)) return undefined
  const lines: Line[] = []
  for (let line of raw.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line.includes('\r')) return undefined
    line = line.trimEnd()
    if (BLANK_OR_COMMENT.test(line)) continue
    const text = line.trimStart()
    lines.push({ indent: line.length - text.length, text })
  }
  if (lines.length === 0 || lines[0]!.indent !== 0) return undefined
  const cursor = { at: 0 }
  const data = mappingAt(lines, cursor, 0, 0)
  return data === UNSUPPORTED || cursor.at !== lines.length ? undefined : data
}

/**
 * The block mapping whose keys start at column `indent`, from `cursor.at` to the first line
 * indented less (the cursor is left there); UNSUPPORTED for anything outside the subset.
 */
function mappingAt(lines: Line[], cursor: { at: number }, indent: number, depth: number): Record<string, unknown> | typeof UNSUPPORTED {
  if (depth > MAX_NESTING) return UNSUPPORTED
  const data: Record<string, unknown> = {}
  while (cursor.at < lines.length) {
    const line = lines[cursor.at]!
    if (line.indent < indent) break
    if (line.indent > indent) return UNSUPPORTED // every key of a mapping at one column
    const pair = KEY.exec(line.text)
    if (!pair) return UNSUPPORTED
    const key = pair[1]!
    if (KEYWORDS.has(key) || key === '__proto__' || Object.hasOwn(data, key)) return UNSUPPORTED
    cursor.at++
    const text = (pair[2] ?? '').trimStart()
    if (text !== '') {
      const parsed = value(text)
      if (parsed === UNSUPPORTED) return UNSUPPORTED
      data[key] = parsed
      continue
    }
    // `key:` alone: null, a block list (its items at this column too, or deeper), or a mapping deeper.
    const next = lines[cursor.at]
    const item = next !== undefined && next.text.startsWith('- ')
    if (next === undefined || next.indent < indent || (next.indent === indent && !item)) {
      data[key] = null
      continue
    }
    const nested = item ? listAt(lines, cursor, next.indent) : mappingAt(lines, cursor, next.indent, depth + 1)
    if (nested === UNSUPPORTED) return UNSUPPORTED
    data[key] = nested
  }
  return data
}

/**
 * The block list whose items `- value` start at column `indent`, up to the first line that is not
 * such an item (the cursor is left there: the mappings around check its column).
 */
function listAt(lines: Line[], cursor: { at: number }, indent: number): unknown[] | typeof UNSUPPORTED {
  const items: unknown[] = []
  while (cursor.at < lines.length) {
    const line = lines[cursor.at]!
    if (line.indent !== indent || !line.text.startsWith('- ')) break
    const parsed = scalar(line.text.slice(2), false)
    if (parsed === UNSUPPORTED) return UNSUPPORTED
    items.push(parsed)
    cursor.at++
  }
  return items
}
