/**
 * Python's methods of list, tuple, dict, range and numbers as templates call them (`d.items()`,
 * `l.append(x)`, `x.is_integer()`), and the lookup of any method (str ones: str-methods.ts,
 * Markup's: markup.ts).
 *
 * Contract: `methodOf(value, name)` returns the bound method as a `PyCallable`, or undefined
 * when Python's type has no such attribute. Methods follow CPython 3.11 (`pop()` from the end,
 * `get(k, default)`, `update()` with a dict, pairs or keywords, `index()`'s ValueError …).
 * `numberAttribute(value, name)` gives `real`/`imag` of numbers; `DICT_METHOD_NAMES` lists the
 * names a dict answers with a method rather than its key. `range.index`/`count` need no items;
 * `append`, `extend`, `insert` refuse a list past limits.ts `MAX_LIST_LENGTH`; loops over items
 * pass check points of the render's time budget.
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, valueError } from './errors.js'
import { STR_METHODS, int, type Method } from './str-methods.js'
import { MARKUP_METHODS } from './markup.js'
import { DictView, Markup, PyFunction, PyRange, float, isDict, isInt, isString, isTuple, pyRepr, textOf, tuple, typeName, type PyCallable } from './values.js'
import { iterate, pyEq, pyLess, rangeIndex } from './protocols.js'
import { brief, checkList } from './limits.js'
import { tick, ticks } from './render-budget.js'


const indexError = (message: string) => new TemplateRuntimeError(message, 'IndexError')
const keyError = (key: unknown) => new TemplateRuntimeError(pyRepr(key), 'KeyError')




function listIndex(list: unknown[], index: unknown, what: string): number {
  const i = int(index, -1)
  const resolved = i < 0 ? list.length + i : i
  if (resolved < 0 || resolved >= list.length) throw indexError(`${what} index out of range`)
  return resolved
}

const TUPLE_METHODS: Record<string, Method> = {
  index: (l: unknown[], a) => {
    const at = l.findIndex((item) => (tick(), pyEq(item, a[0])))
    if (at < 0) throw valueError(isTuple(l) ? 'tuple.index(x): x not in tuple' : `${pyRepr(a[0])} is not in list`)
    return at
  },
  count: (l: unknown[], a) => l.filter((item) => (tick(), pyEq(item, a[0]))).length,
}

const LIST_METHODS: Record<string, Method> = {
  ...TUPLE_METHODS,
  append: (l: unknown[], a) => {
    checkList(l.length + 1, () => `append to ${brief(l)}`)
    l.push(a[0])
    return null
  },
  extend: (l: unknown[], a) => {
    const items = iterate(a[0])
    checkList(l.length + items.length, () => `extend ${brief(l)} by ${brief(items)}`)
    ticks(items.length)
    for (const item of items) l.push(item)
    return null
  },
  insert: (l: unknown[], a) => {
    checkList(l.length + 1, () => `insert into ${brief(l)}`)
    ticks(l.length >> 4)
    const i = int(a[0], 0)
    l.splice(i < 0 ? Math.max(0, l.length + i) : Math.min(i, l.length), 0, a[1])
    return null
  },
  pop: (l: unknown[], a) => {
    if (l.length === 0) throw indexError('pop from empty list')
    return l.splice(listIndex(l, a.length > 0 ? a[0] : -1, 'pop'), 1)[0]
  },
  remove: (l: unknown[], a) => {
    const at = l.findIndex((item) => (tick(), pyEq(item, a[0])))
    if (at < 0) throw valueError('list.remove(x): x not in list')
    l.splice(at, 1)
    return null
  },
  reverse: (l: unknown[]) => {
    l.reverse()
    return null
  },
  sort: (l: unknown[], _a, k) => {
    const sorted = [...l].sort((x, y) => (tick(), pyLess(x, y) ? -1 : pyLess(y, x) ? 1 : 0))
    if (k.reverse === true) sorted.reverse()
    for (let i = 0; i < sorted.length; i++) l[i] = sorted[i]
    return null
  },
  copy: (l: unknown[]) => (ticks(l.length >> 4), [...l]),
  clear: (l: unknown[]) => {
    l.length = 0
    return null
  },
}

const DICT_METHODS: Record<string, Method> = {
  items: (d: Record<string, unknown>) => new DictView(d, 'items'),
  keys: (d: Record<string, unknown>) => new DictView(d, 'keys'),
  values: (d: Record<string, unknown>) => new DictView(d, 'values'),
  get: (d: Record<string, unknown>, a) => (isString(a[0]) && Object.hasOwn(d, textOf(a[0])) ? d[textOf(a[0])] : a.length > 1 ? a[1] : null),
  copy: (d: Record<string, unknown>) => ({ ...d }),
  update: (d: Record<string, unknown>, a, k) => {
    if (a.length > 0) {
      const other = a[0]
      if (isDict(other)) Object.assign(d, other)
      else for (const pair of iterate(other)) {
        const [key, value] = iterate(pair)
        d[String(key)] = value
      }
    }
    Object.assign(d, k)
    return null
  },
  pop: (d: Record<string, unknown>, a) => {
    const key = String(a[0])
    if (Object.hasOwn(d, key)) {
      const value = d[key]
      delete d[key]
      return value
    }
    if (a.length > 1) return a[1]
    throw keyError(a[0])
  },
  setdefault: (d: Record<string, unknown>, a) => {
    const key = String(a[0])
    if (!Object.hasOwn(d, key)) d[key] = a.length > 1 ? a[1] : null
    return d[key]
  },
  clear: (d: Record<string, unknown>) => {
    for (const key of Object.keys(d)) delete d[key]
    return null
  },
  popitem: (d: Record<string, unknown>) => {
    const keys = Object.keys(d)
    if (keys.length === 0) throw keyError('popitem(): dictionary is empty')
    const key = keys[keys.length - 1]!
    const value = d[key]
    delete d[key]
    return tuple([key, value])
  },
}

/** Names `d.<name>` reads as a dict method rather than the key (Jinja: attribute first). */
export const DICT_METHOD_NAMES: ReadonlySet<string> = new Set(Object.keys(DICT_METHODS))

