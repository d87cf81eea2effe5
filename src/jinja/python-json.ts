/**
 * JSON text exactly as Python's `json.dumps` writes it (SPEC §8 filters `json` and `tojson`).
 *
 * Contract:
 * - `pythonJsonDumps(v)` = Python `json.dumps(v, sort_keys=True)`: keys sorted by code point
 *   (recursively), separators `", "` / `": "`, non-ASCII and control characters escaped as
 *   lowercase `\uXXXX` (astral characters as surrogate pairs), `NaN` / `Infinity` as Python
 *   writes them.
 * - `jinjaToJson(v, indent)` = Jinja's `tojson` (`htmlsafe_json_dumps` with `sort_keys=True`):
 *   separators `","` / `": "` when indented, `", "` / `": "` otherwise, then `<` `>` `&` `'`
 *   written as `\u003c` `\u003e` `\u0026` `\u0027`.
 * - `pythonJsonText(v)` is the unsorted, unescaped variant (`ensure_ascii=False`), used to
 *   stringify objects and arrays printed by templates.
 * - Numbers follow the value model of python-float.ts: a safe integer (|n| < 2^53) is written
 *   as an int (`1`); a `PythonFloat` box and any other number as Python's float repr (`2.0`,
 *   `1.5`, `1e-05`, `1e+16`, `1.2345678901234568e+17`). A `bigint` is written as an int.
 * - Objects are arrays, plain objects (values.ts `isPlainDict`) and `JsonObject`s (keys already
 *   strings and in the order to write them: json.ts makes them of dicts with keys of other
 *   types, sorted as `sort_keys` sorts them before it turns keys into strings). Values that are not JSON
 *   (undefined, functions, symbols, class instances other than `String`, circular structures)
 *   throw a `TypeError`/`ValueError`-like error named as Python names it (`Object of type Date
 *   is not JSON serializable`, `Circular reference detected`).
 */
import { compareCodePoints } from './code-point-order.js'
import { PythonFloat, pythonFloatRepr } from './python-float.js'
import { isPlainDict } from './values.js'

/** A JSON object whose keys are written in the order given (even with `sortKeys`: its maker sorted them). */
export class JsonObject {
  constructor(readonly entries: readonly (readonly [string, unknown])[]) {}
}

export interface PythonJsonOptions {
  /** `sort_keys` */
  sortKeys: boolean
  /** `ensure_ascii` */
  ensureAscii: boolean
  /** `indent`: a number of spaces or an indent string; `null` for one line */
  indent: number | string | null
  /** separator between items */
  itemSeparator: string
  /** separator between a key and its value */
  keySeparator: string
}

/** Python `json.dumps(value, sort_keys=True)`. */
export function pythonJsonDumps(value: unknown): string {
  return sortedAsciiJson(value, 0) ?? encodePythonJson(value, {
    sortKeys: true,
    ensureAscii: true,
    indent: null,
    itemSeparator: ', ',
    keySeparator: ': ',
  })
}

/** Jinja's `value | tojson(indent=indent)`. */
export function jinjaToJson(value: unknown, indent?: number | string | null): string {
  const indented = indent !== undefined && indent !== null
  const text = encodePythonJson(value, {
    sortKeys: true,
    ensureAscii: true,
    indent: indented ? indent : null,
    itemSeparator: indented ? ',' : ', ',
    keySeparator: ': ',
  })
  return text
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll("'", '\\u0027')
}

/** Python `json.dumps(value, ensure_ascii=False)`: insertion order, non-ASCII kept. */
export function pythonJsonText(value: unknown): string {
  return encodePythonJson(value, {
    sortKeys: false,
    ensureAscii: false,
    indent: null,
    itemSeparator: ', ',
    keySeparator: ': ',
  })
}

