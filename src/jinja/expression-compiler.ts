/**
 * Compiles Jinja expressions (nodes.ts `Expr`) into JavaScript closures; compiler.ts
 * compiles the statements on top of it. The shapes a compiled template runs with
 * (`RenderState`, `CompileHost`, …) are in compiled-template.ts.
 *
 * Contract:
 * - `ExpressionCompiler.expr(node)` returns `(scope, render) => value`. Names are looked up
 *   through the scope's prototype chain (missing: a strict `Undefined`); `.attr` and `[key]`
 *   follow Jinja's getattr/getitem (access.ts); operators Python's (operators.ts,
 *   values.ts); `and`/`or` return an operand; an inline `if` without `else` gives Jinja's
 *   plain Undefined when false.
 * - Filters and tests are resolved when compiling: an unknown name is a `TemplateSyntaxError`
 *   at its line (Jinja's `No filter named 'x'.`), except inside an `if` statement or an inline
 *   if (Jinja 3.1's "soft" frames: the `soft` state), where it fails only when it runs, after its
 *   operands are evaluated (`TemplateRuntimeError` `No filter named 'x' found.`). A loop, macro,
 *   call, filter, `with` or block-set body inside the `if` is a frame of its own, strict again.
 *   `map('x')`-style lookups happen at run time.
 * - Nesting: tags (`nested`) and expression levels (`expr`) open at once are bounded by limits.ts
 *   `MAX_NESTING_DEPTH` (operator and filter chains build deep trees without deep parsing): past
 *   it a `TemplateSyntaxError` `expressions nest more than 500 levels deep` at the node's line.
 * - `~` refuses a result past `MAX_STRING_LENGTH` before copying anything.
 * - `callValue` calls a template callable (`PyCallable`) with Python's arguments, or a plain
 *   JavaScript function (e.g. SQL models' `ref`) with the positional ones (keywords, when
 *   given, as a trailing object).
 */
import { PySlice, getAttr, getItem } from './access.js'
import type { CompileHost, FilterFunction, RenderState, TestFunction } from './compiled-template.js'
import { TemplateRuntimeError, TemplateSyntaxError, TemplateTimeoutError, typeError } from './errors.js'
import { DICT_METHOD_NAMES } from './methods.js'
import type { CallArgs, Expr } from './nodes.js'
import { AUTOESCAPE_FILTERS, markupJoin } from './autoescape.js'
import { ConstantFolder } from './constants.js'
import { autoescapeNow } from './eval-context.js'
import { add, binary, negate, positive } from './operators.js'
import type { Scope } from './runtime.js'
import { PyDict, dictKeywords } from './dict.js'
import { PyCallable, Undefined, fail, isDict, pyStr, tuple, typeName } from './values.js'
import { iterate, pyCompare, truthy } from './protocols.js'
import { MAX_NESTING_DEPTH, MAX_STRING_LENGTH, checkString, stringTooLong } from './limits.js'
import { ticks } from './render-budget.js'

export type Eval = (scope: Scope, render: RenderState) => unknown
export type Run = (scope: Scope, render: RenderState) => void

const NO_KWARGS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>

export function callValue(callee: unknown, args: unknown[], kwargs: Record<string, unknown>): unknown {
  if (callee instanceof PyCallable) return callee.invoke(args, kwargs)
  if (typeof callee === 'function') {
    const extra = Object.keys(kwargs).length > 0 ? [kwargs] : []
    return (callee as (...a: unknown[]) => unknown)(...args, ...extra)
  }
  if (callee instanceof Undefined) fail(callee)
  throw typeError(`'${typeName(callee)}' object is not callable`)
}

/** Expressions whose code-generating visitors fold their tree first (Jinja's `@optimizeconst`). */
const FOLDED_KINDS: ReadonlySet<Expr['kind']> = new Set(['getattr', 'getitem', 'call', 'filter', 'test', 'condexpr', 'binop', 'concat', 'compare', 'and', 'or', 'not', 'neg', 'pos'])

export class ExpressionCompiler {
  /**
   * Inside `{% autoescape true %}` (the environment's own autoescape is off): Jinja decides at
   * compile time, so this is a compiler state that `~`, output, the eval-context filters,
   * macros and block assignments read while their code is made.
   */
  protected autoescape = false
  /** Inside a non-literal `{% autoescape expr %}` (Jinja's "volatile" mode): output escapes by the run-time value. */
  protected volatileAutoescape = false
  /**
   * Inside an `if` statement or an inline if (Jinja's soft frame): an unknown filter or test is
   * an error only when it runs (Jinja 3.0+). Frames of their own (loop, macro, call, filter,
   * `with` and block-set bodies) compile with it off.
   */
  protected soft = false

