/**
 * Jinja2 3.1's expression grammar (its `parser.py` from `parse_expression` down), on a token
 * stream; parser.ts adds the statements.
 *
 * Contract: precedence as Jinja's: conditional expression < `or` < `and` < `not` < comparisons
 * (chained, `in`, `not in`) < `+ -` < `~` < `* / // %` < `**` (left-associative, after unary
 * `-`/`+`) < postfix (`.x`, `[i]`, slices, calls) < filters and tests (`|f`, `is t`, which bind
 * to the unary operand: `-3 | abs` is `(-3) | abs`). Number literals become values of the
 * template value model (ints, bigints beyond 2^53, floats boxed when integral); adjacent string
 * literals concatenate. Nesting (brackets, unary operators, inline `if`s) is counted with the
 * tags around it: past limits.ts `MAX_NESTING_DEPTH` a `TemplateSyntaxError`
 * (`expressions nest more than 500 levels deep`) at the line where it happens.
 */
import { pythonFloat } from './python-float.js'
import type { Token } from './lexer.js'
import type { CallArgs, CompareOperator, Expr } from './nodes.js'
import { TokenStream, describe } from './token-stream.js'
import { MAX_NESTING_DEPTH } from './limits.js'

/** Binding powers of the binary operators, loosest first (Jinja's parse_or … parse_pow). */
const OR = 1
const AND = 2
const NOT = 3
const COMPARE = 4
const MATH1 = 5
const CONCAT = 6
const MATH2 = 7
const POW = 8

export class ExpressionParser extends TokenStream {
  /** Tags and expression levels open where the parser is (limits.ts `MAX_NESTING_DEPTH`). */
  protected depth = 0

  /** One more level of nesting: refused past the bound, so no template exhausts the stack. */
  protected enterNesting(what: 'tags' | 'expressions'): void {
    if (++this.depth > MAX_NESTING_DEPTH) this.fail(`${what} nest more than ${MAX_NESTING_DEPTH} levels deep`)
  }

  parseExpression(withCondexpr = true): Expr {
    return withCondexpr ? this.parseCondexpr() : this.parseOr()
  }

  protected parseCondexpr(): Expr {
    this.enterNesting('expressions')
    let line = this.current.line
    let expr = this.parseOr()
    while (this.skipName('if')) {
      const test = this.parseOr()
      const otherwise = this.skipName('else') ? this.parseCondexpr() : null
      expr = { kind: 'condexpr', line, test, then: expr, otherwise }
      line = this.current.line
    }
    this.depth--
    return expr
  }

  protected parseOr(): Expr {
    return this.parseBinary(OR)
  }

  /**
   * The binary operators by precedence climbing: one call handles a whole chain at its level
   * and every tighter level, so a parenthesis costs a few stack frames, not one per precedence
   * level. Same trees as Jinja's parse_or … parse_pow: `or`/`and` and arithmetic left
   * associative (`**` too), comparisons one chained node, `~` one flat node, `not` a prefix
   * between `and` and the comparisons; a node's line is the line where its left operand starts.
   */
  protected parseBinary(minimum: number): Expr {
    const line = this.current.line
    let left: Expr
    if (minimum <= NOT && this.isName('not')) {
      const token = this.next()
      this.enterNesting('expressions')
      left = { kind: 'not', line: token.line, operand: this.parseBinary(NOT) }
      this.depth--
    } else {
      left = this.parseUnary(true)
    }
    // The chain node this call built last (a later operator of the same kind extends it).
    let chain: Expr | null = null
    for (;;) {
      const token = this.current
      const power = this.binaryPower(token)
      if (power === 0 || power < minimum) return left
      if (power === OR || power === AND) {
        this.next()
        const right = this.parseBinary(power + 1)
        left = { kind: power === OR ? 'or' : 'and', line, left, right }
      } else if (power === COMPARE) {
        let op: CompareOperator
        if (this.isName('in')) op = 'in'
        else if (this.isName('not')) {
          this.next()
          op = 'notin'
        } else op = token.value as CompareOperator
        this.next()
        const operand = this.parseBinary(MATH1)
        if (chain !== null && chain === left && chain.kind === 'compare') chain.ops.push({ op, expr: operand })
        else left = chain = { kind: 'compare', line, first: left, ops: [{ op, expr: operand }] }
      } else if (power === CONCAT) {
        this.next()
        const item = this.parseBinary(MATH2)
        if (chain !== null && chain === left && chain.kind === 'concat') chain.items.push(item)
        else left = chain = { kind: 'concat', line, items: [left, item] }
      } else {
        const op = this.next().value as '+' | '-' | '*' | '/' | '//' | '%' | '**'
        const right = power === POW ? this.parseUnary(true) : this.parseBinary(power + 1)
        left = { kind: 'binop', line, op, left, right }
      }
    }
  }

