/**
 * Python's `str` methods as templates call them (`name.upper()`, `s.split(',')`, `'{}'.format(x)`),
 * and the string helpers filters share (`pySplitlines`, `pyReplace`, `pyTitle`, `pyCapitalize`,
 * `pyCenter`).
 *
 * Contract: `STR_METHODS[name](self, args, kwargs)` follows CPython 3.11: argument defaults,
 * `split()` on runs of whitespace (Python's whitespace, `\x1c`–`\x1f` and `\x85` included),
 * `splitlines()` line boundaries, `title()` word starts after any uncased character,
 * `center()` padding as CPython places the odd space, errors such as `substring not found`;
 * string indices count code points for BMP text; `format_map`, `translate` and `maketrans` (a
 * PyDict of int keys) take their arguments as CPython does. `formatLookup` is how `str.format` reads
 * `{x.attr}` / `{x[key]}` (set by access.ts, which this module cannot import). Widths
 * (`center`, `ljust`, `rjust`, `zfill`, `expandtabs`), `replace` and `join` refuse a result past
 * limits.ts `MAX_STRING_LENGTH` before making it; scans pass check points of the time budget.
 */
import { pythonCasefold } from './python-casefold.js'
import { typeError, valueError } from './errors.js'
import { strFormat } from './format.js'
import { PyDict, dictGet, dictItems } from './dict.js'
import { PyRange, Undefined, fail, isDict, isInt, isString, isTuple, textOf, tuple, typeName } from './values.js'
import { iterate } from './protocols.js'
import { brief as reprBrief, checkString, joinChecked } from './limits.js'
import { tick, ticks } from './render-budget.js'
import { PY_SPACE } from './python-space.js'

export type Method = (self: never, args: unknown[], kwargs: Record<string, unknown>) => unknown

/** Lookups `str.format` needs for `{x.attr}` and `{x[key]}` (set by the access module). */
export const formatLookup: { attr(value: unknown, name: string): unknown; item(value: unknown, key: unknown): unknown } = {
  attr: () => undefined,
  item: () => undefined,
}

export function arg(args: unknown[], kwargs: Record<string, unknown>, index: number, name: string, fallback: unknown): unknown {
  if (index < args.length) return args[index]
  if (Object.hasOwn(kwargs, name)) return kwargs[name]
  return fallback
}

export function str(value: unknown, what: string): string {
  if (!isString(value)) throw typeError(`${what} must be str, not ${typeName(value)}`)
  return textOf(value)
}

export function int(value: unknown, fallback: number): number {
  if (value === null || value === undefined) return fallback
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'bigint') return Number(value)
  throw typeError(`'${typeName(value)}' object cannot be interpreted as an integer`)
}

/** A width argument (`center`, `ljust`, `rjust`, `zfill`), refused past `MAX_STRING_LENGTH`. */
function widthArg(value: unknown, method: string): number {
  const size = int(value, 0)
  checkString(size, () => `${method}(${size})`)
  return size
}

/** The separator of `split`/`rsplit` (None: whitespace, handled by the caller). */
function separatorArg(sep: unknown): string {
  if (!isString(sep)) throw typeError(`must be str or None, not ${typeName(sep)}`)
  return textOf(sep)
}

/** The fill character of `center`, `ljust`, `rjust`: one character (a code point). */
function fillArg(args: unknown[], kwargs: Record<string, unknown>): string {
  const fill = arg(args, kwargs, 1, 'fillchar', ' ')
  if (!isString(fill)) throw typeError(`The fill character must be a unicode character, not ${typeName(fill)}`)
  const text = textOf(fill)
  if (Array.from(text).length !== 1) throw typeError('The fill character must be exactly one character long')
  return text
}

/** The argument of a str method that takes exactly one, and no keywords (CPython's METH_O). */
function oneArgument(name: string, args: unknown[], kwargs: Record<string, unknown>): unknown {
  for (const _ in kwargs) throw typeError(`str.${name}() takes no keyword arguments`)
  if (args.length !== 1) throw typeError(`str.${name}() takes exactly one argument (${args.length} given)`)
  return args[0]
}

/** A code point as the int `ord()` gives. */
const ord = (char: string): number => char.codePointAt(0)!

/**
 * Python's `str.translate(table)`: each character becomes `table[ord(c)]` (a LookupError,
 * a missing key or an index past the end, keeps it): None deletes it, an int is `chr()` of
 * it, a str replaces it. `table` is any subscriptable value (a dict of int keys, most often
 * `str.maketrans`'s); anything else is Python's TypeError once a character is looked up.
 */