  /** Compiles with the soft-frame state set to `soft`, restoring it after. */
  protected softly<T>(soft: boolean, compile: () => T): T {
    const outer = this.soft
    this.soft = soft
    try {
      return compile()
    } finally {
      this.soft = outer
    }
  }

  /** Whether a block `set` or `{% filter %}` body becomes Markup: by the compile-time setting, or in volatile mode by the run-time one. */
  protected markupOfBlocks(): () => boolean {
    if (this.volatileAutoescape) return autoescapeNow
    const markup = this.autoescape
    return () => markup
  }

  /** Jinja's constant folding of this template's expressions (constants.ts). */
  private readonly folder: ConstantFolder

  constructor(
    protected readonly file: string,
    protected readonly host: CompileHost,
  ) {
    this.folder = new ConstantFolder(host)
  }

  /** The eval context's state for folding where the compiler is. */
  private get foldContext(): { autoescape: boolean; volatile: boolean } {
    return { autoescape: this.autoescape, volatile: this.volatileAutoescape }
  }

  /**
   * Jinja's `as_const` of `expr` where the compiler is (constants.ts): `{ value }`, or null when
   * it is not constant or folding it raises (a `{{ }}` then evaluates it at run time).
   */
  protected constant(expr: Expr): { value: unknown } | null {
    try {
      return { value: this.folder.value(expr, this.foldContext) }
    } catch (error) {
      if (error instanceof TemplateTimeoutError) throw error
      return null
    }
  }

  /** The optimizer's pass over a tree the compiler is about to compile (none in volatile autoescape): throws what folding raises. */
  protected optimize(expr: Expr): void {
    if (!this.volatileAutoescape) this.folder.optimize(expr, this.foldContext)
  }

  protected fail(message: string, line: number): never {
    throw new TemplateSyntaxError(message, this.file, line)
  }

  protected callArgs(call: CallArgs): (scope: Scope, render: RenderState) => [unknown[], Record<string, unknown>] {
    const args = call.args.map((arg) => this.expr(arg))
    const kwargs = call.kwargs.map(({ name, value }) => ({ name, value: this.expr(value) }))
    const dynArgs = call.dynArgs ? this.expr(call.dynArgs) : null
    const dynKwargs = call.dynKwargs ? this.expr(call.dynKwargs) : null
    if (!dynArgs && !dynKwargs && kwargs.length === 0) {
      return (scope, render) => [args.map((arg) => arg(scope, render)), NO_KWARGS]
    }
    return (scope, render) => {
      const positional = args.map((arg) => arg(scope, render))
      if (dynArgs) {
        const extra = iterate(dynArgs(scope, render))
        ticks(extra.length >> 4)
        for (let i = 0; i < extra.length; i++) positional.push(extra[i])
      }
      const keywords: Record<string, unknown> = {}
      for (const { name, value } of kwargs) keywords[name] = value(scope, render)
      if (dynKwargs) {
        const extra = dynKwargs(scope, render)
        if (!isDict(extra)) throw typeError(`argument after ** must be a mapping, not ${typeName(extra)}`)
        dictKeywords(extra, keywords)
      }
      return [positional, keywords]
    }
  }

  /** A filter chain whose innermost target is supplied at run time (filter blocks, block set). */
  protected filterChain(expr: Expr): (scope: Scope, render: RenderState, input: unknown) => unknown {
    if (expr.kind !== 'filter') throw new TemplateSyntaxError('expected a filter', this.file, expr.line)
    this.optimize(expr)
    const inner = expr.target ? this.filterChain(expr.target) : null
    const apply = this.filterApplier(expr)
    return (scope, render, input) => apply(scope, render, inner ? inner(scope, render, input) : input)
  }

