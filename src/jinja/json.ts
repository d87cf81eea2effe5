/**
 * Template values as JSON values for the `tojson` and `json` filters.
 *
 * Contract: `toPythonJson(value)` returns a value python-json.ts can write: Markup becomes
 * its text, tuples stay lists, dicts and lists are copied only when something inside them changes;
 * an Undefined raises its error; ranges, views, iterators and callables raise Python's
 * `TypeError: Object of type range is not JSON serializable`. The JSON text a value makes is
 * bounded as it is walked (a lower bound of its length, items counted with `indentWidth` each):
 * past `MAX_STRING_LENGTH` it is refused before any text is written; a check point per item.
 */
import { typeError } from './errors.js'
import { MAX_STRING_LENGTH, brief, stringPastLimit } from './limits.js'
import { tick } from './render-budget.js'
import { DictView, Markup, Namespace, PyCallable, PyIterator, PyRange, Undefined, fail, isDict, typeName } from './values.js'

export function toPythonJson(value: unknown, indentWidth = 0): unknown {
  const saved = jsonLeft
  jsonLeft = MAX_STRING_LENGTH
  jsonTop = value
  try {
    return convert(value, indentWidth + 1)
  } finally {
    jsonLeft = saved
  }
}

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
  if (isDict(value)) {
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
