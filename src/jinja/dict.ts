/**
 * Python's dict for templates: `PyDict` (keys of any hashable type) and the operations every
 * module uses on a dict of either representation.
 *
 * Design: a Python dict is one of two JavaScript values (values.ts `Dict`).
 * - A plain object is a dict of string keys, as values arrive from the context (front matter,
 *   SQL rows, JSON, `params`, `this`: their keys are strings in the Python implementation too,
 *   since it reads them from JSON). They are not converted at the boundary and read as they
 *   are: `row.title` stays one property read (expression-compiler.ts), with no cost per access
 *   or per row.
 * - A `PyDict` is a dict the engine makes: a literal (`{1: 'a'}`), `dict()`, `namespace()`,
 *   `copy()`, `fromkeys()`. It is a Map from a slot (the key as Python hashes it) to the value,
 *   in insertion order; equal keys share a slot (`1`, `1.0` and `True`; a Markup and its text;
 *   tuples by their items), and the first key given is the one kept (`{1.0: 'a', 1: 'b'}` is
 *   `{1.0: 'b'}`). A str or int key is its own slot (no extra storage); a tuple, bytes, range or
 *   complex key gets a token of this dict; any other object is its own slot (hashed by identity).
 *   A literal is a PyDict whatever its keys (`{'a': 1}` too: its order is the literal's, and
 *   `x.a` on it is one Map lookup; rows are not literals).
 *   Lists, dicts and set-like views (`keys()`, `items()`) are unhashable (`TypeError:
 *   unhashable type: 'list'`); a strict Undefined raises its error, a plain one (an inline `if`
 *   without `else`) is one key (Jinja's `Undefined` hashes by its type).
 * - A plain object that is given a key that is not a string, or a new string key JavaScript
 *   would order before the others (`'1'`: an array index), becomes a `PyDict` in place (its
 *   prototype changed, its entries moved into the Map), so every reference to it sees Python's
 *   keys and order. Nothing else changes a plain object's kind.
 *
 * Contract:
 * - `new PyDict()` / `PyDict.fromEntries(pairs)`; `get` (undefined when missing), `has`, `set`,
 *   `delete`, `clear`, `size`, `keys`, `values`, `entries`; each raises Python's
 *   TypeError for an unhashable key.
 * - `dictSize`, `dictKeys`, `dictValues`, `dictItems`, `dictGet`, `dictHas`, `dictSet`,
 *   `dictDelete`, `dictClear`, `dictCopy` work on either representation; `dictFind` is `dictGet`
 *   that gives undefined for an unhashable key (Jinja's getitem, which turns a TypeError into
 *   an undefined). A string key on a plain object is an own-property read; any other key finds
 *   nothing there (after its hashability is checked).
 * - `dictKeywords(dict, out)` is a dict as `**kwargs`: its keys must be strings
 *   (`TypeError: keywords must be strings`). `dict.update()` (and `dict()`, `namespace()`) is
 *   methods.ts `dictUpdate`.
 * - `hashKey(value)` is a string equal for values Python hashes and compares equal (`1`, `1.0`,
 *   `True`), raising for unhashable values; used where values are grouped (`unique`).
 * - NaN keys share one slot (Python tells NaN objects apart by identity).
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError } from './errors.js'
import { tick } from './render-budget.js'
import { DictBase, DictView, Markup, PyComplex, PyRange, Undefined, fail, isDict, isPlainDict, isString, isTuple, textOf, type Dict } from './values.js'

export type { Dict } from './values.js'

const MAX_SAFE = 9007199254740991n

/** A number as a slot: ints exact (a bigint past 2^53, as the value model keeps them). */
function numberSlot(n: number): number | bigint {
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? BigInt(n) : n
}

/** The slot of a bigint: a number when it is safe (equal to the number key of the same int). */
function bigintSlot(n: bigint): number | bigint {
  return n >= -MAX_SAFE && n <= MAX_SAFE ? Number(n) : n
}

const unhashable = (value: unknown): never => {
  throw typeError(`unhashable type: '${value instanceof DictView ? `dict_${value.view}` : Array.isArray(value) ? 'list' : 'dict'}'`)
}

/** Whether Python hashes `value` by identity (no `__eq__` of its own): a callable, a loop, a namespace, … */
function hashedByIdentity(value: object): boolean {
  if (Array.isArray(value)) return isTuple(value) ? false : unhashable(value)
  if (value instanceof Undefined) return value.strict ? fail(value) : false
  if (isDict(value)) return unhashable(value)
  if (value instanceof DictView) return value.view === 'values' ? true : unhashable(value)
  return !(value instanceof Uint8Array || value instanceof PyRange || value instanceof PyComplex)
}

const identities = new WeakMap<object, number>()
let nextIdentity = 1

