/**
 * Every stock Jinja2 3.1 test (its `tests.py`) and its globals (`range`, `dict`, `lipsum`,
 * `cycler`, `joiner`, `namespace`), on the template value model.
 *
 * Contract: `STOCK_TESTS[name](host, value, args, kwargs)` returns a boolean, with Jinja's aliases
 * (`==`/`eq`/`equalto`, `<`/`lt`/`lessthan`, …); `number` is true for booleans too, `integer` is
 * not; `sequence` is anything with a length and items (dicts included); an Undefined is only
 * `undefined` (and `callable`, as StrictUndefined defines `__call__`). `STOCK_GLOBALS()` makes
 * the globals of one environment; `lipsum` makes random Lorem ipsum as Jinja's (lorem-ipsum.ts);
 * `range` is lazy (range.ts), exact for ints past 2^53.
 */
import { PythonFloat } from './python-float.js'
import type { TestFunction } from './compiled-template.js'
import { TemplateRuntimeError, typeError, valueError } from './errors.js'
import { bind } from './filters.js'
import { Cycler, Joiner } from './runtime.js'
import { DictView, Markup, Namespace, PyCallable, PyFunction, PyIterator, PyRange, Undefined, fail, isDict, isInt, isString, pyStr, typeName } from './values.js'
import { contains, isIterable, pyCompare, pyEq, pyLen, truthy } from './protocols.js'
import { modulo } from './operators.js'
import { toInt } from './conversions.js'
import { PyDict } from './dict.js'
import { dictUpdate } from './methods.js'
import { loremIpsum } from './lorem-ipsum.js'

function test(params: readonly (readonly [string, unknown?])[], fn: (value: unknown, ...args: never[]) => boolean): TestFunction {
  return (_host, value, args, kwargs) => (fn as (v: unknown, ...a: unknown[]) => boolean)(value, ...bind('test', params, args, kwargs))
}

const compare = (op: string): TestFunction => test([['other']], (value, other: unknown) => pyCompare(op, value, other))

function defined(value: unknown): boolean {
  return !(value instanceof Undefined)
}

function integer(value: unknown): boolean {
  return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint'
}

function strictly<T>(value: unknown, run: () => T): T {
  if (value instanceof Undefined) fail(value)
  return run()
}

export const STOCK_TESTS: Record<string, TestFunction> = {
  boolean: test([], (value) => typeof value === 'boolean'),
  callable: test([], (value) => value instanceof PyCallable || typeof value === 'function' || value instanceof Undefined),
  defined: test([], defined),
  divisibleby: test([['num']], (value, num: unknown) => strictly(value, () => pyEq(modulo(value, num), 0))),
  escaped: test([], (value) => value instanceof Markup),
  even: test([], (value) => strictly(value, () => pyEq(modulo(value, 2), 0))),
  false: test([], (value) => value === false),
  filter: (host, value) => typeof value === 'string' && Object.hasOwn(host.filters, value),
  float: test([], (value) => (typeof value === 'number' && !Number.isInteger(value)) || value instanceof PythonFloat),
  in: test([['seq']], (value, seq: unknown) => contains(seq, value)),
  integer: test([], integer),
  iterable: test([], (value) => strictly(value, () => isIterable(value))),
  lower: test([], (value) => {
    const text = pyStr(value)
    return text !== text.toUpperCase() && text === text.toLowerCase()
  }),
  mapping: test([], (value) => isDict(value)),
  none: test([], (value) => value === null),
  number: test([], (value) => typeof value === 'number' || typeof value === 'bigint' || value instanceof PythonFloat || typeof value === 'boolean'),
  odd: test([], (value) => strictly(value, () => pyEq(modulo(value, 2), 1))),
  sameas: test([['other']], (value, other: unknown) => value === other),
  sequence: test([], (value) => {
    if (value instanceof Undefined) fail(value)
    try {
      pyLen(value)
      return !(value instanceof DictView)
    } catch {
      return false
    }
  }),
  string: test([], (value) => isString(value)),
  test: (host, value) => typeof value === 'string' && Object.hasOwn(host.tests, value),
  true: test([], (value) => value === true),
  undefined: test([], (value) => !defined(value)),
  upper: test([], (value) => {
    const text = pyStr(value)
    return text !== text.toLowerCase() && text === text.toUpperCase()
  }),
  eq: compare('=='),
  ne: compare('!='),
  lt: compare('<'),
  le: compare('<='),
  gt: compare('>'),
  ge: compare('>='),
}
Object.assign(STOCK_TESTS, {
  '==': STOCK_TESTS.eq,
  equalto: STOCK_TESTS.eq,
  '!=': STOCK_TESTS.ne,
  '<': STOCK_TESTS.lt,
  lessthan: STOCK_TESTS.lt,
  '<=': STOCK_TESTS.le,
  '>': STOCK_TESTS.gt,
  greaterthan: STOCK_TESTS.gt,
  '>=': STOCK_TESTS.ge,
})