const RANGE_METHODS: Record<string, Method> = {
  index: (r: PyRange, a) => {
    const at = rangeIndex(r, a[0])
    if (at === -1) throw valueError(isInt(a[0]) ? `${pyRepr(a[0])} is not in range` : 'sequence.index(x): x not in sequence')
    return at
  },
  count: (r: PyRange, a) => (rangeIndex(r, a[0]) === -1 ? 0 : 1),
}

function bind(self: unknown, name: string, method: Method, owner: string): PyCallable {
  return new PyFunction(name, (args, kwargs) => method(self as never, args, kwargs), `<built-in method ${name} of ${owner} object>`)
}

export function methodOf(value: unknown, name: string): PyCallable | undefined {
  let table: Record<string, Method> | undefined
  let self = value
  if (typeof value === 'string') table = STR_METHODS
  else if (value instanceof Markup) {
    table = Object.hasOwn(MARKUP_METHODS, name) ? MARKUP_METHODS : STR_METHODS
    self = value.text
  } else if (Array.isArray(value)) table = isTuple(value) ? TUPLE_METHODS : LIST_METHODS
  else if (isDict(value)) table = DICT_METHODS
  else if (value instanceof PyRange) table = RANGE_METHODS
  else if (typeof value === 'number' || typeof value === 'bigint' || value instanceof PythonFloat) return numberMethod(value, name)
  if (!table || !Object.hasOwn(table, name)) return undefined
  return bind(self, name, table[name]!, typeName(value))
}

function numberMethod(value: number | bigint | PythonFloat, name: string): PyCallable | undefined {
  const isFloatValue = value instanceof PythonFloat || (typeof value === 'number' && !Number.isInteger(value))
  const n = value instanceof PythonFloat ? value.value : value
  if (name === 'is_integer' && isFloatValue) return bind(n, name, (x: number) => Number.isInteger(x), 'float')
  if (name === 'conjugate') return bind(value, name, (x: unknown) => x, typeName(value))
  if (name === 'bit_length' && !isFloatValue) {
    return bind(n, name, (x: number | bigint) => (BigInt(x) < 0n ? -BigInt(x) : BigInt(x)).toString(2).replace(/^0$/, '').length, 'int')
  }
  return undefined
}

/** `real` / `imag` of a number, or undefined. */
export function numberAttribute(value: unknown, name: string): unknown {
  if (typeof value !== 'number' && typeof value !== 'bigint' && !(value instanceof PythonFloat) && typeof value !== 'boolean') return undefined
  const isFloatValue = value instanceof PythonFloat || (typeof value === 'number' && !Number.isInteger(value))
  if (name === 'real') return typeof value === 'boolean' ? (value ? 1 : 0) : value
  if (name === 'imag') return isFloatValue ? float(0) : 0
  if (name === 'numerator' && !isFloatValue) return value
  if (name === 'denominator' && !isFloatValue) return 1
  return undefined
}
