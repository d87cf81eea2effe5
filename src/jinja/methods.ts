/**
 * Python's methods of list, tuple, dict, range and numbers as templates call them (`d.items()`,
 * `l.append(x)`, `x.is_integer()`), and the lookup of any method (str ones: str-methods.ts,
 * Markup's: markup.ts).
 *
 * Contract: `methodOf(value, name)` returns the bound method as a `PyCallable`, or undefined
 * when Python's type has no such attribute. Methods follow CPython 3.11 (`pop()` from the end,
 * `get(k, default)`, `update()` with a dict, pairs or keywords, `index()`'s ValueError …); dict
 * methods work on either representation of a dict (dict.ts), keys of any hashable type.
 * `numberAttribute(value, name)` gives `real`/`imag` of numbers; `DICT_METHOD_NAMES` lists the
 * names a dict answers with a method rather than its key. `range.index`/`count` need no items;
 * `append`, `extend`, `insert` refuse a list past limits.ts `MAX_LIST_LENGTH`; loops over items
 * pass check points of the render's time budget.
 */
import { PythonFloat } from './python-float.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { PyDict, dictClear, dictCopy, dictDelete, dictGet, dictItems, dictSet, dictSize } from './dict.js'
import { STR_METHODS, int, type Method } from './str-methods.js'
import { MARKUP_METHODS } from './markup.js'
import { DictView, Markup, PyFunction, PyRange, float, isDict, isInt, isTuple, pyRepr, tuple, typeName, type Dict, type PyCallable } from './values.js'
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

const NO_KEYWORDS: Record<string, unknown> = {}

/** `dict.<name>(key[, default])`'s arity. */
function keyAndDefault(name: string, args: unknown[]): void {
  if (args.length === 0) throw typeError(`${name} expected at least 1 argument, got 0`)
  if (args.length > 2) throw typeError(`${name} expected at most 2 arguments, got ${args.length}`)
}

/** `dict.update(source, **keywords)` (and `dict()`, `namespace()`): `source` a dict or an iterable of pairs, then the keywords. */
export function dictUpdate(target: Dict, source: unknown, keywords: Record<string, unknown> = NO_KEYWORDS): void {
  if (source !== undefined) {
    if (isDict(source)) {
      for (const [key, value] of dictItems(source)) {
        tick()
        dictSet(target, key, value)
      }
    } else {
      const pairs = iterate(source)
      for (let i = 0; i < pairs.length; i++) {
        tick()
        let pair: unknown[]
        try {
          pair = iterate(pairs[i])
        } catch (error) {
          if (error instanceof TemplateRuntimeError && error.pythonType === 'TypeError') {
            throw typeError(`cannot convert dictionary update sequence element #${i} to a sequence`)
          }
          throw error
        }
        if (pair.length !== 2) throw valueError(`dictionary update sequence element #${i} has length ${pair.length}; 2 is required`)
        dictSet(target, pair[0], pair[1])
      }
    }
  }
  for (const name in keywords) dictSet(target, name, keywords[name])
}

const DICT_METHODS: Record<string, Method> = {
  items: (d: Dict) => new DictView(d, 'items'),
  keys: (d: Dict) => new DictView(d, 'keys'),
  values: (d: Dict) => new DictView(d, 'values'),
  get: (d: Dict, a) => {
    keyAndDefault('get', a)
    const found = dictGet(d, a[0])
    return found !== undefined ? found : a.length > 1 ? a[1] : null
  },
  copy: (d: Dict) => (ticks(dictSize(d) >> 4), dictCopy(d)),
  update: (d: Dict, a, k) => {
    if (a.length > 1) throw typeError(`update expected at most 1 argument, got ${a.length}`)
    dictUpdate(d, a[0], k)
    return null
  },
  pop: (d: Dict, a) => {
    keyAndDefault('pop', a)
    const found = dictGet(d, a[0])
    if (found !== undefined) {
      dictDelete(d, a[0])
      return found
    }
    if (a.length > 1) return a[1]
    throw keyError(a[0])
  },
  setdefault: (d: Dict, a) => {
    keyAndDefault('setdefault', a)
    const found = dictGet(d, a[0])
    if (found !== undefined) return found
    const value = a.length > 1 ? a[1] : null
    dictSet(d, a[0], value)
    return value
  },
  clear: (d: Dict) => {
    dictClear(d)
    return null
  },
  popitem: (d: Dict) => {
    const items = dictItems(d)
    const last = items[items.length - 1]
    if (last === undefined) throw keyError('popitem(): dictionary is empty')
    dictDelete(d, last[0])
    return tuple(last)
  },
  fromkeys: (_d: Dict, a) => {
    if (a.length === 0) throw typeError('fromkeys expected at least 1 argument, got 0')
    const value = a.length > 1 ? a[1] : null
    const out = new PyDict()
    for (const key of iterate(a[0])) {
      tick()
      out.set(key, value)
    }
    return out
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
  const method = table[name]!
  if (table === DICT_METHODS && name !== 'update') {
    // dict's methods but update() take no keywords.
    return bind(self, name, (d: Dict, args, kwargs) => {
      for (const _ in kwargs) throw typeError(`dict.${name}() takes no keyword arguments`)
      return method(d as never, args, kwargs)
    }, 'dict')
  }
  return bind(self, name, method, typeName(value))
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
