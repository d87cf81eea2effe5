/**
 * Compiles a parsed Jinja template (nodes.ts) into JavaScript closures with Jinja2 3.1's
 * semantics; engine.ts runs them. Its statements are here; its frames (symbols, stores, frame
 * entries): frame-compiler.ts; expressions: expression-compiler.ts; inheritance at run time:
 * inheritance.ts; the shapes of what it makes: compiled-template.ts.
 *
 * Contract:
 * - `compileTemplate(ast, name, host)` returns a `CompiledTemplate`: `root(scope, render)` runs the
 *   top-level statements, appending text to `render.out`; `blocks` holds each `{% block %}`.
 * - Scopes are prototype chains of plain objects (a name is looked up through them, the base
 *   being the globals): `set` writes the current scope (top level: the template's context, what
 *   `import` exports), a `for` loop, a macro call, `with` and a block each get a child scope;
 *   a block sees, not the local names around it, but the context of the block it is nested in
 *   (inheritance.ts `render.blockContext`), else the template context; a `scoped` block sees
 *   the names around it.
 * - Jinja's frame locals (frame-symbols.ts): a name a frame assigns that its analysis makes
 *   undefined at the frame's start is set to a `FrameLocal` (an Undefined) when the frame is
 *   entered (each loop iteration, macro call, block set…), so reading it before the assignment,
 *   there or in a frame inside, is Undefined (a loop makes them once per run). The top level's
 *   live in a layer over the template context (top-level stores write both); includes, imports
 *   `with context` and scoped blocks see what the names hold around the frames instead
 *   (`contextView`, made each time when a frame around them has such names). A frame
 *   without such names has no entry.
 * - After `{% extends %}`, a template's own text and `{{ }}` are not rendered (in its top level
 *   and the loop, `if`, `with` and filter bodies in it), nor its top-level blocks; its includes,
 *   call and filter blocks still are, before the parent (Jinja's output check).
 * - Errors thrown while running a statement are stamped, once, with the innermost template
 *   name and line (and column of its tag) (errors.ts `stampPosition`).
 * - A `for` loop walks a range (or an iterator over one) without making a list; every iteration,
 *   include, import and extends is a check point of the render's time budget (render-budget.ts).
 *   Output past limits.ts `MAX_OUTPUT_LENGTH` is refused; includes, imports and extends nest at
 *   most `MAX_TEMPLATE_DEPTH` (`template 'a.j2' includes itself more than 1000 levels deep`).
 *   Tags nest at most `MAX_NESTING_DEPTH` levels with the expressions in them.
 */
import { TemplateRuntimeError, TemplateTimeoutError, stampPosition, typeError } from './errors.js'
import type { BlockEntry, CompileHost, CompiledTemplate, RenderState } from './compiled-template.js'
import { callValue, type Run } from './expression-compiler.js'
import { FrameCompiler, captureOutput, contextView, setLocals } from './frame-compiler.js'
import { renderBlock, renderTemplate } from './inheritance.js'
import type { Expr, MacroSignature, Stmt, TemplateAst } from './nodes.js'
import { LazyItems, LoopContext, Macro, TemplateModule, type MacroDefinition, type Scope } from './runtime.js'
import { FrameLocal, PyIterator, PyRange, Undefined, fail, pyStr, toOutput, typeName } from './values.js'
import { assignedLoop, macroSpecials } from './frame-symbols.js'
import { escapeConstant, escapeOutput } from './autoescape.js'
import { closeBuffer, openBuffer, restoreBuffer, writeChunk } from './chunks.js'
import { autoescapeNow, setAutoescape, withAutoescape } from './eval-context.js'
import { iterate, truthy } from './protocols.js'
import { MAX_LIST_LENGTH, MAX_OUTPUT_LENGTH, MAX_TEMPLATE_DEPTH, listTooLong, outputTooLong, templateTooDeep } from './limits.js'
import { tick } from './render-budget.js'

