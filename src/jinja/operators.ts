/**
 * Python's arithmetic on the template value model (values.ts): `+ - * / // % **`, unary
 * `-`/`+`.
 *
 * Contract:
 * - int op int stays an int, exact at any size (bigint beyond 2^53, normalized back when safe);
 *   any float operand makes a float (boxed when integral: `4 / 2` is `2.0`); bool counts as int.
 * - `/` is true division (always a float); `//` and `%` floor, with the sign of the divisor
 *   (`-1 % 3 == 2`, `-7 // 2 == -4`), floats as CPython computes them; `**` of ints with a
 *   non-negative exponent is exact, otherwise a float.
 * - str/list/tuple `+` concatenate, `*` repeats them by an int; `str % args` is printf-style
 *   formatting (format.ts); a Markup operand escapes the other (markupsafe). A result longer
 *   than limits.ts allows is refused before it is made (`'x' * 10000000000 would make a string
 *   of 10000000000 characters, more than the limit of 16777216`).
 * - An int result of `*` or `**` past limits.ts `MAX_INT_BITS` is refused before it is computed.
 * - Errors: `ZeroDivisionError`, and `TypeError` with Python's text
 *   (`unsupported operand type(s) for -: 'str' and 'str'`, `can only concatenate str …`).
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError } from './errors.js'
import { escapeHtml } from './escape.js'
import { percentFormat } from './format.js'
import { escapedArgument } from './markup.js'
import {
  Markup,
  PyComplex,
  Undefined,
  fail,
  float,
  isString,
  isTuple,
  normalizeInt,
  textOf,
  tuple,
  typeName,
} from './values.js'
import type { BinaryOperator } from './nodes.js'
import { MAX_INT_BITS, MAX_STRING_LENGTH, brief, checkList, checkString, intTooLarge, stringTooLong } from './limits.js'
import { ticks } from './render-budget.js'

type Num = { int: true; value: bigint } | { int: false; value: number }

/** The number of a numeric operand, or undefined. */
function num(value: unknown): Num | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? { int: true, value: BigInt(value) } : { int: false, value }
  if (typeof value === 'bigint') return { int: true, value }
  if (value instanceof PythonFloat) return { int: false, value: value.value }
  if (typeof value === 'boolean') return { int: true, value: value ? 1n : 0n }
  return undefined
}

const divisionByZero = (message: string) => new TemplateRuntimeError(message, 'ZeroDivisionError')

