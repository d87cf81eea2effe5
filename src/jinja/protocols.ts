/**
 * Python's protocols on the template value model (values.ts): truth, equality, ordering,
 * membership, iteration, length and hashing.
 *
 * Contract:
 * - `truthy` is `bool()`: empty strings, bytes, lists, dicts, ranges, zero and None are false; a strict
 *   Undefined raises, a plain one is false.
 * - `pyEq` is `==` (numbers across int, float, bool and bigint exactly; lists and tuples by
 *   items, never equal to each other; dicts by keys and values, either representation of
 *   dict.ts; `keys()` and `items()` views as sets); `pyLess` is `<` (numbers,
 *   strings by code point, lists/tuples lexicographically; else Python's TypeError
 *   `'<' not supported between instances of 'int' and 'str'`); `pyCompare` any comparison
 *   operator, `in` and `not in` included; `contains` is `in`.
 * - `iterate` is `iter()` as a list (strings by code point, dicts by key, views, ranges,
 *   one-shot iterators used up); `pyLen` is `len()`. Hashing is dict.ts `hashKey`.
 * - Ranges are lazy: `in`, `==`, `len`, hashing without items (`rangeIndex`); `iterate` of a range
 *   longer than limits.ts `MAX_LIST_LENGTH` is refused. Loops over items pass check points of the
 *   render's time budget (render-budget.ts).
 */
import { compareCodePoints } from './code-point-order.js'
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError } from './errors.js'
import { tick, ticks } from './render-budget.js'
import { dictGet, dictHas, dictItems, dictKeys, dictSize } from './dict.js'
import { DictBase, DictView, Markup, Namespace, PyComplex, PyIterator, PyRange, Undefined, fail, isDict, isString, isTuple, textOf, typeName } from './values.js'

/** Python's `bool(value)`. */
export function truthy(value: unknown): boolean {
  switch (typeof value) {
    case 'boolean':
      return value
    case 'string':
      return value.length > 0
    case 'number':
      return value !== 0
    case 'bigint':
      return value !== 0n
  }
  if (value === null) return false
  if (value instanceof Undefined) return value.strict ? fail(value) : false
  if (Array.isArray(value)) return value.length > 0
  if (value instanceof PythonFloat) return value.value !== 0
  if (value instanceof Uint8Array) return value.length > 0
  if (value instanceof Markup) return value.text.length > 0
  if (value instanceof PyComplex) return value.real !== 0 || value.imag !== 0
  if (value instanceof DictView) return dictSize(value.dict) > 0
  if (value instanceof PyRange) return value.length > 0
  if (value instanceof DictBase) return value.size > 0
  if (isDict(value)) {
    for (const _ in value) return true
    return false
  }
  return true
}

/** The number of a numeric value (bool, int, float), or undefined for other values. */
function numeric(value: unknown): number | bigint | undefined {
  if (typeof value === 'number' || typeof value === 'bigint') return value
  if (value instanceof PythonFloat) return value.value
  if (typeof value === 'boolean') return value ? 1 : 0
  return undefined
}

/** Python's `a == b`. */
export function pyEq(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a)
  if (a instanceof Undefined) return a.strict ? fail(a) : b instanceof Undefined && !b.strict
  if (b instanceof Undefined) return b.strict ? fail(b) : false
  if (a instanceof PyComplex || b instanceof PyComplex) {
    const [c, other] = a instanceof PyComplex ? [a, b] : [b as PyComplex, a]
    if (other instanceof PyComplex) return c.real === other.real && c.imag === other.imag
    const n = numeric(other)
    return n !== undefined && c.imag === 0 && c.real == n
  }
  const x = numeric(a)
  if (x !== undefined) {
    const y = numeric(b)
    // Loose equality compares a bigint and a number exactly.
    return y !== undefined && x == y
  }
  if (isString(a)) return isString(b) && textOf(a) === textOf(b)
  if (a instanceof Uint8Array) return b instanceof Uint8Array && a.length === b.length && a.every((byte, i) => byte === b[i])
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || isTuple(a) !== isTuple(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) {
      tick()
      if (!pyEq(a[i], b[i])) return false
    }
    return true
  }
  if (a instanceof PyRange && b instanceof PyRange) return a.equals(b)
  if (isDict(a)) {
    if (!isDict(b) || dictSize(a) !== dictSize(b)) return false
    for (const [key, value] of dictItems(a)) {
      tick()
      const other = dictGet(b, key)
      if (other === undefined || !pyEq(value, other)) return false
    }
    return true
  }
  // Keys and items views compare as sets; a values view only to itself.
  if (a instanceof DictView && b instanceof DictView && a.view === b.view && a.view !== 'values') {
    if (dictSize(a.dict) !== dictSize(b.dict)) return false
    return a.list().every((item) => (tick(), contains(b, item)))
  }
  return false
}

