/**
 * Jinja2 3.1's parser (its `parser.py`, rule for rule): tokens → a `TemplateAst`.
 *
 * Contract:
 * - `parseTemplate(source, name)` tokenizes (jinja-lexer.ts) and parses the whole template.
 * - Precedence as Jinja's: conditional expression < `or` < `and` < `not` < comparisons (chained,
 *   `in`, `not in`) < `+ -` < `~` < `* / // %` < `**` (left-associative, after unary `-`/`+`) <
 *   postfix (`.x`, `[i]`, slices, calls) < filters and tests (`|f`, `is t`, which bind to the
 *   unary operand: `-3 | abs` is `(-3) | abs`).
 * - Statements: output, `if`/`elif`/`else`, `for` (unpacking targets, `if` filter, `else`,
 *   `recursive`), `set` (names, tuples, `ns.attr`) and block `set` (with filters), `macro`,
 *   `call`, `filter`, `with`, `include` (`ignore missing`, with/without context), `import`,
 *   `from … import`, `extends`, `block` (`scoped`, `required`), `print`, `autoescape`.
 * - Errors: `TemplateSyntaxError` with the template name and the line of the offending token
 *   (`unknown tag`, `Unexpected end of template`, `expected token …`, `block 'x' defined twice`).
 */
import { pythonFloat } from '../values/python-float.js'
import { TemplateSyntaxError } from './jinja-errors.js'
import { tokenize, type LexerOptions, type Token } from './jinja-lexer.js'
import type { CallArgs, CompareOperator, Expr, MacroSignature, Stmt, TemplateAst, Target } from './jinja-nodes.js'

type Block = Extract<Stmt, { kind: 'block' }>

const STATEMENTS = new Set([
  'for',
  'if',
  'block',
  'extends',
  'print',
  'macro',
  'include',
  'from',
  'import',
  'set',
  'with',
  'autoescape',
  'call',
  'filter',
])
const COMPARE = new Set(['==', '!=', '<', '<=', '>', '>='])

export function parseTemplate(source: string, name: string, options?: LexerOptions): TemplateAst {
  return new Parser(tokenize(source, name, options), name).parse()
}

class Parser {
  private index = 0
  private readonly tagStack: string[] = []
  private readonly endTokenStack: string[][] = []
  private readonly blocks = new Map<string, Block>()
  private hasExtends = false

  constructor(
    private readonly tokens: Token[],
    private readonly name: string,
  ) {}

  parse(): TemplateAst {
    const body = this.subparse(null)
    return { body, blocks: this.blocks, hasExtends: this.hasExtends }
  }

  // --- token stream ---

  private get current(): Token {
    return this.tokens[this.index]!
  }

  private look(): Token {
    return this.tokens[Math.min(this.index + 1, this.tokens.length - 1)]!
  }

  private next(): Token {
    const token = this.current
    if (this.index < this.tokens.length - 1) this.index++
    return token
  }

  private isOp(value: string, token = this.current): boolean {
    return token.type === 'operator' && token.value === value
  }

  private isName(value: string, token = this.current): boolean {
    return token.type === 'name' && token.value === value
  }

  private skipName(value: string): boolean {
    if (!this.isName(value)) return false
    this.next()
    return true
  }

  private skipOp(value: string): boolean {
    if (!this.isOp(value)) return false
    this.next()
    return true
  }

  private fail(message: string, line = this.current.line): never {
    const column = line === this.current.line ? this.current.column : undefined
    throw new TemplateSyntaxError(message, this.name, line, column)
  }

  private expectOp(value: string): Token {
    if (!this.isOp(value)) this.fail(`expected token '${value}', got '${describe(this.current)}'`)
    return this.next()
  }

  private expectName(value?: string): Token {
    const token = this.current
    if (token.type !== 'name' || (value !== undefined && token.value !== value)) {
      this.fail(`expected token '${value ?? 'name'}', got '${describe(token)}'`)
    }
    return this.next()
  }

  private expectType(type: Token['type']): Token {
    if (this.current.type !== type) this.fail(`expected token '${describeType(type)}', got '${describe(this.current)}'`)
    return this.next()
  }