  private filterApplier(expr: Extract<Expr, { kind: 'filter' }>): (scope: Scope, render: RenderState, value: unknown) => unknown {
    const filter = this.host.filters[expr.name] ?? this.unknown('filter', expr.name, expr.line)
    const args = this.callArgs(expr.call)
    const host = this.host
    // The eval-context filters read autoescape when they run, as Jinja's do.
    const autoescaped = AUTOESCAPE_FILTERS[expr.name]
    if (autoescaped) {
      return (scope, render, value) => {
        const [positional, keywords] = args(scope, render)
        return (autoescapeNow() ? autoescaped : filter)(host, value, positional, keywords)
      }
    }
    return (scope, render, value) => {
      const [positional, keywords] = args(scope, render)
      return filter(host, value, positional, keywords)
    }
  }

  /**
   * An unknown filter or test: a compile error, or in a soft frame a function that fails when it
   * is called (its operands evaluated first, as Jinja's stand-in does).
   */
  private unknown(what: 'filter' | 'test', name: string, line: number): FilterFunction & TestFunction {
    if (!this.soft) this.fail(`No ${what} named '${name}'.`, line)
    return () => {
      throw new TemplateRuntimeError(`No ${what} named '${name}' found.`)
    }
  }

  /** Tags and expression levels open where the compiler is (limits.ts `MAX_NESTING_DEPTH`). */
  private depth = 0

  /**
   * Compiles one more level of nesting: refused past the bound (operator and filter chains nest
   * without parser recursion, so the parser's count alone does not bound the tree).
   */
  protected nested<T>(line: number, what: 'tags' | 'expressions', compile: () => T): T {
    if (++this.depth > MAX_NESTING_DEPTH) this.fail(`${what} nest more than ${MAX_NESTING_DEPTH} levels deep`, line)
    try {
      return compile()
    } finally {
      this.depth--
    }
  }

  expr(expr: Expr): Eval {
    if (++this.depth > MAX_NESTING_DEPTH) this.fail(`expressions nest more than ${MAX_NESTING_DEPTH} levels deep`, expr.line)
    try {
      if (FOLDED_KINDS.has(expr.kind)) this.optimize(expr)
      return this.exprNode(expr)
    } finally {
      this.depth--
    }
  }

