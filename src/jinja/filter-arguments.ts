/**
 * How Jinja's filters take their arguments and read items: Python's argument binding, `soft_str`,
 * `make_attrgetter` / `make_multi_attrgetter` and `sorted()`.
 *
 * Contract:
 * - `bind(name, params, args, kwargs)` maps a call onto `def name(value, <params>)` as Python
 *   does (positional, then by keyword, defaults), with Python's TypeErrors for a missing,
 *   doubled or unknown argument or too many of them.
 * - `attrGetter(attribute, postprocess, fallback)`: `'a.b.0'` walks items (digits are indices),
 *   a `fallback` replaces an Undefined at any step; `multiAttrGetter('a,b')` gives a list key.
 * - `pySorted(items, key, reverse)` is Python's stable `sorted()`, comparing keys with `<`
 *   (TypeError for unorderable keys); `reverse` keeps equal items in their order; a check point
 *   of the render's time budget per key and per comparison.
 */
import { getItem } from './access.js'
import { typeError } from './errors.js'
import { Markup, Undefined, pyStr } from './values.js'
import { pyLess } from './protocols.js'
import { tick } from './render-budget.js'

const REQUIRED = Symbol('required')
export type Param = readonly [name: string, fallback?: unknown]

/** Binds `args`/`kwargs` to `params` as Python does for `def f(value, <params>)`. */
export function bind(name: string, params: readonly Param[], args: unknown[], kwargs: Record<string, unknown>): unknown[] {
  if (args.length > params.length) {
    throw typeError(`${name}() takes from 1 to ${params.length + 1} positional arguments but ${args.length + 1} were given`)
  }
  const out: unknown[] = new Array(params.length)
  for (let i = 0; i < params.length; i++) {
    const [param, fallback = REQUIRED] = params[i]!
    if (i < args.length) {
      if (Object.hasOwn(kwargs, param)) throw typeError(`${name}() got multiple values for argument '${param}'`)
      out[i] = args[i]
    } else if (Object.hasOwn(kwargs, param)) out[i] = kwargs[param]
    else if (fallback === REQUIRED) throw typeError(`${name}() missing required argument: '${param}'`)
    else out[i] = fallback
  }
  for (const key of Object.keys(kwargs)) {
    if (!params.some(([param]) => param === key)) throw typeError(`${name}() got an unexpected keyword argument '${key}'`)
  }
  return out
}

/** `soft_str`: str of anything (Markup stays its text). */
export const softStr = (value: unknown): string => (typeof value === 'string' ? value : pyStr(value))

export function ignoreCase(value: unknown): unknown {
  return typeof value === 'string' ? value.toLowerCase() : value instanceof Markup ? value.text.toLowerCase() : value
}

function attributeParts(attribute: unknown): unknown[] {
  if (attribute === null || attribute === undefined) return []
  if (typeof attribute === 'string') return attribute.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part))
  return [attribute]
}

/** Jinja's `make_attrgetter`. */
export function attrGetter(attribute: unknown, postprocess?: (value: unknown) => unknown, fallback: unknown = null): (item: unknown) => unknown {
  const parts = attributeParts(attribute)
  return (item) => {
    let value = item
    for (const part of parts) {
      value = getItem(value, part)
      if (fallback !== null && value instanceof Undefined) value = fallback
    }
    return postprocess ? postprocess(value) : value
  }
}

/** Jinja's `make_multi_attrgetter` (`sort(attribute='a,b')`). */
export function multiAttrGetter(attribute: unknown, postprocess?: (value: unknown) => unknown): (item: unknown) => unknown[] {
  const split = typeof attribute === 'string' ? attribute.split(',') : [attribute]
  const getters = split.map((part) => attrGetter(part, postprocess))
  return (item) => getters.map((getter) => getter(item))
}

function compareKeys(a: unknown, b: unknown): number {
  if (pyLess(a, b)) return -1
  if (pyLess(b, a)) return 1
  return 0
}

/**
 * Python's `sorted(items, key=key, reverse=reverse)` (stable, reverse keeps equal items' order),
 * with a check point per key and per comparison; keys and the order are kept in flat arrays (no
 * object per item: a list of 16 Mi items sorts within a few hundred MiB).
 */
export function pySorted<T>(items: T[], key: (item: T) => unknown, reverse = false): T[] {
  const count = items.length
  const keys = new Array<unknown>(count)
  const order = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    tick()
    keys[i] = key(items[i]!)
    order[i] = i
  }
  order.sort((x, y) => {
    tick()
    const compared = reverse ? compareKeys(keys[y], keys[x]) : compareKeys(keys[x], keys[y])
    return compared !== 0 ? compared : x - y
  })
  const out = new Array<T>(count)
  for (let i = 0; i < count; i++) out[i] = items[order[i]!]!
  return out
}