  // --- statements ---

  private subparse(endTokens: string[] | null): Stmt[] {
    const body: Stmt[] = []
    if (endTokens) this.endTokenStack.push(endTokens)
    try {
      for (;;) {
        const token = this.current
        if (token.type === 'eof') break
        if (token.type === 'data') {
          body.push({ kind: 'data', line: token.line, text: token.value })
          this.next()
        } else if (token.type === 'variable_begin') {
          this.next()
          const expr = this.parseTuple({ withCondexpr: true })
          body.push({ kind: 'output', line: token.line, column: token.column, expr })
          this.expectType('variable_end')
        } else if (token.type === 'block_begin') {
          this.next()
          if (endTokens && this.current.type === 'name' && endTokens.includes(this.current.value)) return body
          for (const stmt of this.parseStatement()) {
            stmt.column ??= token.column
            body.push(stmt)
          }
          this.expectType('block_end')
        } else {
          this.fail('internal parsing error')
        }
      }
    } finally {
      if (endTokens) this.endTokenStack.pop()
    }
    return body
  }

  private parseStatement(): Stmt[] {
    const token = this.current
    if (token.type !== 'name') this.fail('tag name expected')
    if (!STATEMENTS.has(token.value)) this.failUnknownTag(token.value, token.line)
    this.tagStack.push(token.value)
    try {
      switch (token.value) {
        case 'for':
          return [this.parseFor()]
        case 'if':
          return [this.parseIf()]
        case 'block':
          return [this.parseBlock()]
        case 'extends':
          return [this.parseExtends()]
        case 'print':
          return this.parsePrint()
        case 'macro':
          return [this.parseMacro()]
        case 'include':
          return [this.parseInclude()]
        case 'from':
          return [this.parseFrom()]
        case 'import':
          return [this.parseImport()]
        case 'set':
          return [this.parseSet()]
        case 'with':
          return [this.parseWith()]
        case 'autoescape':
          return this.parseAutoescape()
        case 'call':
          return [this.parseCallBlock()]
        default:
          return [this.parseFilterBlock()]
      }
    } finally {
      this.tagStack.pop()
    }
  }

  private failUnknownTag(name: string, line: number): never {
    const expected = this.endTokenStack.flat()
    let message = `Encountered unknown tag '${name}'.`
    if (expected.length > 0) {
      message += ` Jinja was looking for the following tags: ${expected.map((t) => `'${t}'`).join(' or ')}.`
    }
    const innermost = this.tagStack[this.tagStack.length - 1]
    if (innermost) message += ` The innermost block that needs to be closed is '${innermost}'.`
    this.fail(message, line)
  }

  private parseStatements(endTokens: string[], dropNeedle = false): Stmt[] {
    this.skipOp(':')
    this.expectType('block_end')
    const result = this.subparse(endTokens)
    if (this.current.type === 'eof') {
      const expected = [...this.endTokenStack, endTokens].flat()
      let message = 'Unexpected end of template.'
      if (expected.length > 0) {
        message += ` Jinja was looking for the following tags: ${endTokens.map((t) => `'${t}'`).join(' or ')}.`
      }
      const innermost = this.tagStack[this.tagStack.length - 1]
      if (innermost) message += ` The innermost block that needs to be closed is '${innermost}'.`
      this.fail(message)
    }
    if (dropNeedle) this.next()
    return result
  }

  private parseFor(): Stmt {
    const line = this.expectName('for').line
    const target = this.parseAssignTarget({ extraEnd: ['in'] })
    this.expectName('in')
    const iter = this.parseTuple({ withCondexpr: false, extraEnd: ['recursive'] })
    const filter = this.skipName('if') ? this.parseExpression() : null
    const recursive = this.skipName('recursive')
    const body = this.parseStatements(['endfor', 'else'])
    const otherwise = this.next().value === 'endfor' ? [] : this.parseStatements(['endfor'], true)
    return { kind: 'for', line, target, iter, body, otherwise, filter, recursive }
  }