/** A string equal for values Python hashes and compares equal (`1`, `1.0`, `True`); raises for unhashable values. */
export function hashKey(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return 's' + value
    case 'number':
      return 'n' + String(numberSlot(value))
    case 'bigint':
      return 'n' + value.toString()
    case 'boolean':
      return value ? 'n1' : 'n0'
    case 'undefined':
      return 'N'
  }
  if (value === null) return 'N'
  if (value instanceof PythonFloat) return 'n' + String(numberSlot(value.value))
  if (value instanceof Markup) return 's' + value.text
  if (value instanceof PyComplex) return value.imag === 0 ? hashKey(value.real) : `c${value.real},${value.imag}`
  if (value instanceof Uint8Array) return 'b' + Array.from(value, (byte) => byte.toString(16).padStart(2, '0')).join('')
  if (value instanceof PyRange) return value.hashKey()
  if (value instanceof Undefined && !value.strict) return 'U'
  if (!hashedByIdentity(value as object)) {
    // A tuple (what is left that hashes by value).
    return 't(' + (value as unknown[]).map((item) => (tick(), hashKey(item))).join(',') + ')'
  }
  let id = identities.get(value as object)
  if (id === undefined) identities.set(value as object, (id = nextIdentity++))
  return 'o' + id
}

/** The slot of a key hashed by value that is not a primitive (a tuple, bytes, a range, a complex number): one per dict and hash. */
class CompositeSlot {
  constructor(readonly hash: string) {}
}

/** No slot: the key is not in the dict (a composite key the dict never had). */
const NO_SLOT = Symbol('no slot')

/** A dict of any hashable keys (see the header). */
export class PyDict extends DictBase {
  /** Slot → value, in insertion order. */
  private slots = new Map<unknown, unknown>()
  /** Slot → key, for the keys that are not their own slot (`True`, `2.0`, Markup, tuples, bigints as numbers). */
  private originals: Map<unknown, unknown> | undefined = undefined
  /** Hash → slot of the composite keys (tuples, bytes, ranges, complex numbers). */
  private composites: Map<string, CompositeSlot> | undefined = undefined

  static fromEntries(entries: Iterable<readonly [unknown, unknown]>): PyDict {
    const dict = new PyDict()
    for (const [key, value] of entries) dict.set(key, value)
    return dict
  }

  /** Turns the plain object into a PyDict in place (every reference to it sees the change): see the header. */
  static adopt(object: Record<string, unknown>): PyDict {
    const entries = Object.entries(object)
    for (const key of Object.keys(object)) delete object[key]
    Object.setPrototypeOf(object, PyDict.prototype)
    const dict = object as unknown as PyDict
    dict.slots = new Map(entries)
    dict.originals = undefined
    dict.composites = undefined
    return dict
  }

  /** The slot of `key` (made when `create`; `NO_SLOT` when it is a composite the dict has not). */
  private slot(key: unknown, create: boolean): unknown {
    switch (typeof key) {
      case 'string':
        return key
      case 'number':
        return numberSlot(key)
      case 'bigint':
        return bigintSlot(key)
      case 'boolean':
        return key ? 1 : 0
      case 'undefined':
        return null
    }
    if (key === null) return null
    if (key instanceof PythonFloat) return numberSlot(key.value)
    if (key instanceof Markup) return key.text
    if (key instanceof PyComplex && key.imag === 0) return numberSlot(key.real)
    if (hashedByIdentity(key as object)) return key
    const hash = hashKey(key)
    let slot = this.composites?.get(hash)
    if (slot === undefined) {
      if (!create) return NO_SLOT
      slot = new CompositeSlot(hash)
      ;(this.composites ??= new Map()).set(hash, slot)
    }
    return slot
  }

  get size(): number {
    return this.slots.size
  }

  get(key: unknown): unknown {
    const slot = this.slot(key, false)
    return slot === NO_SLOT ? undefined : this.slots.get(slot)
  }

  has(key: unknown): boolean {
    const slot = this.slot(key, false)
    return slot !== NO_SLOT && this.slots.has(slot)
  }

  set(key: unknown, value: unknown): void {
    const slot = this.slot(key, true)
    // An equal key already there stays (Python keeps the first key, the value changes).
    if (slot !== key && !this.slots.has(slot)) (this.originals ??= new Map()).set(slot, key)
    this.slots.set(slot, value)
  }

  delete(key: unknown): boolean {
    const slot = this.slot(key, false)
    if (slot === NO_SLOT || !this.slots.delete(slot)) return false
    this.originals?.delete(slot)
    if (slot instanceof CompositeSlot) this.composites!.delete(slot.hash)
    return true
  }

  clear(): void {
    this.slots.clear()
    this.originals = undefined
    this.composites = undefined
  }