/**
 * A body of one statement: its wrapper (which stamps errors with the statement's position)
 * mapped to the statement itself, so a parent (`if`, `with`, a template's root) can run the
 * statement inside its own try and spare a stack frame per nesting level: nested includes and
 * macros reach deeper before the JavaScript stack runs out.
 */
const SINGLE_STATEMENTS = new WeakMap<Run, { run: Run; file: string; line: number; column: number | undefined }>()

export function compileTemplate(ast: TemplateAst, name: string, host: CompileHost): CompiledTemplate {
  const compiler = new Compiler(name, host)
  const frame = compiler.enterRoot(ast.body, ast.hasExtends)
  let root = compiler.statements(ast.body, true)
  const single = SINGLE_STATEMENTS.get(root)
  if (single) {
    // A template of one statement (a recursive include's usual shape) runs it directly: the
    // error position is stamped by renderTemplate (inheritance.ts) from `rootPosition`.
    root = single.run
  }
  const missing = frame.undefinedAtStart
  if (missing.length > 0) {
    // The top level's missing locals live in a layer over the template context (which blocks,
    // the parent template and the module's exports see); top-level stores write both.
    const body = root
    root = (scope, render) => {
      const layer = Object.create(scope) as Scope
      for (const local of missing) layer[local] = new FrameLocal(local, scope[local])
      body(layer, render)
    }
  }
  const blocks = new Map<string, BlockEntry>()
  for (const [blockName, block] of ast.blocks) blocks.set(blockName, { run: compiler.blockBody(block.body) })
  return { name, root, blocks, rootPosition: single ? { line: single.line, column: single.column } : undefined }
}

/** Appends `text` to the render's output, refusing output past `MAX_OUTPUT_LENGTH`. */
function write(render: RenderState, text: string): void {
  if ((render.out += text).length > MAX_OUTPUT_LENGTH) throw outputTooLong(render.out.length)
}

class Compiler extends FrameCompiler {
  /** The text of each constant `{{ }}` (`outputConstant`), or null. */
  private readonly outputTexts = new WeakMap<Stmt, string | null>()

  /** A block's body: a frame of its own, with no frame around it (it reads the context). */
  blockBody(body: Stmt[]): Run {
    const [run, entry] = this.inFrame({ kind: 'body', body }, () => this.withoutOutputCheck(() => this.statements(body, false)), null)
    if (entry === null) return run
    return (scope, render) => {
      entry.enter(scope)
      run(scope, render)
    }
  }

  /**
   * The text a `{{ }}` prints when Jinja folds its expression at compile time (constants.ts:
   * escaped inside `{% autoescape true %}`, or in volatile autoescape by the setting around it),
   * else null: its value is made at run time.
   */
  private outputConstant(stmt: Extract<Stmt, { kind: 'output' }>): string | null {
    let text = this.outputTexts.get(stmt)
    if (text === undefined) {
      const folded = this.constant(stmt.expr)
      text = null
      if (folded !== null) {
        try {
          text = this.autoescape ? escapeConstant(folded.value) : pyStr(folded.value)
        } catch (error) {
          // `str()` of the constant raises (an undefined value): Jinja evaluates it at run time.
          if (error instanceof TemplateTimeoutError) throw error
        }
      }
      this.outputTexts.set(stmt, text)
    }
    return text
  }

  /**
   * For each statement of a body, whether it starts a chunk of Jinja's output (chunks.ts): text
   * and constant `{{ }}` next to each other are one chunk, every other `{{ }}` one of its own.
   */
  private chunkStarts(body: Stmt[]): boolean[] {
    let afterConstant = false
    return body.map((stmt) => {
      if (stmt.kind === 'data') {
        const starts = !afterConstant
        afterConstant = true
        return starts
      }
      if (stmt.kind === 'output') {
        const constant = this.outputConstant(stmt) !== null
        const starts = !constant || !afterConstant
        afterConstant = constant
        return starts
      }
      afterConstant = false
      return false
    })
  }

