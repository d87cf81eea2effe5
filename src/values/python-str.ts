/**
 * Python's `str()` and `repr()` of values in the value model (python-float.ts), for text the
 * Python implementation makes with `str(value)` (SPEC §11: `title` is `str(value)` of any
 * non-null front-matter `title`).
 *
 * Contract:
 * - `pythonStr(v)`: a string is itself; `null`/`undefined` → `None`; booleans → `True`/`False`;
 *   a safe integer → its digits, a `bigint` → its digits; any other number or a `PythonFloat`
 *   → Python's float repr (`2.0`, `1e+16`, `nan`, `inf`); an array → `[<repr>, ...]`; a plain
 *   object → `{<repr key>: <repr value>, ...}` in its key order; anything else `String(v)`.
 * - `pythonRepr(v)`: as `pythonStr` except strings, which are quoted as Python quotes them:
 *   `'...'`, or `"..."` when the text holds `'` and no `"`; `\\`, the quote, `\t` `\n` `\r`
 *   escaped; other control characters and non-printable characters (Unicode categories Cc, Cf,
 *   Cs, Co, Cn, Zl, Zp and Zs but the space) as `\xNN`, `\uNNNN` or `\UNNNNNNNN`.
 */
import { isPlainObject } from '../protocol/object-guards.js'
import { PythonFloat, pythonFloatRepr } from './python-float.js'

export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value)
}

export function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'string') return stringRepr(value)
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : floatStr(value)
  if (value instanceof PythonFloat) return floatStr(value.value)
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`
  if (isPlainObject(value)) {
    const items = Object.entries(value).map(([key, item]) => `${stringRepr(key)}: ${pythonRepr(item)}`)
    return `{${items.join(', ')}}`
  }
  return String(value)
}

function floatStr(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  return pythonFloatRepr(n)
}

const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u
const NEEDS_ESCAPE = /[\\'"\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u

function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  if (!NEEDS_ESCAPE.test(text.replaceAll(' ', ''))) return quote + text + quote
  let out = quote
  for (const char of text) {
    const code = char.codePointAt(0) as number
    if (char === quote || char === '\\') out += '\\' + char
    else if (char === '\t') out += '\\t'
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === ' ' || !NOT_PRINTABLE.test(char)) out += char
    else if (code <= 0xff) out += '\\x' + code.toString(16).padStart(2, '0')
    else if (code <= 0xffff) out += '\\u' + code.toString(16).padStart(4, '0')
    else out += '\\U' + code.toString(16).padStart(8, '0')
  }
  return out + quote
}
