/**
 * Jinja2 3.1's symbol analysis of a frame (jinja2/idtracking.py `Symbols`, `FrameSymbolVisitor`,
 * `RootVisitor`), ported for one result: the names a frame assigns that start out undefined.
 *
 * Contract:
 * - A frame is the template's top level, a block, a loop body, a loop's `else`, a macro or call
 *   body, a `{% filter %}` body, a block `set` body or a `with` body; `if` and `autoescape`
 *   bodies belong to the frame around them. `analyzeFrame(node, parent)` walks the frame's
 *   own statements in source order, as Jinja does: a name loaded before any store resolves
 *   from the context; a name stored first is the frame's local from the frame's start,
 *   undefined there unless an enclosing frame knows the name (then it starts as that frame's
 *   value); a name first stored inside `if` branches resolves from the context
 *   (`branch_update`). Inner frames are analyzed when the compiler reaches them, against
 *   their parent's complete analysis.
 * - `FrameSymbols.undefinedAtStart` lists the names that start undefined: reading one before
 *   the frame assigns it, in the frame or in a frame inside it, gives Undefined
 *   (`'acc' is undefined`), not the context's value.
 * - `macroSpecials(signature, body)` decides which of `caller`, `varargs`, `kwargs` a macro or
 *   call body takes, as Jinja's `macro_body` does (`findUndeclared`: loaded before any store);
 *   a macro frame declares those as parameters after its body, so its entry never resets them.
 * - `assignedLoop(forStatement)`: the `loop` name a `for` assigns anywhere inside it, which Jinja
 *   refuses at compile time.
 */
import { MAX_NESTING_DEPTH } from './limits.js'
import type { Expr, MacroSignature, Stmt, Target } from './nodes.js'

type Load = 'param' | 'resolve' | 'alias' | 'undefined'

/**
 * One frame's symbols: how each name the frame knows is loaded at the frame's start (Jinja's
 * `loads`, keyed here by name: a frame's refs are its names, so Jinja's `refs` and level need no
 * table of their own), and the names it stores.
 */
export class FrameSymbols {
  loads = new Map<string, Load>()
  stores = new Set<string>()
  /** `undefinedAtStart`, made once the analysis is complete (any change forgets it). */
  private missing: string[] | null = null

  constructor(readonly parent: FrameSymbols | null) {}

  /** The names this frame assigns that start out undefined (Jinja's `VAR_LOAD_UNDEFINED`). */
  get undefinedAtStart(): string[] {
    if (this.missing === null) {
      this.missing = []
      for (const [name, load] of this.loads) if (load === 'undefined') this.missing.push(name)
    }
    return this.missing
  }

  /**
   * Whether the frame assigns a name that is not one of its parameters (`set`, a block `set`,
   * a macro, an import; also inside an `if` or `autoescape`). A loop body that does not
   * assigns only its targets, which every iteration assigns again.
   */
  get storesLocals(): boolean {
    for (const name of this.stores) if (this.loads.get(name) !== 'param') return true
    return false
  }

  private define(name: string, load: Load): void {
    this.loads.set(name, load)
    this.missing = null
  }

  /** Whether this frame or one around it knows `name` (Jinja's `find_ref` finds a ref). */
  knows(name: string): boolean {
    return this.loads.has(name) || (this.parent?.knows(name) ?? false)
  }

  copy(): FrameSymbols {
    const copy = new FrameSymbols(this.parent)
    copy.loads = new Map(this.loads)
    copy.stores = new Set(this.stores)
    return copy
  }

  store(name: string): void {
    this.stores.add(name)
    if (this.loads.has(name)) return
    this.define(name, this.parent?.knows(name) ? 'alias' : 'undefined')
  }

  declareParameter(name: string): void {
    this.stores.add(name)
    this.define(name, 'param')
  }

  load(name: string): void {
    if (!this.knows(name)) this.define(name, 'resolve')
  }

  branchUpdate(branches: FrameSymbols[]): void {
    const stores = new Set<string>()
    for (const branch of branches) for (const name of branch.stores) if (!this.stores.has(name)) stores.add(name)
    for (const branch of branches) {
      for (const [name, load] of branch.loads) this.define(name, load)
      for (const name of branch.stores) this.stores.add(name)
    }
    for (const name of stores) this.define(name, this.parent?.knows(name) ? 'alias' : 'resolve')
  }
}

/** The frames of the compiler, with the statements Jinja's `RootVisitor` walks for each. */
export type FrameNode =
  | { kind: 'root'; body: Stmt[] }
  | { kind: 'loop'; target: Target; body: Stmt[] }
  | { kind: 'body'; body: Stmt[] }
  | { kind: 'macro'; signature: MacroSignature; body: Stmt[]; specials: MacroSpecials }
  | { kind: 'filterblock'; body: Stmt[]; filters: Expr }
  | { kind: 'with'; targets: Target[]; body: Stmt[] }