  private keyOf(slot: unknown): unknown {
    const originals = this.originals
    return originals !== undefined && originals.has(slot) ? originals.get(slot) : slot
  }

  keys(): unknown[] {
    const out: unknown[] = []
    for (const slot of this.slots.keys()) out.push(this.keyOf(slot))
    return out
  }

  values(): unknown[] {
    return [...this.slots.values()]
  }

  entries(): [unknown, unknown][] {
    const out: [unknown, unknown][] = []
    for (const [slot, value] of this.slots) out.push([this.keyOf(slot), value])
    return out
  }
}

/** A string key JavaScript orders before the others in a plain object (an array index). */
const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/

function isArrayIndex(key: string): boolean {
  return ARRAY_INDEX.test(key) && Number(key) < 4294967295
}

/** Checks that `key` is hashable (the check a plain object, whose keys are strings, still owes Python). */
function checkHashable(key: unknown): void {
  if (typeof key === 'object' && key !== null) hashKey(key)
}

export function dictSize(dict: Dict): number {
  if (dict instanceof DictBase) return dict.size
  let count = 0
  for (const _ in dict) count++
  return count
}

export function dictKeys(dict: Dict): unknown[] {
  return dict instanceof DictBase ? dict.keys() : Object.keys(dict)
}

export function dictValues(dict: Dict): unknown[] {
  return dict instanceof DictBase ? dict.values() : Object.values(dict)
}

/** The `(key, value)` pairs of a dict (arrays: the caller makes tuples of them when it hands them out). */
export function dictItems(dict: Dict): [unknown, unknown][] {
  return dict instanceof DictBase ? dict.entries() : Object.entries(dict)
}

/** `dict[key]`, or undefined when the key is missing; raises for an unhashable key. */
export function dictGet(dict: Dict, key: unknown): unknown {
  if (dict instanceof DictBase) return dict.get(key)
  if (typeof key === 'string') return Object.hasOwn(dict, key) ? dict[key] : undefined
  if (key instanceof Markup) return Object.hasOwn(dict, key.text) ? dict[key.text] : undefined
  checkHashable(key)
  return undefined
}

/** `dict[key]`, or undefined when it is missing or the key is unhashable (Jinja's getitem). */
export function dictFind(dict: Dict, key: unknown): unknown {
  if (typeof key === 'string' && !(dict instanceof DictBase)) return Object.hasOwn(dict, key) ? dict[key] : undefined
  try {
    return dictGet(dict, key)
  } catch (error) {
    if (error instanceof TemplateRuntimeError && error.pythonType === 'TypeError') return undefined
    throw error
  }
}

/** `key in dict`; raises for an unhashable key. */
export function dictHas(dict: Dict, key: unknown): boolean {
  if (dict instanceof DictBase) return dict.has(key)
  if (isString(key)) return Object.hasOwn(dict, textOf(key))
  checkHashable(key)
  return false
}

/** `dict[key] = value` (a plain object given a key it cannot hold in Python's order becomes a PyDict). */
export function dictSet(dict: Dict, key: unknown, value: unknown): void {
  if (dict instanceof DictBase) return dict.set(key, value)
  if (isString(key)) {
    const text = textOf(key)
    // `__proto__` is a key like any other (assigned, it would be the object's prototype).
    if (Object.hasOwn(dict, text) || (!isArrayIndex(text) && text !== '__proto__')) {
      dict[text] = value
      return
    }
  }
  checkHashable(key)
  PyDict.adopt(dict).set(key, value)
}

/** `del dict[key]` when it is there; whether it was. */
export function dictDelete(dict: Dict, key: unknown): boolean {
  if (dict instanceof DictBase) return dict.delete(key)
  if (isString(key)) {
    const text = textOf(key)
    if (!Object.hasOwn(dict, text)) return false
    delete dict[text]
    return true
  }
  checkHashable(key)
  return false
}

export function dictClear(dict: Dict): void {
  if (dict instanceof DictBase) return dict.clear()
  for (const key of Object.keys(dict)) delete dict[key]
}

/** `dict.copy()`: a new PyDict of the same items. */
export function dictCopy(dict: Dict): PyDict {
  return PyDict.fromEntries(dictItems(dict))
}

/** A dict given as `**kwargs`, into `out`: its keys must be strings. */
export function dictKeywords(dict: Dict, out: Record<string, unknown>): Record<string, unknown> {
  if (isPlainDict(dict) && !Object.hasOwn(dict, '__proto__')) return Object.assign(out, dict)
  for (const [key, value] of dictItems(dict)) {
    if (!isString(key)) throw typeError('keywords must be strings')
    // Defined, not assigned: a `__proto__` keyword stays a keyword.
    Object.defineProperty(out, textOf(key), { value, writable: true, enumerable: true, configurable: true })
  }
  return out
}
