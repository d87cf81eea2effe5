/**
 * Jinja2 3.1's lexer for the Python implementation's environment (SPEC §8, §11): default
 * delimiters, `trim_blocks`, `lstrip_blocks`, `keep_trailing_newline`.
 *
 * Contract:
 * - `tokenize(source, name)` returns the token list of a template, ending with an `eof` token;
 *   every token carries its 1-based `line` and `column`.
 * - Line ends (`\r\n`, `\r`, `\n`) become `\n` first (Jinja's `newline_sequence`), in data and
 *   string literals alike; a final newline is kept.
 * - Whitespace control exactly as Jinja's lexer applies it: `lstrip_blocks` removes the spaces
 *   and tabs before a `{%` or `{#` that starts its line (not before `{{`, not with `{%+`);
 *   `trim_blocks` removes one newline after `%}` or `#}` (not after `+%}`, not after the
 *   opening `{% raw %}`); `-` on either side strips all whitespace up to the neighbouring text.
 * - Comments are dropped; `{% raw %}…{% endraw %}` becomes one `data` token.
 * - Inside tags: names, strings (Python escapes decoded as Jinja does, with `unicode-escape`),
 *   integers (`1_000`, `0x1A`, `0o17`, `0b11`), floats and operators; brackets must balance
 *   (`}}` inside an open `{` is two braces).
 * - Errors are `TemplateSyntaxError`s with the template name and line (`unexpected char`,
 *   `Missing end of comment tag`, `Missing end of raw directive`, unbalanced brackets).
 */
import { TemplateSyntaxError } from './errors.js'
import { PY_SPACE } from './python-space.js'
import { reprString } from './values.js'

export type TokenType =
  | 'data'
  | 'variable_begin'
  | 'variable_end'
  | 'block_begin'
  | 'block_end'
  | 'name'
  | 'string'
  | 'integer'
  | 'float'
  | 'operator'
  | 'eof'

export interface Token {
  type: TokenType
  /** Data text, name, decoded string, operator text; numbers as their source text. */
  value: string
  line: number
  column: number
}

const OPERATORS = ['//', '**', '==', '!=', '>=', '<=', '+', '-', '/', '*', '%', '~', '[', ']', '(', ')', '{', '}', '>', '<', '=', '.', ':', '|', ',', ';']
const CLOSING: Record<string, string> = { '(': ')', '[': ']', '{': '}' }