  /**
   * The statements of one body as one function. An error leaving statement `i` is stamped with
   * its line and column here (one try per body, not per statement: bodies nest, so the
   * innermost body that saw the error names it).
   */
  statements(body: Stmt[], topLevel: boolean): Run {
    const root = body === this.rootBody
    const runs = this.nested(body[0]?.line ?? 0, 'tags', () => {
      const starts = this.chunkStarts(body)
      return body.map((stmt, i) => {
        const run = this.statement(stmt, topLevel, starts[i]!)
        if (root && stmt.kind === 'extends') this.knownExtends = true
        return run
      })
    })
    const lines = body.map((stmt) => stmt.line)
    const columns = body.map((stmt) => stmt.column)
    const file = this.file
    const count = runs.length
    if (count === 0) return () => {}
    if (count === 1) {
      const only = runs[0]!
      if (body[0]!.kind === 'data') return only
      const line = lines[0]!
      const column = columns[0]
      const wrapper: Run = (scope, render) => {
        try {
          only(scope, render)
        } catch (error) {
          stampPosition(error, file, line, column)
          throw error
        }
      }
      SINGLE_STATEMENTS.set(wrapper, { run: only, file, line, column })
      return wrapper
    }
    return (scope, render) => {
      let i = 0
      try {
        for (; i < count; i++) runs[i]!(scope, render)
      } catch (error) {
        stampPosition(error, file, lines[i]!, columns[i])
        throw error
      }
    }
  }

  private statement(stmt: Stmt, topLevel: boolean, startsChunk: boolean): Run {
    // Jinja's output check in a template that extends another: text and `{{ }}` of the top level
    // and the frames that inherit its check (loop, `if`, `with`, `{% filter %}` bodies), and the
    // top level's blocks, render only while the template has not extended (`if parent_template
    // is None`); after a top-level `{% extends %}` they are not compiled at all. Includes, call
    // and filter blocks still yield their output, before the parent's.
    const checked = stmt.kind === 'data' || stmt.kind === 'output' ? this.outputCheck : stmt.kind === 'block' && topLevel
    if (checked && this.hasExtends && this.knownExtends) return () => {}
    let run: Run
    if (stmt.kind === 'data') {
      const text = stmt.text
      run = startsChunk
        ? (_scope, render) => {
            render.chunks++
            write(render, text)
          }
        : (_scope, render) => {
            write(render, text)
          }
    } else {
      run = this.statementBody(stmt, topLevel)
      if (startsChunk) {
        const inner = run
        run = (scope, render) => {
          render.chunks++
          inner(scope, render)
        }
      }
    }
    if (checked && this.hasExtends) {
      const inner = run
      run = (scope, render) => {
        if (render.parent === null) inner(scope, render)
      }
    }
    return run
  }

