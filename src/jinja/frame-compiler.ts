/**
 * Jinja's frames as the compiler (compiler.ts) makes them: the symbols of the frame being
 * compiled (frame-symbols.ts) and what its code does with them at run time.
 *
 * Contract:
 * - `FrameCompiler` (the statements compiler extends it): `enterRoot` analyzes the top level,
 *   `inFrame` compiles a frame of its own (a loop, macro, call, filter, `with` or block-set body)
 *   with its symbols current and returns its `FrameEntry` (null when no name it assigns starts
 *   undefined); `storer`/`assigner` store names as the current frame does (a layered top level
 *   writes the context too); `maskedNames` are the missing locals of the frames around;
 *   `withoutOutputCheck` compiles a frame that renders whatever the template extends (Jinja's
 *   `require_output_check` off); `blockSetFilters` compiles a block `set`'s filters, refusing a
 *   name no frame knows as Jinja's compiler does (`AssertionError`).
 * - `FrameEntry.enter(scope)` sets a frame's missing locals (`FrameLocal`s) in its new scope;
 *   `contextView` is a scope as an include or import `with context` sees it (missing locals
 *   dropped); `captureOutput` runs a body in a frame of its own with an output buffer of its own
 *   (chunks.ts) and returns its text with the frame's scope.
 */
import type { RenderState } from './compiled-template.js'
import { closeBuffer, openBuffer, restoreBuffer } from './chunks.js'
import { TemplateRuntimeError, valueError } from './errors.js'
import { ExpressionCompiler, type Run } from './expression-compiler.js'
import { FrameSymbols, analyzeFrame, forEachName, type FrameNode } from './frame-symbols.js'
import type { Expr, Stmt, Target } from './nodes.js'
import { iterate } from './protocols.js'
import type { Scope } from './runtime.js'
import { FrameLocal, Markup, Namespace, Undefined, fail, pyRepr } from './values.js'

/** A frame's missing locals (frame-symbols.ts), set in its scope when the frame is entered. */
export class FrameEntry {
  constructor(private readonly names: string[]) {}

  /** The locals, made against the scope around the frame (a loop makes them once per run, not per iteration). */
  locals(outer: Scope): FrameLocal[] {
    return this.names.map((name) => {
      const value = outer[name]
      return new FrameLocal(name, value instanceof FrameLocal ? value.hidden : value)
    })
  }

  /** Makes and sets the locals in `scope`, a new scope over the one around the frame. */
  enter(scope: Scope): void {
    setLocals(scope, this.locals(scope))
  }
}

/** Sets a frame's missing locals (`FrameEntry.locals`) in the frame's scope. */
export function setLocals(scope: Scope, locals: FrameLocal[]): void {
  for (const local of locals) scope[local.name] = local
}

/** The entry of a frame whose missing locals are `names`; null when it has none. */
function frameEntry(names: string[]): FrameEntry | null {
  return names.length === 0 ? null : new FrameEntry(names)
}

/** `scope` as an include or import `with context` sees it: the frames' missing locals (`masked`) dropped, as Jinja drops them. */
export function contextView(scope: Scope, masked: string[]): Scope {
  const view = Object.create(scope) as Scope
  for (const name of masked) {
    const value = scope[name]
    if (value instanceof FrameLocal) view[name] = value.hidden
  }
  return view
}

/**
 * Runs `body` in a child scope (a frame: `entry` sets its missing locals) with an output buffer
 * of its own, joined (chunks.ts: a chunk that is no str fails), and returns that output (Markup
 * inside `{% autoescape true %}`) with the frame's scope, where Jinja evaluates a block `set`'s
 * or a `{% filter %}`'s filters after the body.
 */
export function captureOutput(body: Run, scope: Scope, render: RenderState, markup: boolean, entry: FrameEntry | null): { text: string | Markup; inner: Scope } {
  const saved = openBuffer(render)
  const inner = Object.create(scope) as Scope
  try {
    if (entry !== null) entry.enter(inner)
    body(inner, render)
  } catch (error) {
    restoreBuffer(render, saved)
    throw error
  }
  const text = closeBuffer(render, saved)
  return { text: markup ? new Markup(text) : text, inner }
}

function lookup(scope: Scope, name: string): unknown {
  const value = scope[name]
  return value === undefined ? new Undefined(`'${name}' is undefined`) : value
}

