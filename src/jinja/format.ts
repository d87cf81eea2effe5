/**
 * Python's number rounding and string formatting for templates: `round()`, `str % args`
 * (printf style, Jinja's `format` filter) and `str.format()` / `format(value, spec)`.
 *
 * Contract:
 * - `roundDecimal(x, digits)` is Python's `round(float, digits)`: correctly rounded from the
 *   exact binary value, ties to even (`round(2.675, 2) == 2.67`, `round(2.5) == 2.0`).
 * - `fixed(x, p)`, `exponential(x, p)`, `general(x, p)` are `'%.pf'`, `'%.pe'`, `'%.pg'` as
 *   CPython writes them (same exact rounding, two-digit exponents, `inf`/`nan`).
 * - `percentFormat(format, args)`: `%s %r %a %d %i %u %o %x %X %e %E %f %F %g %G %c %%` with
 *   flags `-+ #0`, width, precision (`*` too) and `%(name)s` mappings; Python's errors
 *   (`not enough arguments for format string`, `not all arguments converted …`).
 * - Widths and precisions past limits.ts `MAX_STRING_LENGTH` are refused before any padding.
 * - `strFormat(format, args, kwargs)` and `formatSpec(value, spec)`: the format mini-language
 *   (`{}`, `{0}`, `{name}`, `{0[1]}`, `{x.attr}`, `!r`/`!s`, fill/align/sign/#/0/width/`,`/`_`/
 *   precision/type); `args` null is `str.format_map(kwargs)` (positional fields are a
 *   ValueError). A named field is `kwargs[name]` as Python subscripts the mapping, which may be
 *   any value (format_map's): a dict of either kind (missing: KeyError), a list, str, range or
 *   anything else Python's TypeError, raised only when a field needs it.
 * - Markup's versions escape what they format: `percentFormat(format, args, escaped)` (markup.ts
 *   gives `escaped`) and `strFormat(…, escape = true)`, markupsafe's `EscapeFormatter`, a
 *   `string.Formatter`: a positional field past `args` is `IndexError: tuple index out of range`.
 */
import { brief, checkString } from './limits.js'
import { tick } from './render-budget.js'
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { dictGet } from './dict.js'
import { escapeHtml } from './escape.js'
import { Markup, PyRange, Undefined, fail, floatStr, isDict, isString, isTuple, pyRepr, pyStr, textOf, typeName } from './values.js'

/** Exact decimal digits of |x| (finite): integer part and fraction (no trailing zeros). */
function exactDigits(abs: number): { digits: string; point: number } {
  if (abs >= 1e21) {
    const int = BigInt(abs).toString()
    return { digits: int, point: int.length }
  }
  const [int = '0', frac = ''] = abs.toFixed(100).split('.')
  const fraction = frac.replace(/0+$/, '')
  return { digits: int + fraction, point: int.length }
}

/**
 * Rounds the digit string (with the decimal point after `point` digits) to `keep` digits,
 * ties to even. Returns the kept digits and the new point (a carry can add a digit).
 */
function roundDigits(digits: string, point: number, keep: number): { digits: string; point: number } {
  if (keep < 0) return { digits: '0', point: 1 }
  if (keep >= digits.length) return { digits: digits.padEnd(keep, '0'), point }
  const kept = digits.slice(0, keep)
  const first = digits.charCodeAt(keep) - 48
  const restNonZero = /[1-9]/.test(digits.slice(keep + 1))
  const last = keep > 0 ? digits.charCodeAt(keep - 1) - 48 : 0
  const up = first > 5 || (first === 5 && (restNonZero || last % 2 === 1))
  if (!up) return { digits: kept === '' ? '0' : kept, point: kept === '' ? point + 1 : point }
  // Increment the kept digits.
  const chars = (kept === '' ? '0' : kept).split('')
  let pointOut = kept === '' ? point + 1 : point
  let i = chars.length - 1
  while (i >= 0) {
    if (chars[i] === '9') {
      chars[i] = '0'
      i--
    } else {
      chars[i] = String.fromCharCode(chars[i]!.charCodeAt(0) + 1)
      break
    }
  }
  if (i < 0) {
    chars.unshift('1')
    pointOut++
  }
  return { digits: chars.join(''), point: pointOut }
}

