/**
 * Jinja's attribute and item lookup (`environment.getattr` / `environment.getitem`) on the
 * template value model.
 *
 * Contract:
 * - `getAttr(obj, name)` (`obj.name`): Python's attribute first (a method of str/list/dict, a
 *   namedtuple field, a namespace entry, a loop or module attribute, `real`/`imag`), then the
 *   item `obj[name]`; else an `Undefined` with Jinja's hint (`'dict object' has no attribute
 *   'x'`). So `d.items` is the method even when `d` has a key `items` (as in Jinja).
 * - `getItem(obj, key)` (`obj[key]`, `obj.0`): the item first (negative list indices count from
 *   the end; slices make new lists/strings/ranges; a Markup's items and slices are Markup), then,
 *   for a string key, the attribute; else an `Undefined` (`list object has no element 5`; types
 *   that are not builtins by their module, `markupsafe.Markup object`, as Jinja names them).
 * - Looking anything up on an `Undefined` raises its error (StrictUndefined).
 * - A range is indexed and sliced without its items (exact past 2^53): a slice of a range is a range.
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { methodOf, numberAttribute } from './methods.js'
import { formatLookup } from './str-methods.js'
import { DictView, Markup, Namespace, PyCallable, PyIterator, PyRange, Undefined, fail, hasAttributes, isDict, isTuple, namedTupleInfo, pyRepr, tuple, typeName } from './values.js'
import { codePoints } from './protocols.js'
import { dictFind, dictGet } from './dict.js'

/** A slice `start:stop:step` (the value of a slice expression). */
export class PySlice {
  constructor(
    readonly start: unknown,
    readonly stop: unknown,
    readonly step: unknown,
  ) {}
}

/** The modules of the types that are not builtins, as Jinja's `object_type_repr` names them. */
const TYPE_MODULES: Record<string, string> = {
  Markup: 'markupsafe',
  Namespace: 'jinja2.utils',
  Cycler: 'jinja2.utils',
  LoopContext: 'jinja2.runtime',
  Macro: 'jinja2.runtime',
  _GroupTuple: 'jinja2.filters',
}

function objectTypeRepr(obj: unknown): string {
  if (obj === null) return 'None'
  const name = typeName(obj)
  return Object.hasOwn(TYPE_MODULES, name) ? `${TYPE_MODULES[name]}.${name} object` : `${name} object`
}

export function missingAttribute(obj: unknown, name: string): Undefined {
  return new Undefined(`'${objectTypeRepr(obj)}' has no attribute '${name}'`)
}

function missingItem(obj: unknown, key: unknown): Undefined {
  if (typeof key === 'string') return missingAttribute(obj, key)
  return new Undefined(`${objectTypeRepr(obj)} has no element ${pyRepr(key)}`)
}

/** Python's attribute of `obj`, or undefined when its type has none. */
function attribute(obj: unknown, name: string): unknown {
  if (isDict(obj)) return methodOf(obj, name)
  if (Array.isArray(obj)) {
    const named = namedTupleInfo(obj)
    if (named) {
      const index = named.fields.indexOf(name)
      if (index >= 0) return obj[index]
    }
    return methodOf(obj, name)
  }
  if (typeof obj === 'string' || obj instanceof Markup) return methodOf(obj, name)
  if (obj instanceof Namespace) return obj.attrs.get(name)
  if (hasAttributes(obj)) {
    const value = obj.getAttribute(name)
    return value instanceof Undefined ? undefined : value
  }
  if (typeof obj === 'number' || typeof obj === 'bigint' || obj instanceof PythonFloat || typeof obj === 'boolean') {
    return numberAttribute(obj, name) ?? methodOf(obj, name)
  }
  if (obj instanceof PyRange) {
    if (name === 'start' || name === 'stop' || name === 'step') return obj[name]
    return methodOf(obj, name)
  }
  if (obj instanceof DictView && name === 'mapping') return obj.dict
  if (obj instanceof PyCallable) return name === 'name' || name === '__name__' ? obj.name : undefined
  return undefined
}

/** Python's `getattr(obj, name)` (no item fallback), or an Undefined. */
export function attributeOnly(obj: unknown, name: string): unknown {
  const value = attribute(obj, name)
  return value !== undefined ? value : missingAttribute(obj, name)
}

export function getAttr(obj: unknown, name: string): unknown {
  if (obj instanceof Undefined) fail(obj)
  const value = attribute(obj, name)
  if (value !== undefined) return value
  if (isDict(obj)) {
    const found = dictFind(obj, name)
    return found !== undefined ? found : missingAttribute(obj, name)
  }
  if (hasAttributes(obj)) {
    const own = obj.getAttribute(name)
    if (own !== undefined) return own
  }
  return missingAttribute(obj, name)
}

/** Python's `obj[key]`, or undefined when it raises a TypeError or LookupError. */
function item(obj: unknown, key: unknown): unknown {
  if (key instanceof PySlice) return sliceOf(obj, key)
  // An unhashable key finds nothing (Jinja's getitem catches the TypeError).
  if (isDict(obj)) return dictFind(obj, key)
  if (obj instanceof PyRange) return rangeItem(obj, key)
  const index = integerIndex(key)
  if (index === undefined) return undefined
  if (Array.isArray(obj)) {
    const i = index < 0 ? obj.length + index : index
    return i >= 0 && i < obj.length ? obj[i] : undefined
  }
  if (typeof obj === 'string' || obj instanceof Markup) {
    const points = codePoints(typeof obj === 'string' ? obj : obj.text)
    const i = index < 0 ? points.length + index : index
    if (i < 0 || i >= points.length) return undefined
    // markupsafe's Markup.__getitem__: a Markup's character is Markup.
    return obj instanceof Markup ? new Markup(points[i]!) : points[i]
  }
  return undefined
}