const FLOAT = /(?<!\.)(?:\d+_)*\d+(?:(?:\.(?:\d+_)*\d+)?[eE][+-]?(?:\d+_)*\d+|\.(?:\d+_)*\d+)/y
const INTEGER = /(?:0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0[xX](?:_?[\da-fA-F])+|[1-9](?:_?\d)*|0(?:_?0)*)/y
const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*/uy
const STRING = /'([^'\\]*(?:\\.[^'\\]*)*)'|"([^"\\]*(?:\\.[^"\\]*)*)"/sy
/** Jinja's `whitespace_re`, `\s+` of Python's `re` (no U+FEFF). */
const WHITESPACE = new RegExp(`[${PY_SPACE}]+`, 'y')

export interface LexerOptions {
  /** Remove the first newline after a block or comment tag. @default true */
  trimBlocks?: boolean
  /** Remove the spaces and tabs before a block or comment tag that starts its line. @default true */
  lstripBlocks?: boolean
}

export function tokenize(input: string, name: string, options: LexerOptions = {}): Token[] {
  const trimBlocks = options.trimBlocks ?? true
  const lstripBlocks = options.lstripBlocks ?? true
  const source = input.replace(/\r\n?/g, '\n')
  const tokens: Token[] = []
  let pos = 0
  let line = 1
  let lineStart = 0
  /** True when the text before `pos` ended with a newline (or at the start). */
  let lineStarting = true

  const columnAt = (at: number): number => at - lineStart + 1
  const advance = (to: number): void => {
    for (let i = pos; i < to; i++) {
      if (source.charCodeAt(i) === 10) {
        line++
        lineStart = i + 1
      }
    }
    pos = to
  }
  const fail = (message: string): never => {
    throw new TemplateSyntaxError(message, name, line, columnAt(pos))
  }
  const pushData = (text: string, at: number): void => {
    if (text !== '') tokens.push({ type: 'data', value: text, line, column: columnAt(at) })
  }

  while (pos < source.length) {
    const open = findOpening(source, pos)
    if (open < 0) {
      pushData(source.slice(pos), pos)
      advance(source.length)
      break
    }
    const kind = source[open + 1] as '{' | '%' | '#'
    const sign = source[open + 2] === '-' || source[open + 2] === '+' ? source[open + 2]! : ''
    let text = source.slice(pos, open)
    const rawStart = kind === '%' ? matchRawStart(source, open) : null
    // Whitespace control of the text before the tag (Jinja's OptionalLStrip).
    if (sign === '-') {
      text = text.replace(/\s+$/, '')
    } else if (sign !== '+' && kind !== '{' && lstripBlocks) {
      const lineBegin = text.lastIndexOf('\n') + 1
      if ((lineBegin > 0 || lineStarting) && /^[ \t]*$/.test(text.slice(lineBegin))) text = text.slice(0, lineBegin)
    }
    const textStart = pos
    pushData(text, textStart)
    advance(open)
    if (kind === '#') {
      const end = source.indexOf('#}', open + 2)
      if (end < 0) fail('Missing end of comment tag')
      let after = end + 2
      if (source[end - 1] === '-' && end - 1 > open + 1) after = skipWhitespace(source, after)
      else if (trimBlocks && !(source[end - 1] === '+' && end - 1 > open + 1) && source[after] === '\n') after++
      lineStarting = source[after - 1] === '\n'
      advance(after)
      continue
    }
    if (rawStart) {
      advance(rawStart.end)
      const endMatch = findRawEnd(source, rawStart.end)
      if (!endMatch) fail('Missing end of raw directive')
      let body = source.slice(rawStart.end, endMatch!.start)
      if (endMatch!.sign === '-') body = body.replace(/\s+$/, '')
      else if (endMatch!.sign !== '+' && lstripBlocks) {
        const lineBegin = body.lastIndexOf('\n') + 1
        if ((lineBegin > 0 || source[rawStart.end - 1] === '\n') && /^[ \t]*$/.test(body.slice(lineBegin))) body = body.slice(0, lineBegin)
      }
      pushData(body, rawStart.end)
      const rawEnd = !trimBlocks && endMatch!.newline ? endMatch!.end - 1 : endMatch!.end
      lineStarting = source[rawEnd - 1] === '\n'
      advance(rawEnd)
      continue
    }
    // A `{{ … }}` or `{% … %}` tag.
    const isBlock = kind === '%'
    tokens.push({ type: isBlock ? 'block_begin' : 'variable_begin', value: isBlock ? '{%' : '{{', line, column: columnAt(open) })
    advance(open + 2 + sign.length)
    const stack: string[] = []
    const closer = isBlock ? '%}' : '}}'
    for (;;) {
      if (pos >= source.length) {
        fail(`unexpected end of template, expected '${closer === '%}' ? 'end of statement block' : 'end of print statement'}'`)
      }
      if (stack.length === 0) {
        const end = matchTagEnd(source, pos, closer, isBlock, trimBlocks)
        if (end) {
          tokens.push({ type: isBlock ? 'block_end' : 'variable_end', value: closer, line, column: columnAt(pos) })
          lineStarting = source[end - 1] === '\n'
          advance(end)
          break
        }
      }
      WHITESPACE.lastIndex = pos
      const space = WHITESPACE.exec(source)
      if (space) {
        advance(pos + space[0].length)
        continue
      }
      const column = columnAt(pos)
      const startLine = line
      const float = sticky(FLOAT, source, pos)
      if (float !== null) {
        tokens.push({ type: 'float', value: float, line, column })
        advance(pos + float.length)
        continue
      }
      const integer = sticky(INTEGER, source, pos)
      if (integer !== null && !/[\p{L}\p{N}_]/u.test(source[pos + integer.length] ?? '')) {
        tokens.push({ type: 'integer', value: integer, line, column })
        advance(pos + integer.length)
        continue
      }
      const word = sticky(NAME, source, pos)
      if (word !== null) {
        tokens.push({ type: 'name', value: word, line, column })
        advance(pos + word.length)
        continue
      }
      STRING.lastIndex = pos
      const string = STRING.exec(source)
      if (string) {
        const body = string[1] ?? string[2] ?? ''
        tokens.push({ type: 'string', value: decodeString(body, name, startLine), line, column })
        advance(pos + string[0].length)
        continue
      }
      const operator = OPERATORS.find((op) => source.startsWith(op, pos))
      if (operator) {
        if (operator === '(' || operator === '[' || operator === '{') stack.push(CLOSING[operator]!)
        else if (operator === ')' || operator === ']' || operator === '}') {
          if (stack.length === 0) fail(`unexpected '${operator}'`)
          const expected = stack.pop()
          if (expected !== operator) fail(`unexpected '${operator}', expected '${expected}'`)
        }
        tokens.push({ type: 'operator', value: operator, line, column })
        advance(pos + operator.length)
        continue
      }
      fail(`unexpected char ${reprString(source[pos]!)} at ${pos}`)
    }
  }
  // Jinja's end-of-template token carries the line of the last token.
  const last = tokens[tokens.length - 1]
  tokens.push({ type: 'eof', value: '', line: last ? last.line : 1, column: columnAt(pos) })
  return tokens
}

function sticky(pattern: RegExp, source: string, pos: number): string | null {
  pattern.lastIndex = pos
  const match = pattern.exec(source)
  return match ? match[0] : null
}

/** Index of the next `{{`, `{%` or `{#`, or -1. */
function findOpening(source: string, from: number): number {
  let index = source.indexOf('{', from)
  while (index >= 0) {
    const next = source[index + 1]
    if (next === '{' || next === '%' || next === '#') return index
    index = source.indexOf('{', index + 1)
  }
  return -1
}

const RAW_START = /\{%[-+]?\s*raw\s*(?:-%\}\s*|%\})/y
const RAW_END = /\{%([-+]?)\s*endraw\s*(?:\+%\}|-%\}\s*|%\}(\n?))/g