export function pyTranslate(text: string, table: unknown): string {
  ticks(text.length >> 6)
  const chars = Array.from(text)
  const tableChars = isString(table) ? Array.from(textOf(table)) : undefined
  const lookup = (code: number): unknown => {
    if (isDict(table)) return dictGet(table, code)
    if (tableChars !== undefined) return code < tableChars.length ? tableChars[code] : undefined
    if (Array.isArray(table)) return code < table.length ? table[code] : undefined
    if (table instanceof PyRange) return code < Number(table.length) ? table.at(code) : undefined
    if (table instanceof Undefined) fail(table)
    throw typeError(`'${typeName(table)}' object is not subscriptable`)
  }
  const seen = new Map<number, string>()
  let out = ''
  for (const char of chars) {
    const code = ord(char)
    let mapped = seen.get(code)
    if (mapped === undefined) {
      tick()
      const value = lookup(code)
      if (value === undefined) mapped = char
      else if (value === null) mapped = ''
      else if (isString(value)) mapped = textOf(value)
      else if (isInt(value) || typeof value === 'boolean') {
        const n = typeof value === 'boolean' ? Number(value) : value
        if (n < 0 || n > 0x10ffff) throw valueError('character mapping must be in range(0x110000)')
        mapped = String.fromCodePoint(Number(n))
      } else throw typeError('character mapping must return integer, None or str')
      seen.set(code, mapped)
    }
    if (mapped.length > 1) checkString(out.length + mapped.length, () => `${reprBrief(text)}.translate()`)
    out += mapped
  }
  return out
}

/** Python's `str.maketrans(x[, y[, z]])`: the dict of int keys `translate` takes. */
export function pyMaketrans(args: unknown[], kwargs: Record<string, unknown>): PyDict {
  for (const _ in kwargs) throw typeError('str.maketrans() takes no keyword arguments')
  if (args.length === 0) throw typeError('maketrans expected at least 1 argument, got 0')
  if (args.length > 3) throw typeError(`maketrans expected at most 3 arguments, got ${args.length}`)
  const out = new PyDict()
  const [x, y, z] = args
  if (args.length === 1) {
    if (!isDict(x)) throw typeError('if you give only one argument to maketrans it must be a dict')
    for (const [key, value] of dictItems(x)) {
      tick()
      if (isString(key)) {
        const chars = Array.from(textOf(key))
        if (chars.length !== 1) throw valueError('string keys in translate table must be of length 1')
        out.set(ord(chars[0]!), value)
      } else if (isInt(key) || typeof key === 'boolean') out.set(key, value)
      else throw typeError('keys in translate table must be strings or integers')
    }
    return out
  }
  // Argument Clinic checks y and z are str before the body looks at x.
  if (!isString(y)) throw typeError(`maketrans() argument 2 must be str, not ${typeName(y)}`)
  if (args.length > 2 && !isString(z)) throw typeError(`maketrans() argument 3 must be str, not ${typeName(z)}`)
  if (!isString(x)) throw typeError('first maketrans argument must be a string if there is a second argument')
  const from = Array.from(textOf(x))
  const to = Array.from(textOf(y))
  if (from.length !== to.length) throw valueError('the first two maketrans arguments must have equal length')
  ticks(from.length >> 6)
  for (let i = 0; i < from.length; i++) out.set(ord(from[i]!), ord(to[i]!))
  if (isString(z)) for (const char of Array.from(textOf(z))) out.set(ord(char), null)
  return out
}

const WS_RUN = new RegExp(`[${PY_SPACE}]+`, 'u')
const LAST_WS_RUN = new RegExp(`[${PY_SPACE}]+(?=[^${PY_SPACE}]*$)`, 'u')
const ONE_WS = new RegExp(`[${PY_SPACE}]`, 'u')
const LEADING_WS = new RegExp(`^[${PY_SPACE}]+`, 'u')
const TRAILING_WS = new RegExp(`[${PY_SPACE}]+$`, 'u')
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/

function stripChars(text: string, chars: unknown, side: 'both' | 'left' | 'right'): string {
  if (chars === null || chars === undefined) {
    if (side !== 'right') text = text.replace(LEADING_WS, '')
    if (side !== 'left') text = text.replace(TRAILING_WS, '')
    return text
  }
  const set = new Set(Array.from(str(chars, 'strip arg')))
  ticks(text.length >> 4)
  const points = Array.from(text)
  let start = 0
  let end = points.length
  if (side !== 'right') while (start < end && set.has(points[start]!)) start++
  if (side !== 'left') while (end > start && set.has(points[end - 1]!)) end--
  return points.slice(start, end).join('')
}

