/**
 * Every stock Jinja2 3.1 filter (its `filters.py`, with the environment's default policies:
 * `truncate.leeway` 5, `urlize.rel` "noopener", `json.dumps_kwargs` sort_keys), on the template
 * value model (`random` picks with Math.random); environment filters (`json`, `relative_to`)
 * are added by the engine's user.
 *
 * Contract: `STOCK_FILTERS[name](host, value, args, kwargs)`; arguments are bound as Python binds
 * them (`bind`): positional, then by keyword, defaults as Jinja's, a `TypeError` for an unknown
 * keyword or too many arguments. Filters that return generators in Jinja (`map`, `select`,
 * `reject`, `selectattr`, `rejectattr`, `unique`, `batch`, `slice`, `reverse` of a list,
 * `items`) return one-shot `PyIterator`s, so `| list` / `| join` work and `| length` fails as
 * in Jinja. Lazy ranges stay lazy where Python's do: `first`, `last`, `sum` (exact, from an int
 * start), `reverse` (a `range_iterator`), `random`, `length`. Every filter passes a check point of
 * the render's time budget per item (render-budget.ts) and refuses a string or list past the
 * limits of limits.ts before making it (`center`, `indent`, `join`, `replace`, `wordwrap`,
 * `batch`, `slice`, `tojson`, …).
 */
import { PythonFloat } from './python-float.js'
import { jinjaToJson } from './python-json.js'
import { attributeOnly } from './access.js'
import { catchConversion, parseIntText, pyRound, toFloat, toInt } from './conversions.js'
import { attrGetter, bind, ignoreCase, multiAttrGetter, pySorted, softStr, type Param } from './filter-arguments.js'
import { pformat } from './pretty-print.js'
import { XML_ATTRIBUTE_KEY, fileSize, indent, truncate, urlQuote, wordCount, wrapSource } from './text-filters.js'
import type { CompileHost, FilterFunction } from './compiled-template.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { escapeHtml, stripTags } from './escape.js'
import { percentFormat } from './format.js'
import { pyCapitalize, pyCenter, pyReplace, pySplitlines } from './str-methods.js'
import { add } from './operators.js'
import { escapedArgument } from './markup.js'
import { toPythonJson } from './json.js'
import { textWrap } from './wrap.js'
import { urlize } from './urlize.js'
import { DictView, Markup, PyIterator, PyRange, Undefined, fail, float, isDict, isInt, isString, namedTuple, pyRepr, textOf, tuple, typeName } from './values.js'
import { iterate, pyLen, pyLess, truthy } from './protocols.js'
import { dictItems, hashKey } from './dict.js'
import { brief, checkList, checkString, joinChecked } from './limits.js'
import { tick, ticks } from './render-budget.js'
import { PY_SPACE } from './python-space.js'

/** Python's whitespace at either end of a text (`str.strip()`). */
const TRIMMED_SPACE = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'gu')

const NONE = Symbol('no item')

/** `items.map(fn)` with a check point per item. */
function mapTicked<T, R>(items: readonly T[], fn: (item: T) => R): R[] {
  const out = new Array<R>(items.length)
  for (let i = 0; i < items.length; i++) {
    tick()
    out[i] = fn(items[i]!)
  }
  return out
}

/** `text`, after the check points a pass over it is worth (one per 16 characters). */
function textTicked(text: string): string {
  ticks(text.length >> 4)
  return text
}

type NamedFilter = FilterFunction & { pythonName?: string }

/** A filter `def f(value, <params>)`; its Python name (for TypeErrors) is set when registered. */
function define(params: readonly Param[], fn: (host: CompileHost, value: unknown, ...rest: never[]) => unknown): FilterFunction {
  const call = fn as (host: CompileHost, value: unknown, ...rest: unknown[]) => unknown
  const filter: NamedFilter = (host, value, args, kwargs) => {
    if (params.length === 0 && args.length === 0) {
      for (const _ in kwargs) return call(host, value, ...bind(filter.pythonName ?? 'filter', params, args, kwargs))
      return call(host, value)
    }
    return call(host, value, ...bind(filter.pythonName ?? 'filter', params, args, kwargs))
  }
  return filter
}

