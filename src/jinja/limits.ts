/**
 * The bounds on what one render may build and how deep a template may nest or recurse (issue
 * #34: a hostile template ends in a clear error, never a crash, a hang or an exhausted heap),
 * and the errors that name them.
 *
 * Contract:
 * - Sizes: a string a template builds (repetition, `~`/`+`, `join`, widths of `center`, `format`,
 *   `%`, `indent`, `wordwrap`, `replace`, …) holds at most `MAX_STRING_LENGTH` UTF-16 units; the
 *   render's output at most `MAX_OUTPUT_LENGTH`; a list (repetition, `+`, `list` of a range,
 *   `batch`, `slice`, …) at most `MAX_LIST_LENGTH` items. Operations check the size they would
 *   make before making it: `stringTooLong`, `listTooLong`, `outputTooLong` build the error
 *   (`<what> would make a string of <n> characters, more than the limit of 16777216`).
 * - Integers: an int made by `*` or `**` has at most `MAX_INT_BITS` bits (`intTooLarge`).
 * - Depths: `MAX_NESTING_DEPTH` levels of tags and expressions nested in a template (parser and
 *   compiler: a `TemplateSyntaxError`), `MAX_MACRO_DEPTH` nested macro calls, `MAX_LOOP_DEPTH`
 *   nested `loop()` calls of a recursive loop, `MAX_TEMPLATE_DEPTH` nested includes, imports and
 *   extends; `macroTooDeep`, `loopTooDeep`, `templateTooDeep` build those errors.
 * - `fromRangeError(error)`: JavaScript's own RangeErrors (stack overflow, invalid string or array
 *   length) as a sentence, keeping the template position stamped on them; the engine's last resort.
 * - `joinChecked(parts, separator, what)` joins strings after checking the length of the result.
 * - `brief(value)`: a value as an error message shows it (Python's repr, cut short).
 */
import { stampPosition, TemplateLimitError } from './errors.js'
import { ticks } from './render-budget.js'

/**
 * 16 Mi UTF-16 units: 32 MiB for the largest string, far beyond any page or SQL text a template
 * should write (a long Markdown document is well under 1 MiB), yet small enough that the few
 * copies an operation holds at once (operands, result, the output it is appended to) stay far
 * below 1 GiB, and far below V8's own maximum string length (2^29 - 24 units), past which
 * JavaScript fails with its internal "Invalid string length".
 */
export const MAX_STRING_LENGTH = 16 * 1024 * 1024
/** The whole output of a render: the same bound as one string (it is one string). */
export const MAX_OUTPUT_LENGTH = MAX_STRING_LENGTH
/**
 * 16 Mi items: a list of them is 128 MiB of references (8 bytes each), so an operation that
 * holds a list and its copy (`sort`, `reverse`, `list`) stays under 1 GiB; far more than the
 * rows of any document table a template iterates.
 */
export const MAX_LIST_LENGTH = 16 * 1024 * 1024
/**
 * 1 Mi bits (about 315,000 decimal digits) for an int made by `*` or `**`: V8 multiplies such ints
 * in ~10 ms and prints one in ~80 ms (one uninterruptible call each; 4 Mi bits take ~0.5 s to
 * print), while Python 3.11 already refuses to print an int of more than 4300 digits.
 */
export const MAX_INT_BITS = 1024 * 1024
/**
 * Levels of tags and expressions nested in one template (brackets, unary operators, operator
 * chains, filters, attribute chains, `if`/`for`/`with`… tags), counted together. Jinja2 3.1.6
 * on Python's default recursion limit of 1000 frames accepts at most 491 (a chain of `+` or of
 * unary `-`, `not`, inline `if`), 246 nested `with` tags, 197 filters, 75 nested lists, 69
 * nested parentheses; each of those levels costs Python at least two frames of its 1000, so
 * every template Jinja accepts nests at most 500 levels here. Measured on Node 20 (a cold
 * process, `--stack-size` lowered until the render failed; the default stack is 984 KiB): 500
 * nested parentheses or lists parse in under 500 KiB, 500 nested `if` tags in under 700 KiB,
 * a chain of 500 `+` compiles and renders in under 150 KiB.
 */
export const MAX_NESTING_DEPTH = 500
/**
 * Nested macro calls (and `caller()` calls). Jinja2 allows a macro to recurse 247 levels deep
 * (Python's recursion limit); 500 keeps every such template working and stays within the stack
 * (500 levels of a macro calling itself from an `if` render in under 700 KiB, measured cold).
 */
export const MAX_MACRO_DEPTH = 500
/** Nested `loop(…)` calls of a recursive for loop: Jinja2 allows 247; as macros, 500. */
export const MAX_LOOP_DEPTH = 500
/**
 * Nested templates: includes, imports and extends. Jinja2 allows a template to include itself
 * (with a base case) 988 levels deep, so this is 1000. 988 levels of a template that includes
 * itself from inside an `if` and a `with` render in under 900 KiB of stack (measured cold): more
 * tags around the include, or a deep caller, can run out of stack first, which the engine then
 * reports as `the template nests or recurses too deeply: the stack of the renderer ran out`.
 */
export const MAX_TEMPLATE_DEPTH = 1000

export function stringTooLong(what: string, length: number | bigint): TemplateLimitError {
  return new TemplateLimitError(
    `${what} would make a string of ${length} characters, more than the limit of ${MAX_STRING_LENGTH}`,
    'string',
    MAX_STRING_LENGTH,
  )
}