  private statementBody(stmt: Exclude<Stmt, { kind: 'data' }>, topLevel: boolean): Run {
    switch (stmt.kind) {
      case 'output': {
        // A constant is printed as Jinja folds it: at compile time, with the compile-time
        // autoescape setting (the enclosing one in volatile mode).
        const constant = this.outputConstant(stmt)
        if (constant !== null) {
          return (_scope, render) => {
            write(render, constant)
          }
        }
        const value = this.expr(stmt.expr)
        if (this.volatileAutoescape && stmt.expr.kind !== 'const') {
          return (scope, render) => {
            const printed = value(scope, render)
            write(render, autoescapeNow() ? escapeOutput(printed) : toOutput(printed))
          }
        }
        if (this.autoescape) {
          return (scope, render) => {
            write(render, escapeOutput(value(scope, render)))
          }
        }
        return (scope, render) => {
          write(render, toOutput(value(scope, render)))
        }
      }
      case 'if': {
        // An `if` is a soft frame in Jinja (expression-compiler.ts `soft`): its tests and bodies.
        return this.softly(true, () => this.ifStatement(stmt, topLevel))
      }
      case 'for':
        return this.forLoop(stmt)
      case 'set': {
        const value = this.expr(stmt.value)
        const assign = this.assigner(stmt.target)
        return (scope, render) => assign(scope, value(scope, render))
      }
      case 'setblock': {
        const [[body, filters], entry] = this.inFrame({ kind: 'body', body: stmt.body }, () => [
          this.withoutOutputCheck(() => this.statements(stmt.body, false)),
          stmt.filters ? this.blockSetFilters(stmt.filters) : null,
        ] as const)
        const assign = this.assigner(stmt.target)
        const markup = this.markupOfBlocks()
        return (scope, render) => {
          const { text, inner } = captureOutput(body, scope, render, markup(), entry)
          // Jinja applies the filters in the block's frame, after its body (they see its names).
          assign(scope, filters ? filters(inner, render, text) : text)
        }
      }
      case 'macro': {
        const definition = this.macroDefinition(stmt.name, stmt.signature, stmt.body, stmt.line)
        const store = this.storer(stmt.name)
        return (scope, render) => {
          store(scope, new Macro(definition(render), scope, render))
        }
      }
      case 'callblock': {
        const definition = this.macroDefinition('caller', stmt.signature, stmt.body, stmt.line)
        const call = stmt.call as Extract<Expr, { kind: 'call' }>
        const callee = this.expr(call.callee)
        const args = this.callArgs(call.call)
        return (scope, render) => {
          const caller = new Macro(definition(render), scope, render)
          const fn = callee(scope, render)
          const [positional, keywords] = args(scope, render)
          // Jinja yields a call block's result as it is, autoescape or not (one chunk).
          writeChunk(render, callValue(fn, positional, { ...keywords, caller }), (text) => write(render, text))
        }
      }
      case 'filterblock': {
        const [[body, filters], entry] = this.inFrame({ kind: 'filterblock', body: stmt.body, filters: stmt.filters }, () => [
          this.statements(stmt.body, false),
          this.filterChain(stmt.filters),
        ] as const)
        const markup = this.markupOfBlocks()
        return (scope, render) => {
          const { text, inner } = captureOutput(body, scope, render, markup(), entry)
          // The filters run in the block's frame, after its body; the result is yielded as it
          // is, as Jinja does (one chunk: a value that is no str fails the join around it).
          writeChunk(render, filters(inner, render, text), (out) => write(render, out))
        }
      }
      case 'autoescape': {
        // Jinja decides at compile time when it can (a literal); otherwise its "volatile" mode
        // decides output escaping at run time. The run-time value (eval-context.ts) is set
        // either way: macros, caller() and the eval-context filters read it when they run.
        if (stmt.enabled.kind === 'const') {
          const enabled = truthy(stmt.enabled.value)
          const body = this.compiledWith('autoescape', enabled, stmt.body)
          return (scope, render) => withAutoescape(enabled, () => body(scope, render))
        }
        const body = this.compiledWith('volatileAutoescape', true, stmt.body)
        const enabled = this.expr(stmt.enabled)
        return (scope, render) => withAutoescape(truthy(enabled(scope, render)), () => body(scope, render))
      }
      case 'with': {
        const values = stmt.targets.map(({ value }) => this.expr(value))
        const [[assigns, body], entry] = this.inFrame({ kind: 'with', targets: stmt.targets.map(({ target }) => target), body: stmt.body }, () => [
          stmt.targets.map(({ target }) => this.assigner(target)),
          this.statements(stmt.body, false),
        ] as const)
        const targets = assigns.map((assign, i) => ({ assign, value: values[i]! }))
        const single = SINGLE_STATEMENTS.get(body)
        if (entry !== null) {
          return (scope, render) => {
            const inner = Object.create(scope) as Scope
            entry.enter(inner)
            for (const { assign, value } of targets) assign(inner, value(scope, render))
            body(inner, render)
          }
        }
        if (single) {
          // The body's one statement runs in this frame (see SINGLE_STATEMENTS).
          const { run, file, line, column } = single
          return (scope, render) => {
            const inner = Object.create(scope) as Scope
            for (const { assign, value } of targets) assign(inner, value(scope, render))
            try {
              run(inner, render)
            } catch (error) {
              stampPosition(error, file, line, column)
              throw error
            }
          }
        }
        return (scope, render) => {
          const inner = Object.create(scope) as Scope
          for (const { assign, value } of targets) assign(inner, value(scope, render))
          body(inner, render)
        }
      }
      case 'include': {
        const template = this.expr(stmt.template)
        const { withContext, ignoreMissing } = stmt
        const host = this.host
        const masked = this.maskedNames()
        return (scope, render) => {
          tick()
          const compiled = this.loadTemplate(template(scope, render), ignoreMissing)
          if (!compiled) return
          const nesting = render.templates
          if (nesting.length >= MAX_TEMPLATE_DEPTH) throw templateTooDeep(compiled.name, 'includes', nesting.includes(compiled.name))
          const root = !withContext ? host.newRootScope() : masked.length > 0 ? contextView(scope, masked) : (Object.create(scope) as Scope)
          // Jinja passes the includer's names but not its `loop` variable.
          if (withContext && root.loop !== undefined) root.loop = undefined
          // An included template runs with its own eval context (autoescape off); set here, not
          // through withAutoescape's callback, to spend fewer stack frames per nested include.
          const outer = setAutoescape(false)
          try {
            renderTemplate(compiled, root, render)
          } finally {
            setAutoescape(outer)
          }
        }
      }
      case 'import': {
        const template = this.expr(stmt.template)
        const { withContext } = stmt
        const store = this.storer(stmt.target)
        const masked = this.maskedNames()
        return (scope, render) => {
          store(scope, this.module(template(scope, render), withContext ? (masked.length > 0 ? contextView(scope, masked) : scope) : null, render))
        }
      }
      case 'fromimport': {
        const template = this.expr(stmt.template)
        const { withContext, line } = stmt
        const names = stmt.names.map(({ name, alias }) => ({ name, store: this.storer(alias) }))
        const masked = this.maskedNames()
        return (scope, render) => {
          const module = this.module(template(scope, render), withContext ? (masked.length > 0 ? contextView(scope, masked) : scope) : null, render)
          for (const { name, store } of names) {
            const value = module.getAttribute(name)
            store(
              scope,
              value instanceof Undefined
                ? new Undefined(
                    `the template '${module.templateName}' (imported on line ${line}) does not export the requested name '${name}'`,
                  )
                : value,
            )
          }
        }
      }
      case 'extends': {
        const template = this.expr(stmt.template)
        return (scope, render) => {
          tick()
          if (render.parent !== null) throw new TemplateRuntimeError('extended multiple times')
          const parent = this.loadTemplate(template(scope, render), false)!
          const chain = render.inheritance
          if (chain.length >= MAX_TEMPLATE_DEPTH) throw templateTooDeep(parent.name, 'extends', chain.includes(parent.name))
          chain.push(parent.name)
          for (const [blockName, entry] of parent.blocks) {
            const chain = render.blocks.get(blockName)
            if (chain) chain.push(entry)
            else render.blocks.set(blockName, [entry])
          }
          render.parent = parent
        }
      }
      case 'block': {
        const { name, scoped, required } = stmt
        const masked = scoped ? this.maskedNames() : []
        return (scope, render) => {
          // Jinja: a required block must be overridden by the template rendering it (its chain
          // holds more than its own definition).
          if (required && (render.blocks.get(name)?.length ?? 0) <= 1) throw new TemplateRuntimeError(`Required block '${name}' not found`)
          const text = renderBlock(render, name, 0, !scoped ? undefined : masked.length > 0 ? contextView(scope, masked) : scope)
          if (text !== undefined) write(render, text)
        }
      }
    }
  }