/** A filter that is a `str` method in Jinja: on Markup, markupsafe's method of it keeps the result Markup. */
function keepsMarkup(filter: FilterFunction): FilterFunction {
  return (host, value, args, kwargs) => {
    if (!(value instanceof Markup)) return filter(host, value, args, kwargs)
    const result = filter(host, value.text, args, kwargs)
    return typeof result === 'string' ? new Markup(result) : result
  }
}

/** `value.items()` of a value that is no dict: Python's AttributeError. */
function noItems(value: unknown): TemplateRuntimeError {
  return new TemplateRuntimeError(`'${typeName(value)}' object has no attribute 'items'`, 'AttributeError')
}

/** `do_reverse`'s `list(value)`: a value that is not iterable is its FilterArgumentError. */
function iterableOrFail(value: unknown): unknown[] {
  try {
    return iterate(value)
  } catch (error) {
    if (error instanceof TemplateRuntimeError && error.pythonType === 'TypeError') throw new TemplateRuntimeError('argument must be iterable', 'FilterArgumentError')
    throw error
  }
}

function escape(value: unknown): Markup {
  if (value instanceof Markup) return value
  return new Markup(escapeHtml(softStr(value)))
}

function firstOf(value: unknown, what: string): unknown {
  // A range (or an iterator over one) gives its first or last item without a list.
  const range = value instanceof PyRange ? value : null
  if (range) {
    if (range.length === 0) return new Undefined(`No ${what} item, sequence was empty.`)
    return range.at(what === 'first' ? 0 : typeof range.length === 'number' ? range.length - 1 : range.length - 1n)
  }
  // `first` of an iterator takes one item (the rest stays to be used).
  if (value instanceof PyIterator && what === 'first') {
    const item = value.next(NONE)
    return item === NONE ? new Undefined('No first item, sequence was empty.') : item
  }
  const items = iterate(value)
  if (items.length === 0) return new Undefined(`No ${what} item, sequence was empty.`)
  if (what === 'first') return items[0]
  // `last` is next(reversed(seq)): reversed() indexes a str, and a Markup's item is Markup.
  return value instanceof Markup ? new Markup(items[items.length - 1] as string) : items[items.length - 1]
}

function minOrMax(host: CompileHost, value: unknown, caseSensitive: unknown, attribute: unknown, max: boolean): unknown {
  const items = iterate(value)
  if (items.length === 0) return new Undefined('No aggregated item, sequence was empty.')
  const key = attrGetter(attribute, truthy(caseSensitive) ? undefined : ignoreCase)
  let best = items[0]
  let bestKey = key(best)
  for (let i = 1; i < items.length; i++) {
    tick()
    const k = key(items[i])
    if (max ? pyLess(bestKey, k, '>') : pyLess(k, bestKey, '<')) {
      best = items[i]
      bestKey = k
    }
  }
  return best
}

function selectOrReject(host: CompileHost, value: unknown, args: unknown[], kwargs: Record<string, unknown>, select: boolean, lookupAttr: boolean): PyIterator {
  return new PyIterator(selected(host, value, args, kwargs, select, lookupAttr))
}

/**
 * Jinja's `select_or_reject`, a generator: nothing is checked before it is iterated, then item by
 * item. Jinja's `if value:`: a false value (None, 0, '', an empty container) selects nothing,
 * its arguments unchecked.
 */
