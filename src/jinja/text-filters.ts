/**
 * The text filters of Jinja2 3.1 whose rules are their own: `urlencode`'s quoting, `wordcount`,
 * `filesizeformat`, `indent`, `truncate` (with the `truncate.leeway` policy, 5); `striptags` is
 * escape.ts (markupsafe's), `pprint` pretty-print.ts.
 *
 * Contract: each function takes the filter's bound arguments (filter-arguments.ts) and
 * returns the text Jinja returns for them (`indent` and `wordwrap` of a value that is no str
 * raise Python's error, as Jinja's `s += '\n'` and `s.splitlines()` do), with its AssertionErrors for bad `truncate` lengths
 * and leeways and its TypeError for a `truncate` value without a length (None, a bool, a number);
 * `indent` refuses a result past limits.ts `MAX_STRING_LENGTH` before making it.
 */
import { TemplateRuntimeError, typeError } from './errors.js'
import { softStr } from './filter-arguments.js'
import { toFloat, toInt } from './conversions.js'
import { fixed } from './format.js'
import { pySplitlines } from './str-methods.js'
import { Undefined, isDict, isString, isTuple, textOf, typeName } from './values.js'
import { pyLen, truthy } from './protocols.js'
import { checkString } from './limits.js'
import { ticks } from './render-budget.js'

export function urlQuote(value: unknown, forQueryString: boolean): string {
  const bytes = new TextEncoder().encode(softStr(value))
  ticks(bytes.length >> 4)
  let out = ''
  for (const byte of bytes) {
    const char = String.fromCharCode(byte)
    if (/[A-Za-z0-9_.\-~]/.test(char) || (!forQueryString && char === '/')) out += char
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0')
  }
  return forQueryString ? out.replaceAll('%20', '+') : out
}

export const XML_ATTRIBUTE_KEY = /[\s/>=]/

export function wordCount(text: string): number {
  return (text.match(/[\p{L}\p{N}_]+/gu) ?? []).length
}

export function fileSize(value: unknown, binary: unknown): string {
  const bytes = toFloat(value)
  const base = truthy(binary) ? 1024 : 1000
  const prefixes = truthy(binary) ? ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB', 'ZiB', 'YiB'] : ['kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB']
  if (bytes === 1) return '1 Byte'
  if (bytes < base) return `${Math.trunc(bytes)} Bytes`
  let unit = 0
  for (let i = 0; i < prefixes.length; i++) {
    unit = base ** (i + 2)
    if (bytes < unit) return `${fixed((base * bytes) / unit, 1)} ${prefixes[i]}`
  }
  return `${fixed((base * bytes) / unit, 1)} ${prefixes[prefixes.length - 1]}`
}

/**
 * What `do_indent`'s `s += '\n'` and `s.splitlines()` make of its value: a str's text; for
 * anything else Python's error (a list takes the newline, then has no `splitlines`).
 */
function indentSource(value: unknown): string {
  if (isString(value)) return textOf(value)
  if (value instanceof Undefined) return softStr(value)
  if (Array.isArray(value) && !isTuple(value)) throw new TemplateRuntimeError("'list' object has no attribute 'splitlines'", 'AttributeError')
  if (isTuple(value)) throw typeError('can only concatenate tuple (not "str") to tuple')
  throw typeError(`unsupported operand type(s) for +=: '${typeName(value)}' and 'str'`)
}

/** `s.splitlines()` of `do_wordwrap`: a str's text, else Python's AttributeError. */
export function wrapSource(value: unknown): string {
  if (isString(value)) return textOf(value)
  if (value instanceof Undefined) return softStr(value)
  throw new TemplateRuntimeError(`'${typeName(value)}' object has no attribute 'splitlines'`, 'AttributeError')
}

export function indent(value: unknown, width: unknown, first: unknown, blank: unknown): string {
  let indention: string
  if (isString(width)) indention = textOf(width)
  else {
    const size = toInt(width)
    checkString(size, () => `indent(${size})`)
    indention = ' '.repeat(Math.max(0, Number(size)))
  }
  const text = indentSource(value) + '\n'
  const lines = pySplitlines(text)
  // Every line but the first gets the indention (and the first too with `first`).
  checkString(text.length + lines.length * indention.length, () => `indent(${indention.length}) of ${lines.length} lines`)
  let out: string
  if (truthy(blank)) out = lines.join('\n' + indention)
  else {
    out = lines.shift() ?? ''
    if (lines.length > 0) out += '\n' + lines.map((line) => (line ? indention + line : line)).join('\n')
  }
  return truthy(first) ? indention + out : out
}

export function truncate(value: unknown, length: unknown, killwords: unknown, end: unknown, leeway: unknown): unknown {
  const size = Number(toInt(length))
  const ending = softStr(end)
  const endLength = Array.from(ending).length
  const slack = leeway === null ? 5 : Number(toInt(leeway))
  if (size < endLength) throw new TemplateRuntimeError(`expected length >= ${endLength}, got ${size}`, 'AssertionError')
  if (slack < 0) throw new TemplateRuntimeError(`expected leeway >= 0, got ${slack}`, 'AssertionError')
  if (!isString(value) && !(value instanceof Undefined)) {
    // Jinja measures the value as given, `len(s)`: a container by its items (a short one comes
    // back as it is), no len() for None, a number or a namespace; a long container then fails
    // where Jinja slices it and joins or splits text.
    if (pyLen(value) <= size + slack) return value
    if (isDict(value)) throw typeError("unhashable type: 'slice'")
    if (truthy(killwords)) throw typeError(`can only concatenate ${typeName(value)} (not "str") to ${typeName(value)}`)
    throw new TemplateRuntimeError(`'${typeName(value)}' object has no attribute 'rsplit'`, 'AttributeError')
  }
  const text = softStr(value)
  ticks(text.length >> 4)
  const points = Array.from(text)
  if (points.length <= size + slack) return text
  const kept = points.slice(0, size - endLength).join('')
  if (truthy(killwords)) return kept + ending
  const space = kept.lastIndexOf(' ')
  return (space >= 0 ? kept.slice(0, space) : kept) + ending
}