export class FrameCompiler extends ExpressionCompiler {
  /** The symbols of the frame being compiled (frame-symbols.ts); its parents are the frames around it. */
  protected frame: FrameSymbols | null = null
  /** The top-level frame when it has missing locals (it then runs in a layer over the context). */
  protected layeredRoot: FrameSymbols | null = null
  /** The template's top-level statements (a `{% extends %}` among them is Jinja's "known extends"). */
  protected rootBody: Stmt[] | null = null
  /** The template has an `{% extends %}` somewhere: its output is checked (`statement`). */
  protected hasExtends = false
  /** After a top-level `{% extends %}`: Jinja compiles no output of the frames that check for it. */
  protected knownExtends = false
  /** Whether the frame being compiled checks for extends before output (Jinja's `require_output_check`: not macro, call, block `set` or block bodies). */
  protected outputCheck = true
  enterRoot(body: Stmt[], hasExtends: boolean): FrameSymbols {
    this.rootBody = body
    this.hasExtends = hasExtends
    this.frame = analyzeFrame({ kind: 'root', body }, null)
    this.layeredRoot = this.frame.undefinedAtStart.length > 0 ? this.frame : null
    return this.frame
  }

  /**
   * Compiles a frame (analyzed against `parent`) with its symbols current; returns what `compile`
   * made, the frame's entry and its symbols. A frame of its own is never soft (an unknown filter
   * in it fails at compile time even inside an `if`: expression-compiler.ts `soft`).
   */
  protected inFrame<T>(node: FrameNode, compile: () => T, parent: FrameSymbols | null = this.frame): [T, FrameEntry | null, FrameSymbols] {
    const outer = this.frame
    const symbols = analyzeFrame(node, parent)
    this.frame = symbols
    try {
      return [this.softly(false, compile), frameEntry(symbols.undefinedAtStart), symbols]
    } finally {
      this.frame = outer
    }
  }

  /** Compiles a frame that renders its output whatever the template extends (macro, call, block `set` and block bodies). */
  protected withoutOutputCheck<T>(compile: () => T): T {
    const outer = this.outputCheck
    this.outputCheck = false
    try {
      return compile()
    } finally {
      this.outputCheck = outer
    }
  }

  /** The names the frames around the code being compiled may hold as missing locals. */
  protected maskedNames(): string[] {
    const names = new Set<string>()
    for (let frame = this.frame; frame; frame = frame.parent) for (const name of frame.undefinedAtStart) names.add(name)
    return [...names]
  }

  /** Stores `name` in the current frame (in a layered top level: in the context too). */
  protected storer(name: string): (scope: Scope, value: unknown) => void {
    const root = this.layeredRoot
    if (root !== null && this.frame === root) {
      if (root.undefinedAtStart.includes(name)) {
        return (scope, value) => {
          scope[name] = value
          ;(Object.getPrototypeOf(scope) as Scope)[name] = value
        }
      }
      return (scope, value) => {
        ;(Object.getPrototypeOf(scope) as Scope)[name] = value
      }
    }
    return (scope, value) => {
      scope[name] = value
    }
  }

  /** Assigns a `set`/`for`/`with` target: a name (`storer`), a namespace attribute, or a tuple of targets unpacked. */
  protected assigner(target: Target): (scope: Scope, value: unknown) => void {
    if (target.kind === 'name') return this.storer(target.name)
    if (target.kind === 'nsref') {
      const { name, attr } = target
      return (scope, value) => {
        const namespace = lookup(scope, name)
        if (namespace instanceof Undefined) fail(namespace)
        if (!(namespace instanceof Namespace)) throw new TemplateRuntimeError('cannot assign attribute on non-namespace object')
        namespace.attrs.set(attr, value)
      }
    }
    const parts = target.items.map((item) => this.assigner(item))
    return (scope, value) => {
      const items = iterate(value)
      if (items.length > parts.length) throw valueError(`too many values to unpack (expected ${parts.length})`)
      if (items.length < parts.length) {
        throw valueError(`not enough values to unpack (expected ${parts.length}, got ${items.length})`)
      }
      for (let i = 0; i < parts.length; i++) parts[i]!(scope, items[i])
    }
  }

  /**
   * A block `set`'s filters, compiled in the block's frame. Jinja's analysis of that frame skips
   * them (`RootVisitor.visit_AssignBlock`), so a name they read that no frame around knows fails
   * Jinja's compiler: `AssertionError` (compile time, no template line).
   */
  protected blockSetFilters(filters: Expr): (scope: Scope, render: RenderState, input: unknown) => unknown {
    const chain = this.filterChain(filters)
    const frame = this.frame!
    forEachName(filters, (name) => {
      if (!frame.knows(name)) {
        throw new TemplateRuntimeError(`Tried to resolve a name to a reference that was unknown to the frame (${pyRepr(name)})`, 'AssertionError')
      }
    })
    return chain
  }
}