export function pySplit(text: string, sep: unknown, maxsplit: number): string[] {
  if (sep === null || sep === undefined) {
    const out: string[] = []
    let rest = stripChars(text, null, 'left')
    while (rest !== '') {
      tick()
      if (maxsplit >= 0 && out.length >= maxsplit) {
        out.push(stripChars(rest, null, 'right'))
        return out
      }
      const match = WS_RUN.exec(rest)
      if (!match) {
        out.push(rest)
        break
      }
      out.push(rest.slice(0, match.index))
      rest = rest.slice(match.index + match[0].length)
    }
    return out
  }
  const separator = separatorArg(sep)
  if (separator === '') throw valueError('empty separator')
  ticks(text.length >> 6)
  const parts = text.split(separator)
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts
  return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(separator)]
}

function pyRsplit(text: string, sep: unknown, maxsplit: number): string[] {
  if (maxsplit < 0) return pySplit(text, sep, -1)
  if (sep === null || sep === undefined) {
    const words = pySplit(text, null, -1)
    if (words.length <= maxsplit + 1) return words
    // Keep the leading part with its inner whitespace, as CPython does.
    let rest = stripChars(text, null, 'right')
    const tail: string[] = []
    for (let i = 0; i < maxsplit; i++) {
      const match = LAST_WS_RUN.exec(rest)
      if (!match) break
      tail.unshift(rest.slice(match.index + match[0].length))
      rest = rest.slice(0, match.index)
    }
    return [rest, ...tail]
  }
  const separator = separatorArg(sep)
  if (separator === '') throw valueError('empty separator')
  const parts = text.split(separator)
  if (parts.length <= maxsplit + 1) return parts
  const cut = parts.length - maxsplit
  return [parts.slice(0, cut).join(separator), ...parts.slice(cut)]
}

export function pySplitlines(text: string, keepends = false): string[] {
  const out: string[] = []
  let rest = text
  while (rest !== '') {
    tick()
    const match = LINE_BREAK.exec(rest)
    if (!match) {
      out.push(rest)
      break
    }
    out.push(rest.slice(0, match.index + (keepends ? match[0].length : 0)))
    rest = rest.slice(match.index + match[0].length)
  }
  return out
}

export function pyReplace(text: string, old: string, replacement: string, count: number): string {
  ticks(text.length >> 6)
  if (old === '' || replacement.length > old.length) {
    // The result's length, known before it is made: every match replaced (up to count).
    const found = old === '' ? Array.from(text).length + 1 : text.split(old).length - 1
    const replaced = count < 0 ? found : Math.min(count, found)
    const length = text.length + replaced * (replacement.length - old.length)
    checkString(length, () => `replacing ${reprBrief(old)} by ${reprBrief(replacement)} in a string of ${text.length} characters`)
  }
  if (count < 0) {
    if (old === '') return replacement + Array.from(text).join(replacement) + (text === '' ? '' : replacement)
    return text.split(old).join(replacement)
  }
  let out = ''
  let rest = text
  let done = 0
  if (old === '') {
    const points = Array.from(text)
    for (let i = 0; i <= points.length; i++) {
      if (done < count) {
        out += replacement
        done++
      }
      if (i < points.length) out += points[i]
    }
    return out
  }
  while (done < count) {
    tick()
    const at = rest.indexOf(old)
    if (at < 0) break
    out += rest.slice(0, at) + replacement
    rest = rest.slice(at + old.length)
    done++
  }
  return out + rest
}

const TITLE_CASE: Record<string, string> = { 'ǆ': 'ǅ', 'Ǆ': 'ǅ', 'ǉ': 'ǈ', 'Ǉ': 'ǈ', 'ǌ': 'ǋ', 'Ǌ': 'ǋ', 'ǳ': 'ǲ', 'Ǳ': 'ǲ' }

function isCased(char: string): boolean {
  return char.toLowerCase() !== char.toUpperCase() || /\p{Lt}/u.test(char)
}

function titleChar(char: string): string {
  return TITLE_CASE[char] ?? (char.toUpperCase().length === 1 ? char.toUpperCase() : char.toUpperCase()[0]! + char.toUpperCase().slice(1).toLowerCase())
}

/** Python's `str.title()`. */
export function pyTitle(text: string): string {
  let out = ''
  let previousCased = false
  ticks(text.length >> 4)
  for (const char of text) {
    if (isCased(char)) {
      out += previousCased ? char.toLowerCase() : titleChar(char)
      previousCased = true
    } else {
      out += char
      previousCased = false
    }
  }
  return out
}