function unsupported(op: string, a: unknown, b: unknown): never {
  throw typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`)
}

function check(a: unknown, b: unknown): void {
  if (a instanceof Undefined) fail(a)
  if (b instanceof Undefined) fail(b)
}

export function binary(op: BinaryOperator, a: unknown, b: unknown): unknown {
  switch (op) {
    case '+':
      return add(a, b)
    case '-':
      return subtract(a, b)
    case '*':
      return multiply(a, b)
    case '/':
      return divide(a, b)
    case '//':
      return floorDivide(a, b)
    case '%':
      return modulo(a, b)
    default:
      return power(a, b)
  }
}

export function add(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') {
    const sum = a + b
    if (Number.isInteger(a) && Number.isInteger(b)) return Number.isSafeInteger(sum) ? sum : normalizeInt(BigInt(a) + BigInt(b))
    return float(sum)
  }
  if (typeof a === 'string' && typeof b === 'string') {
    if (a.length + b.length > MAX_STRING_LENGTH) throw stringTooLong(`${brief(a)} + ${brief(b)}`, a.length + b.length)
    return a + b
  }
  check(a, b)
  if (a instanceof Markup || b instanceof Markup) {
    if ((typeof a === 'string' || a instanceof Markup) && (typeof b === 'string' || b instanceof Markup)) {
      const joined = markupText(a) + markupText(b)
      checkString(joined.length, () => `${brief(markupText(a))} + ${brief(markupText(b))}`)
      return new Markup(joined)
    }
  }
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    checkList(a.length + b.length, () => `${brief(a)} + ${brief(b)}`)
    ticks((a.length + b.length) >> 4)
    const joined = a.concat(b)
    return isTuple(a) ? tuple(joined) : joined
  }
  const x = num(a)
  const y = num(b)
  if (x && y) return x.int && y.int ? normalizeInt(x.value + y.value) : float(Number(x.value) + Number(y.value))
  if (typeof a === 'string') throw typeError(`can only concatenate str (not "${typeName(b)}") to str`)
  if (Array.isArray(a) && !isTuple(a)) throw typeError(`can only concatenate list (not "${typeName(b)}") to list`)
  return unsupported('+', a, b)
}

function markupText(value: string | Markup): string {
  return value instanceof Markup ? value.text : escapeHtml(value)
}

export function subtract(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') {
    const difference = a - b
    if (Number.isInteger(a) && Number.isInteger(b)) {
      return Number.isSafeInteger(difference) ? difference : normalizeInt(BigInt(a) - BigInt(b))
    }
    return float(difference)
  }
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (x && y) return x.int && y.int ? normalizeInt(x.value - y.value) : float(Number(x.value) - Number(y.value))
  return unsupported('-', a, b)
}

export function multiply(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') {
    const product = a * b
    if (Number.isInteger(a) && Number.isInteger(b)) {
      return Number.isSafeInteger(product) ? product : normalizeInt(BigInt(a) * BigInt(b))
    }
    return float(product)
  }
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (x && y) {
    if (!(x.int && y.int)) return float(Number(x.value) * Number(y.value))
    const bits = bitLength(x.value) + bitLength(y.value)
    if (bits > MAX_INT_BITS) throw intTooLarge(`multiplying two integers of ${bitLength(x.value)} and ${bitLength(y.value)} bits`, bits)
    return normalizeInt(x.value * y.value)
  }
  const repeat = (sequence: unknown, count: Num | undefined): unknown => {
    if (!count || !count.int) return undefined
    const times = count.value > 0n ? count.value : 0n
    const what = () => (sequence === a ? `${brief(a)} * ${count.value}` : `${count.value} * ${brief(b)}`)
    if (isString(sequence)) {
      const text = textOf(sequence)
      checkString(BigInt(text.length) * times, what)
      ticks(Number(times) * text.length >> 6)
      const repeated = times > 0n ? text.repeat(Number(times)) : ''
      return sequence instanceof Markup ? new Markup(repeated) : repeated
    }
    if (Array.isArray(sequence)) {
      checkList(BigInt(sequence.length) * times, what)
      const size = sequence.length * Number(times)
      ticks(size >> 4)
      const out = new Array<unknown>(size)
      for (let i = 0; i < size; i++) out[i] = sequence[i % sequence.length]
      return isTuple(sequence) ? tuple(out) : out
    }
    return undefined
  }
  const repeated = repeat(a, y) ?? repeat(b, x)
  if (repeated !== undefined) return repeated
  // Markup.__mul__/__rmul__ call str.__mul__ with the other operand, which must be an index.
  if (a instanceof Markup || b instanceof Markup) throw typeError(`'${typeName(a instanceof Markup ? b : a)}' object cannot be interpreted as an integer`)
  // Python repeats the left operand when it is a sequence (str, list, tuple), else the right one.
  const sequence = (value: unknown) => typeof value === 'string' || Array.isArray(value)
  if (sequence(a) || sequence(b)) throw typeError(`can't multiply sequence by non-int of type '${typeName(sequence(a) ? b : a)}'`)
  return unsupported('*', a, b)
}

export function divide(a: unknown, b: unknown): unknown {
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (!x || !y) return unsupported('/', a, b)
  if (y.value === 0n || y.value === 0) throw divisionByZero(x.int && y.int ? 'division by zero' : 'float division by zero')
  if (x.int && y.int && x.value % y.value === 0n) return float(Number(x.value / y.value))
  return float(Number(x.value) / Number(y.value))
}

export function floorDivide(a: unknown, b: unknown): unknown {
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (!x || !y) return unsupported('//', a, b)
  if (x.int && y.int) {
    if (y.value === 0n) throw divisionByZero('integer division or modulo by zero')
    return normalizeInt(floorDiv(x.value, y.value))
  }
  const [quotient] = floatDivmod(Number(x.value), Number(y.value))
  return float(quotient)
}