function* selected(host: CompileHost, value: unknown, args: unknown[], kwargs: Record<string, unknown>, select: boolean, lookupAttr: boolean): Generator<unknown> {
  if (!truthy(value)) return
  let transform: (item: unknown) => unknown = (item) => item
  let offset = 0
  if (lookupAttr) {
    if (args.length === 0) throw new TemplateRuntimeError('Missing parameter for attribute name', 'FilterArgumentError')
    transform = attrGetter(args[0])
    offset = 1
  }
  let test: (item: unknown) => boolean
  if (args.length > offset) {
    const name = args[offset]
    const rest = args.slice(offset + 1)
    test = (item) => {
      tick()
      const fn = host.tests[String(name)]
      if (!fn) throw new TemplateRuntimeError(`No test named '${String(name)}'.`)
      return fn(host, item, rest, kwargs)
    }
  } else test = (item) => (tick(), truthy(item))
  for (const item of iterate(value)) if (test(transform(item)) === select) yield item
}

export const STOCK_FILTERS: Record<string, FilterFunction> = {
  abs: define([], (_h, value) => {
    if (typeof value === 'number') return Number.isInteger(value) ? Math.abs(value) : Math.abs(value)
    if (typeof value === 'bigint') return value < 0n ? -value : value
    if (value instanceof PythonFloat) return float(Math.abs(value.value))
    if (typeof value === 'boolean') return value ? 1 : 0
    if (value instanceof Undefined) fail(value)
    throw typeError(`bad operand type for abs(): '${typeName(value)}'`)
  }),
  attr: define([['name']], (_h, value, name: unknown) => {
    if (value instanceof Undefined) fail(value)
    // `attr` reads attributes only: a dict's keys are items, not attributes.
    return attributeOnly(value, softStr(name))
  }),
  batch: define([['linecount'], ['fill_with', null]], (_h, value, linecount: unknown, fillWith: unknown) => {
    const size = Number(toInt(linecount))
    if (fillWith !== null) checkList(size, () => `batch(${size}, ${brief(fillWith)})`)
    const out: unknown[][] = []
    let current: unknown[] = []
    for (const item of iterate(value)) {
      tick()
      if (current.length === size) {
        out.push(current)
        current = []
      }
      current.push(item)
    }
    if (current.length > 0) {
      if (fillWith !== null) while (current.length < size) current.push(fillWith)
      out.push(current)
    }
    return new PyIterator(out)
  }),
  capitalize: keepsMarkup(define([], (_h, value) => pyCapitalize(softStr(value)))),
  center: keepsMarkup(define([['width', 80]], (_h, value, width: unknown) => {
    const size = toInt(width)
    checkString(size, () => `center(${size})`)
    return pyCenter(softStr(value), Number(size))
  })),
  count: define([], (_h, value) => pyLen(value)),
  default: define([['default_value', ''], ['boolean', false]], (_h, value, fallback: unknown, boolean: unknown) =>
    value instanceof Undefined || (truthy(boolean) && !truthy(value)) ? fallback : value,
  ),
  dictsort: define([['case_sensitive', false], ['by', 'key'], ['reverse', false]], (_h, value, caseSensitive: unknown, by: unknown, reverse: unknown) => {
    if (!isDict(value)) throw noItems(value)
    const position = by === 'key' ? 0 : by === 'value' ? 1 : -1
    if (position < 0) throw new TemplateRuntimeError('You can only sort by either "key" or "value"', 'FilterArgumentError')
    const entries = dictItems(value).map((entry) => tuple(entry))
    return pySorted(entries, (entry) => (truthy(caseSensitive) ? entry[position] : ignoreCase(entry[position])), truthy(reverse))
  }),
  escape: define([], (_h, value) => escape(value)),
  filesizeformat: define([['binary', false]], (_h, value, binary: unknown) => fileSize(value, binary)),
  first: define([], (_h, value) => firstOf(value, 'first')),
  float: define([['default', float(0)]], (_h, value, fallback: unknown) => catchConversion(() => float(toFloat(value)), fallback)),
  forceescape: define([], (_h, value) => new Markup(escapeHtml(softStr(value)))),
  format: (_h, value, args, kwargs) => {
    const keys = Object.keys(kwargs)
    if (args.length > 0 && keys.length > 0) {
      throw new TemplateRuntimeError("can't handle positional and keyword arguments at the same time", 'FilterArgumentError')
    }
    // A Markup format string escapes what it formats (markupsafe's Markup.__mod__).
    if (value instanceof Markup) return new Markup(percentFormat(value.text, keys.length > 0 ? kwargs : tuple(args), escapedArgument))
    return percentFormat(softStr(value), keys.length > 0 ? kwargs : tuple(args))
  },
  groupby: define([['attribute'], ['default', null], ['case_sensitive', false]], (_h, value, attribute: unknown, fallback: unknown, caseSensitive: unknown) => {
    const key = attrGetter(attribute, truthy(caseSensitive) ? undefined : ignoreCase, fallback)
    const sorted = pySorted(iterate(value), key)
    const groups: { key: unknown; items: unknown[] }[] = []
    let previous: string | undefined
    for (const item of sorted) {
      const k = key(item)
      const hash = groupHash(k)
      if (groups.length === 0 || hash !== previous) groups.push({ key: k, items: [] })
      groups[groups.length - 1]!.items.push(item)
      previous = hash
    }
    const output = attrGetter(attribute, undefined, fallback)
    return groups.map((group) =>
      namedTuple('_GroupTuple', ['grouper', 'list'], [truthy(caseSensitive) ? group.key : output(group.items[0]), group.items]),
    )
  }),
  indent: keepsMarkup(define([['width', 4], ['first', false], ['blank', false]], (_h, value, width: unknown, first: unknown, blank: unknown) =>
    indent(value, width, first, blank),
  )),
  int: define([['default', 0], ['base', 10]], (_h, value, fallback: unknown, base: unknown) =>
    catchConversion(() => {
      if (isString(value)) {
        try {
          return parseIntText(textOf(value), Number(base))
        } catch (error) {
          // Jinja: "42.23"|int gives 42.
          return toInt(float(toFloat(value)))
          void error
        }
      }
      return toInt(value)
    }, fallback),
  ),
  // A generator in Jinja: nothing is checked before it is iterated.
  items: define([], (_h, value) =>
    new PyIterator(
      (function* () {
        if (value instanceof Undefined) return
        if (!isDict(value)) throw typeError('Can only get item pairs from a mapping.')
        for (const entry of dictItems(value)) yield tuple(entry)
      })(),
    ),
  ),
  join: define([['d', ''], ['attribute', null]], (_h, value, separator: unknown, attribute: unknown) => {
    let items = iterate(value)
    if (attribute !== null) items = mapTicked(items, attrGetter(attribute))
    const sep = softStr(separator)
    return joinChecked(mapTicked(items, softStr), sep, () => `join(${brief(sep)}) of ${items.length} items`)
  }),
  last: define([], (_h, value) => firstOf(value, 'last')),
  length: define([], (_h, value) => pyLen(value)),
  list: define([], (_h, value) => {
    const items = iterate(value)
    ticks(items.length >> 4)
    return items === value ? items.slice() : items
  }),
  lower: keepsMarkup(define([], (_h, value) => softStr(value).toLowerCase())),
  // A generator in Jinja: its value, arguments and filter are checked when it is iterated, item
  // by item. Jinja's `if value:`: a false value (None, 0, '', an empty container) maps to
  // nothing, its arguments unchecked.
  map: (host, value, args, kwargs) =>
    new PyIterator(
      (function* () {
        if (!truthy(value)) return
        let apply: (item: unknown) => unknown
        if (args.length === 0 && Object.hasOwn(kwargs, 'attribute')) {
          const { attribute, default: fallback = null, ...rest } = kwargs
          const extra = Object.keys(rest)
          if (extra.length > 0) throw new TemplateRuntimeError(`Unexpected keyword argument '${extra[0]}'`, 'FilterArgumentError')
          apply = attrGetter(attribute, undefined, fallback)
        } else {
          if (args.length === 0) throw new TemplateRuntimeError('map requires a filter argument', 'FilterArgumentError')
          const name = String(args[0])
          const rest = args.slice(1)
          apply = (item) => {
            const filter = host.filters[name]
            if (!filter) throw new TemplateRuntimeError(`No filter named '${name}'.`)
            return filter(host, item, rest, kwargs)
          }
        }
        for (const item of iterate(value)) {
          tick()
          yield apply(item)
        }
      })(),
    ),
  max: define([['case_sensitive', false], ['attribute', null]], (host, value, caseSensitive: unknown, attribute: unknown) =>
    minOrMax(host, value, caseSensitive, attribute, true),
  ),
  min: define([['case_sensitive', false], ['attribute', null]], (host, value, caseSensitive: unknown, attribute: unknown) =>
    minOrMax(host, value, caseSensitive, attribute, false),
  ),
  pprint: define([], (_h, value) => pformat(value)),
  reject: (host, value, args, kwargs) => selectOrReject(host, value, args, kwargs, false, false),
  rejectattr: (host, value, args, kwargs) => selectOrReject(host, value, args, kwargs, false, true),
  replace: define([['old'], ['new'], ['count', null]], (_h, value, old: unknown, replacement: unknown, count: unknown) =>
    pyReplace(softStr(value), softStr(old), softStr(replacement), count === null ? -1 : Number(toInt(count))),
  ),
  random: define([], (_h, value) => {
    // random.choice(seq): an empty sequence gives Jinja's undefined with this hint.
    // random.choice(range) picks by index, without a list.
    if (value instanceof PyRange) {
      if (value.length === 0) return new Undefined('No random item, sequence was empty.')
      return value.at(Math.floor(Math.random() * Number(value.length)))
    }
    const items = isString(value) ? Array.from(textOf(value)) : Array.isArray(value) ? iterate(value) : null
    if (items === null) throw typeError(`object of type '${typeName(value)}' has no len()`)
    if (items.length === 0) return new Undefined('No random item, sequence was empty.')
    // random.choice indexes the sequence: a Markup's item is Markup (Markup.__getitem__).
    const item = items[Math.floor(Math.random() * items.length)]
    return value instanceof Markup ? new Markup(item as string) : item
  }),
  reverse: define([], (_h, value) => {
    if (isString(value)) ticks(textOf(value).length >> 4)
    if (value instanceof Markup) return new Markup(Array.from(value.text).reverse().join(''))
    if (isString(value)) return Array.from(textOf(value)).reverse().join('')
    // reversed(range) is a range_iterator: lazy.
    if (value instanceof PyRange) return new PyIterator(value.reversed(), 'range_iterator')
    const items = iterableOrFail(value)
    ticks(items.length >> 4)
    return new PyIterator([...items].reverse(), Array.isArray(value) ? 'list_reverseiterator' : 'reversed')
  }),
  round: define([['precision', 0], ['method', 'common']], (_h, value, precision: unknown, method: unknown) => {
    if (method !== 'common' && method !== 'ceil' && method !== 'floor') {
      throw new TemplateRuntimeError('method must be common, ceil or floor', 'FilterArgumentError')
    }
    if (method === 'common') return pyRound(value, precision)
    const scale = 10 ** Number(precision)
    const x = toFloat(value) * scale
    // Python's math.ceil/floor return an int, and int 0 / scale is 0.0: never -0.0.
    const rounded = (method === 'ceil' ? Math.ceil(x) : Math.floor(x)) / scale
    return float(rounded === 0 ? 0 : rounded)
  }),
  safe: define([], (_h, value) => (value instanceof Markup ? value : new Markup(softStr(value)))),
  select: (host, value, args, kwargs) => selectOrReject(host, value, args, kwargs, true, false),
  selectattr: (host, value, args, kwargs) => selectOrReject(host, value, args, kwargs, true, true),
  slice: define([['slices'], ['fill_with', null]], (_h, value, slices: unknown, fillWith: unknown) => {
    const items = iterate(value)
    const count = Number(toInt(slices))
    checkList(count, () => `slice(${count})`)
    const perSlice = Math.floor(items.length / count)
    const withExtra = items.length % count
    let offset = 0
    const out: unknown[][] = []
    for (let n = 0; n < count; n++) {
      const start = offset + n * perSlice
      if (n < withExtra) offset++
      const end = offset + (n + 1) * perSlice
      tick()
      const part = items.slice(start, end)
      if (fillWith !== null && n >= withExtra) part.push(fillWith)
      out.push(part)
    }
    return new PyIterator(out)
  }),
  sort: define([['reverse', false], ['case_sensitive', false], ['attribute', null]], (_h, value, reverse: unknown, caseSensitive: unknown, attribute: unknown) =>
    pySorted(iterate(value), multiAttrGetter(attribute, truthy(caseSensitive) ? undefined : ignoreCase), truthy(reverse)),
  ),
  string: define([], (_h, value) => (value instanceof Markup ? value : softStr(value))),
  striptags: define([], (_h, value) => stripTags(softStr(value))),
  sum: define([['attribute', null], ['start', 0]], (_h, value, attribute: unknown, start: unknown) => {
    // The sum of a range from an int is exact in closed form (Python adds every item: the same int).
    if (value instanceof PyRange && attribute === null && (isInt(start) || typeof start === 'boolean')) return value.sum(typeof start === 'boolean' ? Number(start) : start)
    let items = iterate(value)
    // Python's sum() refuses a str or bytes start (after taking the iterator, before adding).
    if (isString(start)) throw typeError("sum() can't sum strings [use ''.join(seq) instead]")
    if (start instanceof Uint8Array) throw typeError("sum() can't sum bytes [use b''.join(seq) instead]")
    if (attribute !== null) items = mapTicked(items, attrGetter(attribute))
    let total = start
    for (const item of items) {
      tick()
      total = add(total, item)
    }
    return total
  }),
  title: define([], (_h, value) =>
    textTicked(softStr(value))
      .split(/([-\s({[<]+)/u)
      .filter(Boolean)
      .map((item) => {
        const [first = '', ...rest] = Array.from(item)
        return first.toUpperCase() + rest.join('').toLowerCase()
      })
      .join(''),
  ),
  tojson: define([['indent', null]], (_h, value, indentValue: unknown) => {
    const indent = indentValue === null ? null : typeof indentValue === 'string' ? indentValue : Number(toInt(indentValue))
    const width = indent === null ? 0 : typeof indent === 'string' ? indent.length : Math.max(0, indent)
    checkString(width, () => `tojson(indent=${width})`)
    // Every item of the value takes a line indented at least `width` characters.
    return new Markup(jinjaToJson(toPythonJson(value, width), indent))
  }),
  trim: keepsMarkup(define([['chars', null]], (_h, value, chars: unknown) => {
    const text = softStr(value)
    if (chars === null) return text.replace(TRIMMED_SPACE, '')
    const set = new Set(Array.from(softStr(chars)))
    const points = Array.from(textTicked(text))
    let start = 0
    let end = points.length
    while (start < end && set.has(points[start]!)) start++
    while (end > start && set.has(points[end - 1]!)) end--
    return points.slice(start, end).join('')
  })),
  truncate: define([['length', 255], ['killwords', false], ['end', '...'], ['leeway', null]], (_h, value, length: unknown, killwords: unknown, end: unknown, leeway: unknown) => {
    if (!(value instanceof Markup)) return truncate(value, length, killwords, end, leeway)
    // Markup slices stay Markup; the ending added to them is escaped.
    const cut = truncate(value.text, length, killwords, end, leeway) as string // a string in, a string out
    const ending = softStr(end)
    const endText = end instanceof Markup ? end.text : escapeHtml(ending)
    return new Markup(cut === value.text || !cut.endsWith(ending) ? cut : cut.slice(0, cut.length - ending.length) + endText)
  }),
  unique: define([['case_sensitive', false], ['attribute', null]], (_h, value, caseSensitive: unknown, attribute: unknown) => {
    const key = attrGetter(attribute, truthy(caseSensitive) ? undefined : ignoreCase)
    const seen = new Set<string>()
    const out: unknown[] = []
    for (const item of iterate(value)) {
      tick()
      const hash = hashKey(key(item))
      if (!seen.has(hash)) {
        seen.add(hash)
        out.push(item)
      }
    }
    return new PyIterator(out)
  }),
  upper: keepsMarkup(define([], (_h, value) => softStr(value).toUpperCase())),
  urlencode: define([], (_h, value) => {
    if (isString(value) || !(Array.isArray(value) || isDict(value) || value instanceof DictView || value instanceof PyIterator || value instanceof PyRange)) {
      return urlQuote(value, false)
    }
    const pairs = isDict(value) ? dictItems(value) : mapTicked(iterate(value), (pair) => iterate(pair))
    return joinChecked(mapTicked(pairs, ([k, v]) => `${urlQuote(k, true)}=${urlQuote(v, true)}`), '&', () => `urlencode of ${pairs.length} pairs`)
  }),
  urlize: define([['trim_url_limit', null], ['nofollow', false], ['target', null], ['rel', null], ['extra_schemes', null]], (_h, value, limit: unknown, nofollow: unknown, target: unknown, rel: unknown, extraSchemes: unknown) => {
    const relParts = new Set(softStr(rel ?? '').split(/\s+/).filter(Boolean))
    if (truthy(nofollow)) relParts.add('nofollow')
    relParts.add('noopener')
    return urlize(softStr(value), {
      trimUrlLimit: limit === null ? null : Number(toInt(limit)),
      rel: [...relParts].sort().join(' ') || null,
      target: target === null ? null : softStr(target),
      extraSchemes: extraSchemes === null ? [] : iterate(extraSchemes).map(softStr),
    })
  }),
  wordcount: define([], (_h, value) => wordCount(softStr(value))),
  wordwrap: define([['width', 79], ['break_long_words', true], ['wrapstring', null], ['break_on_hyphens', true]], (_h, value, width: unknown, breakLong: unknown, wrapstring: unknown, hyphens: unknown) => {
    const separator = wrapstring === null ? '\n' : softStr(wrapstring)
    const lines = pySplitlines(wrapSource(value))
    const size = Number(toInt(width))
    const what = () => `wordwrap(${size}) with a separator of ${separator.length} characters`
    const paragraphs = mapTicked(lines, (line) => joinChecked(textWrap(line, size, truthy(breakLong), truthy(hyphens)), separator, what))
    return joinChecked(paragraphs, separator, what)
  }),
  xmlattr: define([['autospace', true]], (_h, value, autospace: unknown) => {
    if (!isDict(value)) throw noItems(value)
    const items: string[] = []
    for (const [key, item] of dictItems(value)) {
      tick()
      if (item === null || item instanceof Undefined) continue
      // re.search on the key: a str only.
      if (!isString(key)) throw typeError(`expected string or bytes-like object, got '${typeName(key)}'`)
      if (XML_ATTRIBUTE_KEY.test(textOf(key))) throw valueError(`Invalid character in attribute name: ${pyRepr(key)}`)
      items.push(`${escape(key).text}="${escape(item).text}"`)
    }
    const out = items.join(' ')
    // A str outside `{% autoescape %}` (Markup inside it: autoescape.ts), as Jinja's do_xmlattr.
    return truthy(autospace) && out ? ' ' + out : out
  }),
}
for (const [name, filter] of Object.entries(STOCK_FILTERS)) (filter as NamedFilter).pythonName = `do_${name}`
STOCK_FILTERS.d = STOCK_FILTERS.default!
STOCK_FILTERS.e = STOCK_FILTERS.escape!

/** Groups compare keys with `==` (Python's itertools.groupby). */
function groupHash(key: unknown): string {
  try {
    return hashKey(key)
  } catch {
    return pyRepr(key)
  }
}

export { bind } from './filter-arguments.js'