/** Python's `round(x, digits)` for a float. */
export function roundDecimal(x: number, digits: number): number {
  if (!Number.isFinite(x) || x === 0) return x
  if (digits > 325) return x
  const { digits: d, point } = exactDigits(Math.abs(x))
  const rounded = roundDigits(d, point, point + digits)
  const kept = rounded.digits.padEnd(Math.max(rounded.point, 0), '0')
  const int = kept.slice(0, Math.max(rounded.point, 0)) || '0'
  const frac = kept.slice(Math.max(rounded.point, 0))
  const text = rounded.point < 0 ? '0.' + '0'.repeat(-rounded.point) + rounded.digits : int + (frac ? '.' + frac : '')
  const value = Number(text) * (x < 0 ? -1 : 1)
  return value === 0 && x < 0 ? -0 : value
}

/** `'%.{p}f' % x`. */
export function fixed(x: number, precision: number): string {
  if (!Number.isFinite(x)) return floatStr(x)
  const negative = x < 0 || Object.is(x, -0)
  const { digits, point } = exactDigits(Math.abs(x))
  const rounded = roundDigits(digits, point, point + precision)
  let int = rounded.digits.slice(0, rounded.point)
  let frac = rounded.digits.slice(rounded.point)
  if (rounded.point <= 0) {
    int = '0'
    frac = ('0'.repeat(-rounded.point) + rounded.digits).slice(0, precision)
  }
  frac = frac.padEnd(precision, '0').slice(0, precision)
  return (negative ? '-' : '') + (int || '0') + (precision > 0 ? '.' + frac : '')
}

/** `'%.{p}e' % x` digits: the rounded significant digits and the decimal exponent. */
function significant(abs: number, count: number): { digits: string; exponent: number } {
  if (abs === 0) return { digits: '0'.repeat(count), exponent: 0 }
  const { digits, point } = exactDigits(abs)
  const lead = digits.search(/[1-9]/)
  const trimmed = digits.slice(lead)
  const exponent = point - lead - 1
  const rounded = roundDigits(trimmed, 1, count)
  return { digits: rounded.digits.slice(0, count), exponent: exponent + (rounded.point - 1) }
}

export function exponential(x: number, precision: number, upper = false): string {
  if (!Number.isFinite(x)) return upper ? floatStr(x).toUpperCase() : floatStr(x)
  const negative = x < 0 || Object.is(x, -0)
  const { digits, exponent } = significant(Math.abs(x), precision + 1)
  const mantissa = digits[0] + (precision > 0 ? '.' + digits.slice(1) : '')
  const exp = (exponent < 0 ? '-' : '+') + String(Math.abs(exponent)).padStart(2, '0')
  return (negative ? '-' : '') + mantissa + (upper ? 'E' : 'e') + exp
}

export function general(x: number, precision: number, alternate = false, upper = false): string {
  if (!Number.isFinite(x)) return upper ? floatStr(x).toUpperCase() : floatStr(x)
  const p = precision === 0 ? 1 : precision
  const { exponent } = significant(Math.abs(x), p)
  let text: string
  if (exponent >= -4 && exponent < p) {
    text = fixed(x, p - 1 - exponent)
    if (!alternate && text.includes('.')) text = text.replace(/\.?0+$/, '')
  } else {
    text = exponential(x, p - 1, upper)
    if (!alternate) text = text.replace(/\.?0+(?=[eE])/, '')
  }
  return text
}

function numberValue(value: unknown, conversion: string): number | bigint {
  if (typeof value === 'number' || typeof value === 'bigint') return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof PythonFloat) return value.value
  const kind = 'eEfFgG'.includes(conversion) ? 'must be real number' : 'a real number is required'
  if ('eEfFgG'.includes(conversion)) throw typeError(`must be real number, not ${typeName(value)}`)
  throw typeError(`%${conversion} format: ${kind}, not ${typeName(value)}`)
}

