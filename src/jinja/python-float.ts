/**
 * Python's two number kinds, carried in JavaScript values (SPEC §11: `2.0` and `1e3` stay floats).
 *
 * Contract (the value model every room shares: YAML front matter, the document index, SQL rows,
 * templates, JSON text):
 * - a JavaScript `number` that is an integer stands for a Python `int`; any other `number`
 *   (`1.5`, `NaN`, `Infinity`) for a Python `float`;
 * - a `PythonFloat` boxes a float whose value is integral (`2.0`, `1e3`, `-0.0`): JavaScript's
 *   `2.0` is `2`, so without the box it would print and serialize as an int;
 * - a `bigint` stands for an int outside the safe range (beyond ±(2^53 − 1)), kept exact;
 * - `pythonFloat(n)` is the float `n` in this model (boxed only when integral), `isPythonFloat(v)`
 *   tells a box, `numberOf(v)` is the plain JavaScript number of any of the three.
 * A box's `toJSON()` is its number, so `JSON.stringify` writes `2`: code that must keep the float
 * kind writes JSON with python-json.ts (or values/wire-json.ts) instead. Its `toString()` is
 * Python's `str()` of the float (`2.0`), so text made by `String(box)` (templates) reads as Python's.
 * `pythonFloatRepr(n)` is Python's `repr(float)` of any JavaScript number.
 */

let serialized = 0

/** How many times a box was written by `JSON.stringify` (its `toJSON`): lets values/wire-json.ts skip a slow path. */
export function pythonFloatsSerialized(): number {
  return serialized
}

export class PythonFloat {
  constructor(readonly value: number) {}

  valueOf(): number {
    return this.value
  }

  toJSON(): number {
    serialized++
    return this.value
  }

  toString(): string {
    return pythonFloatRepr(this.value)
  }
}

/** The float `n` in the value model: boxed when its value is integral, else the plain number. */
export function pythonFloat(n: number): number | PythonFloat {
  return Number.isInteger(n) ? new PythonFloat(n) : n
}

export function isPythonFloat(value: unknown): value is PythonFloat {
  return value instanceof PythonFloat
}

/** The JavaScript number of an int, float or boxed float (a bigint is converted, possibly rounded). */
export function numberOf(value: number | bigint | PythonFloat): number {
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : value.value
}

/** Python's `repr(float)`: shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16. */
export function pythonFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Infinity) return 'Infinity'
  if (n === -Infinity) return '-Infinity'
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0'
  const sign = n < 0 ? '-' : ''
  const [mantissa = '', exponentText = '0'] = Math.abs(n).toExponential().split('e')
  const digits = mantissa.replace('.', '')
  const exponent = Number(exponentText)
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) return sign + '0.' + '0'.repeat(-exponent - 1) + digits
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0')
    const fraction = digits.slice(exponent + 1)
    return sign + whole + '.' + (fraction === '' ? '0' : fraction)
  }
  const head = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits
  const magnitude = String(Math.abs(exponent)).padStart(2, '0')
  return sign + head + 'e' + (exponent < 0 ? '-' : '+') + magnitude
}