  private parseIf(): Stmt {
    const line = this.expectName('if').line
    const test = this.parseTuple({ withCondexpr: false })
    const body = this.parseStatements(['elif', 'else', 'endif'])
    const token = this.next()
    let otherwise: Stmt[] = []
    if (token.value === 'elif') {
      // `elif` parses as a nested if that shares the outer `endif`.
      const nested = this.parseElif(token.line)
      otherwise = [nested]
    } else if (token.value === 'else') {
      otherwise = this.parseStatements(['endif'], true)
    }
    return { kind: 'if', line, test, body, otherwise }
  }

  private parseElif(line: number): Stmt {
    const test = this.parseTuple({ withCondexpr: false })
    const body = this.parseStatements(['elif', 'else', 'endif'])
    const token = this.next()
    let otherwise: Stmt[] = []
    if (token.value === 'elif') otherwise = [this.parseElif(token.line)]
    else if (token.value === 'else') otherwise = this.parseStatements(['endif'], true)
    return { kind: 'if', line, test, body, otherwise }
  }

  private parseBlock(): Stmt {
    const line = this.next().line
    const name = this.expectName().value
    const scoped = this.skipName('scoped')
    const required = this.skipName('required')
    if (this.isOp('-')) {
      this.fail(
        'Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore instead.',
      )
    }
    const body = this.parseStatements(['endblock'], true)
    this.skipName(name)
    const block: Block = { kind: 'block', line, name, body, scoped, required }
    if (this.blocks.has(name)) this.fail(`block '${name}' defined twice`, line)
    this.blocks.set(name, block)
    return block
  }

  private parseExtends(): Stmt {
    const line = this.next().line
    this.hasExtends = true
    return { kind: 'extends', line, template: this.parseExpression() }
  }

  private parsePrint(): Stmt[] {
    const line = this.next().line
    const out: Stmt[] = []
    while (this.current.type !== 'block_end') {
      if (out.length > 0) this.expectOp(',')
      out.push({ kind: 'output', line, expr: this.parseExpression() })
    }
    return out
  }

  private parseMacro(): Stmt {
    const line = this.next().line
    const name = this.expectName().value
    const signature = this.parseSignature()
    const body = this.parseStatements(['endmacro'], true)
    return { kind: 'macro', line, name, signature, body }
  }

  private parseSignature(): MacroSignature {
    const params: MacroSignature['params'] = []
    this.expectOp('(')
    while (!this.isOp(')')) {
      if (params.length > 0) this.expectOp(',')
      const name = this.expectName().value
      if (this.skipOp('=')) params.push({ name, default: this.parseExpression() })
      else if (params.some((p) => p.default !== null)) this.fail('non-default argument follows default argument')
      else params.push({ name, default: null })
    }
    this.expectOp(')')
    return { params }
  }

  private parseImportContext(defaultValue: boolean): boolean {
    if ((this.isName('with') || this.isName('without')) && this.isName('context', this.look())) {
      const withContext = this.next().value === 'with'
      this.next()
      return withContext
    }
    return defaultValue
  }

  private parseInclude(): Stmt {
    const line = this.next().line
    const template = this.parseExpression()
    let ignoreMissing = false
    if (this.isName('ignore') && this.isName('missing', this.look())) {
      ignoreMissing = true
      this.next()
      this.next()
    }
    return { kind: 'include', line, template, ignoreMissing, withContext: this.parseImportContext(true) }
  }

  private parseImport(): Stmt {
    const line = this.next().line
    const template = this.parseExpression()
    this.expectName('as')
    const target = this.expectName().value
    return { kind: 'import', line, template, target, withContext: this.parseImportContext(false) }
  }

  private parseFrom(): Stmt {
    const line = this.next().line
    const template = this.parseExpression()
    this.expectName('import')
    const names: { name: string; alias: string }[] = []
    let withContext: boolean | undefined
    const parseContext = (): boolean => {
      if ((this.isName('with') || this.isName('without')) && this.isName('context', this.look())) {
        withContext = this.next().value === 'with'
        this.next()
        return true
      }
      return false
    }
    for (;;) {
      if (names.length > 0) this.expectOp(',')
      if (this.current.type === 'name') {
        if (parseContext()) break
        const target = this.expectName()
        if (target.value.startsWith('_')) this.fail('names starting with an underline can not be imported', target.line)
        const alias = this.skipName('as') ? this.expectName().value : target.value
        names.push({ name: target.value, alias })
        if (parseContext() || !this.isOp(',')) break
      } else {
        this.expectName()
      }
    }
    return { kind: 'fromimport', line, template, names, withContext: withContext ?? false }
  }