export function modulo(a: unknown, b: unknown): unknown {
  if (a instanceof Markup) {
    check(a, b)
    // markupsafe's Markup.__mod__ escapes what it formats.
    return new Markup(percentFormat(a.text, b, escapedArgument))
  }
  if (typeof a === 'string') {
    check(a, b)
    return percentFormat(a, b)
  }
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (!x || !y) return unsupported('%', a, b)
  if (x.int && y.int) {
    if (y.value === 0n) throw divisionByZero('integer division or modulo by zero')
    return normalizeInt(x.value - floorDiv(x.value, y.value) * y.value)
  }
  const [, remainder] = floatDivmod(Number(x.value), Number(y.value))
  return float(remainder)
}

export function power(a: unknown, b: unknown): unknown {
  check(a, b)
  const x = num(a)
  const y = num(b)
  if (!x || !y) return unsupported('** or pow()', a, b)
  if (x.int && y.int && y.value >= 0n) {
    // Python would compute it (for long, or until memory runs out): refuse a result past the bound.
    const bits = bitLength(x.value)
    if (bits > 1 && BigInt(bits - 1) * y.value > BigInt(MAX_INT_BITS)) throw intTooLarge(`${brief(a)} ** ${y.value}`, BigInt(bits - 1) * y.value)
    return normalizeInt(x.value ** y.value)
  }
  // int ** -n below the float range is 0.0 (or a tiny float): only small powers are computed exactly.
  if (x.int && y.int && x.value !== 0n && BigInt(bitLength(x.value)) * -y.value <= 1100n) {
    // int ** -n: 1 / base**n with one rounding (as C's pow gives it; JavaScript's ** may be 1 ulp off).
    const denominator = x.value ** -y.value
    const magnitude = denominator < 0n ? -denominator : denominator
    if (magnitude <= 9007199254740991n) return float(1 / Number(denominator))
  }
  const base = Number(x.value)
  const exponent = Number(y.value)
  if (base === 0 && exponent < 0) {
    throw divisionByZero('0.0 cannot be raised to a negative power')
  }
  if (base < 0 && Number.isFinite(exponent) && !Number.isInteger(exponent)) {
    // A negative base to a fractional power is complex in Python (CPython's c_pow).
    const length = Math.abs(base) ** exponent
    const phase = Math.atan2(0, base) * exponent
    return new PyComplex(length * Math.cos(phase), length * Math.sin(phase))
  }
  const result = base ** exponent
  if (!Number.isFinite(result) && Number.isFinite(base) && Number.isFinite(exponent)) {
    throw new TemplateRuntimeError("(34, 'Numerical result out of range')", 'OverflowError')
  }
  return float(result)
}

export function negate(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? (value === 0 ? 0 : -value) : -value
  if (value instanceof Undefined) fail(value)
  const x = num(value)
  if (!x) throw typeError(`bad operand type for unary -: '${typeName(value)}'`)
  return x.int ? normalizeInt(-x.value) : float(-x.value)
}

export function positive(value: unknown): unknown {
  if (value instanceof Undefined) fail(value)
  const x = num(value)
  if (!x) throw typeError(`bad operand type for unary +: '${typeName(value)}'`)
  return x.int ? normalizeInt(x.value) : float(x.value)
}

/** The bits of |value| (0 for 0). */
function bitLength(value: bigint): number {
  const magnitude = value < 0n ? -value : value
  if (magnitude <= 9007199254740991n) return magnitude === 0n ? 0 : Math.floor(Math.log2(Number(magnitude))) + 1
  return magnitude.toString(16).length * 4
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q
}

/** CPython's `float_divmod`. */
function floatDivmod(vx: number, wx: number): [number, number] {
  if (wx === 0) throw divisionByZero('float floor division by zero')
  let mod = vx % wx
  let div = (vx - mod) / wx
  if (mod) {
    if (wx < 0 !== mod < 0) {
      mod += wx
      div -= 1
    }
  } else {
    mod = wx < 0 ? -0 : 0
  }
  let floordiv: number
  if (div) {
    floordiv = Math.floor(div)
    if (div - floordiv > 0.5) floordiv += 1
  } else {
    floordiv = vx / wx < 0 ? -0 : 0
  }
  return [floordiv, mod]
}
