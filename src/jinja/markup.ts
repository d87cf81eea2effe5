/**
 * markupsafe 3's `Markup` methods: a `str` subclass whose methods return Markup and escape the
 * strings they are given, so text marked safe stays safe and text added to it is escaped.
 *
 * Contract:
 * - `markupEscape(value)` is markupsafe's `escape`: a Markup as it is, anything else `str()`-ed
 *   and escaped (`escape(None)` is `Markup('None')`, `escape(1)` `Markup('1')`).
 * - `MARKUP_METHODS[name](text, args, kwargs)` (methods.ts binds them to a Markup's text):
 *   `capitalize` `casefold` `center` `expandtabs` `ljust` `lower` `lstrip` `removeprefix`
 *   `removesuffix` `replace` `rjust` `rstrip` `strip` `swapcase` `title` `upper` `zfill` return
 *   Markup; `split` `rsplit` `splitlines` a list of Markup, `partition` `rpartition` a tuple of
 *   Markup; `replace` escapes `new`, `center`/`ljust`/`rjust` their fill character (which must
 *   still be one character: `'&'` is not), `join` every item (any value: `escape(1)`),
 *   `format`/`format_map` every field (`EscapeFormatter`, format.ts: a `string.Formatter`, so
 *   `format_map` subscripts its mapping, a dict of any keys or not, only for a field that needs
 *   it, and a positional field is `tuple index out of range`); `translate` returns Markup of the
 *   str result, unescaped. `format_map` and `translate` take one positional-only argument, with
 *   Python's errors. `striptags()` and `unescape()` return a plain str. Every other str method
 *   is the str one on the text.
 * - `escapedArgument(value, conversion)` is how `Markup % args` reads an argument
 *   (`_MarkupEscapeHelper`): `%s` escaped `str()` (a Markup as it is), `%r`/`%a` escaped
 *   `repr()`, `%d %i %u` `int(value)` (a str is parsed; a value without `int()` is Python's
 *   TypeError naming `_MarkupEscapeHelper`), `%e %f %g` `float(value)`; `%x %o %c` always fail,
 *   as they do in Python (the helper is no int).
 */
import { TemplateRuntimeError, typeError } from './errors.js'
import { escapeHtml, stripTags, unescapeHtml } from './escape.js'
import { toFloat, toInt } from './conversions.js'
import { pyAscii, strFormat } from './format.js'
import { STR_METHODS, arg, formatLookup, pyTranslate, type Method } from './str-methods.js'
import { iterate } from './protocols.js'
import { brief, joinChecked } from './limits.js'
import { tick } from './render-budget.js'
import { Markup, pyRepr, pyStr, tuple } from './values.js'

/** markupsafe's `escape(value)`. */
export function markupEscape(value: unknown): Markup {
  return value instanceof Markup ? value : new Markup(escapeHtml(pyStr(value)))
}

const strMethod = (name: string): Method => STR_METHODS[name]!

/** A str method whose str result becomes Markup. */
function keeping(name: string): Method {
  const method = strMethod(name)
  return (text: string, args, kwargs) => new Markup(method(text as never, args, kwargs) as string)
}

/** A str method whose list or tuple of str becomes one of Markup. */
function keepingEach(name: string, asTuple: boolean): Method {
  const method = strMethod(name)
  return (text: string, args, kwargs) => {
    const parts = (method(text as never, args, kwargs) as string[]).map((part) => new Markup(part))
    return asTuple ? tuple(parts) : parts
  }
}

/** `center`/`ljust`/`rjust`: the fill character escaped (so `'<'` is four characters, refused). */
function padding(name: string): Method {
  const method = strMethod(name)
  return (text: string, args, kwargs) => {
    const fill = markupEscape(arg(args, kwargs, 1, 'fillchar', ' ')).text
    return new Markup(method(text as never, [args[0], fill], {}) as string)
  }
}

/** The one positional-only parameter of a Markup method (`def format_map(self, mapping, /)`), with Python's errors. */
function onlyArgument(method: string, parameter: string, args: unknown[], kwargs: Record<string, unknown>): unknown {
  const keywords = Object.keys(kwargs)
  if (keywords.includes(parameter)) {
    throw typeError(`Markup.${method}() got some positional-only arguments passed as keyword arguments: '${parameter}'`)
  }
  if (keywords.length > 0) throw typeError(`Markup.${method}() got an unexpected keyword argument '${keywords[0]}'`)
  if (args.length > 1) throw typeError(`Markup.${method}() takes 2 positional arguments but ${args.length + 1} were given`)
  if (args.length === 0) throw typeError(`Markup.${method}() missing 1 required positional argument: '${parameter}'`)
  return args[0]
}

export const MARKUP_METHODS: Record<string, Method> = {
  ...Object.fromEntries(
    ['capitalize', 'casefold', 'expandtabs', 'lower', 'lstrip', 'removeprefix', 'removesuffix', 'rstrip', 'strip', 'swapcase', 'title', 'upper', 'zfill'].map(
      (name) => [name, keeping(name)],
    ),
  ),
  split: keepingEach('split', false),
  rsplit: keepingEach('rsplit', false),
  splitlines: keepingEach('splitlines', false),
  partition: keepingEach('partition', true),
  rpartition: keepingEach('rpartition', true),
  center: padding('center'),
  ljust: padding('ljust'),
  rjust: padding('rjust'),
  replace: (text: string, args, kwargs) => {
    const replaced = strMethod('replace')(text as never, [args[0], markupEscape(args[1]), ...args.slice(2)], kwargs)
    return new Markup(replaced as string)
  },
  join: (text: string, args) => {
    const items = iterate(args[0])
    const parts = new Array<string>(items.length)
    for (let i = 0; i < items.length; i++) {
      tick()
      parts[i] = markupEscape(items[i]).text
    }
    return new Markup(joinChecked(parts, text, () => `${brief(text)}.join() of ${parts.length} strings`))
  },
  format: (text: string, args, kwargs) => new Markup(strFormat(text, args, kwargs, formatLookup, true)),
  // vformat(self, (), mapping): the mapping is subscripted only for a field that needs it.
  format_map: (text: string, args, kwargs) => new Markup(strFormat(text, [], onlyArgument('format_map', 'mapping', args, kwargs), formatLookup, true)),
  // Not escaped: super().translate(table) made Markup.
  translate: (text: string, args, kwargs) => new Markup(pyTranslate(text, onlyArgument('translate', 'table', args, kwargs))),
  striptags: (text: string) => stripTags(text),
  unescape: (text: string) => unescapeHtml(text),
}

/** markupsafe's `_MarkupEscapeHelper` as `%` reads it (format.ts `percentFormat`). */
export function escapedArgument(value: unknown, conversion: string): unknown {
  switch (conversion) {
    case 's':
      return markupEscape(value).text
    case 'r':
      return escapeHtml(pyRepr(value))
    case 'a':
      return escapeHtml(pyAscii(value))
    case 'd':
    case 'i':
    case 'u':
      try {
        return toInt(value)
      } catch (error) {
        // Python's `%d` turns int()'s TypeError into its own, naming the helper's type.
        if (error instanceof TemplateRuntimeError && error.pythonType === 'TypeError') {
          throw typeError(`%${conversion} format: a real number is required, not _MarkupEscapeHelper`)
        }
        throw error
      }
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
      return toFloat(value)
    case 'o':
    case 'x':
    case 'X':
      throw typeError(`%${conversion} format: an integer is required, not _MarkupEscapeHelper`)
    case 'c':
      throw typeError('%c requires int or char')
    default:
      return value
  }
}