  /**
   * The line Jinja blames for an error after `body` ran in its frame (a macro's or recursive
   * loop's `return concat(buffer)`): the last line its code generator marks in the body's code
   * (`newline(node)`: statements, `{{ }}` that are not constant, an `if`'s and `elif`'s tests),
   * or null when it marks none.
   */
  private lastMarkedLine(body: Stmt[]): number | null {
    for (let i = body.length - 1; i >= 0; i--) {
      const line = this.markedLine(body[i]!)
      if (line !== null) return line
    }
    return null
  }

  private markedLine(stmt: Stmt): number | null {
    switch (stmt.kind) {
      case 'data':
        return null
      case 'output':
        return this.outputConstant(stmt) !== null ? null : stmt.expr.line
      case 'if': {
        let line = this.lastMarkedLine(stmt.otherwise)
        for (let i = stmt.elifs.length - 1; i >= 0 && line === null; i--) line = this.lastMarkedLine(stmt.elifs[i]!.body) ?? stmt.elifs[i]!.line
        return line ?? this.lastMarkedLine(stmt.body) ?? stmt.line
      }
      case 'for':
        // A recursive loop is written (`yield loop(…)`) after its function: at its own line.
        return stmt.recursive ? stmt.line : (this.lastMarkedLine(stmt.otherwise) ?? this.lastMarkedLine(stmt.body) ?? stmt.line)
      case 'macro':
        return this.lastMarkedLine(stmt.body) ?? stmt.line
      case 'with':
      case 'autoescape':
        return this.lastMarkedLine(stmt.body)
      default:
        return stmt.line
    }
  }

