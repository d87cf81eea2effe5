/**
 * Jinja2 3.1's parser (its `parser.py`, rule for rule): tokens → a `TemplateAst`. The statements
 * are here; expressions are expression-parser.ts, the token cursor token-stream.ts.
 *
 * Contract:
 * - `parseTemplate(source, name, options)` tokenizes (lexer.ts) and parses the template.
 * - Statements: output, `if`/`elif`/`else`, `for` (unpacking targets, `if` filter, `else`,
 *   `recursive`), `set` (names, tuples, `ns.attr`) and block `set` (with filters), `macro`,
 *   `call`, `filter`, `with`, `include` (`ignore missing`, with/without context), `import`,
 *   `from … import`, `extends`, `block` (`scoped`, `required`), `print`, `autoescape`.
 * - Errors: `TemplateSyntaxError` with the template name and the line of the offending token
 *   (`unknown tag`, `Unexpected end of template`, `expected token …`, `block 'x' defined twice`,
 *   `tags nest more than 500 levels deep`: tags and the expressions in them share the nesting
 *   bound of limits.ts, so no template can exhaust the parser's stack).
 */
import { ExpressionParser } from './expression-parser.js'
import { describe as describeToken } from './token-stream.js'
import { tokenize, type LexerOptions } from './lexer.js'
import type { Expr, MacroSignature, Stmt, TemplateAst, Target } from './nodes.js'
import { PY_SPACE } from './python-space.js'

/** Python's `str.isspace()` of a non-empty text. */
const PYTHON_SPACES = new RegExp(`^[${PY_SPACE}]+$`, 'u')

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

export function parseTemplate(source: string, name: string, options?: LexerOptions): TemplateAst {
  return new Parser(tokenize(source, name, options), name).parse()
}

class Parser extends ExpressionParser {
  private readonly tagStack: string[] = []
  private readonly endTokenStack: string[][] = []
  private readonly blocks = new Map<string, Block>()
  private hasExtends = false

  parse(): TemplateAst {
    const body = this.subparse(null)
    return { body, blocks: this.blocks, hasExtends: this.hasExtends }
  }

  private subparse(endTokens: string[] | null): Stmt[] {
    const body: Stmt[] = []
    if (endTokens) {
      this.enterNesting('tags')
      this.endTokenStack.push(endTokens)
    }
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
      if (endTokens) {
        this.endTokenStack.pop()
        this.depth--
      }
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
    const elifs: { line: number; test: Expr; body: Stmt[] }[] = []
    let otherwise: Stmt[] = []
    for (;;) {
      const token = this.next()
      if (token.value === 'elif') {
        const branchTest = this.parseTuple({ withCondexpr: false })
        elifs.push({ line: token.line, test: branchTest, body: this.parseStatements(['elif', 'else', 'endif']) })
        continue
      }
      if (token.value === 'else') otherwise = this.parseStatements(['endif'], true)
      break
    }
    return { kind: 'if', line, test, body, elifs, otherwise }
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
    // Jinja: a required block's body is whitespace (and comments) only, checked at `endblock`.
    if (required && body.some((stmt) => stmt.kind !== 'data' || !PYTHON_SPACES.test(stmt.text))) {
      this.fail('Required blocks can only contain comments or whitespace')
    }
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
    const enabled = this.parseExpression()
    const body = this.parseStatements(['endautoescape'], true)
    // Jinja wraps the block in a scope: names set inside stay inside.
    return [{ kind: 'with', line, targets: [], body: [{ kind: 'autoescape', line, enabled, body }] }]
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
    if (options.withNamespace) return this.parseNamespaceTargets()
    const expr = this.parseTuple({ simplified: true, extraEnd: options.extraEnd })
    return this.toTarget(expr)
  }

  /**
   * A `set` target: Jinja's simplified tuple whose items may be namespace attributes
   * (`{% set ns.a, ns.b = 1, 2 %}`, `{% set ns.a, x = … %}`); inside parentheses they may not.
   */
  private parseNamespaceTargets(): Target {
    const line = this.current.line
    const items: Target[] = []
    let isTuple = false
    for (;;) {
      if (items.length > 0) this.expectOp(',')
      if (this.isTupleEnd()) break
      if (this.current.type === 'name' && this.isOp('.', this.look())) {
        const token = this.expectName()
        this.next()
        items.push({ kind: 'nsref', name: token.value, attr: this.expectName().value, line: token.line })
      } else {
        items.push(this.toTarget(this.parsePrimary()))
      }
      if (this.isOp(',')) isTuple = true
      else break
    }
    if (!isTuple) {
      if (items.length > 0) return items[0]!
      this.fail(`Expected an expression, got '${describeToken(this.current)}'`)
    }
    return { kind: 'tuple', items, line }
  }

  private toTarget(expr: Expr): Target {
    if (expr.kind === 'name') return { kind: 'name', name: expr.name, line: expr.line }
    if (expr.kind === 'tuple') return { kind: 'tuple', items: expr.items.map((item) => this.toTarget(item)), line: expr.line }
    const what = expr.kind === 'const' ? 'const' : expr.kind
    return this.fail(`can't assign to '${what}'`, expr.line)
  }

}
