/**
 * Jinja2 3.1's constant folding (nodes.py `as_const`, optimizer.py), which its compiler applies
 * to every template and which a template can observe (issue #36):
 * - `~` of constants is folded to `''.join(str(x) …)`, a plain str, so inside
 *   `{% autoescape true %}` `{{ '<'|safe ~ '>' }}` prints `&lt;&gt;` (at run time `~` keeps
 *   Markup: `<&gt;`);
 * - a `{{ }}` whose expression is constant prints text made at compile time, one chunk with
 *   the template text around it (chunks.ts);
 * - folding raises, at compile time, the few errors `as_const` does not turn into "not
 *   constant": `str()` of an undefined constant in `~` (`'a' ~ [1][5]`), its truth in
 *   `and`/`or`/an inline if's test, an unhashable or undefined dict key. The template then fails
 *   to compile, even where the expression would never run (`{% if false %}`).
 *
 * Contract: `ConstantFolder.value(expr, context)` is Jinja's `expr.as_const(eval_ctx)`: the value,
 * or throws `IMPOSSIBLE` (not constant: a name, a call, a filter that takes the context
 * (`map`, `select`, `reject`, `selectattr`, `rejectattr`, `random`), any filter or test in
 * volatile autoescape, an inline if without `else` that is false, and whatever raises in an
 * operator, attribute, item, filter, test or comparison), or throws the error Python would
 * raise. Results are kept per node (a node compiles in one context).
 * `ConstantFolder.optimize(expr, context)` is the optimizer's pass over a tree the code
 * generator visits (outside volatile autoescape): every node, children first, is folded, and an
 * error that is not `IMPOSSIBLE` is thrown. Trees nested past limits.ts `MAX_NESTING_DEPTH` are
 * left alone (the compiler refuses them).
 */
import { PySlice, getAttr, getItem } from './access.js'
import { AUTOESCAPE_FILTERS } from './autoescape.js'
import type { CompileHost } from './compiled-template.js'
import { TemplateLimitError, TemplateTimeoutError } from './errors.js'
import type { Expr } from './nodes.js'
import { add, binary, negate, positive } from './operators.js'
import { iterate, pyCompare, truthy } from './protocols.js'
import { MAX_NESTING_DEPTH, MAX_STRING_LENGTH } from './limits.js'
import { PyDict, dictKeywords } from './dict.js'
import { Undefined, fail, isDict, pyStr, tuple } from './values.js'

/** Thrown by `ConstantFolder.value` for an expression that is not constant (Jinja's `Impossible`). */
export const IMPOSSIBLE: unique symbol = Symbol('not constant')

/** What Jinja's eval context holds at compile time. */
export interface FoldContext {
  autoescape: boolean
  /** Inside `{% autoescape expr %}` with an expression that is not constant. */
  volatile: boolean
}

/** Jinja's filters marked `@pass_context`: never folded. */
const CONTEXT_FILTERS: ReadonlySet<string> = new Set(['map', 'select', 'reject', 'selectattr', 'rejectattr', 'random'])

type Folded = { value: unknown } | { error: unknown } | typeof IMPOSSIBLE

/** Any exception becomes `IMPOSSIBLE` (Jinja's `except Exception: raise Impossible()`), but a render's timeout. */
function guarded<T>(run: () => T): T {
  try {
    return run()
  } catch (error) {
    if (error instanceof TemplateTimeoutError) throw error
    throw IMPOSSIBLE
  }
}

/** `str()` of a constant (its errors raised), a text past the engine's bounds not folded. */
function strOf(value: unknown): string {
  try {
    return pyStr(value)
  } catch (error) {
    if (error instanceof TemplateLimitError) throw IMPOSSIBLE
    throw error
  }
}

/** The child expressions of a node, in Jinja's field order (the optimizer's visiting order). */
function children(expr: Expr): (Expr | null)[] {
  switch (expr.kind) {
    case 'const':
    case 'name':
      return []
    case 'getattr':
      return [expr.target]
    case 'getitem':
      return [expr.target, expr.index]
    case 'slice':
      return [expr.start, expr.stop, expr.step]
    case 'call':
      return [expr.callee, ...callChildren(expr.call)]
    case 'filter':
    case 'test':
      return [expr.target, ...callChildren(expr.call)]
    case 'condexpr':
      return [expr.test, expr.then, expr.otherwise]
    case 'binop':
    case 'and':
    case 'or':
      return [expr.left, expr.right]
    case 'concat':
    case 'list':
    case 'tuple':
      return expr.items
    case 'compare':
      return [expr.first, ...expr.ops.map((op) => op.expr)]
    case 'not':
    case 'neg':
    case 'pos':
      return [expr.operand]
    case 'dict':
      return expr.items.flatMap(({ key, value }) => [key, value])
  }
}

function callChildren(call: Extract<Expr, { kind: 'call' }>['call']): (Expr | null)[] {
  return [...call.args, ...call.kwargs.map(({ value }) => value), call.dynArgs, call.dynKwargs]
}

export class ConstantFolder {
  private readonly folded = new WeakMap<Expr, Folded>()
  private readonly optimized = new WeakSet<Expr>()
  private depth = 0

  constructor(
    private readonly host: CompileHost,
  ) {}

