/**
 * A fast path for the front matter most documents have: a flat YAML mapping of plain scalars
 * and lists. Parsing with `yaml` costs about 40 µs per document, most of a cold index build.
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
 *     a null or boolean word, not `__proto__`), each key once;
 *   - after `key:`, block list items `- value` all at one indentation (column 0 allowed);
 *   - a value is one of: `~`/`null`/`Null`/`NULL`, the booleans `true`/`True`/`TRUE` and
 *     `false`/`False`/`FALSE`, a decimal integer (`-0` is the int 0) or decimal fraction (a
 *     float: `2.0` a `PythonFloat`) without a sign other than `-`, leading zeros or exponent (at
 *     most 15 digits on each side), a valid `YYYY-MM-DD` date (its own text, as ruamel's date's
 *     `isoformat()`; an impossible date is left to the full reader, which rejects it), a word starting with a letter followed by letters, digits,
 *     marks, spaces and `_.,;/()'+=?!&*%@$-` (never `#`, `:`, quotes, brackets or braces), a
 *     double-quoted string without `\` or `"` inside, a single-quoted string without `'` inside,
 *     or (not in a list item) a flow list `[a, b]` of such values without commas in them, or `[]`.
 */

import { pythonFloat } from '../values/python-float.js'

const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: (.*))?$/
const ITEM = /^( *)- (.*)$/
const BLANK_OR_COMMENT = /^ *(?:#.*)?$/
/** `WORD` restricted to ASCII: the same answer where it matches, without Unicode tables (faster). */
const ASCII_WORD = /^[A-Za-z][A-Za-z0-9 _.,;/()'+=?!&*%@$-]*$/
const WORD = /^\p{L}[\p{L}\p{N}\p{M} _.,;/()'+=?!&*%@$-]*$/u
const FLOW_WORD = /^\p{L}[\p{L}\p{N}\p{M} _./()'+=?!&*%@$-]*$/u
/** A path starting `./`, `../` or `/` (Astro's `layout: ../../layouts/Page.astro`): never a number, `.inf` or `.nan`. */
const PATH_WORD = /^(?:\.\.?\/|\/)[\p{L}\p{N}\p{M} _.,;/()'+=?!&*%@$-]*$/u
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
  if (flow ? FLOW_WORD.test(text) : ASCII_WORD.test(text) || WORD.test(text) || PATH_WORD.test(text)) return text
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

export function parseSimpleMapping(raw: string): Record<string, unknown> | undefined {
  if (AWKWARD.test(raw)) return undefined
  const data: Record<string, unknown> = {}
  /** The list being filled (after `key:`), and the indentation of its items once known. */
  let list: { key: string; items: unknown[] | null; indent: number } | null = null
  let keys = 0
  for (let line of raw.split('\n')) {
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line.includes('\r')) return undefined
    line = line.trimEnd()
    if (BLANK_OR_COMMENT.test(line)) continue
    const item = list ? ITEM.exec(line) : null
    if (list && item) {
      const indent = item[1]!.length
      if (list.items === null) {
        list.items = []
        list.indent = indent
        data[list.key] = list.items
      } else if (indent !== list.indent) {
        return undefined
      }
      const parsed = scalar(item[2]!, false)
      if (parsed === UNSUPPORTED) return undefined
      list.items.push(parsed)
      continue
    }
    const pair = KEY.exec(line)
    if (!pair) return undefined
    const key = pair[1]!
    if (KEYWORDS.has(key) || key === '__proto__' || Object.hasOwn(data, key)) return undefined
    keys++
    const text = (pair[2] ?? '').trimStart()
    if (text === '') {
      data[key] = null
      list = { key, items: null, indent: 0 }
      continue
    }
    list = null
    const parsed = value(text)
    if (parsed === UNSUPPORTED) return undefined
    data[key] = parsed
  }
  return keys > 0 ? data : undefined
}
