/**
 * The token stream of Jinja's parser (expression-parser.ts, parser.ts build on it).
 *
 * Contract: a cursor over `tokenize()`'s tokens (`current`, `look()`, `next()`), tests for
 * operators and names, `expect…` that fail with Jinja's `expected token 'x', got 'y'`, and
 * `fail(message, line)`, which throws a `TemplateSyntaxError` with the template name, the line
 * and (when the failing token is on that line) its column.
 */
import { TemplateSyntaxError } from './errors.js'
import type { Token } from './lexer.js'

export class TokenStream {
  private index = 0

  constructor(
    protected readonly tokens: Token[],
    protected readonly name: string,
  ) {}

  protected get current(): Token {
    return this.tokens[this.index]!
  }

  protected look(): Token {
    return this.tokens[Math.min(this.index + 1, this.tokens.length - 1)]!
  }

  protected next(): Token {
    const token = this.current
    if (this.index < this.tokens.length - 1) this.index++
    return token
  }

  protected isOp(value: string, token = this.current): boolean {
    return token.type === 'operator' && token.value === value
  }

  protected isName(value: string, token = this.current): boolean {
    return token.type === 'name' && token.value === value
  }

  protected skipName(value: string): boolean {
    if (!this.isName(value)) return false
    this.next()
    return true
  }

  protected skipOp(value: string): boolean {
    if (!this.isOp(value)) return false
    this.next()
    return true
  }

  protected fail(message: string, line = this.current.line): never {
    const column = line === this.current.line ? this.current.column : undefined
    throw new TemplateSyntaxError(message, this.name, line, column)
  }

  protected expectOp(value: string): Token {
    if (!this.isOp(value)) this.fail(`expected token '${value}', got '${describe(this.current)}'`)
    return this.next()
  }

  protected expectName(value?: string): Token {
    const token = this.current
    if (token.type !== 'name' || (value !== undefined && token.value !== value)) {
      this.fail(`expected token '${value ?? 'name'}', got '${describe(token)}'`)
    }
    return this.next()
  }

  protected expectType(type: Token['type']): Token {
    if (this.current.type !== type) this.fail(`expected token '${describeType(type)}', got '${describe(this.current)}'`)
    return this.next()
  }

}

export function describe(token: Token): string {
  if (token.type === 'eof') return 'end of template'
  if (token.type === 'block_end') return 'end of statement block'
  if (token.type === 'variable_end') return 'end of print statement'
  if (token.type === 'block_begin') return 'begin of statement block'
  if (token.type === 'variable_begin') return 'begin of print statement'
  return token.value
}

function describeType(type: Token['type']): string {
  if (type === 'block_end') return 'end of statement block'
  if (type === 'variable_end') return 'end of print statement'
  return type
}