  private ifStatement(stmt: Extract<Stmt, { kind: 'if' }>, topLevel: boolean): Run {
    const test = this.expr(stmt.test)
    const body = this.statements(stmt.body, topLevel)
    const otherwise = this.statements(stmt.otherwise, topLevel)
    const single = SINGLE_STATEMENTS.get(body)
    if (stmt.elifs.length === 0 && single) {
      // The body's one statement runs in this frame (see SINGLE_STATEMENTS).
      const { run, file, line, column } = single
      return (scope, render) => {
        if (!truthy(test(scope, render))) return otherwise(scope, render)
        try {
          run(scope, render)
        } catch (error) {
          stampPosition(error, file, line, column)
          throw error
        }
      }
    }
    if (stmt.elifs.length === 0) {
      return (scope, render) => {
        if (truthy(test(scope, render))) body(scope, render)
        else otherwise(scope, render)
      }
    }
    // `elif` branches are a flat list (Jinja compiles them flat too): any number of them.
    const tests = [test, ...stmt.elifs.map((branch) => this.expr(branch.test))]
    const bodies = [body, ...stmt.elifs.map((branch) => this.statements(branch.body, topLevel))]
    const lines = [stmt.line, ...stmt.elifs.map((branch) => branch.line)]
    const file = this.file
    return (scope, render) => {
      for (let i = 0; i < tests.length; i++) {
        let matched: boolean
        try {
          matched = truthy(tests[i]!(scope, render))
        } catch (error) {
          // An error in an `elif` test is at the `elif`'s line (the `if` stamps its own).
          if (i > 0) stampPosition(error, file, lines[i]!)
          throw error
        }
        if (matched) return bodies[i]!(scope, render)
      }
      otherwise(scope, render)
    }
  }

  private loadTemplate(nameValue: unknown, ignoreMissing: boolean): CompiledTemplate | null {
    const names = typeof nameValue === 'string' ? [nameValue] : Array.isArray(nameValue) ? nameValue : [nameValue]
    let lastError: unknown
    for (const candidate of names) {
      if (candidate instanceof Undefined) fail(candidate)
      if (typeof candidate !== 'string') {
        if (candidate !== null && typeof candidate === 'object' && 'root' in (candidate as object)) return candidate as CompiledTemplate
        throw typeError(`Template name must be a string, not ${typeName(candidate)}`)
      }
      try {
        return this.host.getTemplate(candidate)
      } catch (error) {
        if (!(error instanceof TemplateRuntimeError) || error.pythonType !== 'TemplateNotFound') throw error
        lastError = error
      }
    }
    if (ignoreMissing) return null
    if (names.length > 1) {
      throw new TemplateRuntimeError(`none of the templates given were found: ${names.map(String).join(', ')}`, 'TemplateNotFound')
    }
    throw lastError
  }

