/**
 * Template values as JSON values for the `tojson` and `json` filters.
 *
 * Contract: `toPythonJson(value)` returns a value values/python-json.ts can write: Markup becomes
 * its text, tuples stay lists, dicts and lists are copied only when something inside them changes;
 * an Undefined raises its error; ranges, views, iterators and callables raise Python's
 * `TypeError: Object of type range is not JSON serializable`.
 */
import { typeError } from './errors.js'
import { DictView, Markup, Namespace, PyCallable, PyIterator, PyRange, Undefined, fail, isDict, typeName } from './values.js'

export function toPythonJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'function') throw typeError('Object of type function is not JSON serializable')
    return value
  }
  if (value instanceof Markup) return value.text
  if (value instanceof Undefined) fail(value)
  if (value instanceof PyRange || value instanceof DictView || value instanceof PyIterator || value instanceof Namespace || value instanceof PyCallable) {
    throw typeError(`Object of type ${typeName(value)} is not JSON serializable`)
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const converted = toPythonJson(value[i])
      if (converted !== value[i]) (copy ??= value.slice())[i] = converted
    }
    return copy ?? value
  }
  if (isDict(value)) {
    let copy: Record<string, unknown> | undefined
    for (const key of Object.keys(value)) {
      const converted = toPythonJson(value[key])
      if (converted !== value[key]) (copy ??= { ...value })[key] = converted
    }
    return copy ?? value
  }
  return value
}
