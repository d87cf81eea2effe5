/**
 * The syntax tree of a Jinja template (parser.ts builds it, compiler.ts compiles it).
 *
 * Contract: plain data, one interface per Jinja2 node kind that the parser produces; every node
 * has the 1-based `line` where it starts. Expressions (`Expr`) and statements (`Stmt`) are
 * discriminated by `kind`. An `if`'s `elif` branches are a flat list (any number of them nests
 * nothing).
 */

export type Expr =
  | { kind: 'const'; line: number; value: unknown }
  | { kind: 'name'; line: number; name: string }
  | { kind: 'getattr'; line: number; target: Expr; attr: string }
  | { kind: 'getitem'; line: number; target: Expr; index: Expr }
  | { kind: 'slice'; line: number; start: Expr | null; stop: Expr | null; step: Expr | null }
  | { kind: 'call'; line: number; callee: Expr; call: CallArgs }
  | { kind: 'filter'; line: number; target: Expr | null; name: string; call: CallArgs }
  | { kind: 'test'; line: number; target: Expr; name: string; call: CallArgs; negated: boolean }
  | { kind: 'condexpr'; line: number; test: Expr; then: Expr; otherwise: Expr | null }
  | { kind: 'binop'; line: number; op: BinaryOperator; left: Expr; right: Expr }
  | { kind: 'concat'; line: number; items: Expr[] }
  | { kind: 'compare'; line: number; first: Expr; ops: { op: CompareOperator; expr: Expr }[] }
  | { kind: 'and' | 'or'; line: number; left: Expr; right: Expr }
  | { kind: 'not' | 'neg' | 'pos'; line: number; operand: Expr }
  | { kind: 'list' | 'tuple'; line: number; items: Expr[] }
  | { kind: 'dict'; line: number; items: { key: Expr; value: Expr }[] }

export type BinaryOperator = '+' | '-' | '*' | '/' | '//' | '%' | '**'
export type CompareOperator = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'notin'

export interface CallArgs {
  args: Expr[]
  kwargs: { name: string; value: Expr }[]
  dynArgs: Expr | null
  dynKwargs: Expr | null
}

/** An assignment target: a name, a tuple of targets, or a namespace attribute (`ns.x`). */
export type Target =
  | { kind: 'name'; name: string; line: number }
  | { kind: 'tuple'; items: Target[]; line: number }
  | { kind: 'nsref'; name: string; attr: string; line: number }

export interface MacroSignature {
  params: { name: string; default: Expr | null }[]
}

export type Stmt = StmtKinds & { column?: number }

type StmtKinds =
  | { kind: 'data'; line: number; text: string }
  | { kind: 'output'; line: number; expr: Expr }
  | { kind: 'if'; line: number; test: Expr; body: Stmt[]; elifs: { line: number; test: Expr; body: Stmt[] }[]; otherwise: Stmt[] }
  | {
      kind: 'for'
      line: number
      target: Target
      iter: Expr
      body: Stmt[]
      otherwise: Stmt[]
      filter: Expr | null
      recursive: boolean
    }
  | { kind: 'set'; line: number; target: Target; value: Expr }
  | { kind: 'setblock'; line: number; target: Target; filters: Expr | null; body: Stmt[] }
  | { kind: 'macro'; line: number; name: string; signature: MacroSignature; body: Stmt[] }
  | { kind: 'callblock'; line: number; signature: MacroSignature; call: Expr; body: Stmt[] }
  | { kind: 'filterblock'; line: number; filters: Expr; body: Stmt[] }
  | { kind: 'with'; line: number; targets: { target: Target; value: Expr }[]; body: Stmt[] }
  | { kind: 'autoescape'; line: number; enabled: Expr; body: Stmt[] }
  | { kind: 'include'; line: number; template: Expr; withContext: boolean; ignoreMissing: boolean }
  | { kind: 'import'; line: number; template: Expr; target: string; withContext: boolean }
  | {
      kind: 'fromimport'
      line: number
      template: Expr
      names: { name: string; alias: string }[]
      withContext: boolean
    }
  | { kind: 'extends'; line: number; template: Expr }
  | { kind: 'block'; line: number; name: string; body: Stmt[]; scoped: boolean; required: boolean }

export interface TemplateAst {
  body: Stmt[]
  /** Every `{% block %}` of the template by name (nested ones included). */
  blocks: Map<string, Extract<Stmt, { kind: 'block' }>>
  hasExtends: boolean
}