export function analyzeFrame(node: FrameNode, parent: FrameSymbols | null): FrameSymbols {
  const visitor = new FrameVisitor(new FrameSymbols(parent))
  switch (node.kind) {
    case 'loop':
      visitor.target(node.target, true)
      break
    case 'macro':
      for (const param of node.signature.params) visitor.symbols.declareParameter(param.name)
      for (const param of node.signature.params) if (param.default) visitor.expr(param.default)
      break
    case 'with':
      // Jinja's parser makes `with` targets parameters (`parse_with`: ctx "param").
      for (const target of node.targets) visitor.target(target, true)
      break
  }
  visitor.statements(node.body)
  if (node.kind === 'filterblock') visitor.expr(node.filters)
  // Jinja's `macro_body` declares the special names a macro takes as parameters after analyzing
  // its body: the call binds them, so the frame's entry must not set them (not even when the
  // body stores them after reading them in an inner frame).
  if (node.kind === 'macro') for (const name of node.specials.declared) visitor.symbols.declareParameter(name)
  return visitor.symbols
}

const SPECIAL_NAMES = ['caller', 'kwargs', 'varargs'] as const

/**
 * What a macro or call body takes of the special names, as Jinja's `macro_body` decides it:
 * `caller`, `varargs`, `kwargs` when the body loads the name before any store of it
 * (`find_undeclared`) and the signature does not name it; `callerLoaded` even when it does.
 */
export interface MacroSpecials {
  caller: boolean
  varargs: boolean
  kwargs: boolean
  /** The body loads `caller` before storing it (Jinja then requires an explicit `caller` parameter to have a default). */
  callerLoaded: boolean
  /** The special names the macro takes (declared as its parameters). */
  declared: string[]
}

export function macroSpecials(signature: MacroSignature, body: Stmt[]): MacroSpecials {
  const undeclared = findUndeclared(body, SPECIAL_NAMES)
  const params = new Set(signature.params.map((param) => param.name))
  const takes = (name: string): boolean => undeclared.has(name) && !params.has(name)
  const specials = { caller: takes('caller'), varargs: takes('varargs'), kwargs: takes('kwargs') }
  return {
    ...specials,
    callerLoaded: undeclared.has('caller'),
    declared: SPECIAL_NAMES.filter((name) => specials[name]),
  }
}

/**
 * Jinja's `find_undeclared` (compiler.py `UndeclaredNameVisitor`): which of `names` the statements
 * load before any store or parameter of the same name, walking every node in Jinja's field order,
 * into loops, macros and call bodies but not blocks.
 */
export function findUndeclared(body: Stmt[], names: readonly string[]): Set<string> {
  const pending = new Set(names)
  const undeclared = new Set<string>()
  const expr = (root: unknown): void =>
    forEachName(root, (name) => {
      if (pending.has(name)) undeclared.add(name)
    })
  const bind = (target: Target): void => {
    if (target.kind === 'name') pending.delete(target.name)
    else if (target.kind === 'tuple') for (const item of target.items) bind(item)
  }
  const signature = (params: MacroSignature['params']): void => {
    for (const param of params) pending.delete(param.name)
    for (const param of params) if (param.default) expr(param.default)
  }
  const statements = (stmts: Stmt[], depth: number): void => {
    // Past MAX_NESTING_DEPTH the compiler refuses the template: the walk stops.
    if (depth > MAX_NESTING_DEPTH) return
    for (const stmt of stmts) {
      switch (stmt.kind) {
        case 'data':
        case 'block':
          break
        case 'output':
          expr(stmt.expr)
          break
        case 'if':
          expr(stmt.test)
          statements(stmt.body, depth + 1)
          for (const elif of stmt.elifs) {
            expr(elif.test)
            statements(elif.body, depth + 1)
          }
          statements(stmt.otherwise, depth + 1)
          break
        case 'for':
          bind(stmt.target)
          expr(stmt.iter)
          statements(stmt.body, depth + 1)
          statements(stmt.otherwise, depth + 1)
          expr(stmt.filter)
          break
        case 'set':
          bind(stmt.target)
          expr(stmt.value)
          break
        case 'setblock':
          bind(stmt.target)
          expr(stmt.filters)
          statements(stmt.body, depth + 1)
          break
        case 'macro':
          signature(stmt.signature.params)
          statements(stmt.body, depth + 1)
          break
        case 'callblock':
          expr(stmt.call)
          signature(stmt.signature.params)
          statements(stmt.body, depth + 1)
          break
        case 'filterblock':
          statements(stmt.body, depth + 1)
          expr(stmt.filters)
          break
        case 'with':
          for (const { target } of stmt.targets) bind(target)
          for (const { value } of stmt.targets) expr(value)
          statements(stmt.body, depth + 1)
          break
        case 'autoescape':
          expr(stmt.enabled)
          statements(stmt.body, depth + 1)
          break
        case 'include':
        case 'extends':
        case 'import':
        case 'fromimport':
          expr(stmt.template)
          break
      }
    }
  }
  statements(body, 0)
  return undeclared
}