  private module(nameValue: unknown, context: Scope | null, render: RenderState): TemplateModule {
    tick()
    const compiled = this.loadTemplate(nameValue, false)!
    const nesting = render.templates
    if (nesting.length >= MAX_TEMPLATE_DEPTH) throw templateTooDeep(compiled.name, 'imports', nesting.includes(compiled.name))
    const root = context ? (Object.create(context) as Scope) : this.host.newRootScope()
    // The module's output is joined only when it is printed (Jinja keeps its chunks).
    const saved = openBuffer(render)
    const outer = setAutoescape(false)
    let body: string
    let stray
    try {
      renderTemplate(compiled, root, render)
      body = render.out
      stray = render.stray
    } finally {
      setAutoescape(outer)
      restoreBuffer(render, saved)
    }
    const exports: Scope = {}
    for (const key of Object.keys(root)) if (key !== 'self' && !key.startsWith('_')) exports[key] = root[key]
    return new TemplateModule(compiled.name, exports, body, stray)
  }

  /** Compiles `body` with one autoescape compile state set, restoring it after. */
  private compiledWith(state: 'autoescape' | 'volatileAutoescape', value: boolean, body: Stmt[]): Run {
    const outer = this[state]
    this[state] = value
    try {
      return this.statements(body, false)
    } finally {
      this[state] = outer
    }
  }

  private macroDefinition(name: string, signature: MacroSignature, bodyNodes: Stmt[], line = 0): (render: RenderState) => MacroDefinition {
    const specials = macroSpecials(signature, bodyNodes)
    if (specials.callerLoaded && signature.params.some((param) => param.name === 'caller' && param.default === null)) {
      this.fail('When defining macros or call blocks the special "caller" argument must be omitted or be given a default.', line)
    }
    const [[body, defaults], entry] = this.inFrame({ kind: 'macro', signature, body: bodyNodes, specials }, () => [
      this.withoutOutputCheck(() => this.statements(bodyNodes, false)),
      signature.params.map((param) => (param.default ? this.expr(param.default) : null)),
    ] as const)
    const params = signature.params.map((param) => param.name)
    const joinAt = { file: this.file, line: this.lastMarkedLine(bodyNodes) ?? line }
    return (render) => ({
      name,
      params,
      defaults: defaults.map((fallback) => (fallback ? (scope: Scope) => fallback(scope, render) : null)),
      body:
        entry === null
          ? (scope) => body(scope, render)
          : (scope) => {
              entry.enter(scope)
              body(scope, render)
            },
      catchVarargs: specials.varargs,
      catchKwargs: specials.kwargs,
      usesCaller: specials.caller,
      joinAt,
    })
  }