/** Python's `str.capitalize()`. */
export function pyCapitalize(text: string): string {
  const [first = '', ...rest] = Array.from(text)
  return (first ? titleChar(first) : '') + rest.join('').toLowerCase()
}

/** Python's `str.center(width, fill)`; callers check `width` against the string limit first. */
export function pyCenter(text: string, width: number, fill = ' '): string {
  const length = Array.from(text).length
  const margin = width - length
  if (margin <= 0) return text
  const left = Math.floor(margin / 2) + (margin & width & 1)
  return fill.repeat(left) + text + fill.repeat(margin - left)
}

function allChars(text: string, test: RegExp): boolean {
  ticks(text.length >> 4)
  return text !== '' && Array.from(text).every((char) => test.test(char))
}

function casedCheck(text: string, upper: boolean): boolean {
  let cased = false
  for (const char of text) {
    if (char.toLowerCase() !== char.toUpperCase()) {
      if (upper ? char !== char.toUpperCase() : char !== char.toLowerCase()) return false
      cased = true
    }
  }
  return cased
}

function findRange(text: string, args: unknown[], kwargs: Record<string, unknown>): { sub: string; start: number; end: number } {
  const sub = str(arg(args, kwargs, 0, 'sub', undefined), 'must be str')
  let start = int(arg(args, kwargs, 1, 'start', null), 0)
  let end = int(arg(args, kwargs, 2, 'end', null), text.length)
  if (start < 0) start = Math.max(0, text.length + start)
  if (end < 0) end = Math.max(0, text.length + end)
  return { sub, start, end: Math.min(end, text.length) }
}

function prefixTest(text: string, args: unknown[], kwargs: Record<string, unknown>, atEnd: boolean): boolean {
  const candidates = arg(args, kwargs, 0, 'prefix', undefined)
  const options = Array.isArray(candidates) && isTuple(candidates) ? candidates : [candidates]
  let start = int(arg(args, kwargs, 1, 'start', null), 0)
  let end = int(arg(args, kwargs, 2, 'end', null), text.length)
  if (start < 0) start = Math.max(0, text.length + start)
  if (end < 0) end = Math.max(0, text.length + end)
  const slice = text.slice(start, end)
  return options.some((option) => {
    const s = str(option, atEnd ? 'endswith first arg' : 'startswith first arg')
    return atEnd ? slice.endsWith(s) : slice.startsWith(s)
  })
}