/** A string found too long while being written (its final length is not known). */
export function stringPastLimit(what: string): TemplateLimitError {
  return new TemplateLimitError(`${what} would make a string of more than ${MAX_STRING_LENGTH} characters, the limit`, 'string', MAX_STRING_LENGTH)
}

export function intTooLarge(what: string, bits: number | bigint): TemplateLimitError {
  return new TemplateLimitError(`${what} would make an integer of about ${bits} bits, more than the limit of ${MAX_INT_BITS}`, 'integer', MAX_INT_BITS)
}

export function listTooLong(what: string, length: number | bigint): TemplateLimitError {
  return new TemplateLimitError(`${what} would make a list of ${length} items, more than the limit of ${MAX_LIST_LENGTH}`, 'list', MAX_LIST_LENGTH)
}

export function outputTooLong(length: number): TemplateLimitError {
  return new TemplateLimitError(
    `the output grew to ${length} characters, more than the limit of ${MAX_OUTPUT_LENGTH}`,
    'output',
    MAX_OUTPUT_LENGTH,
  )
}

/** Throws when a string of `length` units would be past the bound. */
export function checkString(length: number | bigint, what: () => string): void {
  if (length > MAX_STRING_LENGTH) throw stringTooLong(what(), length)
}

/** `parts.join(separator)`, refused (`what`) when the result would be past `MAX_STRING_LENGTH`. */
export function joinChecked(parts: readonly string[], separator: string, what: () => string): string {
  let total = parts.length > 1 ? separator.length * (parts.length - 1) : 0
  for (let i = 0; i < parts.length; i++) total += parts[i]!.length
  ticks(parts.length)
  if (total > MAX_STRING_LENGTH) throw stringTooLong(what(), total)
  return parts.join(separator)
}

/** Throws when a list of `length` items would be past the bound. */
export function checkList(length: number | bigint, what: () => string): void {
  if (length > MAX_LIST_LENGTH) throw listTooLong(what(), length)
}

export function macroTooDeep(name: string, calledItself: boolean): TemplateLimitError {
  const message = calledItself
    ? `macro '${name}' called itself more than ${MAX_MACRO_DEPTH} levels deep`
    : `macros called each other more than ${MAX_MACRO_DEPTH} levels deep (calling macro '${name}')`
  return new TemplateLimitError(message, 'macro-depth', MAX_MACRO_DEPTH)
}

export function loopTooDeep(): TemplateLimitError {
  return new TemplateLimitError(`a recursive loop called loop() more than ${MAX_LOOP_DEPTH} levels deep`, 'loop-depth', MAX_LOOP_DEPTH)
}

export function templateTooDeep(name: string, how: 'includes' | 'imports' | 'extends', itself: boolean): TemplateLimitError {
  const verb = how.slice(0, -1)
  const message = itself
    ? `template '${name}' ${how} itself more than ${MAX_TEMPLATE_DEPTH} levels deep`
    : `templates ${verb} each other more than ${MAX_TEMPLATE_DEPTH} levels deep (at template '${name}')`
  return new TemplateLimitError(message, 'template-depth', MAX_TEMPLATE_DEPTH)
}

/** JavaScript's RangeError as a sentence (the position stamped on it is kept), or the error itself. */
export function fromRangeError(error: unknown): unknown {
  if (!(error instanceof RangeError)) return error
  const text = error.message
  let message: string
  let limit: TemplateLimitError['limit'] = 'stack'
  let max = 0
  if (/call stack/i.test(text)) message = 'the template nests or recurses too deeply: the stack of the renderer ran out'
  else if (/string length/i.test(text)) {
    message = `a string grew past what the renderer can hold (the limit is ${MAX_STRING_LENGTH} characters)`
    limit = 'string'
    max = MAX_STRING_LENGTH
  } else if (/array length/i.test(text)) {
    message = `a list grew past what the renderer can hold (the limit is ${MAX_LIST_LENGTH} items)`
    limit = 'list'
    max = MAX_LIST_LENGTH
  } else if (/bigint/i.test(text)) message = 'an integer grew too large to compute with'
  else message = 'a number is out of the range the operation accepts'
  const converted = new TemplateLimitError(message, limit, max)
  const stamped = error as { templateName?: string; line?: number; column?: number }
  if (stamped.templateName !== undefined) stampPosition(converted, stamped.templateName, stamped.line!, stamped.column)
  ;(converted as { cause?: unknown }).cause = error
  return converted
}

/** A value as an error message shows it: Python's repr when short, else its type and size. */
export function brief(value: unknown): string {
  if (typeof value === 'string') {
    if (value.length <= 20) return reprShort(value)
    return `${reprShort(value.slice(0, 12))}…(${value.length} characters)`
  }
  if (typeof value === 'number' || typeof value === 'bigint') {
    const text = String(value)
    return text.length <= 24 ? text : `an integer of ${text.replace('-', '').length} digits`
  }
  if (typeof value === 'boolean') return value ? 'True' : 'False'
  if (value === null) return 'None'
  if (Array.isArray(value)) {
    if (value.length <= 4 && value.every((item) => typeof item === 'number' || (typeof item === 'string' && item.length <= 8) || item === null)) {
      return `[${value.map(brief).join(', ')}]`
    }
    return `a list of ${value.length} items`
  }
  return 'a value'
}

function reprShort(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'"
  return quote + text.replace(/[\\\n\r\t]/g, (char) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[char]!) + quote
}