function integerDigits(value: bigint, base: number): string {
  return (value < 0n ? -value : value).toString(base)
}

/** Python's `ascii(value)`: its repr with every non-ASCII character escaped. */
export function pyAscii(value: unknown): string {
  return pyRepr(value).replace(/[^\x00-\x7f]/gu, (char) => {
    const code = char.codePointAt(0)!
    if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`
    if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`
    return `\\U${code.toString(16).padStart(8, '0')}`
  })
}

/**
 * How `Markup % args` reads an argument (markupsafe's `_MarkupEscapeHelper`, markup.ts): the
 * escaped text for `%s` `%r` `%a`, the number (`int(x)`, `float(x)`) for the others.
 */
export type EscapedArgument = (value: unknown, conversion: string) => unknown

/** Python's `format % args`; with `escaped`, markupsafe's `Markup.__mod__` (the arguments escaped). */
export function percentFormat(format: string, args: unknown, escaped?: EscapedArgument): string {
  const positional = isTuple(args) ? args : [args]
  const mapping = isDict(args) ? args : undefined
  let index = 0
  let usedMapping = false
  const nextArg = (): unknown => {
    if (index >= positional.length) throw typeError('not enough arguments for format string')
    return positional[index++]
  }
  const pattern = /%(?:\(([^)]*)\))?([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)?/gs
  let out = ''
  let last = 0
  for (let match = pattern.exec(format); match; match = pattern.exec(format)) {
    tick()
    out += format.slice(last, match.index)
    last = pattern.lastIndex
    const [, key, flags = '', widthText, precisionText, conversion] = match
    if (conversion === undefined) throw valueError('incomplete format')
    if (conversion === '%' && key === undefined && !flags && !widthText && precisionText === undefined) {
      out += '%'
      continue
    }
    let value: unknown
    const width = widthText === '*' ? Number(nextArg()) : widthText ? Number(widthText) : 0
    const precision = precisionText === '*' ? Number(nextArg()) : precisionText !== undefined ? Number(precisionText || '0') : undefined
    checkString(Math.max(width, precision ?? 0), () => `formatting ${brief(match[0])}`)
    if (conversion === '%') value = '%'
    else if (key !== undefined) {
      if (!mapping) throw typeError('format requires a mapping')
      usedMapping = true
      value = dictGet(mapping, key)
      if (value === undefined) throw new TemplateRuntimeError(`'${key}'`, 'KeyError')
    } else value = nextArg()
    out += convert(value, conversion, flags, width, precision, escaped)
    checkString(out.length, () => `formatting ${brief(format)}`)
  }
  out += format.slice(last)
  if (!usedMapping && !mapping && index < positional.length) {
    throw typeError('not all arguments converted during string formatting')
  }
  return out
}

