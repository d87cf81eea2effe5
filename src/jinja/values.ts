/**
 * Python values as Jinja templates see them: the runtime types and Python's `str`, `repr`,
 * truth, equality, ordering, hashing, `len` and iteration over JavaScript values.
 *
 * Contract (the value model of python-float.ts, extended for templates):
 * - None `null`, bool `boolean`, int an integral `number` (a `bigint` beyond 2^53, always
 *   normalized back to a number when safe: `normalizeInt`), float a non-integral `number` or a
 *   `PythonFloat` box, str `string`, list an array, tuple an array marked by `tuple()`, dict a
 *   plain object (string keys: values from the context) or a dict.ts `PyDict` (keys of any
 *   hashable type: dicts templates make); `DictBase` is what this module knows of the latter.
 * - Template-only types: `Undefined` (StrictUndefined: every use but `is defined`, `default`
 *   and friends raises `UndefinedError` with its hint), `Markup` (a safe string), `DictView`
 *   (`.items()`, `.keys()`, `.values()`), `PyRange`, `PyIterator` (a one-shot generator such as
 *   `map()` returns), `Namespace`, and `PyCallable` (macros, bound methods, globals).
 * - `pyStr`, `pyRepr` write what Python's `str()` / `repr()` write (floats as `2.0`, `inf`,
 *   strings quoted as Python quotes them, `[None, True]`, `{'k': 1}`, `(1,)`).
 * - bytes (an SQL BLOB: better-sqlite3 gives a `Buffer`) is any `Uint8Array`: `b'\x00A'`.
 * - `toOutput` is what `{{ }}` prints: Python's `str()`, as Jinja prints (`None`, `True`,
 *   `False`: SPEC §11).
 * - Truth, comparisons, iteration, length and hashing are in protocols.ts; `PyRange` is range.ts.
 * - `pyRepr` refuses a text past limits.ts `MAX_STRING_LENGTH` as it writes it, with a check
 *   point of the time budget per item.
 */
import { PythonFloat, pythonFloatRepr } from './python-float.js'
import { undefinedError } from './errors.js'
import { MAX_STRING_LENGTH, brief, stringPastLimit } from './limits.js'
import { PyRange } from './range.js'
import { tick, ticks } from './render-budget.js'

export { PyRange } from './range.js'

/**
 * An undefined value. Strict (StrictUndefined, what missing names and attributes give): every
 * use raises `UndefinedError(hint)`. Not strict (Jinja's plain `Undefined`, what an inline `if`
 * without `else` gives when false): prints empty, is false, iterates as empty, has length 0;
 * arithmetic and attributes still raise.
 */
export class Undefined {
  constructor(
    readonly hint: string,
    readonly strict = true,
  ) {}
}

/**
 * A frame's local before the frame assigns it (frame-symbols.ts): Undefined when read. `hidden`
 * (what the name had around the frames) is what an include, an import `with context` or a
 * `scoped` block sees (compiler.ts `contextView`), as Jinja drops a frame's missing locals from
 * the context it passes; a frame inside that starts the name undefined again keeps the same
 * `hidden`. `name` is the name it stands for.
 */
export class FrameLocal extends Undefined {
  constructor(
    readonly name: string,
    readonly hidden: unknown,
  ) {
    super(`'${name}' is undefined`)
  }
}

export function fail(value: Undefined): never {
  throw undefinedError(value.hint)
}

/** markupsafe's `Markup`: a string that needs no escaping. */
export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}

const TUPLE = Symbol('python tuple')

/** Marks `items` as a Python tuple (returns it). */
export function tuple<T>(items: T[]): T[] {
  ;(items as unknown as Record<symbol, boolean>)[TUPLE] = true
  return items
}

export function isTuple(value: unknown): value is unknown[] {
  return Array.isArray(value) && (value as unknown as Record<symbol, boolean>)[TUPLE] === true
}