  /** The binding power of `token` as a binary operator (0: not one). */
  private binaryPower(token: Token): number {
    if (token.type === 'name') {
      if (token.value === 'or') return OR
      if (token.value === 'and') return AND
      if (token.value === 'in') return COMPARE
      if (token.value === 'not' && this.isName('in', this.look())) return COMPARE
      return 0
    }
    if (token.type !== 'operator') return 0
    switch (token.value) {
      case '==':
      case '!=':
      case '<':
      case '<=':
      case '>':
      case '>=':
        return COMPARE
      case '+':
      case '-':
        return MATH1
      case '~':
        return CONCAT
      case '*':
      case '/':
      case '//':
      case '%':
        return MATH2
      case '**':
        return POW
      default:
        return 0
    }
  }

  protected parseUnary(withFilter: boolean): Expr {
    const token = this.current
    let node: Expr
    if (this.isOp('-') || this.isOp('+')) {
      this.next()
      this.enterNesting('expressions')
      node = { kind: token.value === '-' ? 'neg' : 'pos', line: token.line, operand: this.parseUnary(false) }
      this.depth--
    } else {
      node = this.parsePrimary()
    }
    node = this.parsePostfix(node)
    if (withFilter) node = this.parseFilterExpr(node)
    return node
  }

  protected parsePrimary(): Expr {
    const token = this.current
    if (token.type === 'name') {
      this.next()
      if (token.value === 'true' || token.value === 'True') return { kind: 'const', line: token.line, value: true }
      if (token.value === 'false' || token.value === 'False') return { kind: 'const', line: token.line, value: false }
      if (token.value === 'none' || token.value === 'None') return { kind: 'const', line: token.line, value: null }
      return { kind: 'name', line: token.line, name: token.value }
    }
    if (token.type === 'string') {
      this.next()
      let value = token.value
      while (this.current.type === 'string') value += this.next().value
      return { kind: 'const', line: token.line, value }
    }
    if (token.type === 'integer' || token.type === 'float') {
      this.next()
      return { kind: 'const', line: token.line, value: numberLiteral(token) }
    }
    if (this.isOp('(')) {
      this.next()
      const node = this.parseTuple({ explicitParentheses: true })
      this.expectOp(')')
      return node
    }
    if (this.isOp('[')) return this.parseList()
    if (this.isOp('{')) return this.parseDict()
    return this.fail(`unexpected '${describe(token)}'`, token.line)
  }

  parseTuple(options: {
    simplified?: boolean
    withCondexpr?: boolean
    extraEnd?: string[]
    explicitParentheses?: boolean
  }): Expr {
    let line = this.current.line
    const withCondexpr = options.withCondexpr ?? true
    const items: Expr[] = []
    let isTuple = false
    for (;;) {
      if (items.length > 0) this.expectOp(',')
      if (this.isTupleEnd(options.extraEnd)) break
      items.push(options.simplified ? this.parsePrimary() : withCondexpr ? this.parseCondexpr() : this.parseOr())
      if (this.isOp(',')) isTuple = true
      else break
      line = this.current.line
    }
    if (!isTuple) {
      if (items.length > 0) return items[0]!
      if (!options.explicitParentheses) this.fail(`Expected an expression, got '${describe(this.current)}'`)
    }
    return { kind: 'tuple', line, items }
  }

  protected isTupleEnd(extraEnd?: string[]): boolean {
    const token = this.current
    if (token.type === 'variable_end' || token.type === 'block_end' || this.isOp(')')) return true
    return extraEnd !== undefined && token.type === 'name' && extraEnd.includes(token.value)
  }

  protected parseList(): Expr {
    const line = this.expectOp('[').line
    const items: Expr[] = []
    while (!this.isOp(']')) {
      if (items.length > 0) this.expectOp(',')
      if (this.isOp(']')) break
      items.push(this.parseExpression())
    }
    this.expectOp(']')
    return { kind: 'list', line, items }
  }

  protected parseDict(): Expr {
    const line = this.expectOp('{').line
    const items: { key: Expr; value: Expr }[] = []
    while (!this.isOp('}')) {
      if (items.length > 0) this.expectOp(',')
      if (this.isOp('}')) break
      const key = this.parseExpression()
      this.expectOp(':')
      items.push({ key, value: this.parseExpression() })
    }
    this.expectOp('}')
    return { kind: 'dict', line, items }
  }

  protected parsePostfix(node: Expr): Expr {
    for (;;) {
      if (this.isOp('.') || this.isOp('[')) node = this.parseSubscript(node)
      else if (this.isOp('(')) node = { kind: 'call', line: this.current.line, callee: node, call: this.parseCallArgs() }
      else return node
    }
  }

