/**
 * Template values as JSON values for the `tojson` and `json` filters.
 *
 * Contract: `toPythonJson(value)` returns a value python-json.ts can write: Markup becomes
 * its text, tuples stay lists, plain objects and lists are copied only when something inside
 * them changes; a dict.ts `PyDict` becomes a `JsonObject` with its items sorted by key as
 * `json.dumps(sort_keys=True)` sorts them (both `json` and `tojson` sort; `sortKeys: false`
 * keeps its order, as the plugin's table and list cells write JSON) and its keys written
 * as Python writes them (`1` → "1", `True` → "true", `None` → "null", `2.0` → "2.0"; a TypeError
 * for keys of other types, or keys that do not compare);
 * an Undefined raises its error; ranges, views, iterators and callables raise Python's
 * `TypeError: Object of type range is not JSON serializable`. The JSON text a value makes is
 * bounded as it is walked (a lower bound of its length, items counted with `indentWidth` each):
 * past `MAX_STRING_LENGTH` it is refused before any text is written; a check point per item.
 */
import { typeError } from './errors.js'
import { MAX_STRING_LENGTH, brief, stringPastLimit } from './limits.js'
import { tick } from './render-budget.js'
import { DictBase, DictView, Markup, Namespace, PyCallable, PyIterator, PyRange, Undefined, fail, isInt, isPlainDict, isString, textOf, typeName } from './values.js'
import { PythonFloat, pythonFloatRepr } from './python-float.js'
import { JsonObject } from './python-json.js'
import { pyLess } from './protocols.js'

export function toPythonJson(value: unknown, indentWidth = 0, options: { sortKeys?: boolean } = {}): unknown {
  const saved = jsonLeft
  const savedSorts = jsonSortsKeys
  jsonLeft = MAX_STRING_LENGTH
  jsonTop = value
  jsonSortsKeys = options.sortKeys ?? true
  try {
    return convert(value, indentWidth + 1)
  } finally {
    jsonLeft = saved
    jsonSortsKeys = savedSorts
  }
}

/** Whether a PyDict's items are sorted (`sortKeys`). */
let jsonSortsKeys = true

/** How many more characters the JSON text of the value being converted may have, at least. */
let jsonLeft = 0
let jsonTop: unknown

/** Counts `units` characters of the JSON text (a lower bound), refusing one past `MAX_STRING_LENGTH`. */
function spend(units: number): void {
  if ((jsonLeft -= units) < 0) throw stringPastLimit(`writing ${brief(jsonTop)} as JSON`)
}

function convert(value: unknown, perItem: number): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') throw typeError('Object of type function is not JSON serializable')
    spend(typeof value === 'string' ? value.length + 2 : 1)
    return value
  }
  if (value instanceof Markup) {
    spend(value.text.length + 2)
    return value.text
  }
  if (value instanceof Undefined) fail(value)
  if (value instanceof PyRange || value instanceof DictView || value instanceof PyIterator || value instanceof Namespace || value instanceof PyCallable) {
    throw typeError(`Object of type ${typeName(value)} is not JSON serializable`)
  }
  if (Array.isArray(value)) {
    spend(2 + value.length * perItem)
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      tick()
      const converted = convert(value[i], perItem)
      if (converted !== value[i]) (copy ??= value.slice())[i] = converted
    }
    return copy ?? value
  }
  if (value instanceof DictBase) {
    // json.dumps(sort_keys=True) sorts the items by their keys (a TypeError for keys of types
    // that do not compare), then writes each key as a string.
    const entries = value.entries()
    spend(2 + entries.length * (perItem + 3))
    if (jsonSortsKeys) entries.sort((a, b) => (tick(), pyLess(a[0], b[0]) ? -1 : pyLess(b[0], a[0]) ? 1 : 0))
    return new JsonObject(
      entries.map(([key, item]) => {
        tick()
        const name = jsonKey(key)
        spend(name.length)
        return [name, convert(item, perItem)]
      }),
    )
  }
  if (isPlainDict(value)) {
    const keys = Object.keys(value)
    spend(2 + keys.length * (perItem + 3))
    let copy: Record<string, unknown> | undefined
    for (const key of keys) {
      tick()
      spend(key.length)
      const converted = convert(value[key], perItem)
      if (converted !== value[key]) (copy ??= { ...value })[key] = converted
    }
    return copy ?? value
  }
  return value
}

/** A dict key as json.dumps writes it (str, int, float, bool and None; a TypeError for others). */
function jsonKey(key: unknown): string {
  if (isString(key)) return textOf(key)
  if (key === true) return 'true'
  if (key === false) return 'false'
  if (key === null) return 'null'
  if (isInt(key)) return String(key)
  if (typeof key === 'number' || key instanceof PythonFloat) {
    const n = typeof key === 'number' ? key : key.value
    return Number.isNaN(n) ? 'NaN' : n === Infinity ? 'Infinity' : n === -Infinity ? '-Infinity' : pythonFloatRepr(n)
  }
  throw typeError(`keys must be str, int, float, bool or None, not ${typeName(key)}`)
}