function convert(input: unknown, conversion: string, flags: string, width: number, precision: number | undefined, escaped?: EscapedArgument): string {
  const value = escaped && conversion !== '%' ? escaped(input, conversion) : input
  const left = flags.includes('-')
  const zero = flags.includes('0') && !left
  const sign = flags.includes('+') ? '+' : flags.includes(' ') ? ' ' : ''
  const alternate = flags.includes('#')
  let body: string
  let prefix = ''
  let numeric = true
  switch (conversion) {
    case 's':
    case 'r':
    case 'a':
      numeric = false
      body = escaped ? (value as string) : conversion === 's' ? pyStr(value) : conversion === 'r' ? pyRepr(value) : pyAscii(value)
      if (precision !== undefined) body = Array.from(body).slice(0, precision).join('')
      break
    case '%':
      numeric = false
      body = '%'
      break
    case 'c':
      numeric = false
      body = typeof value === 'number' ? String.fromCodePoint(value) : pyStr(value)
      break
    case 'd':
    case 'i':
    case 'u': {
      const n = numberValue(value, conversion)
      const int = typeof n === 'bigint' ? n : BigInt(Math.trunc(n))
      body = integerDigits(int, 10)
      if (precision !== undefined) body = body.padStart(precision, '0')
      prefix = int < 0n ? '-' : sign
      break
    }
    case 'o':
    case 'x':
    case 'X': {
      if (!(typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'boolean')) {
        throw typeError(`%${conversion} format: an integer is required, not ${typeName(value)}`)
      }
      const int = typeof value === 'bigint' ? value : BigInt(Number(value))
      body = integerDigits(int, conversion === 'o' ? 8 : 16)
      if (conversion === 'X') body = body.toUpperCase()
      if (precision !== undefined) body = body.padStart(precision, '0')
      prefix = (int < 0n ? '-' : sign) + (alternate ? (conversion === 'o' ? '0o' : conversion === 'x' ? '0x' : '0X') : '')
      break
    }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G': {
      const x = Number(numberValue(value, conversion))
      const p = precision ?? 6
      const lower = conversion.toLowerCase()
      body =
        lower === 'e'
          ? exponential(x, p, conversion === 'E')
          : lower === 'f'
            ? fixed(x, p)
            : general(x, p, alternate, conversion === 'G')
      if (conversion === 'F') body = body.toUpperCase()
      if (body.startsWith('-')) {
        prefix = '-'
        body = body.slice(1)
      } else prefix = sign
      break
    }
    default:
      throw valueError(`unsupported format character '${conversion}' (0x${conversion.charCodeAt(0).toString(16)})`)
  }
  const length = prefix.length + Array.from(body).length
  if (length >= width) return prefix + body
  const pad = width - length
  if (left) return prefix + body + ' '.repeat(pad)
  if (zero && numeric) return prefix + '0'.repeat(pad) + body
  return ' '.repeat(pad) + prefix + body
}