export function encodePythonJson(value: unknown, options: PythonJsonOptions): string {
  const indentUnit =
    options.indent === null
      ? null
      : typeof options.indent === 'number'
        ? ' '.repeat(Math.max(0, Math.trunc(options.indent)))
        : options.indent
  const active = new Set<object>()

  const encode = (item: unknown, level: number): string => {
    if (item === null) return 'null'
    if (item === true) return 'true'
    if (item === false) return 'false'
    if (typeof item === 'string') return encodeString(item, options.ensureAscii)
    if (item instanceof String) return encodeString(item.valueOf(), options.ensureAscii)
    if (typeof item === 'number') return pythonNumberRepr(item)
    if (typeof item === 'bigint') return item.toString()
    if (item instanceof PythonFloat) return pythonFloatRepr(item.value)
    if (typeof item !== 'object') {
      throw new TypeError(`Object of type ${typeof item} is not JSON serializable`)
    }
    const isArray = Array.isArray(item)
    const ordered = item instanceof JsonObject
    if (!isArray && !ordered && !isPlainDict(item)) {
      const name = (item as { constructor?: { name?: string } }).constructor?.name ?? 'object'
      throw new TypeError(`Object of type ${name} is not JSON serializable`)
    }
    if (active.has(item)) throw new Error('Circular reference detected')
    active.add(item)
    const parts: string[] = isArray
      ? (item as unknown[]).map((element) => encode(element, level + 1))
      : ordered
        ? item.entries.map(([key, value]) => encodeString(key, options.ensureAscii) + options.keySeparator + encode(value, level + 1))
        : objectKeys(item as Record<string, unknown>, options.sortKeys).map(
          (key) =>
            encodeString(key, options.ensureAscii) +
            options.keySeparator +
            encode((item as Record<string, unknown>)[key], level + 1),
        )
    active.delete(item)
    const [open, close] = isArray ? ['[', ']'] : ['{', '}']
    if (parts.length === 0) return open + close
    if (indentUnit === null) return open + parts.join(options.itemSeparator) + close
    const inner = '\n' + indentUnit.repeat(level + 1)
    const outer = '\n' + indentUnit.repeat(level)
    return open + inner + parts.join(options.itemSeparator + inner) + outer + close
  }

  return encode(value, 0)
}

/**
 * `pythonJsonDumps` of the usual values (front matter: plain objects, arrays, strings, numbers,
 * booleans, null), written directly; undefined for anything else, or nesting deeper than 64
 * (a circular value), which the general encoder then writes or rejects (issue #17: every
 * document's front matter is dumped as the index is built).
 */
function sortedAsciiJson(value: unknown, depth: number): string | undefined {
  if (typeof value === 'string') return encodeString(value, true)
  if (typeof value === 'number') return pythonNumberRepr(value)
  if (value === null) return 'null'
  if (value === true) return 'true'
  if (value === false) return 'false'
  if (typeof value !== 'object' || depth > 64) return undefined
  if (value instanceof PythonFloat) return pythonFloatRepr(value.value)
  let out: string
  if (Array.isArray(value)) {
    out = '['
    for (let i = 0; i < value.length; i++) {
      const item = sortedAsciiJson(value[i], depth + 1)
      if (item === undefined) return undefined
      out += i === 0 ? item : ', ' + item
    }
    return out + ']'
  }
  if (!isPlainDict(value)) return undefined
  const record = value as Record<string, unknown>
  const keys = objectKeys(record, true)
  out = '{'
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const item = sortedAsciiJson(record[key], depth + 1)
    if (item === undefined) return undefined
    out += (i === 0 ? '' : ', ') + encodeString(key, true) + ': ' + item
  }
  return out + '}'
}

function objectKeys(object: Record<string, unknown>, sort: boolean): string[] {
  const keys = Object.keys(object)
  return sort ? keys.sort(compareCodePoints) : keys
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
}

// Python's ESCAPE_ASCII is `([\\"]|[^\ -~])`; ESCAPE is `[\x00-\x1f\\"\b\f\n\r\t]`.
const ESCAPE_ASCII = /[\\"\u0000-\u001f\u007f-\uffff]/g
const ESCAPE = /[\\"\u0000-\u001f]/g

/** Printable ASCII without `"` and `\\`: written as it is between quotes (most keys and values). */
const PLAIN_ASCII = /^[ !#-[\]-~]*$/

function encodeString(text: string, ensureAscii: boolean): string {
  if (PLAIN_ASCII.test(text)) return '"' + text + '"'
  // Working on UTF-16 code units yields Python's surrogate pairs for astral characters.
  const escaped = text.replace(
    ensureAscii ? ESCAPE_ASCII : ESCAPE,
    (char) => SHORT_ESCAPES[char] ?? '\\u' + char.charCodeAt(0).toString(16).padStart(4, '0'),
  )
  return '"' + escaped + '"'
}

export { pythonFloatRepr }

/** An int for safe integers, else Python's `float.__repr__`. */
export function pythonNumberRepr(n: number): string {
  if (Number.isSafeInteger(n)) return String(n)
  return pythonFloatRepr(n)
}