  private parseSet(): Stmt {
    const line = this.next().line
    const target = this.parseAssignTarget({ withNamespace: true })
    if (this.skipOp('=')) return { kind: 'set', line, target, value: this.parseTuple({ withCondexpr: true }) }
    const filters = this.parseFilter(null, false)
    const body = this.parseStatements(['endset'], true)
    return { kind: 'setblock', line, target, filters, body }
  }

  private parseWith(): Stmt {
    const line = this.next().line
    const targets: { target: Target; value: Expr }[] = []
    while (this.current.type !== 'block_end') {
      if (targets.length > 0) this.expectOp(',')
      const target = this.parseAssignTarget({})
      this.expectOp('=')
      targets.push({ target, value: this.parseExpression() })
    }
    const body = this.parseStatements(['endwith'], true)
    return { kind: 'with', line, targets, body }
  }

  private parseAutoescape(): Stmt[] {
    const line = this.next().line
    this.parseExpression()
    // Autoescape is off in this environment; the block only scopes its body.
    const body = this.parseStatements(['endautoescape'], true)
    return [{ kind: 'with', line, targets: [], body }]
  }

  private parseCallBlock(): Stmt {
    const line = this.next().line
    const signature = this.isOp('(') ? this.parseSignature() : { params: [] }
    const call = this.parseExpression()
    if (call.kind !== 'call') this.fail('expected call', line)
    const body = this.parseStatements(['endcall'], true)
    return { kind: 'callblock', line, signature, call, body }
  }

  private parseFilterBlock(): Stmt {
    const line = this.next().line
    const filters = this.parseFilter(null, true)!
    const body = this.parseStatements(['endfilter'], true)
    return { kind: 'filterblock', line, filters, body }
  }

  private parseAssignTarget(options: { extraEnd?: string[]; withNamespace?: boolean }): Target {
    if (options.withNamespace && this.isOp('.', this.look())) {
      const token = this.expectName()
      this.next()
      const attr = this.expectName().value
      return { kind: 'nsref', name: token.value, attr, line: token.line }
    }
    const expr = this.parseTuple({ simplified: true, extraEnd: options.extraEnd })
    return this.toTarget(expr)
  }

  private toTarget(expr: Expr): Target {
    if (expr.kind === 'name') return { kind: 'name', name: expr.name, line: expr.line }
    if (expr.kind === 'tuple') return { kind: 'tuple', items: expr.items.map((item) => this.toTarget(item)), line: expr.line }
    const what = expr.kind === 'const' ? 'const' : expr.kind
    return this.fail(`can't assign to '${what}'`, expr.line)
  }

  // --- expressions ---

  parseExpression(withCondexpr = true): Expr {
    return withCondexpr ? this.parseCondexpr() : this.parseOr()
  }

  private parseCondexpr(): Expr {
    let line = this.current.line
    let expr = this.parseOr()
    while (this.skipName('if')) {
      const test = this.parseOr()
      const otherwise = this.skipName('else') ? this.parseCondexpr() : null
      expr = { kind: 'condexpr', line, test, then: expr, otherwise }
      line = this.current.line
    }
    return expr
  }

  private parseOr(): Expr {
    const line = this.current.line
    let left = this.parseAnd()
    while (this.skipName('or')) left = { kind: 'or', line, left, right: this.parseAnd() }
    return left
  }

  private parseAnd(): Expr {
    const line = this.current.line
    let left = this.parseNot()
    while (this.skipName('and')) left = { kind: 'and', line, left, right: this.parseNot() }
    return left
  }

  private parseNot(): Expr {
    if (this.isName('not')) {
      const line = this.next().line
      return { kind: 'not', line, operand: this.parseNot() }
    }
    return this.parseCompare()
  }