/** A named tuple (`groupby`'s `_GroupTuple(grouper, list)`): a tuple with field names. */
export function namedTuple(typeName: string, fields: string[], values: unknown[]): unknown[] {
  const items = tuple(values)
  Object.defineProperty(items, NAMED, { value: { typeName, fields } })
  return items
}

const NAMED = Symbol('python namedtuple')

export function namedTupleInfo(value: unknown): { typeName: string; fields: string[] } | undefined {
  return Array.isArray(value) ? (value as unknown as Record<symbol, { typeName: string; fields: string[] }>)[NAMED] : undefined
}

/**
 * A dict whose keys may be any hashable value: dict.ts `PyDict`, the one kind there is (it has
 * the contract). Declared here so that `isDict`, `typeName`, `pyRepr` and dict views know it
 * without importing dict.ts, which builds on this module. Keys are Python keys (`1`, `True`,
 * `(1, 2)`), each lookup by Python's hash and equality; `undefined` is a missing key.
 */
export abstract class DictBase {
  abstract get size(): number
  abstract get(key: unknown): unknown
  abstract has(key: unknown): boolean
  abstract set(key: unknown, value: unknown): void
  abstract delete(key: unknown): boolean
  abstract clear(): void
  abstract keys(): unknown[]
  abstract values(): unknown[]
  abstract entries(): [unknown, unknown][]
}

/** A dict: a plain object (string keys) or a `DictBase` (any keys). */
export type Dict = Record<string, unknown> | DictBase

/** `dict.items()`, `.keys()`, `.values()`: live views of a dict. */
export class DictView {
  constructor(
    readonly dict: Dict,
    readonly view: 'items' | 'keys' | 'values',
  ) {}

  list(): unknown[] {
    const dict = this.dict
    if (dict instanceof DictBase) {
      if (this.view === 'keys') return dict.keys()
      if (this.view === 'values') return dict.values()
      return dict.entries().map((entry) => tuple(entry))
    }
    if (this.view === 'keys') return Object.keys(dict)
    if (this.view === 'values') return Object.values(dict)
    return Object.entries(dict).map((entry) => tuple(entry))
  }
}

/**
 * A one-shot iterator (a generator, `reversed()`, `map()`): iterating it uses it up. Its items
 * are a list, or a range (`reversed(range(…))`), which stays lazy: `drainRange()` gives it to a
 * `for` loop or `first` without making a list.
 */
export class PyIterator {
  private index = 0
  constructor(
    /** The items, or a generator making them one by one when they are asked for (Jinja's lazy filters). */
    private readonly items: unknown[] | PyRange | Iterator<unknown>,
    readonly typeName = 'generator',
  ) {}

  /** Its items are made one by one when asked for (a generator: Jinja's lazy filters), not a list or a range. */
  get lazy(): boolean {
    return !Array.isArray(this.items) && !(this.items instanceof PyRange)
  }

  /** The items not used yet, as a list (a range longer than `MAX_LIST_LENGTH` is refused); uses them up. */
  drain(): unknown[] {
    const items = this.items
    if (items instanceof PyRange) {
      const rest = this.drainRange()!
      return rest.list(() => `list(<${this.typeName} over ${rest.repr()}>)`)
    }
    if (!Array.isArray(items)) {
      const rest: unknown[] = []
      for (let step = items.next(); !step.done; step = items.next()) rest.push(step.value)
      return rest
    }
    const rest = this.index === 0 ? items : items.slice(this.index)
    this.index = items.length
    return rest
  }

  /** The items not used yet as a range when they are one (uses them up), else null. */
  drainRange(): PyRange | null {
    const items = this.items
    if (!(items instanceof PyRange)) return null
    const rest = this.index === 0 ? items : this.index >= items.length ? new PyRange(0, 0, 1) : items.slice(this.index, null, null)
    this.index = Infinity
    return rest
  }