class FrameVisitor {
  /** `if` and `autoescape` levels open: past limits.ts `MAX_NESTING_DEPTH` the compiler refuses the template, so the walk stops. */
  private depth = 0

  constructor(public symbols: FrameSymbols) {}

  statements(body: Stmt[]): void {
    if (this.depth > MAX_NESTING_DEPTH) return
    this.depth++
    try {
      for (const stmt of body) this.statement(stmt)
    } finally {
      this.depth--
    }
  }

  /** Loads every name of an expression (all loads: their order does not matter). */
  expr(root: unknown): void {
    forEachName(root, (name) => this.symbols.load(name))
  }

  target(target: Target, param: boolean): void {
    if (target.kind === 'name') {
      if (param) this.symbols.declareParameter(target.name)
      else this.symbols.store(target.name)
    } else if (target.kind === 'nsref') this.symbols.load(target.name)
    else for (const item of target.items) this.target(item, param)
  }

  private statement(stmt: Stmt): void {
    switch (stmt.kind) {
      case 'data':
      case 'block':
        return
      case 'output':
        return this.expr(stmt.expr)
      case 'if': {
        // Jinja's elifs are nested `If` nodes, all visited in one branch copy.
        this.expr(stmt.test)
        const original = this.symbols
        const branch = (visit: () => void): FrameSymbols => {
          this.symbols = original.copy()
          visit()
          const result = this.symbols
          this.symbols = original
          return result
        }
        const body = branch(() => this.statements(stmt.body))
        const elifs = branch(() => {
          for (const elif of stmt.elifs) this.statement({ kind: 'if', line: elif.line, test: elif.test, body: elif.body, elifs: [], otherwise: [] })
        })
        const otherwise = branch(() => this.statements(stmt.otherwise))
        this.symbols.branchUpdate([body, elifs, otherwise])
        return
      }
      case 'for':
        return this.expr(stmt.iter)
      case 'set':
        this.expr(stmt.value)
        return this.target(stmt.target, false)
      case 'setblock':
        return this.target(stmt.target, false)
      case 'macro':
        return this.symbols.store(stmt.name)
      case 'callblock':
        return this.expr(stmt.call)
      case 'filterblock':
        return this.expr(stmt.filters)
      case 'with':
        for (const { value } of stmt.targets) this.expr(value)
        return
      case 'autoescape':
        this.expr(stmt.enabled)
        return this.statements(stmt.body)
      case 'include':
      case 'extends':
        return this.expr(stmt.template)
      case 'import':
        this.expr(stmt.template)
        return this.symbols.store(stmt.target)
      case 'fromimport':
        this.expr(stmt.template)
        for (const { alias } of stmt.names) this.symbols.store(alias)
        return
    }
  }
}

/** Calls `visit` with every name an expression tree reads (walked without recursion: expressions nest deep). */
export function forEachName(root: unknown, visit: (name: string) => void): void {
  const pending = [root]
  while (pending.length > 0) {
    const node = pending.pop()
    if (Array.isArray(node)) {
      for (const item of node) pending.push(item)
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    const record = node as Record<string, unknown>
    if (record.kind === 'name' && typeof record.name === 'string') {
      visit(record.name)
      continue
    }
    for (const key of Object.keys(record)) if (key !== 'kind' && key !== 'line') pending.push(record[key])
  }
}

/**
 * The first `loop` a `for` statement assigns, in Jinja's node order: its own target, or a `set`,
 * block `set` or nested `for` target anywhere inside it, its `else` included (Jinja's `visit_For`
 * refuses it at compile time: `Can't assign to special loop variable in for-loop target`).
 * `with` targets are parameters and namespace attributes are no names: neither counts.
 */
export function assignedLoop(stmt: Extract<Stmt, { kind: 'for' }>): Target | undefined {
  const named = (target: Target): Target | undefined =>
    target.kind === 'name' ? (target.name === 'loop' ? target : undefined) : target.kind === 'tuple' ? target.items.map(named).find(Boolean) : undefined
  const stack: unknown[] = [stmt]
  while (stack.length > 0) {
    const node = stack.pop()
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i])
      continue
    }
    if (typeof node !== 'object' || node === null) continue
    const record = node as Record<string, unknown>
    if (record.kind === 'for' || record.kind === 'set' || record.kind === 'setblock') {
      const loop = named(record.target as Target)
      if (loop) return loop
    }
    const keys = Object.keys(record).filter((key) => key !== 'kind' && key !== 'line' && key !== 'target')
    for (let i = keys.length - 1; i >= 0; i--) stack.push(record[keys[i]!])
  }
  return undefined
}