/** `format(value, spec)`: the format-spec mini-language. */
export function formatSpec(value: unknown, spec: string): string {
  if (spec === '') return pyStr(value)
  const match = /^(?:(.)?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/su.exec(spec)
  if (!match) throw valueError(`Invalid format specifier '${spec}' for object of type '${typeName(value)}'`)
  const [, fillChar, alignChar, signChar = '-', , alternate, zeroFlag, widthText, grouping, precisionText, typeChar] = match
  const width = widthText ? Number(widthText) : 0
  const precision = precisionText !== undefined ? Number(precisionText) : undefined
  checkString(Math.max(width, precision ?? 0), () => `formatting with ${brief(spec)}`)
  let fill = fillChar ?? ' '
  let align = alignChar
  if (zeroFlag && !alignChar) {
    fill = '0'
    align = '='
  }
  const isNum = typeof value === 'number' || typeof value === 'bigint' || value instanceof PythonFloat || typeof value === 'boolean'
  let body: string
  let sign = ''
  if (isString(value) || (!isNum && value !== null && typeof value === 'object') || value === null) {
    if (typeChar && typeChar !== 's') throw valueError(`Unknown format code '${typeChar}' for object of type '${typeName(value)}'`)
    body = isString(value) ? textOf(value) : pyStr(value)
    if (precision !== undefined) body = Array.from(body).slice(0, precision).join('')
    align = align ?? '<'
  } else {
    const n = typeof value === 'boolean' ? (value ? 1 : 0) : value instanceof PythonFloat ? value.value : (value as number | bigint)
    const isIntValue = typeof n === 'bigint' || (Number.isInteger(n) && !(value instanceof PythonFloat))
    const type = typeChar ?? (isIntValue ? 'd' : '')
    if (isIntValue && 'bcdoxXn'.includes(type)) {
      const int = typeof n === 'bigint' ? n : BigInt(n)
      const base = type === 'b' ? 2 : type === 'o' ? 8 : type === 'x' || type === 'X' ? 16 : 10
      body = integerDigits(int, base)
      if (type === 'X') body = body.toUpperCase()
      if (type === 'c') body = String.fromCodePoint(Number(int))
      if (grouping) body = group(body, grouping, base === 10 ? 3 : 4)
      if (alternate && base !== 10) body = (base === 2 ? '0b' : base === 8 ? '0o' : '0x') + body
      sign = int < 0n ? '-' : signChar === '-' ? '' : signChar
    } else {
      const x = Number(n)
      const p = precision ?? 6
      if (type === '' && precision === undefined) body = floatStr(Math.abs(x))
      else if (type === '') {
        body = general(Math.abs(x), p, false)
        if (!/[.e]/.test(body) && Number.isFinite(x)) body += '.0'
      } else if (type === 'e' || type === 'E') body = exponential(Math.abs(x), p, type === 'E')
      else if (type === 'f' || type === 'F') body = fixed(Math.abs(x), p)
      else if (type === 'g' || type === 'G') body = general(Math.abs(x), p, Boolean(alternate), type === 'G')
      else if (type === '%') body = fixed(Math.abs(x) * 100, p) + '%'
      else throw valueError(`Unknown format code '${type}' for object of type '${typeName(value)}'`)
      if (type === 'F') body = body.toUpperCase()
      if (grouping) {
        const cut = body.search(/[.eE%]/)
        body = cut < 0 ? group(body, grouping, 3) : group(body.slice(0, cut), grouping, 3) + body.slice(cut)
      }
      sign = x < 0 || Object.is(x, -0) ? '-' : signChar === '-' ? '' : signChar
    }
    align = align ?? '>'
  }
  const length = sign.length + Array.from(body).length
  if (length >= width) return sign + body
  const pad = width - length
  switch (align) {
    case '<':
      return sign + body + fill.repeat(pad)
    case '^': {
      const leftPad = Math.floor(pad / 2)
      return fill.repeat(leftPad) + sign + body + fill.repeat(pad - leftPad)
    }
    case '=':
      return sign + fill.repeat(pad) + body
    default:
      return fill.repeat(pad) + sign + body
  }
}

function group(digits: string, separator: string, size: number): string {
  let out = ''
  for (let i = digits.length; i > 0; i -= size) {
    const start = Math.max(0, i - size)
    out = digits.slice(start, i) + (out ? separator + out : '')
  }
  return out
}

/** A positional field past the arguments: str.format's message, or string.Formatter's (`args[i]`). */
function indexOutOfRange(index: number, formatter: boolean): TemplateRuntimeError {
  const message = formatter ? 'tuple index out of range' : `Replacement index ${index} out of range for positional args tuple`
  return new TemplateRuntimeError(message, 'IndexError')
}

/** `mapping[name]` of a named field, as Python subscripts what format/format_map were given. */
function fieldOf(mapping: unknown, name: string): unknown {
  if (isDict(mapping)) {
    const value = dictGet(mapping, name)
    if (value === undefined) throw new TemplateRuntimeError(pyRepr(name), 'KeyError')
    return value
  }
  if (mapping instanceof Undefined) fail(mapping)
  if (isString(mapping)) throw typeError("string indices must be integers, not 'str'")
  if (Array.isArray(mapping) || mapping instanceof PyRange) throw typeError(`${typeName(mapping)} indices must be integers or slices, not str`)
  throw typeError(`'${typeName(mapping)}' object is not subscriptable`)
}

/**
 * Python's `str.format(*args, **kwargs)`; `lookup` resolves `.attr` and `[key]` parts. With
 * `escape`, markupsafe's `EscapeFormatter` (`Markup.format`): every field is escaped after it is
 * formatted, a Markup field (not converted by `!s`/`!r`) is taken as it is and refuses a spec.
 * Fields are numbered as CPython numbers them (`{}` after `{0}` is a ValueError, a nested spec
 * `{:{}}` takes the next argument, one level of nesting only); string.Formatter's rules where
 * they differ (a field `{0[1]}` is not manual numbering, `{[0]}` is the keyword '').
 */
export function strFormat(
  format: string,
  args: unknown[] | null,
  kwargs: unknown,
  lookup: { attr(value: unknown, name: string): unknown; item(value: unknown, key: unknown): unknown },
  escape = false,
): string {
  let auto = 0
  let numbering: 'auto' | 'manual' | undefined
  return formatWith(format, 2)

  function formatWith(format: string, depth: number): string {
    if (depth <= 0) throw valueError('Max string recursion exceeded')
    let out = ''
    let i = 0
    while (i < format.length) {
      tick()
      const char = format[i]!
      if (char === '{') {
        if (format[i + 1] === '{') {
          out += '{'
          i += 2
          continue
        }
        let nesting = 1
        let j = i + 1
        while (j < format.length && nesting > 0) {
          if (format[j] === '{') nesting++
          else if (format[j] === '}') nesting--
          j++
        }
        if (nesting > 0) throw valueError("expected '}' before end of string")
        const field = format.slice(i + 1, j - 1)
        out += formatField(field, depth)
        checkString(out.length, () => `formatting ${brief(format)}`)
        i = j
        continue
      }
      if (char === '}') {
        if (format[i + 1] === '}') {
          out += '}'
          i += 2
          continue
        }
        throw valueError("Single '}' encountered in format string")
      }
      out += char
      i++
    }
    return out
  }

  /** The positional argument of a field, numbered as CPython's str.format numbers them. */
  function positional(args_: unknown[], name: string): unknown {
    if (name === '') {
      if (numbering === 'manual') throw valueError('cannot switch from manual field specification to automatic field numbering')
      numbering = 'auto'
      if (auto >= args_.length) throw indexOutOfRange(auto, false)
      return args_[auto++]
    }
    if (numbering === 'auto') throw valueError('cannot switch from automatic field numbering to manual field specification')
    numbering = 'manual'
    const index = Number(name)
    if (index >= args_.length) throw indexOutOfRange(index, false)
    return args_[index]
  }

  /** string.Formatter's: a field named '' is the next argument, all digits a manual one (both checked on the whole field name). */
  function formatterValue(args_: unknown[], head: string, name: string): unknown {
    if (head === '') {
      if (numbering === 'manual') throw valueError('cannot switch from manual field specification to automatic field numbering')
      numbering = 'auto'
      if (auto >= args_.length) throw indexOutOfRange(auto, true)
      return args_[auto++]
    }
    if (/^\d+$/.test(head)) {
      if (auto > 0) throw valueError('cannot switch from manual field specification to automatic field numbering')
      numbering = 'manual'
    }
    if (!/^\d+$/.test(name)) return fieldOf(kwargs, name)
    const index = Number(name)
    if (index >= args_.length) throw indexOutOfRange(index, true)
    return args_[index]
  }

  function formatField(field: string, depth: number): string {
    const colon = field.search(/[:]/)
    let head = colon >= 0 ? field.slice(0, colon) : field
    let spec = colon >= 0 ? field.slice(colon + 1) : ''
    let conversion: string | undefined
    const bang = head.lastIndexOf('!')
    if (bang >= 0) {
      conversion = head.slice(bang + 1)
      head = head.slice(0, bang)
    }
    const nameMatch = /^[^.[]*/.exec(head)!
    const name = nameMatch[0]
    let value: unknown
    if (args === null && (name === '' || /^\d+$/.test(name))) throw valueError('Format string contains positional fields')
    if (args === null) value = fieldOf(kwargs, name)
    else if (escape) value = formatterValue(args, head, name)
    else if (name === '' || /^\d+$/.test(name)) value = positional(args, name)
    else value = fieldOf(kwargs, name)
    const rest = head.slice(name.length)
    const parts = /\.([^.[]+)|\[([^\]]*)\]/g
    for (let part = parts.exec(rest); part; part = parts.exec(rest)) {
      if (part[1] !== undefined) value = lookup.attr(value, part[1])
      else value = lookup.item(value, /^\d+$/.test(part[2]!) ? Number(part[2]) : part[2])
    }
    if (spec.includes('{')) spec = formatWith(spec, depth - 1)
    if (conversion === 'r') value = pyRepr(value)
    else if (conversion === 'a') value = pyAscii(value)
    else if (conversion === 's') value = pyStr(value)
    if (!escape) return formatSpec(value, spec)
    if (value instanceof Markup) {
      if (spec !== '') throw valueError('Unsupported format specification for Markup.')
      return value.text
    }
    return escapeHtml(formatSpec(value, spec))
  }
}