  /** The next item (used up), or `done` when there is none. */
  next<T>(done: T): unknown {
    const items = this.items
    if (!(items instanceof PyRange) && !Array.isArray(items)) {
      const step = items.next()
      return step.done ? done : step.value
    }
    const length = items.length
    if (this.index >= length) return done
    return items instanceof PyRange ? items.at(this.index++) : items[this.index++]
  }
}

/**
 * A Python complex number, as `**` makes one from a negative base and a fractional exponent
 * (`(-8) ** 0.5`). Only printed, tested for truth and compared for equality: arithmetic on it
 * is not modelled (a TypeError).
 */
export class PyComplex {
  constructor(
    readonly real: number,
    readonly imag: number,
  ) {}
}

/** A complex part as Python's complex repr writes it (`repr`, without a trailing `.0`). */
function complexPart(n: number): string {
  const text = floatStr(n)
  return text.endsWith('.0') ? text.slice(0, -2) : text
}

/** Jinja's `namespace()`: its attributes are a dict (`namespace({1: 2})` keeps the key 1). */
export class Namespace {
  constructor(readonly attrs: DictBase) {}
}

/** Anything a template can call: `invoke(args, kwargs)` with Python's calling convention. */
export abstract class PyCallable {
  abstract readonly name: string
  abstract invoke(args: unknown[], kwargs: Record<string, unknown>): unknown
  repr(): string {
    return `<function ${this.name}>`
  }
}

/** A plain function as a Python callable. */
export class PyFunction extends PyCallable {
  constructor(
    readonly name: string,
    private readonly fn: (args: unknown[], kwargs: Record<string, unknown>) => unknown,
    private readonly display?: string,
  ) {
    super()
  }
  invoke(args: unknown[], kwargs: Record<string, unknown>): unknown {
    return this.fn(args, kwargs)
  }
  override repr(): string {
    return this.display ?? `<function ${this.name}>`
  }
}

/** A value with Python attributes of its own (loop, cycler, template module): `getAttribute`. */
export interface HasAttributes {
  getAttribute(name: string): unknown
  repr(): string
  toStr?(): string
}

export function hasAttributes(value: unknown): value is HasAttributes {
  return typeof value === 'object' && value !== null && typeof (value as HasAttributes).getAttribute === 'function'
}

/** A dict: a plain object (a context value) or a `DictBase` (dict.ts `PyDict`). */
export function isDict(value: unknown): value is Dict {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null || value instanceof DictBase
}

/** A plain object (a dict of string keys as the context gives it). */
export function isPlainDict(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** An integral result as the value model keeps it: a number when safe, else a bigint. */
export function normalizeInt(value: bigint): number | bigint {
  return value >= -9007199254740991n && value <= 9007199254740991n ? Number(value) : value
}

/** The float `n` in the value model (boxed when integral, so it prints `2.0`). */
export function float(n: number): number | PythonFloat {
  return Number.isInteger(n) ? new PythonFloat(n) : n
}

export function isInt(value: unknown): value is number | bigint {
  return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint'
}

export function isFloat(value: unknown): value is number | PythonFloat {
  return (typeof value === 'number' && !Number.isInteger(value)) || value instanceof PythonFloat
}

export function isNumber(value: unknown): boolean {
  return typeof value === 'number' || typeof value === 'bigint' || value instanceof PythonFloat || typeof value === 'boolean'
}

export function isString(value: unknown): value is string | Markup {
  return typeof value === 'string' || value instanceof Markup
}

/** The text of a str or Markup. */
export function textOf(value: string | Markup): string {
  return typeof value === 'string' ? value : value.text
}

export function floatStr(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  return pythonFloatRepr(n)
}

/** Python's `type(value).__name__`. */
export function typeName(value: unknown): string {
  if (value === null) return 'NoneType'
  switch (typeof value) {
    case 'boolean':
      return 'bool'
    case 'number':
      return Number.isInteger(value) ? 'int' : 'float'
    case 'bigint':
      return 'int'
    case 'string':
      return 'str'
    case 'function':
      return 'function'
  }
  if (value instanceof PythonFloat) return 'float'
  if (value instanceof Uint8Array) return 'bytes'
  if (value instanceof PyComplex) return 'complex'
  if (value instanceof Undefined) return 'StrictUndefined'
  if (value instanceof Markup) return 'Markup'
  if (Array.isArray(value)) return namedTupleInfo(value)?.typeName ?? (isTuple(value) ? 'tuple' : 'list')
  if (value instanceof DictView) return `dict_${value.view}`
  if (value instanceof PyRange) return 'range'
  if (value instanceof PyIterator) return value.typeName
  if (value instanceof Namespace) return 'Namespace'
  if (value instanceof PyCallable) return 'function'
  if (isDict(value)) return 'dict'
  return (value as { constructor?: { name?: string } }).constructor?.name ?? 'object'
}

/** What `{{ value }}` prints: Python's `str()`, as Jinja prints it (`None`, `True`, `False`). */
export function toOutput(value: unknown): string {
  return typeof value === 'string' ? value : pyStr(value)
}

/** Python's `str(value)`. */
export function pyStr(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value
    case 'number':
      return Number.isInteger(value) ? String(value) : floatStr(value)
    case 'bigint':
      return value.toString()
    case 'boolean':
      return value ? 'True' : 'False'
  }
  if (value === null) return 'None'
  if (value instanceof PythonFloat) return floatStr(value.value)
  if (value instanceof Markup) return value.text
  if (value instanceof Undefined) return value.strict ? fail(value) : ''
  if (hasAttributes(value) && value.toStr) return value.toStr()
  return pyRepr(value)
}