export const STR_METHODS: Record<string, Method> = {
  upper: (s: string) => s.toUpperCase(),
  lower: (s: string) => s.toLowerCase(),
  casefold: (s: string) => pythonCasefold(s),
  swapcase: (s: string) =>
    Array.from(s, (c) => (/\p{Uppercase}/u.test(c) ? c.toLowerCase() : /\p{Lowercase}/u.test(c) ? c.toUpperCase() : c)).join(''),
  title: (s: string) => pyTitle(s),
  capitalize: (s: string) => pyCapitalize(s),
  strip: (s: string, a, k) => stripChars(s, arg(a, k, 0, 'chars', null), 'both'),
  lstrip: (s: string, a, k) => stripChars(s, arg(a, k, 0, 'chars', null), 'left'),
  rstrip: (s: string, a, k) => stripChars(s, arg(a, k, 0, 'chars', null), 'right'),
  split: (s: string, a, k) => pySplit(s, arg(a, k, 0, 'sep', null), int(arg(a, k, 1, 'maxsplit', -1), -1)),
  rsplit: (s: string, a, k) => pyRsplit(s, arg(a, k, 0, 'sep', null), int(arg(a, k, 1, 'maxsplit', -1), -1)),
  splitlines: (s: string, a, k) => pySplitlines(s, Boolean(arg(a, k, 0, 'keepends', false))),
  replace: (s: string, a, k) =>
    pyReplace(s, str(a[0], 'replace() argument 1'), str(a[1], 'replace() argument 2'), int(arg(a, k, 2, 'count', -1), -1)),
  startswith: (s: string, a, k) => prefixTest(s, a, k, false),
  endswith: (s: string, a, k) => prefixTest(s, a, k, true),
  find: (s: string, a, k) => {
    const { sub, start, end } = findRange(s, a, k)
    const at = s.slice(0, end).indexOf(sub, start)
    return at
  },
  rfind: (s: string, a, k) => {
    const { sub, start, end } = findRange(s, a, k)
    const at = s.slice(0, end).lastIndexOf(sub)
    return at >= start ? at : -1
  },
  index: (s: string, a, k) => {
    const { sub, start, end } = findRange(s, a, k)
    const at = s.slice(0, end).indexOf(sub, start)
    if (at < 0) throw valueError('substring not found')
    return at
  },
  rindex: (s: string, a, k) => {
    const { sub, start, end } = findRange(s, a, k)
    const at = s.slice(0, end).lastIndexOf(sub)
    if (at < start) throw valueError('substring not found')
    return at
  },
  count: (s: string, a, k) => {
    const { sub, start, end } = findRange(s, a, k)
    const slice = s.slice(start, end)
    return sub === '' ? Array.from(slice).length + 1 : slice.split(sub).length - 1
  },
  join: (s: string, a) => {
    const items = iterate(a[0])
    const parts = new Array<string>(items.length)
    for (let i = 0; i < items.length; i++) {
      tick()
      const item = items[i]
      if (!isString(item)) throw typeError(`sequence item ${i}: expected str instance, ${typeName(item)} found`)
      parts[i] = textOf(item)
    }
    return joinChecked(parts, s, () => `${reprBrief(s)}.join() of ${parts.length} strings`)
  },
  format: (s: string, a, k) => strFormat(s, a, k, formatLookup),
  // The mapping is any value: subscripted only for a field that needs it ('x'.format_map(1) is 'x').
  format_map: (s: string, a, k) => strFormat(s, null, oneArgument('format_map', a, k), formatLookup),
  translate: (s: string, a, k) => pyTranslate(s, oneArgument('translate', a, k)),
  maketrans: (_s: string, a, k) => pyMaketrans(a, k),
  center: (s: string, a, k) => pyCenter(s, widthArg(a[0], 'center'), fillArg(a, k)),
  ljust: (s: string, a, k) => {
    const width = widthArg(a[0], 'ljust')
    return s + fillArg(a, k).repeat(Math.max(0, width - Array.from(s).length))
  },
  rjust: (s: string, a, k) => {
    const width = widthArg(a[0], 'rjust')
    return fillArg(a, k).repeat(Math.max(0, width - Array.from(s).length)) + s
  },
  zfill: (s: string, a) => {
    const width = widthArg(a[0], 'zfill')
    const sign = s[0] === '-' || s[0] === '+' ? s[0] : ''
    const body = sign ? s.slice(1) : s
    return sign + body.padStart(width - sign.length, '0')
  },
  isalnum: (s: string) => allChars(s, /[\p{L}\p{N}]/u),
  isalpha: (s: string) => allChars(s, /\p{L}/u),
  isdigit: (s: string) => allChars(s, /[\p{Nd}\u00b2\u00b3\u00b9]/u),
  isdecimal: (s: string) => allChars(s, /\p{Nd}/u),
  isnumeric: (s: string) => allChars(s, /\p{N}/u),
  isspace: (s: string) => allChars(s, ONE_WS),
  isupper: (s: string) => casedCheck(s, true),
  islower: (s: string) => casedCheck(s, false),
  istitle: (s: string) => s !== '' && pyTitle(s) === s && /\p{L}/u.test(s),
  isascii: (s: string) => /^[\x00-\x7f]*$/.test(s),
  isidentifier: (s: string) => /^[\p{L}_][\p{L}\p{N}_]*$/u.test(s),
  isprintable: (s: string) => !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]|[^\P{Zs} ]/u.test(s),
  partition: (s: string, a) => {
    const sep = str(a[0], 'sep')
    const at = s.indexOf(sep)
    return at < 0 ? tuple([s, '', '']) : tuple([s.slice(0, at), sep, s.slice(at + sep.length)])
  },
  rpartition: (s: string, a) => {
    const sep = str(a[0], 'sep')
    const at = s.lastIndexOf(sep)
    return at < 0 ? tuple(['', '', s]) : tuple([s.slice(0, at), sep, s.slice(at + sep.length)])
  },
  removeprefix: (s: string, a) => {
    const prefix = str(a[0], 'prefix')
    return prefix && s.startsWith(prefix) ? s.slice(prefix.length) : s
  },
  removesuffix: (s: string, a) => {
    const suffix = str(a[0], 'suffix')
    return suffix && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s
  },
  expandtabs: (s: string, a, k) => {
    const size = int(arg(a, k, 0, 'tabsize', 8), 8)
    let out = ''
    let column = 0
    for (const char of s) {
      tick()
      if (char === '\t') {
        const spaces = size > 0 ? size - (column % size) : 0
        checkString(out.length + spaces, () => `expandtabs(${size})`)
        out += ' '.repeat(spaces)
        column += spaces
      } else {
        out += char
        column = char === '\n' || char === '\r' ? 0 : column + 1
      }
    }
    return out
  },
  encode: (s: string) => s,
}

