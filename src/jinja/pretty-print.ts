/**
 * Python's `pprint.pformat(value)`, which Jinja's `pprint` filter returns: the value's repr with
 * dict keys sorted, broken over lines where it does not fit in 80 columns, as
 * `PrettyPrinter(indent=1, width=80, sort_dicts=True)` breaks it (Python 3.11's pprint.py).
 *
 * Contract: `pformat(value)` → the text. A value whose repr (dicts sorted at every depth) fits in
 * what is left of the line is written as that repr. One that does not is broken when it is a
 * dict (one `key: value` per line, keys in code-point order, each value indented past its key),
 * a list or a tuple (one item per line, one column in), or a string (adjacent literals, split
 * after whitespace, one per line; a string at the top level is wrapped in parentheses); anything
 * else (a dict view, a range, Markup, `groupby`'s named tuples: their `__repr__` is not one
 * pprint knows, so it neither breaks them nor sorts the dicts inside) stays its repr.
 * Widths count code points, as Python's `len` does. Found by the parity fixture (issue #15):
 * the filter used to print every value on one line.
 */
import { compareCodePoints } from './code-point-order.js'
import { pySplitlines } from './str-methods.js'
import { PyDict, dictItems } from './dict.js'
import { TemplateRuntimeError } from './errors.js'
import { pyLess } from './protocols.js'
import { DictBase, Markup, isDict, isTuple, namedTupleInfo, pyRepr, reprString, tuple, typeName, type Dict } from './values.js'
import { PY_SPACE } from './python-space.js'

const WIDTH = 80
const INDENT_PER_LEVEL = 1

export function pformat(value: unknown): string {
  const out: string[] = []
  format(value, 0, 0, 0, out)
  return out.join('')
}

/** pprint's `_safe_repr`: repr with dict keys sorted at every depth. */
function safeRepr(value: unknown): string {
  return pyRepr(sortDicts(value))
}

function sortDicts(value: unknown): unknown {
  if (namedTupleInfo(value)) return value
  if (Array.isArray(value)) {
    const mapped = value.map(sortDicts)
    return isTuple(value) ? tuple(mapped) : mapped
  }
  if (isDict(value)) return PyDict.fromEntries(sortedItems(value).map(([key, item]) => [key, sortDicts(item)]))
  return value
}

/**
 * A dict's items in pprint's order (`sorted(items, key=_safe_tuple)`): by key with `<`, keys of
 * types that do not compare by their type's name (`<class 'int'>` before `<class 'str'>`), in
 * their order when that is equal too (Python: by id).
 */
function sortedItems(dict: Dict): [unknown, unknown][] {
  const items = dictItems(dict)
  if (!(dict instanceof DictBase)) return items.sort((a, b) => compareCodePoints(a[0] as string, b[0] as string))
  return items.sort((a, b) => (safeLess(a[0], b[0]) ? -1 : safeLess(b[0], a[0]) ? 1 : 0))
}

/** pprint's `_safe_key.__lt__`. */
function safeLess(a: unknown, b: unknown): boolean {
  try {
    return pyLess(a, b)
  } catch (error) {
    if (!(error instanceof TemplateRuntimeError && error.pythonType === 'TypeError')) throw error
    return compareCodePoints(classText(a), classText(b)) < 0
  }
}

/** `str(type(value))`. */
function classText(value: unknown): string {
  return `<class '${value instanceof Markup ? 'markupsafe.Markup' : typeName(value)}'>`
}

function width(text: string): number {
  let count = 0
  for (const _char of text) count++
  return count
}

/** `PrettyPrinter._format`: the repr, unless it is too wide and the value is one pprint breaks. */
function format(value: unknown, indent: number, allowance: number, level: number, out: string[]): void {
  const rep = safeRepr(value)
  if (width(rep) > WIDTH - indent - allowance) {
    if (isDict(value)) return formatDict(value, indent, allowance, level + 1, out)
    if (Array.isArray(value) && !namedTupleInfo(value)) return formatSequence(value, indent, allowance, level + 1, out)
    if (typeof value === 'string' && value !== '') return formatString(value, indent, allowance, level + 1, out)
  }
  out.push(rep)
}

function formatDict(value: Dict, indent: number, allowance: number, level: number, out: string[]): void {
  out.push('{')
  const items = sortedItems(value)
  const inner = indent + INDENT_PER_LEVEL
  items.forEach(([key, item], i) => {
    const last = i === items.length - 1
    const rep = pyRepr(key)
    out.push(rep, ': ')
    format(item, inner + width(rep) + 2, last ? allowance + 1 : 1, level, out)
    if (!last) out.push(',\n' + ' '.repeat(inner))
  })
  out.push('}')
}

function formatSequence(items: unknown[], indent: number, allowance: number, level: number, out: string[]): void {
  const [open, close] = isTuple(items) ? ['(', items.length === 1 ? ',)' : ')'] : ['[', ']']
  out.push(open)
  const inner = indent + INDENT_PER_LEVEL
  items.forEach((item, i) => {
    const last = i === items.length - 1
    if (i > 0) out.push(',\n' + ' '.repeat(inner))
    format(item, inner, last ? allowance + close.length : 1, level, out)
  })
  out.push(close)
}

const SPACE = PY_SPACE
/** `re.findall(r'\S*\s*', line)` without its final empty match. */
const WORD_AND_SPACE = new RegExp(`[^${SPACE}]*[${SPACE}]*`, 'gu')

/** `PrettyPrinter._pprint_str`: the string as adjacent literals, each line split after its spaces. */
function formatString(value: string, indent: number, allowance: number, level: number, out: string[]): void {
  if (level === 1) {
    indent += 1
    allowance += 1
  }
  const chunks: string[] = []
  const lines = pySplitlines(value, true)
  const maxWidth = WIDTH - indent
  lines.forEach((line, i) => {
    const lastLine = i === lines.length - 1
    const rep = reprString(line)
    if (width(rep) <= (lastLine ? maxWidth - allowance : maxWidth)) {
      chunks.push(rep)
      return
    }
    const parts = (line.match(WORD_AND_SPACE) ?? []).filter((part) => part !== '')
    let current = ''
    parts.forEach((part, j) => {
      const candidate = current + part
      const limit = j === parts.length - 1 && lastLine ? maxWidth - allowance : maxWidth
      if (width(reprString(candidate)) > limit) {
        if (current) chunks.push(reprString(current))
        current = part
      } else {
        current = candidate
      }
    })
    if (current) chunks.push(reprString(current))
  })
  if (chunks.length === 1) {
    out.push(chunks[0]!)
    return
  }
  if (level === 1) out.push('(')
  out.push(chunks.join('\n' + ' '.repeat(indent)))
  if (level === 1) out.push(')')
}