  private exprNode(expr: Expr): Eval {
    switch (expr.kind) {
      case 'const': {
        const value = expr.value
        return () => value
      }
      case 'name': {
        const name = expr.name
        return (scope) => {
          const value = scope[name]
          return value === undefined ? new Undefined(`'${name}' is undefined`) : value
        }
      }
      case 'getattr': {
        const target = this.expr(expr.target)
        const attr = expr.attr
        if (DICT_METHOD_NAMES.has(attr)) return (scope, render) => getAttr(target(scope, render), attr)
        // Not a dict method: on a plain object (a row, `this`) the attribute is its own key.
        return (scope, render) => {
          const obj = target(scope, render)
          if (typeof obj === 'object' && obj !== null && Object.getPrototypeOf(obj) === Object.prototype && Object.hasOwn(obj, attr)) {
            return (obj as Record<string, unknown>)[attr]
          }
          return getAttr(obj, attr)
        }
      }
      case 'getitem': {
        const target = this.expr(expr.target)
        const index = this.expr(expr.index)
        return (scope, render) => {
          const obj = target(scope, render)
          if (obj instanceof Undefined) fail(obj)
          return getItem(obj, index(scope, render))
        }
      }
      case 'slice': {
        const start = expr.start ? this.expr(expr.start) : null
        const stop = expr.stop ? this.expr(expr.stop) : null
        const step = expr.step ? this.expr(expr.step) : null
        return (scope, render) =>
          new PySlice(start ? start(scope, render) : null, stop ? stop(scope, render) : null, step ? step(scope, render) : null)
      }
      case 'call': {
        const callee = this.expr(expr.callee)
        const args = this.callArgs(expr.call)
        return (scope, render) => {
          const fn = callee(scope, render)
          const [positional, keywords] = args(scope, render)
          return callValue(fn, positional, keywords)
        }
      }
      case 'filter': {
        const target = expr.target ? this.expr(expr.target) : () => null
        const apply = this.filterApplier(expr)
        return (scope, render) => apply(scope, render, target(scope, render))
      }
      case 'test': {
        const test = this.host.tests[expr.name] ?? this.unknown('test', expr.name, expr.line)
        const target = this.expr(expr.target)
        const args = this.callArgs(expr.call)
        const host = this.host
        const negated = expr.negated
        return (scope, render) => {
          const value = target(scope, render)
          const [positional, keywords] = args(scope, render)
          const result = test(host, value, positional, keywords)
          return negated ? !result : result
        }
      }
      case 'condexpr': {
        // Jinja compiles an inline if in a soft frame.
        const [test, then, otherwise] = this.softly(true, (): [Eval, Eval, Eval | null] => [
          this.expr(expr.test),
          this.expr(expr.then),
          expr.otherwise ? this.expr(expr.otherwise) : null,
        ])
        const line = expr.line
        return (scope, render) => {
          if (truthy(test(scope, render))) return then(scope, render)
          if (otherwise) return otherwise(scope, render)
          // Jinja uses its plain (not strict) Undefined here: it prints empty (`cond_expr_undefined`).
          return new Undefined(`the inline if-expression on line ${line} evaluated to false and no else section was defined.`, false)
        }
      }
      case 'binop': {
        const left = this.expr(expr.left)
        const right = this.expr(expr.right)
        const op = expr.op
        if (op === '+') return (scope, render) => add(left(scope, render), right(scope, render))
        return (scope, render) => binary(op, left(scope, render), right(scope, render))
      }
      case 'concat': {
        if (this.autoescape && !this.volatileAutoescape) {
          // Jinja folds `~` of constants to a plain str (constants.ts): its Markup parts are not kept.
          const folded = this.constant(expr)
          if (folded !== null) {
            const text = folded.value
            return () => text
          }
        }
        const items = expr.items.map((item) => this.expr(item))
        // Jinja's markup_join: with a Markup among the parts, the others are escaped (in
        // volatile mode Jinja compiles a plain str join).
        if (this.autoescape && !this.volatileAutoescape) {
          return (scope, render) => {
            const joined = markupJoin(items.map((item) => item(scope, render)))
            checkString(typeof joined === 'string' ? joined.length : joined.text.length, () => `joining ${items.length} values with '~'`)
            return joined
          }
        }
        return (scope, render) => {
          let out = ''
          for (const item of items) {
            const value = item(scope, render)
            // A rope's length is known without flattening it: check before anything is copied.
            if ((out += typeof value === 'string' ? value : pyStr(value)).length > MAX_STRING_LENGTH) {
              throw stringTooLong(`joining ${items.length} values with '~'`, out.length)
            }
          }
          return out
        }
      }
      case 'compare': {
        const first = this.expr(expr.first)
        const ops = expr.ops.map(({ op, expr: operand }) => ({ op, value: this.expr(operand) }))
        return (scope, render) => {
          let left = first(scope, render)
          for (const { op, value } of ops) {
            const right = value(scope, render)
            if (!pyCompare(op, left, right)) return false
            left = right
          }
          return true
        }
      }
      case 'and': {
        const left = this.expr(expr.left)
        const right = this.expr(expr.right)
        return (scope, render) => {
          const value = left(scope, render)
          return truthy(value) ? right(scope, render) : value
        }
      }
      case 'or': {
        const left = this.expr(expr.left)
        const right = this.expr(expr.right)
        return (scope, render) => {
          const value = left(scope, render)
          return truthy(value) ? value : right(scope, render)
        }
      }
      case 'not': {
        const operand = this.expr(expr.operand)
        return (scope, render) => !truthy(operand(scope, render))
      }
      case 'neg': {
        const operand = this.expr(expr.operand)
        return (scope, render) => negate(operand(scope, render))
      }
      case 'pos': {
        const operand = this.expr(expr.operand)
        return (scope, render) => positive(operand(scope, render))
      }
      case 'list': {
        const items = expr.items.map((item) => this.expr(item))
        return (scope, render) => items.map((item) => item(scope, render))
      }
      case 'tuple': {
        const items = expr.items.map((item) => this.expr(item))
        return (scope, render) => tuple(items.map((item) => item(scope, render)))
      }
      case 'dict': {
        const items = expr.items.map(({ key, value }) => ({ key: this.expr(key), value: this.expr(value) }))
        // Python evaluates every key and value, in order, then builds the dict (hashing the keys).
        return (scope, render) => {
          const pairs = new Array<unknown>(items.length * 2)
          for (let i = 0; i < items.length; i++) {
            pairs[2 * i] = items[i]!.key(scope, render)
            pairs[2 * i + 1] = items[i]!.value(scope, render)
          }
          const out = new PyDict()
          for (let i = 0; i < pairs.length; i += 2) out.set(pairs[i], pairs[i + 1])
          return out
        }
      }
    }
  }
}
