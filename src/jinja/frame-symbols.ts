/**
 * Jinja2 3.1's symbol analysis of a frame (jinja2/idtracking.py `Symbols`, `FrameSymbolVisitor`,
 * `RootVisitor`), ported for one result: the names a frame assigns that start out undefined.
 *
 * Contract:
 * - A frame is the template's top level, a block, a loop body, a loop's `else`, a macro or call
 *   body, a `{% filter %}` body, a block `set` body or a `with` body; `if` and `autoescape`
 *   bodies belong to the frame around them. `analyzeFrame(kind, node, parent)` walks the frame's
 *   own statements in source order, as Jinja does: a name loaded before any store resolves
 *   from the context; a name stored first is the frame's local from the frame's start,
 *   undefined there unless an enclosing frame knows the name (then it starts as that frame's
 *   value); a name first stored inside `if` branches resolves from the context
 *   (`branch_update`). Inner frames are analyzed when the compiler reaches them, against
 *   their parent's complete analysis.
 * - `FrameSymbols.undefinedAtStart` lists the names that start undefined: reading one before
 *   the frame assigns it, in the frame or in a frame inside it, gives Undefined
 *   (`'acc' is undefined`), not the context's value.
 */
import { MAX_NESTING_DEPTH } from './limits.js'
import type { Expr, MacroSignature, Stmt, Target } from './nodes.js'

type Load = 'param' | 'resolve' | 'alias' | 'undefined'

export class FrameSymbols {
  readonly level: number
  refs = new Map<string, string>()
  loads = new Map<string, Load>()
  stores = new Set<string>()

  constructor(readonly parent: FrameSymbols | null) {
    this.level = parent ? parent.level + 1 : 0
  }

  /** The names this frame assigns that start out undefined (Jinja's `VAR_LOAD_UNDEFINED`). */
  get undefinedAtStart(): string[] {
    const names: string[] = []
    for (const [name, ref] of this.refs) if (this.loads.get(ref) === 'undefined') names.push(name)
    return names
  }

  private defineRef(name: string, load: Load): void {
    const ref = `${this.level}:${name}`
    this.refs.set(name, ref)
    this.loads.set(ref, load)
  }

  findRef(name: string): string | undefined {
    return this.refs.get(name) ?? this.parent?.findRef(name)
  }

  copy(): FrameSymbols {
    const copy = Object.create(FrameSymbols.prototype) as FrameSymbols
    Object.assign(copy, this)
    copy.refs = new Map(this.refs)
    copy.loads = new Map(this.loads)
    copy.stores = new Set(this.stores)
    return copy
  }

  store(name: string): void {
    this.stores.add(name)
    if (this.refs.has(name)) return
    this.defineRef(name, this.parent?.findRef(name) !== undefined ? 'alias' : 'undefined')
  }

  declareParameter(name: string): void {
    this.stores.add(name)
    this.defineRef(name, 'param')
  }

  load(name: string): void {
    if (this.findRef(name) === undefined) this.defineRef(name, 'resolve')
  }

  branchUpdate(branches: FrameSymbols[]): void {
    const stores = new Set<string>()
    for (const branch of branches) for (const name of branch.stores) if (!this.stores.has(name)) stores.add(name)
    for (const branch of branches) {
      for (const [name, ref] of branch.refs) this.refs.set(name, ref)
      for (const [ref, load] of branch.loads) this.loads.set(ref, load)
      for (const name of branch.stores) this.stores.add(name)
    }
    for (const name of stores) {
      const ref = this.findRef(name)!
      this.loads.set(ref, this.parent?.findRef(name) !== undefined ? 'alias' : 'resolve')
    }
  }
}

/** The frames of the compiler, with the statements Jinja's `RootVisitor` walks for each. */
export type FrameNode =
  | { kind: 'root'; body: Stmt[] }
  | { kind: 'loop'; target: Target; body: Stmt[] }
  | { kind: 'body'; body: Stmt[] }
  | { kind: 'macro'; signature: MacroSignature; body: Stmt[] }
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
      for (const target of node.targets) visitor.target(target, false)
      break
  }
  visitor.statements(node.body)
  if (node.kind === 'filterblock') visitor.expr(node.filters)
  return visitor.symbols
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

  /** Loads every name of an expression (all loads: their order does not matter; walked without recursion, expressions nest deep). */
  expr(root: unknown): void {
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
        this.symbols.load(record.name)
        continue
      }
      for (const key of Object.keys(record)) if (key !== 'kind' && key !== 'line') pending.push(record[key])
    }
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