function rangeArg(value: unknown): number | bigint {
  if (typeof value === 'number' && Number.isInteger(value)) return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'bigint') return value
  if (value instanceof Undefined) fail(value)
  throw typeError(`'${value instanceof PythonFloat || typeof value === 'number' ? 'float' : typeof value}' object cannot be interpreted as an integer`)
}

/** The globals of a Jinja environment (a fresh set per environment: cyclers and joiners are made per call). */
export function stockGlobals(): Record<string, unknown> {
  return {
    range: new PyFunction(
      'range',
      (args) => {
        if (args.length === 0 || args.length > 3) throw typeError(`range expected at most 3 arguments, got ${args.length}`)
        const [a, b, c] = args.map(rangeArg)
        if (args.length === 1) return new PyRange(0, a!, 1)
        if (c === 0 || c === 0n) throw valueError('range() arg 3 must not be zero')
        return new PyRange(a!, b!, c ?? 1)
      },
      "<class 'range'>",
    ),
    dict: new PyFunction(
      'dict',
      (args, kwargs) => {
        if (args.length > 1) throw typeError(`dict expected at most 1 argument, got ${args.length}`)
        const out = new PyDict()
        dictUpdate(out, args[0], kwargs)
        return out
      },
      "<class 'dict'>",
    ),
    lipsum: new PyFunction('generate_lorem_ipsum', (args, kwargs) => {
      const [n, html, min, max] = bind('generate_lorem_ipsum', [['n', 5], ['html', true], ['min', 20], ['max', 100]], args, kwargs)
      // Python's `range(n)` takes an int only; `randrange(min, max)` (run once a paragraph, so
      // never when n <= 0) an int or an integral value (`2.0`).
      if (!isInt(n) && typeof n !== 'boolean') throw typeError(`'${typeName(n)}' object cannot be interpreted as an integer`)
      const count = Number(n)
      if (count <= 0) return loremIpsum(0, truthy(html), 0, 0)
      return loremIpsum(count, truthy(html), randrangeArgument(min, 'arg 1'), randrangeArgument(max, 'stop'))
    }),
    cycler: new PyFunction('Cycler', (args) => new Cycler(args), "<class 'jinja2.utils.Cycler'>"),
    joiner: new PyFunction('Joiner', (args, kwargs) => new Joiner(pyStr(args[0] ?? kwargs.sep ?? ', ')), "<class 'jinja2.utils.Joiner'>"),
    namespace: new PyFunction(
      'Namespace',
      (args, kwargs) => {
        // Jinja's Namespace keeps `dict(*args, **kwargs)`.
        if (args.length > 1) throw typeError(`dict expected at most 1 argument, got ${args.length}`)
        const attrs = new PyDict()
        dictUpdate(attrs, args[0], kwargs)
        return new Namespace(attrs)
      },
      "<class 'jinja2.utils.Namespace'>",
    ),
  }
}

export { PyIterator }

/** An argument of Python 3.11's `random.randrange`: an int, or a value `int()` turns into an equal int. */
function randrangeArgument(value: unknown, what: 'arg 1' | 'stop'): number {
  if (isInt(value) || typeof value === 'boolean') return Number(value)
  const converted = toInt(value)
  if (!pyEq(converted, value)) throw valueError(`non-integer ${what} for randrange()`)
  return Number(converted)
}
