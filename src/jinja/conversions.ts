/**
 * Python's `int()`, `float()` and `round()` as Jinja's `int`, `float` and `round` filters use them.
 *
 * Contract:
 * - `toInt(value)`: ints stay, floats truncate (OverflowError for inf/nan), bools are 0/1, strings
 *   are parsed as `int(text)`; `parseIntText(text, base)` is `int(text, base)` (whitespace,
 *   signs, `_` between digits, `0x`/`0o`/`0b` prefixes for their base or base 0; Python 3.11's
 *   limit of 4300 digits for bases that are not powers of two).
 * - `toFloat(value)`: `float(value)` (strings: digits with `_`, exponents, `inf`, `nan`).
 * - `catchConversion(run, fallback)` returns the fallback for Python's TypeError, ValueError and
 *   OverflowError, as the filters' `default` argument does.
 * - `pyRound(value, digits)`: `round()`; ints stay ints (ties to even at negative digits), floats
 *   round exactly (format.ts `roundDecimal`) and stay floats.
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { roundDecimal } from './format.js'
import { float, isString, normalizeInt, pyRepr, textOf, typeName } from './values.js'

export function toInt(value: unknown): number | bigint {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TemplateRuntimeError('cannot convert float infinity to integer', 'OverflowError')
    return normalizeInt(BigInt(Math.trunc(value)))
  }
  if (typeof value === 'bigint') return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof PythonFloat) return toInt(value.value)
  if (isString(value)) return parseIntText(textOf(value), 10)
  throw typeError(`int() argument must be a string, a bytes-like object or a real number, not '${typeName(value)}'`)
}

const INT_DIGITS: Record<number, RegExp> = { 2: /^[01]+(_[01]+)*$/, 8: /^[0-7]+(_[0-7]+)*$/, 10: /^\d+(_\d+)*$/, 16: /^[\da-f]+(_[\da-f]+)*$/i }

/** Python's `int(text, base)`. */
export function parseIntText(input: string, base: number): number | bigint {
  let text = input.trim()
  let sign = 1n
  if (text.startsWith('-') || text.startsWith('+')) {
    if (text[0] === '-') sign = -1n
    text = text.slice(1)
  }
  let radix = base
  const prefix = /^0([box])_?/i.exec(text)
  if (base === 0) {
    if (prefix) {
      radix = prefix[1]!.toLowerCase() === 'b' ? 2 : prefix[1]!.toLowerCase() === 'o' ? 8 : 16
      text = text.slice(prefix[0].length)
    } else {
      radix = 10
      if (/^0+[1-9]/.test(text)) throw valueError(`invalid literal for int() with base 0: ${pyRepr(input)}`)
    }
  } else if (prefix && ((base === 16 && /x/i.test(prefix[1]!)) || (base === 8 && /o/i.test(prefix[1]!)) || (base === 2 && /b/i.test(prefix[1]!)))) {
    text = text.slice(prefix[0].length)
  }
  const pattern = INT_DIGITS[radix] ?? new RegExp(`^[0-9a-z]+$`, 'i')
  if (!pattern.test(text)) throw valueError(`invalid literal for int() with base ${base}: ${pyRepr(input)}`)
  const digits = text.replaceAll('_', '').toLowerCase()
  // Bases 2, 8 and 16 parse natively (linear); others digit by digit (quadratic), which Python
  // 3.11 allows up to 4300 digits only.
  const native = radix === 16 ? '0x' : radix === 8 ? '0o' : radix === 2 ? '0b' : ''
  if (native) return normalizeInt(sign * BigInt(native + digits))
  if (digits.length > 4300) {
    throw valueError(`Exceeds the limit (4300 digits) for integer string conversion: value has ${digits.length} digits; use sys.set_int_max_str_digits() to increase the limit`)
  }
  if (radix === 10) return normalizeInt(sign * BigInt(digits))
  let value = 0n
  for (const digit of digits) value = value * BigInt(radix) + BigInt(parseInt(digit, 36))
  return normalizeInt(sign * value)
}

/** Python's `float(value)`. */
export function toFloat(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint') return Number(value)
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof PythonFloat) return value.value
  if (isString(value)) {
    const text = textOf(value).trim().toLowerCase()
    if (/^[+-]?(inf|infinity)$/.test(text)) return text.startsWith('-') ? -Infinity : Infinity
    if (/^[+-]?nan$/.test(text)) return NaN
    if (/^[+-]?((\d+(_\d+)*)(\.(\d+(_\d+)*)?)?|\.\d+(_\d+)*)(e[+-]?\d+(_\d+)*)?$/.test(text)) return Number(text.replaceAll('_', ''))
    throw valueError(`could not convert string to float: ${pyRepr(textOf(value))}`)
  }
  throw typeError(`float() argument must be a string or a real number, not '${typeName(value)}'`)
}

export function catchConversion<T>(run: () => T, fallback: T): T {
  try {
    return run()
  } catch (error) {
    if (error instanceof TemplateRuntimeError && ['TypeError', 'ValueError', 'OverflowError'].includes(error.pythonType)) return fallback
    throw error
  }
}

/** Python's `round(value, ndigits)`. */
export function pyRound(value: unknown, digits: unknown): unknown {
  const n = typeof digits === 'number' ? digits : Number(digits)
  if (typeof value === 'number' && Number.isInteger(value) || typeof value === 'bigint' || typeof value === 'boolean') {
    const int = BigInt(typeof value === 'boolean' ? Number(value) : value)
    if (n >= 0) return normalizeInt(int)
    const unit = 10n ** BigInt(-n)
    let q = int / unit
    let r = int % unit
    if (r < 0n) {
      r += unit
      q -= 1n
    }
    const twice = r * 2n
    if (twice > unit || (twice === unit && q % 2n !== 0n)) q += 1n
    return normalizeInt(q * unit)
  }
  if (typeof value === 'number' || value instanceof PythonFloat) {
    return float(roundDecimal(value instanceof PythonFloat ? value.value : value, n))
  }
  throw typeError(`type ${typeName(value)} doesn't define __round__ method`)
}