/** `range[i]` (negative from the end), or undefined when out of range; exact past 2^53. */
function rangeItem(range: PyRange, key: unknown): unknown {
  const index = typeof key === 'bigint' ? key : integerIndex(key)
  if (index === undefined) return undefined
  if (typeof index === 'number' && typeof range.length === 'number') {
    const i = index < 0 ? range.length + index : index
    return i >= 0 && i < range.length ? range.at(i) : undefined
  }
  const length = BigInt(range.length)
  const i = BigInt(index) < 0n ? length + BigInt(index) : BigInt(index)
  return i >= 0n && i < length ? range.at(i) : undefined
}

function integerIndex(key: unknown): number | undefined {
  if (typeof key === 'number' && Number.isInteger(key)) return key
  if (typeof key === 'boolean') return key ? 1 : 0
  if (typeof key === 'bigint') return Number(key)
  return undefined
}

export function getItem(obj: unknown, key: unknown): unknown {
  if (obj instanceof Undefined) fail(obj)
  if (key instanceof Undefined) fail(key)
  const value = item(obj, key)
  if (value !== undefined) return value
  if (typeof key === 'string') {
    const attr = attribute(obj, key)
    if (attr !== undefined) return attr
  }
  return missingItem(obj, key)
}

function sliceBound(value: unknown, what: string): number | null {
  if (value === null) return null
  const index = integerIndex(value)
  if (index === undefined) throw typeError(`slice indices must be integers or None or have an __index__ method (got ${what})`)
  return index
}

/** Python's `seq[start:stop:step]` indices for a sequence of `length`. */
export function sliceIndices(length: number, slice: PySlice): number[] {
  const step = sliceBound(slice.step, 'step') ?? 1
  if (step === 0) throw valueError('slice step cannot be zero')
  const clamp = (bound: number | null, fallback: number): number => {
    if (bound === null) return fallback
    if (bound < 0) return Math.max(bound + length, step < 0 ? -1 : 0)
    return Math.min(bound, step < 0 ? length - 1 : length)
  }
  const start = clamp(sliceBound(slice.start, 'start'), step < 0 ? length - 1 : 0)
  const stop = clamp(sliceBound(slice.stop, 'stop'), step < 0 ? -1 : length)
  const out: number[] = []
  if (step > 0) for (let i = start; i < stop; i += step) out.push(i)
  else for (let i = start; i > stop; i += step) out.push(i)
  return out
}

function sliceOf(obj: unknown, slice: PySlice): unknown {
  if (Array.isArray(obj)) {
    const picked = sliceIndices(obj.length, slice).map((i) => obj[i])
    return isTuple(obj) && !namedTupleInfo(obj) ? tuple(picked) : isTuple(obj) ? tuple(picked) : picked
  }
  if (typeof obj === 'string' || obj instanceof Markup) {
    const text = typeof obj === 'string' ? obj : obj.text
    const points = codePoints(text)
    const picked = sliceIndices(points.length, slice)
    const out = typeof points === 'string' ? picked.map((i) => points[i]).join('') : picked.map((i) => points[i]).join('')
    return obj instanceof Markup ? new Markup(out) : out
  }
  if (obj instanceof PyRange) {
    const bound = (value: unknown, what: string) => (typeof value === 'bigint' ? value : sliceBound(value, what))
    return obj.slice(bound(slice.start, 'start'), bound(slice.stop, 'stop'), bound(slice.step, 'step'))
  }
  if (obj instanceof PyIterator) return undefined
  return undefined
}

// str.format's `{x.attr}` / `{x[key]}` use the same lookups (methods module cannot import this one).
// str.format's `{x.attr}` and `{x[key]}` are Python's getattr and subscript, not Jinja's lookups:
// a dict has no attribute for its keys, and a missing item is a KeyError or IndexError.
formatLookup.attr = (value, name) => {
  if (value instanceof Undefined) fail(value)
  const found = attribute(value, name)
  if (found === undefined) throw new TemplateRuntimeError(`'${typeName(value)}' object has no attribute '${name}'`, 'AttributeError')
  return found
}
formatLookup.item = (value, key) => {
  if (value instanceof Undefined) fail(value)
  if (isDict(value)) {
    const found = dictGet(value, key)
    if (found === undefined) throw new TemplateRuntimeError(pyRepr(key), 'KeyError')
    return found
  }
  const sequence = typeof value === 'string' || value instanceof Markup ? 'string' : Array.isArray(value) ? typeName(value) : value instanceof PyRange ? 'range' : undefined
  if (sequence === undefined) throw typeError(`'${typeName(value)}' object is not subscriptable`)
  if (typeof key === 'string') {
    throw typeError(sequence === 'string' ? "string indices must be integers, not 'str'" : `${sequence} indices must be integers or slices, not str`)
  }
  const found = getItem(value, key)
  if (found instanceof Undefined) throw new TemplateRuntimeError(`${sequence === 'range' ? 'range object' : sequence} index out of range`, 'IndexError')
  return found
}
