/**
 * `{% autoescape true %}` blocks: what Jinja2 3.1 compiles differently inside them (the Python
 * implementation's environment has autoescape off, so only such blocks escape).
 *
 * Contract:
 * - `escapeOutput(value)`: a `{{ }}` inside the block: Markup as it is, anything else escaped
 *   after Python's `str()` (`None`, `True`). `escapeConstant(value)`: a literal printed there,
 *   folded by Jinja at compile time: the same text.
 * - `markupJoin(parts)`: `~` inside the block (Jinja's `markup_join`): with a Markup among the
 *   parts the result is Markup and the other parts are escaped; else plain concatenation.
 * - `AUTOESCAPE_FILTERS`: the eval-context filters' variants for the block (`join`, `replace`,
 *   `urlize`, `xmlattr`), as Jinja's `@pass_eval_context` filters behave with autoescape on.
 */
import { escapeHtml } from './escape.js'
import type { FilterFunction } from './compiled-template.js'
import { toInt } from './conversions.js'
import { attrGetter, bind, softStr } from './filter-arguments.js'
import { STOCK_FILTERS } from './filters.js'
import { iterate } from './protocols.js'
import { pyReplace } from './str-methods.js'
import { Markup, pyStr, toOutput } from './values.js'

export function escapeOutput(value: unknown): string {
  return value instanceof Markup ? value.text : escapeHtml(toOutput(value))
}

export function escapeConstant(value: unknown): string {
  return value instanceof Markup ? value.text : escapeHtml(pyStr(value))
}

export function markupJoin(parts: unknown[]): string | Markup {
  if (!parts.some((part) => part instanceof Markup)) return parts.map((part) => (typeof part === 'string' ? part : pyStr(part))).join('')
  return new Markup(parts.map((part) => (part instanceof Markup ? part.text : escapeHtml(pyStr(part)))).join(''))
}

function textOrEscaped(value: unknown): string {
  return value instanceof Markup ? value.text : escapeHtml(softStr(value))
}

export const AUTOESCAPE_FILTERS: Record<string, FilterFunction> = {
  // do_join: with a Markup separator or item, every other part is escaped and the result is Markup.
  join: (host, value, args, kwargs) => {
    const [separator, attribute] = bind('do_join', [['d', ''], ['attribute', null]], args, kwargs)
    let items = iterate(value)
    if (attribute !== null) items = items.map(attrGetter(attribute))
    if (!(separator instanceof Markup) && !items.some((item) => item instanceof Markup)) return items.map(softStr).join(softStr(separator))
    return new Markup(items.map(textOrEscaped).join(textOrEscaped(separator)))
  },
  // do_replace: a Markup old or new escapes a plain string first; Markup.replace escapes `new` only.
  replace: (host, value, args, kwargs) => {
    const [old, replacement, count] = bind('do_replace', [['old'], ['new'], ['count', null]], args, kwargs)
    const limit = count === null ? -1 : Number(toInt(count))
    const markup = value instanceof Markup || old instanceof Markup || replacement instanceof Markup
    if (!markup) return pyReplace(softStr(value), softStr(old), softStr(replacement), limit)
    return new Markup(pyReplace(textOrEscaped(value), softStr(old), textOrEscaped(replacement), limit))
  },
  urlize: (host, value, args, kwargs) => new Markup(softStr(STOCK_FILTERS.urlize!(host, value, args, kwargs))),
  xmlattr: (host, value, args, kwargs) => new Markup(softStr(STOCK_FILTERS.xmlattr!(host, value, args, kwargs))),
}