/** How many more units the `pyRepr` call running now may write (its result is bounded by `MAX_STRING_LENGTH`). */
let reprLeft = 0
/** The value the `pyRepr` call running now prints (named when it is too long). */
let reprTop: unknown

/**
 * Python's `repr(value)`. A result past `MAX_STRING_LENGTH` is refused as it is written (a list
 * repeating one long string, nested lists repeating each other: their text can be far larger
 * than the memory they take); a check point every item.
 */
export function pyRepr(value: unknown): string {
  const savedLeft = reprLeft
  const savedTop = reprTop
  reprLeft = MAX_STRING_LENGTH
  reprTop = value
  try {
    return reprOf(value, new Set())
  } finally {
    reprLeft = savedLeft
    reprTop = savedTop
  }
}

function spend(units: number): void {
  if ((reprLeft -= units) < 0) throw stringPastLimit(`printing ${brief(reprTop)}`)
}

function reprOf(value: unknown, seen: Set<unknown>): string {
  const text = reprLeaf(value, seen)
  if (text !== undefined) {
    spend(text.length)
    return text
  }
  if (Array.isArray(value)) {
    seen.add(value)
    spend(value.length === 0 ? 2 : 2 * value.length + (value.length === 1 && isTuple(value) ? 1 : 0))
    const parts = new Array<string>(value.length)
    for (let i = 0; i < value.length; i++) {
      tick()
      parts[i] = reprOf(value[i], seen)
    }
    seen.delete(value)
    // Jinja's _GroupTuple prints as a plain tuple (its __repr__ is tuple.__repr__).
    if (isTuple(value)) return parts.length === 1 ? `(${parts[0]},)` : `(${parts.join(', ')})`
    return `[${parts.join(', ')}]`
  }
  if (value instanceof DictView) {
    spend(value.view.length + 7)
    return `dict_${value.view}(${reprOf(value.list(), seen)})`
  }
  if (value instanceof Namespace) {
    spend(12)
    return `<Namespace ${reprOf(value.attrs, seen)}>`
  }
  if (value instanceof DictBase) {
    seen.add(value)
    const entries = value.entries()
    spend(entries.length === 0 ? 2 : 4 * entries.length)
    const parts = new Array<string>(entries.length)
    for (let i = 0; i < entries.length; i++) {
      tick()
      const [key, item] = entries[i]!
      parts[i] = `${reprOf(key, seen)}: ${reprOf(item, seen)}`
    }
    seen.delete(value)
    return `{${parts.join(', ')}}`
  }
  const dict = value as Record<string, unknown>
  seen.add(dict)
  const keys = Object.keys(dict)
  spend(keys.length === 0 ? 2 : 4 * keys.length)
  const parts = new Array<string>(keys.length)
  for (let i = 0; i < keys.length; i++) {
    tick()
    const key = reprString(keys[i]!)
    spend(key.length)
    parts[i] = `${key}: ${reprOf(dict[keys[i]!], seen)}`
  }
  seen.delete(dict)
  return `{${parts.join(', ')}}`
}

