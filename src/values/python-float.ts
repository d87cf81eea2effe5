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
 * A box's `toJSON()` is its number, so `JSON.stringify` (the wire, caches) writes `2`: code that
 * must keep the float kind writes JSON with values/python-json.ts instead.
 */

export class PythonFloat {
  constructor(readonly value: number) {}

  valueOf(): number {
    return this.value
  }

  toJSON(): number {
    return this.value
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