  private forLoop(stmt: Extract<Stmt, { kind: 'for' }>): Run {
    const loopStore = assignedLoop(stmt)
    if (loopStore) this.fail("Can't assign to special loop variable in for-loop target", loopStore.line)
    const iter = this.expr(stmt.iter)
    // The body, the `else` and the loop filter are frames of their own.
    const [[assign, body, filter], entry, symbols] = this.inFrame({ kind: 'loop', target: stmt.target, body: stmt.body }, () => [
      this.assigner(stmt.target),
      this.statements(stmt.body, false),
      stmt.filter ? this.expr(stmt.filter) : null,
    ] as const)
    const [otherwise, elseEntry, elseSymbols] = this.inFrame({ kind: 'body', body: stmt.otherwise }, () => this.statements(stmt.otherwise, false))
    const recursive = stmt.recursive
    // A body or `else` that sets names (besides the loop's targets) runs in a scope of its own, one
    // per iteration (Jinja's loop and else frames): nothing it sets is seen by the next iteration
    // or after the loop. A frame with missing locals sets names.
    const freshScopes = symbols.storesLocals
    const elseScope = elseSymbols.storesLocals
    const run = (iterable: unknown, depth0: number, scope: Scope, render: RenderState): void => {
      // A generator (a lazy filter's result) is taken one item at a time, as Jinja's loop takes it:
      // what the body takes from it meanwhile (`x in g`) is not the loop's.
      const lazy = !filter && iterable instanceof PyIterator && iterable.lazy ? new LazyItems(iterable) : null
      // A range (or an iterator over one) is walked without a list: `range(10**9)` costs no memory.
      const range = lazy ? null : iterable instanceof PyRange ? iterable : iterable instanceof PyIterator ? iterable.drainRange() : null
      let items: unknown[] | PyRange | LazyItems
      if (lazy) items = lazy
      else if (range && !filter) items = range
      else if (range) {
        const kept: unknown[] = []
        const probe = Object.create(scope) as Scope
        const count = Number(range.length)
        for (let i = 0; i < count; i++) {
          tick()
          const item = range.at(i)
          assign(probe, item)
          if (truthy(filter!(probe, render))) {
            if (kept.length === MAX_LIST_LENGTH) throw listTooLong(`the loop over ${range.repr()} filtered with 'if'`, kept.length + 1)
            kept.push(item)
          }
        }
        items = kept
      } else {
        items = iterate(iterable)
        if (filter) {
          const probe = Object.create(scope) as Scope
          items = items.filter((item) => {
            tick()
            assign(probe, item)
            return truthy(filter(probe, render))
          })
        } else if (items === iterable) {
          items = items.slice()
        }
      }
      // A generator's length is known only once it is used up: the loop asks for each next item.
      const count = items instanceof LazyItems ? -1 : Number(items.length)
      if (count === 0 || (items instanceof LazyItems && !items.has(0))) {
        const elseFrame = elseScope ? (Object.create(scope) as Scope) : scope
        if (elseEntry !== null) elseEntry.enter(elseFrame)
        otherwise(elseFrame, render)
        return
      }
      const recurse = recursive ? (children: unknown, depth: number): string => joined(children, depth, scope, render) : null
      const loop = new LoopContext(items, depth0, recurse)
      let inner = Object.create(scope) as Scope
      inner.loop = loop
      // A body with missing locals (frame-symbols.ts) sets them again every iteration, in its
      // fresh scope; they are made once per run of the loop.
      const locals = entry !== null ? entry.locals(scope) : null
      const arrayItems = Array.isArray(items) ? items : null
      const lazyItems = items instanceof LazyItems ? items : null
      for (let i = 0; lazyItems ? lazyItems.has(i) : i < count; i++) {
        tick()
        loop.index0 = i
        if (freshScopes && i > 0) {
          inner = Object.create(scope) as Scope
          inner.loop = loop
        }
        if (locals !== null) setLocals(inner, locals)
        assign(inner, arrayItems ? arrayItems[i] : (items as PyRange | LazyItems).at(i))
        body(inner, render)
      }
    }
    if (!recursive) return (scope, render) => run(iter(scope, render), 0, scope, render)
    // A recursive loop is a function with an output buffer of its own (`loop(children)` calls
    // it again), joined at its end and yielded as one chunk.
    const joinAt = { file: this.file, line: this.lastMarkedLine(stmt.otherwise) ?? this.lastMarkedLine(stmt.body) ?? stmt.line }
    const joined = (iterable: unknown, depth0: number, scope: Scope, render: RenderState): string => {
      const saved = openBuffer(render)
      try {
        run(iterable, depth0, scope, render)
      } catch (error) {
        restoreBuffer(render, saved)
        throw error
      }
      try {
        return closeBuffer(render, saved)
      } catch (error) {
        stampPosition(error, joinAt.file, joinAt.line)
        throw error
      }
    }
    return (scope, render) => {
      const text = joined(iter(scope, render), 0, scope, render)
      render.chunks++
      write(render, text)
    }
  }


}