/** Python's `a < b` (raises TypeError for unorderable types). */
export function pyLess(a: unknown, b: unknown, op = '<'): boolean {
  if (a instanceof Undefined) fail(a)
  if (b instanceof Undefined) fail(b)
  const x = numeric(a)
  const y = numeric(b)
  if (x !== undefined && y !== undefined) return x < y
  if (isString(a) && isString(b)) {
    const x = textOf(a)
    const y = textOf(b)
    // Comparing long strings is work: one unit per 64 characters compared at most.
    if (x.length > 64 && y.length > 64) ticks(Math.min(x.length, y.length) >> 6)
    return compareCodePoints(x, y) < 0
  }
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    const n = Math.min(a.length, b.length)
    for (let i = 0; i < n; i++) {
      tick()
      if (!pyEq(a[i], b[i])) return pyLess(a[i], b[i], op)
    }
    return a.length < b.length
  }
  throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`)
}

/** Python's comparison operators. */
export function pyCompare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==':
      return pyEq(a, b)
    case '!=':
      return !pyEq(a, b)
    case '<':
      return pyLess(a, b, '<')
    case '>':
      return pyLess(b, a, '>')
    case '<=':
      return pyLessOrEqual(a, b, '<=')
    case '>=':
      return pyLessOrEqual(b, a, '>=')
    case 'in':
      return contains(b, a)
    default:
      return !contains(b, a)
  }
}

function pyLessOrEqual(a: unknown, b: unknown, op: string): boolean {
  const x = numeric(a)
  const y = numeric(b)
  if (x !== undefined && y !== undefined) return x <= y
  return pyLess(a, b, op) || pyEq(a, b)
}

/** Python's `item in container`. */
export function contains(container: unknown, item: unknown): boolean {
  if (item instanceof Undefined) fail(item)
  if (typeof container === 'string' || container instanceof Markup) {
    if (!isString(item)) throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`)
    return textOf(container).includes(textOf(item))
  }
  if (Array.isArray(container)) {
    for (const element of container) {
      tick()
      if (pyEq(element, item)) return true
    }
    return false
  }
  if (isDict(container)) return dictHas(container, item)
  if (container instanceof DictView) {
    if (container.view === 'keys') return dictHas(container.dict, item)
    if (container.view === 'items') {
      // A pair whose key is in the dict with an equal value.
      if (!isTuple(item) || item.length !== 2) return false
      const value = dictGet(container.dict, item[0])
      return value !== undefined && pyEq(value, item[1])
    }
    return contains(container.list(), item)
  }
  if (container instanceof PyRange) return rangeIndex(container, item) !== -1
  if (container instanceof Undefined) return container.strict ? fail(container) : false
  if (container instanceof PyIterator) {
    // Python's `in` consumes an iterator up to the first equal item, and no further.
    const done = {}
    for (let next = container.next(done); next !== done; next = container.next(done)) if (pyEq(next, item)) return true
    return false
  }
  if (container instanceof Namespace) return container.attrs.has(String(item))
  throw typeError(`argument of type '${typeName(container)}' is not iterable`)
}

/**
 * The index of `item` in a range, or -1: Python compares ints in O(1); anything else equals an
 * item only when it is an integral number (`2.0`, `True`, `(2+0j)`).
 */
export function rangeIndex(range: PyRange, item: unknown): number | bigint {
  const n = item instanceof PyComplex ? (item.imag === 0 ? item.real : undefined) : numeric(item)
  if (n === undefined) return -1
  if (typeof n === 'bigint') return range.indexOf(n)
  if (!Number.isInteger(n)) return -1
  return range.indexOf(Number.isSafeInteger(n) ? n : BigInt(n))
}

const SURROGATE = /[\uD800-\uDFFF]/

/** The items of an iterable, as Python's `iter()` yields them (a fresh array or the list itself). */
export function iterate(value: unknown): unknown[] {
  if (Array.isArray(value)) return value
  if (typeof value === 'string') {
    ticks(value.length >> 6)
    return SURROGATE.test(value) ? Array.from(value) : value.split('')
  }
  if (value instanceof Undefined) return value.strict ? fail(value) : []
  if (isDict(value)) return dictKeys(value)
  if (value instanceof DictView || value instanceof PyRange) return value.list()
  if (value instanceof PyIterator) return value.drain()
  if (value instanceof Markup) return Array.from(value.text)
  if (value instanceof Uint8Array) return Array.from(value)
  throw typeError(`'${typeName(value)}' object is not iterable`)
}

export function isIterable(value: unknown): boolean {
  return (
    Array.isArray(value) ||
    typeof value === 'string' ||
    value instanceof Markup ||
    value instanceof Uint8Array ||
    isDict(value) ||
    value instanceof DictView ||
    value instanceof PyRange ||
    value instanceof PyIterator
  )
}

/** Python's `len(value)`. */
export function pyLen(value: unknown): number {
  if (typeof value === 'string') return SURROGATE.test(value) ? Array.from(value).length : value.length
  if (Array.isArray(value)) return value.length
  if (value instanceof Undefined) return value.strict ? fail(value) : 0
  if (value instanceof Markup) return pyLen(value.text)
  if (isDict(value)) return dictSize(value)
  if (value instanceof DictView) return dictSize(value.dict)
  if (value instanceof PyRange) {
    if (typeof value.length === 'bigint' && value.length > 9223372036854775807n) {
      throw new TemplateRuntimeError('Python int too large to convert to C ssize_t', 'OverflowError')
    }
    return value.length as number
  }
  if (value instanceof Uint8Array) return value.length
  throw typeError(`object of type '${typeName(value)}' has no len()`)
}

/** Code points of a string (Python indexes strings by code point). */
export function codePoints(text: string): string[] | string {
  return SURROGATE.test(text) ? Array.from(text) : text
}
