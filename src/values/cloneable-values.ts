/**
 * The value model (python-float.ts) through V8's structured serialization (`v8.serialize`, the
 * job store): V8 writes a class instance as a plain object, so a `PythonFloat` would come back
 * as `{ value: 2 }` and a warm start would print what a cold one never does (issue #15).
 *
 * Contract: `toCloneable(v)` replaces every `PythonFloat` inside arrays and plain objects with a
 * one-entry `Map` (`FLOAT_TAG` → its number), which V8 keeps; `fromCloneable(v)` turns those Maps
 * back into boxes. A dict a template made (src/jinja/dict.ts `PyDict`: the sandbox gets a render's
 * input after the template may have changed it) goes the same way, `DICT_TAG` → its items. Both
 * copy only the containers on the way to a box and return `v` itself when it holds none. Bigints,
 * Dates, Buffers and strings survive V8 as they are.
 */
import { isPlainObject } from '../protocol/object-guards.js'
import { PythonFloat } from './python-float.js'
import { dictItems, PyDict } from '../jinja/dict.js'
import { DictBase } from '../jinja/values.js'

export const FLOAT_TAG = '$insitu:PythonFloat'

export const DICT_TAG = '$insitu:PyDict'

export function toCloneable(value: unknown): unknown {
  return mapValues(value, (item) => {
    if (item instanceof PythonFloat) return new Map([[FLOAT_TAG, item.value]])
    // A dict a template made (its keys need not be strings; V8 would copy its private fields).
    if (item instanceof DictBase) return new Map([[DICT_TAG, dictItems(item).map(([key, entry]) => [toCloneable(key), toCloneable(entry)])]])
    return undefined
  })
}

export function fromCloneable(value: unknown): unknown {
  return mapValues(value, (item) => {
    if (!(item instanceof Map) || item.size !== 1) return undefined
    if (typeof item.get(FLOAT_TAG) === 'number') return new PythonFloat(item.get(FLOAT_TAG) as number)
    const items = item.get(DICT_TAG)
    if (Array.isArray(items)) return PyDict.fromEntries(items.map(([key, entry]: [unknown, unknown]) => [fromCloneable(key), fromCloneable(entry)] as const))
    return undefined
  })
}

/** `value` with each item `replace` gives a replacement for swapped, containers copied only when needed. */
function mapValues(value: unknown, replace: (item: unknown) => unknown): unknown {
  const replaced = replace(value)
  if (replaced !== undefined) return replaced
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item = mapValues(value[i], replace)
      if (item !== value[i]) (copy ??= value.slice())[i] = item
    }
    return copy ?? value
  }
  if (isPlainObject(value)) {
    let copy: Record<string, unknown> | undefined
    for (const key of Object.keys(value)) {
      const item = mapValues(value[key], replace)
      if (item !== value[key]) (copy ??= { ...value })[key] = item
    }
    return copy ?? value
  }
  return value
}