/** The repr of anything but a list, tuple, dict, dict view or namespace (undefined for those). */
function reprLeaf(value: unknown, seen: Set<unknown>): string | undefined {
  switch (typeof value) {
    case 'string':
      return reprString(value)
    case 'number':
    case 'bigint':
    case 'boolean':
      return pyStr(value)
    case 'function':
      return `<function ${(value as { name?: string }).name || 'anonymous'}>`
    case 'undefined':
      return 'None'
  }
  if (value === null) return 'None'
  if (value instanceof PythonFloat) return floatStr(value.value)
  if (value instanceof Uint8Array) return reprBytes(value)
  if (value instanceof PyComplex) {
    const imag = complexPart(value.imag) + 'j'
    if (value.real === 0 && !Object.is(value.real, -0)) return imag
    const sign = value.imag < 0 || Object.is(value.imag, -0) || Number.isNaN(value.imag) ? '' : '+'
    return `(${complexPart(value.real)}${sign}${imag})`
  }
  if (value instanceof Markup) return `Markup(${reprString(value.text)})`
  if (value instanceof Undefined) return 'Undefined'
  if (typeof value === 'object' && seen.has(value)) return Array.isArray(value) ? '[...]' : '{...}'
  if (Array.isArray(value) || value instanceof DictView || value instanceof Namespace) return undefined
  if (value instanceof PyRange) return value.repr()
  if (value instanceof PyIterator) return `<${value.typeName} object>`
  if (value instanceof PyCallable) return value.repr()
  if (hasAttributes(value)) return value.repr()
  if (isDict(value)) return undefined
  return `<${typeName(value)} object>`
}

const PLAIN_ASCII = /^[ !#-&(-[\]-~]*$/
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u

/** Python's `repr(bytes)`: `b'...'`, printable ASCII as is, `\t` `\n` `\r`, other bytes as `\xhh`. */
export function reprBytes(bytes: Uint8Array): string {
  const quote = bytes.includes(0x27) && !bytes.includes(0x22) ? '"' : "'"
  let out = 'b' + quote
  for (const byte of bytes) {
    const char = String.fromCharCode(byte)
    if (char === quote || char === '\\') out += '\\' + char
    else if (char === '\t') out += '\\t'
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (byte < 0x20 || byte >= 0x7f) out += '\\x' + byte.toString(16).padStart(2, '0')
    else out += char
  }
  return out + quote
}

/** Python's `repr(str)`. */
export function reprString(text: string): string {
  // Printable ASCII without quotes or backslashes is written as it is.
  if (PLAIN_ASCII.test(text)) return `'${text}'`
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  let out = quote
  let count = 0
  for (const char of text) {
    if ((++count & 1023) === 0) ticks(1024)
    const code = char.codePointAt(0)!
    if (char === quote || char === '\\') out += '\\' + char
    else if (char === '\n') out += '\\n'
    else if (char === '\r') out += '\\r'
    else if (char === '\t') out += '\\t'
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0')
    else if (code < 0x7f || char === ' ' || !NON_PRINTABLE.test(char)) out += char
    else if (code <= 0xff) out += '\\x' + code.toString(16).padStart(2, '0')
    else if (code <= 0xffff) out += '\\u' + code.toString(16).padStart(4, '0')
    else out += '\\U' + code.toString(16).padStart(8, '0')
  }
  return out + quote
}