  value(expr: Expr, context: FoldContext): unknown {
    let folded = this.folded.get(expr)
    if (folded === undefined) {
      if (this.depth >= MAX_NESTING_DEPTH) throw IMPOSSIBLE
      this.depth++
      try {
        folded = { value: this.fold(expr, context) }
      } catch (error) {
        if (error instanceof TemplateTimeoutError) throw error
        folded = error === IMPOSSIBLE ? IMPOSSIBLE : { error }
      } finally {
        this.depth--
      }
      this.folded.set(expr, folded)
    }
    if (folded === IMPOSSIBLE) throw IMPOSSIBLE
    if ('error' in folded) throw folded.error
    return folded.value
  }

  optimize(expr: Expr, context: FoldContext): void {
    if (this.optimized.has(expr) || this.depth >= MAX_NESTING_DEPTH) return
    this.optimized.add(expr)
    this.depth++
    try {
      for (const child of children(expr)) if (child) this.optimize(child, context)
    } finally {
      this.depth--
    }
    try {
      this.value(expr, context)
    } catch (error) {
      if (error !== IMPOSSIBLE) throw error
    }
  }

  private fold(expr: Expr, context: FoldContext): unknown {
    const value = (node: Expr) => this.value(node, context)
    switch (expr.kind) {
      case 'const':
        return expr.value
      case 'name':
      case 'call':
        throw IMPOSSIBLE
      case 'getattr':
        return guarded(() => getAttr(value(expr.target), expr.attr))
      case 'getitem':
        return guarded(() => {
          const target = value(expr.target)
          if (target instanceof Undefined) fail(target)
          return getItem(target, value(expr.index))
        })
      case 'slice': {
        const bound = (node: Expr | null) => (node ? value(node) : null)
        return new PySlice(bound(expr.start), bound(expr.stop), bound(expr.step))
      }
      case 'filter':
      case 'test': {
        const filter = expr.kind === 'filter'
        if (context.volatile || expr.target === null) throw IMPOSSIBLE
        const table: Record<string, unknown> = filter ? this.host.filters : this.host.tests
        if (!Object.hasOwn(table, expr.name) || (filter && CONTEXT_FILTERS.has(expr.name))) throw IMPOSSIBLE
        const args = expr.call.args.map(value)
        const kwargs: Record<string, unknown> = {}
        for (const { name, value: node } of expr.call.kwargs) kwargs[name] = value(node)
        if (expr.call.dynArgs) {
          const dynArgs = expr.call.dynArgs
          args.push(...guarded(() => iterate(value(dynArgs))))
        }
        if (expr.call.dynKwargs) {
          const dynKwargs = expr.call.dynKwargs
          // `kwargs.update(...)` then `func(**kwargs)`: a key that is no str fails the call (not constant).
          guarded(() => {
            const extra = value(dynKwargs)
            if (!isDict(extra)) throw IMPOSSIBLE
            dictKeywords(extra, kwargs)
          })
        }
        const target = value(expr.target)
        if (filter) {
          // An eval-context filter sees the compile-time autoescape (autoescape.ts).
          const run = (context.autoescape ? AUTOESCAPE_FILTERS[expr.name] : undefined) ?? this.host.filters[expr.name]!
          return guarded(() => run(this.host, target, args, kwargs))
        }
        const result = guarded(() => this.host.tests[expr.name]!(this.host, target, args, kwargs))
        return expr.negated ? !result : result
      }
      case 'condexpr':
        // Python's truth of the test is not guarded: an undefined constant raises.
        if (truthy(value(expr.test))) return value(expr.then)
        if (expr.otherwise === null) throw IMPOSSIBLE
        return value(expr.otherwise)
      case 'binop': {
        const { op, left, right } = expr
        return guarded(() => (op === '+' ? add(value(left), value(right)) : binary(op, value(left), value(right))))
      }
      case 'concat': {
        // `''.join(str(x.as_const()) for x in nodes)`: a plain str, Markup or not; str() not guarded.
        let out = ''
        for (const item of expr.items) {
          const part = value(item)
          out += typeof part === 'string' ? part : strOf(part)
          if (out.length > MAX_STRING_LENGTH) throw IMPOSSIBLE
        }
        return out
      }
      case 'compare': {
        let left = value(expr.first)
        return guarded(() => {
          for (const { op, expr: operand } of expr.ops) {
            const right = value(operand)
            if (!pyCompare(op, left, right)) return false
            left = right
          }
          return true
        })
      }
      case 'and': {
        const left = value(expr.left)
        return truthy(left) ? value(expr.right) : left
      }
      case 'or': {
        const left = value(expr.left)
        return truthy(left) ? left : value(expr.right)
      }
      case 'not':
        return guarded(() => !truthy(value(expr.operand)))
      case 'neg':
        return guarded(() => negate(value(expr.operand)))
      case 'pos':
        return guarded(() => positive(value(expr.operand)))
      case 'list':
        return expr.items.map(value)
      case 'tuple':
        return tuple(expr.items.map(value))
      case 'dict': {
        // `dict(pair.as_const() for pair in items)`: built pair by pair (key, value, insert),
        // unguarded, so an unhashable or undefined key raises; a PyDict as a literal makes.
        const out = new PyDict()
        for (const { key, value: item } of expr.items) {
          const k = value(key)
          out.set(k, value(item))
        }
        return out
      }
    }
  }
}