  protected parseFilterExpr(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) node = this.parseFilter(node, false)!
      else if (this.isName('is')) node = this.parseTest(node)
      else if (this.isOp('(')) node = { kind: 'call', line: this.current.line, callee: node, call: this.parseCallArgs() }
      else return node
    }
  }

  protected parseSubscript(node: Expr): Expr {
    const token = this.next()
    if (token.value === '.') {
      const attr = this.next()
      if (attr.type === 'name') return { kind: 'getattr', line: token.line, target: node, attr: attr.value }
      if (attr.type !== 'integer') this.fail('expected name or number', attr.line)
      return { kind: 'getitem', line: token.line, target: node, index: { kind: 'const', line: attr.line, value: numberLiteral(attr) } }
    }
    const args: Expr[] = []
    while (!this.isOp(']')) {
      if (args.length > 0) this.expectOp(',')
      args.push(this.parseSubscribed())
    }
    this.expectOp(']')
    const index: Expr = args.length === 1 ? args[0]! : { kind: 'tuple', line: token.line, items: args }
    return { kind: 'getitem', line: token.line, target: node, index }
  }

  protected parseSubscribed(): Expr {
    const line = this.current.line
    const parts: (Expr | null)[] = []
    if (this.isOp(':')) {
      this.next()
      parts.push(null)
    } else {
      const node = this.parseExpression()
      if (!this.isOp(':')) return node
      this.next()
      parts.push(node)
    }
    if (this.isOp(':')) parts.push(null)
    else if (!this.isOp(']') && !this.isOp(',')) parts.push(this.parseExpression())
    else parts.push(null)
    if (this.isOp(':')) {
      this.next()
      parts.push(!this.isOp(']') && !this.isOp(',') ? this.parseExpression() : null)
    } else {
      parts.push(null)
    }
    return { kind: 'slice', line, start: parts[0] ?? null, stop: parts[1] ?? null, step: parts[2] ?? null }
  }

  protected parseCallArgs(): CallArgs {
    const token = this.expectOp('(')
    const call: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null }
    const ensure = (ok: boolean) => {
      if (!ok) this.fail('invalid syntax for function call expression', token.line)
    }
    let requireComma = false
    while (!this.isOp(')')) {
      if (requireComma) {
        this.expectOp(',')
        if (this.isOp(')')) break
      }
      if (this.isOp('*')) {
        ensure(call.dynArgs === null && call.dynKwargs === null)
        this.next()
        call.dynArgs = this.parseExpression()
      } else if (this.isOp('**')) {
        ensure(call.dynKwargs === null)
        this.next()
        call.dynKwargs = this.parseExpression()
      } else if (this.current.type === 'name' && this.isOp('=', this.look())) {
        ensure(call.dynKwargs === null)
        const key = this.next().value
        this.next()
        call.kwargs.push({ name: key, value: this.parseExpression() })
      } else {
        ensure(call.dynArgs === null && call.dynKwargs === null && call.kwargs.length === 0)
        call.args.push(this.parseExpression())
      }
      requireComma = true
    }
    this.expectOp(')')
    return call
  }

  protected parseFilter(node: Expr | null, startInline: boolean): Expr | null {
    while (this.isOp('|') || startInline) {
      if (!startInline) this.next()
      const token = this.expectName()
      let name = token.value
      while (this.isOp('.')) {
        this.next()
        name += '.' + this.expectName().value
      }
      const call = this.isOp('(') ? this.parseCallArgs() : { args: [], kwargs: [], dynArgs: null, dynKwargs: null }
      node = { kind: 'filter', line: token.line, target: node, name, call }
      startInline = false
    }
    return node
  }

  protected parseTest(node: Expr): Expr {
    const token = this.next()
    const negated = this.skipName('not')
    let name = this.expectName().value
    while (this.isOp('.')) {
      this.next()
      name += '.' + this.expectName().value
    }
    let call: CallArgs = { args: [], kwargs: [], dynArgs: null, dynKwargs: null }
    const current = this.current
    if (this.isOp('(')) {
      call = this.parseCallArgs()
    } else if (
      (['name', 'string', 'integer', 'float'].includes(current.type) || this.isOp('[') || this.isOp('{')) &&
      !this.isName('else') &&
      !this.isName('or') &&
      !this.isName('and')
    ) {
      if (this.isName('is')) this.fail('You cannot chain multiple tests with is')
      call = { args: [this.parsePostfix(this.parsePrimary())], kwargs: [], dynArgs: null, dynKwargs: null }
    }
    return { kind: 'test', line: token.line, target: node, name, call, negated }
  }
}

/** A number token's value in the value model: ints as numbers (bigint beyond 2^53), floats boxed when integral. */
function numberLiteral(token: Token): unknown {
  const text = token.value.replaceAll('_', '')
  if (token.type === 'float') return pythonFloat(Number(text))
  const big = /^0[xob]/i.test(text) ? BigInt(text.toLowerCase()) : BigInt(text)
  return Number.isSafeInteger(Number(big)) && BigInt(Number(big)) === big ? Number(big) : big
}