  private parseCompare(): Expr {
    const line = this.current.line
    const first = this.parseMath1()
    const ops: { op: CompareOperator; expr: Expr }[] = []
    for (;;) {
      const token = this.current
      if (token.type === 'operator' && COMPARE.has(token.value)) {
        this.next()
        ops.push({ op: token.value as CompareOperator, expr: this.parseMath1() })
      } else if (this.skipName('in')) {
        ops.push({ op: 'in', expr: this.parseMath1() })
      } else if (this.isName('not') && this.isName('in', this.look())) {
        this.next()
        this.next()
        ops.push({ op: 'notin', expr: this.parseMath1() })
      } else {
        break
      }
    }
    return ops.length === 0 ? first : { kind: 'compare', line, first, ops }
  }

  private parseMath1(): Expr {
    const line = this.current.line
    let left = this.parseConcat()
    while (this.isOp('+') || this.isOp('-')) {
      const op = this.next().value as '+' | '-'
      left = { kind: 'binop', line, op, left, right: this.parseConcat() }
    }
    return left
  }

  private parseConcat(): Expr {
    const line = this.current.line
    const items = [this.parseMath2()]
    while (this.skipOp('~')) items.push(this.parseMath2())
    return items.length === 1 ? items[0]! : { kind: 'concat', line, items }
  }

  private parseMath2(): Expr {
    const line = this.current.line
    let left = this.parsePow()
    while (this.isOp('*') || this.isOp('/') || this.isOp('//') || this.isOp('%')) {
      const op = this.next().value as '*' | '/' | '//' | '%'
      left = { kind: 'binop', line, op, left, right: this.parsePow() }
    }
    return left
  }

  private parsePow(): Expr {
    const line = this.current.line
    let left = this.parseUnary(true)
    while (this.skipOp('**')) left = { kind: 'binop', line, op: '**', left, right: this.parseUnary(true) }
    return left
  }

  private parseUnary(withFilter: boolean): Expr {
    const token = this.current
    let node: Expr
    if (this.isOp('-')) {
      this.next()
      node = { kind: 'neg', line: token.line, operand: this.parseUnary(false) }
    } else if (this.isOp('+')) {
      this.next()
      node = { kind: 'pos', line: token.line, operand: this.parseUnary(false) }
    } else {
      node = this.parsePrimary()
    }
    node = this.parsePostfix(node)
    if (withFilter) node = this.parseFilterExpr(node)
    return node
  }

  private parsePrimary(): Expr {
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
    const parse = options.simplified
      ? () => this.parsePrimary()
      : () => this.parseExpression(options.withCondexpr ?? true)
    const items: Expr[] = []
    let isTuple = false
    for (;;) {
      if (items.length > 0) this.expectOp(',')
      if (this.isTupleEnd(options.extraEnd)) break
      items.push(parse())
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

  private isTupleEnd(extraEnd?: string[]): boolean {
    const token = this.current
    if (token.type === 'variable_end' || token.type === 'block_end' || this.isOp(')')) return true
    return extraEnd !== undefined && token.type === 'name' && extraEnd.includes(token.value)
  }

  private parseList(): Expr {
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

  private parseDict(): Expr {
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

  private parsePostfix(node: Expr): Expr {
    for (;;) {
      if (this.isOp('.') || this.isOp('[')) node = this.parseSubscript(node)
      else if (this.isOp('(')) node = { kind: 'call', line: this.current.line, callee: node, call: this.parseCallArgs() }
      else return node
    }
  }

  private parseFilterExpr(node: Expr): Expr {
    for (;;) {
      if (this.isOp('|')) node = this.parseFilter(node, false)!
      else if (this.isName('is')) node = this.parseTest(node)
      else if (this.isOp('(')) node = { kind: 'call', line: this.current.line, callee: node, call: this.parseCallArgs() }
      else return node
    }
  }

  private parseSubscript(node: Expr): Expr {
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

  private parseSubscribed(): Expr {
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

  private parseCallArgs(): CallArgs {
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

  private parseFilter(node: Expr | null, startInline: boolean): Expr | null {
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

  private parseTest(node: Expr): Expr {
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

function describe(token: Token): string {
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