function matchRawStart(source: string, at: number): { end: number } | null {
  RAW_START.lastIndex = at
  const match = RAW_START.exec(source)
  return match ? { end: at + match[0].length } : null
}

function findRawEnd(source: string, from: number): { start: number; end: number; sign: string; newline: boolean } | null {
  RAW_END.lastIndex = from
  const match = RAW_END.exec(source)
  return match ? { start: match.index, end: match.index + match[0].length, sign: match[1] ?? '', newline: match[2] === '\n' } : null
}

/** End index of `%}` / `}}` at `pos` with its whitespace control, or null. */
function matchTagEnd(source: string, pos: number, closer: string, isBlock: boolean, trimBlocks: boolean): number | null {
  if (source[pos] === '-' && source.startsWith(closer, pos + 1)) return skipWhitespace(source, pos + 3)
  if (isBlock && source[pos] === '+' && source.startsWith(closer, pos + 1)) return pos + 3
  if (source.startsWith(closer, pos)) {
    const end = pos + 2
    return isBlock && trimBlocks && source[end] === '\n' ? end + 1 : end
  }
  return null
}

function skipWhitespace(source: string, from: number): number {
  WHITESPACE.lastIndex = from
  const match = WHITESPACE.exec(source)
  return match ? from + match[0].length : from
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\n': '',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
}

/** Python's `unicode-escape` decoding of a string literal's body (as Jinja's lexer does it). */
function decodeString(body: string, name: string, line: number): string {
  if (!body.includes('\\')) return body
  let out = ''
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!
    if (char !== '\\') {
      out += char
      continue
    }
    const next = body[i + 1]
    if (next === undefined) {
      out += '\\'
      break
    }
    if (next in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[next]
      i++
      continue
    }
    if (next >= '0' && next <= '7') {
      const digits = /^[0-7]{1,3}/.exec(body.slice(i + 1))![0]
      out += String.fromCodePoint(parseInt(digits, 8))
      i += digits.length
      continue
    }
    const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0
    if (width > 0) {
      const hex = body.slice(i + 2, i + 2 + width)
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) {
        throw new TemplateSyntaxError(`truncated \\${next} escape in a string`, name, line)
      }
      out += String.fromCodePoint(parseInt(hex, 16))
      i += 1 + width
      continue
    }
    out += '\\' + next
    i++
  }
  return out
}

