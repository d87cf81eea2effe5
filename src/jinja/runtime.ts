/**
 * Jinja's runtime objects: the `loop` variable, macros (and `caller`), `cycler`, `joiner`,
 * template modules (`import`), `self` and `super()`.
 *
 * Contract:
 * - `LoopContext`: `index`, `index0`, `revindex`, `revindex0`, `first`, `last`, `length`,
 *   `depth`, `depth0`, `previtem`/`nextitem` (Undefined at the ends: `there is no previous item`),
 *   `cycle(*items)`, `changed(*values)`, and calling it (`loop(children)`) in a recursive loop.
 * - `Macro.invoke(args, kwargs)` binds arguments as Jinja 3.1's `Macro.__call__` does
 *   (positional, then keywords, defaults evaluated in the macro's scope, missing ones Undefined
 *   with `parameter 'a' was not provided`; `varargs`, `kwargs`, `caller` when the body uses them;
 *   Jinja's TypeErrors for extra arguments) and returns the rendered text. Each call is a check
 *   point of the render's time budget; more than `MAX_MACRO_DEPTH` nested calls raise
 *   `macro 'walk' called itself more than 500 levels deep` (limits.ts).
 * - A recursive loop's `loop(children)` nests at most `MAX_LOOP_DEPTH` levels; its items may be
 *   a list or a lazy range.
 * - `Cycler` (`next()`, `reset()`, `current`), `Joiner`, `TemplateModule` (exported names,
 *   `str()` is the module's output).
 */
import { closeBuffer, openBuffer, restoreBuffer, strayError, type ChunkBuffer, type StrayChunk } from './chunks.js'
import { stampPosition, typeError } from './errors.js'
import { autoescapeNow } from './eval-context.js'
import { Markup, PyCallable, type PyIterator, Undefined, tuple, type HasAttributes } from './values.js'
import { pyEq } from './protocols.js'
import { MAX_LOOP_DEPTH, MAX_MACRO_DEPTH, loopTooDeep, macroTooDeep } from './limits.js'
import { tick } from './render-budget.js'
import type { PyRange } from './range.js'

export type Scope = Record<string, unknown>

/** The per-render output buffer and what a template needs while it renders. */
export interface Output extends ChunkBuffer {
  /** Names of the macros running now, outermost first (limits.ts `MAX_MACRO_DEPTH`). */
  macros: string[]
}

export class LoopContext extends PyCallable implements HasAttributes {
  readonly name = 'loop'
  index0 = 0
  private lastChanged: unknown[] | undefined

  /** The number of items; -1 while a generator's items are still being taken (`LazyItems`). */
  private known: number

  constructor(
    private readonly items: unknown[] | PyRange | LazyItems,
    readonly depth0: number,
    private readonly recurse: ((items: unknown, depth0: number) => string) | null,
  ) {
    super()
    this.known = items instanceof LazyItems ? -1 : Number(items.length)
  }

  /** How many items: a generator's are all taken first (as Jinja's `loop.length` does). */
  private get length(): number {
    if (this.known < 0) this.known = (this.items as LazyItems).length
    return this.known
  }

  private item(index: number): unknown {
    const items = this.items
    return Array.isArray(items) ? items[index] : items.at(index)
  }

  /** Whether there is an item after the current one (a generator's next item is taken to know). */
  private hasNext(): boolean {
    return this.items instanceof LazyItems ? this.items.has(this.index0 + 1) : this.index0 < this.length - 1
  }

  getAttribute(name: string): unknown {
    switch (name) {
      case 'index':
        return this.index0 + 1
      case 'index0':
        return this.index0
      case 'revindex':
        return this.length - this.index0
      case 'revindex0':
        return this.length - this.index0 - 1
      case 'first':
        return this.index0 === 0
      case 'last':
        return !this.hasNext()
      case 'length':
        return this.length
      case 'depth':
        return this.depth0 + 1
      case 'depth0':
        return this.depth0
      case 'previtem':
        return this.index0 > 0 ? this.item(this.index0 - 1) : new Undefined('there is no previous item')
      case 'nextitem':
        return this.hasNext() ? this.item(this.index0 + 1) : new Undefined('there is no next item')
      case 'cycle':
        return new BoundFunction('cycle', (args) => {
          if (args.length === 0) throw typeError('no items for cycling given')
          return args[this.index0 % args.length]
        })
      case 'changed':
        return new BoundFunction('changed', (args) => {
          if (this.lastChanged !== undefined && pyEq(tuple(this.lastChanged), tuple(args))) return false
          this.lastChanged = args
          return true
        })
      default:
        return new Undefined(`'LoopContext object' has no attribute '${name}'`)
    }
  }

  invoke(args: unknown[]): unknown {
    if (!this.recurse) throw typeError("The loop must be marked as 'recursive' to call it")
    if (this.depth0 + 1 > MAX_LOOP_DEPTH) throw loopTooDeep()
    return this.recurse(args[0], this.depth0 + 1)
  }

  override repr(): string {
    return `<LoopContext ${this.index0 + 1}/${this.length}>`
  }
}

/**
 * A generator's items as a for loop takes them (Jinja's LoopContext): one at a time, the next
 * only when the loop moves on or asks (`loop.last`, `loop.nextitem`), all of them only for
 * `loop.length` and `loop.revindex`. What the template takes from the same generator meanwhile
 * (`x in g` in the body) is not the loop's.
 */
export class LazyItems {
  private readonly taken: unknown[] = []
  private done = false

  constructor(private readonly source: PyIterator) {}

  /** Whether item `index` exists (taking items up to it). */
  has(index: number): boolean {
    while (this.taken.length <= index && !this.done) {
      tick()
      const item = this.source.next(NO_ITEM)
      if (item === NO_ITEM) this.done = true
      else this.taken.push(item)
    }
    return index < this.taken.length
  }

  /** Item `index`, taken already (`has`). */
  at(index: number): unknown {
    return this.taken[index]
  }

  get length(): number {
    while (!this.done) this.has(this.taken.length)
    return this.taken.length
  }
}

const NO_ITEM = Symbol('no item')

class BoundFunction extends PyCallable {
  constructor(
    readonly name: string,
    private readonly fn: (args: unknown[], kwargs: Record<string, unknown>) => unknown,
  ) {
    super()
  }
  invoke(args: unknown[], kwargs: Record<string, unknown>): unknown {
    return this.fn(args, kwargs)
  }
}

const MISSING = Symbol('missing argument')

export interface MacroDefinition {
  name: string
  params: string[]
  /** Default value of each parameter (evaluated in the macro's scope), or null. */
  defaults: (((scope: Scope) => unknown) | null)[]
  /** Renders the body in `scope`, appending to `output.out`. */
  body: (scope: Scope) => void
  catchVarargs: boolean
  catchKwargs: boolean
  usesCaller: boolean
  /**
   * Where Jinja blames the join of the body's output (its `return concat(buffer)`): the
   * template and the line of the last statement or expression its code marks (compiler.ts).
   */
  joinAt: { file: string; line: number }
}

export class Macro extends PyCallable implements HasAttributes {
  readonly name: string
  private readonly explicitCaller: boolean

  constructor(
    private readonly definition: MacroDefinition,
    private readonly closure: Scope,
    private readonly output: Output,
  ) {
    super()
    this.name = definition.name
    this.explicitCaller = definition.params.includes('caller')
  }

  getAttribute(name: string): unknown {
    const d = this.definition
    switch (name) {
      case 'name':
        return d.name
      case 'arguments':
        return tuple([...d.params])
      case 'catch_kwargs':
        return d.catchKwargs
      case 'catch_varargs':
        return d.catchVarargs
      case 'caller':
        return d.usesCaller
      default:
        return new Undefined(`'Macro object' has no attribute '${name}'`)
    }
  }

  invoke(args: unknown[], kwargsIn: Record<string, unknown>): unknown {
    const d = this.definition
    const scope = Object.create(this.closure) as Scope
    const kwargs = { ...kwargsIn }
    const count = d.params.length
    let foundCaller = false
    const values: unknown[] = []
    for (let i = 0; i < count; i++) {
      const name = d.params[i]!
      if (i < args.length) values.push(args[i])
      else {
        if (Object.hasOwn(kwargs, name)) {
          values.push(kwargs[name])
          delete kwargs[name]
        } else values.push(MISSING)
        if (name === 'caller') foundCaller = true
      }
    }
    if (args.length >= count) foundCaller = this.explicitCaller
    if (d.usesCaller && !foundCaller) {
      const caller = kwargs.caller
      delete kwargs.caller
      scope.caller = caller === undefined || caller === null ? new Undefined('No caller defined') : caller
    }
    if (d.catchKwargs) scope.kwargs = kwargs
    else {
      const extra = Object.keys(kwargs)
      if (extra.length > 0) {
        if (extra.includes('caller')) {
          throw typeError(`macro '${d.name}' was invoked with two values for the special caller argument. This is most likely a bug.`)
        }
        throw typeError(`macro '${d.name}' takes no keyword argument '${extra[0]}'`)
      }
    }
    if (d.catchVarargs) scope.varargs = tuple(args.slice(count))
    else if (args.length > count) throw typeError(`macro '${d.name}' takes not more than ${count} argument(s)`)
    for (let i = 0; i < count; i++) {
      const name = d.params[i]!
      let value = values[i]
      if (value === MISSING) {
        const fallback = d.defaults[i]
        value = fallback ? fallback(scope) : new Undefined(`parameter '${name}' was not provided`)
      }
      scope[name] = value
    }
    const output = this.output
    const running = output.macros
    if (running.length >= MAX_MACRO_DEPTH) throw macroTooDeep(d.name, running.includes(d.name))
    tick()
    const saved = openBuffer(output)
    running.push(d.name)
    try {
      d.body(scope)
    } catch (error) {
      restoreBuffer(output, saved)
      throw error
    } finally {
      running.pop()
    }
    let text: string
    try {
      text = closeBuffer(output, saved)
    } catch (error) {
      stampPosition(error, d.joinAt.file, d.joinAt.line)
      throw error
    }
    // Markup when called where autoescape is on (Jinja decides at the call, not the definition).
    return autoescapeNow() ? new Markup(text) : text
  }

  override repr(): string {
    return `<Macro '${this.name}'>`
  }
}

export class Cycler implements HasAttributes {
  private position = 0
  constructor(private readonly items: unknown[]) {
    if (items.length === 0) throw new TypeError('at least one item has to be provided')
  }

  getAttribute(name: string): unknown {
    if (name === 'current') return this.items[this.position]
    if (name === 'next' || name === '__next__') {
      return new BoundFunction(name, () => {
        const value = this.items[this.position]
        this.position = (this.position + 1) % this.items.length
        return value
      })
    }
    if (name === 'reset') {
      return new BoundFunction(name, () => {
        this.position = 0
        return null
      })
    }
    if (name === 'items') return [...this.items]
    return new Undefined(`'Cycler object' has no attribute '${name}'`)
  }

  repr(): string {
    return '<jinja2.utils.Cycler object>'
  }
}

export class Joiner extends PyCallable {
  readonly name = 'joiner'
  private used = false
  constructor(private readonly separator: string) {
    super()
  }
  invoke(): unknown {
    if (!this.used) {
      this.used = true
      return ''
    }
    return this.separator
  }
  override repr(): string {
    return '<jinja2.utils.Joiner object>'
  }
}

/** What `{% import %}` binds: the template's exported names; `str()` is its output. */
export class TemplateModule implements HasAttributes {
  constructor(
    readonly templateName: string,
    readonly exports: Scope,
    private readonly body: string,
    /** A chunk of the module's output that is no str: `str(module)` fails on it (chunks.ts). */
    private readonly stray: StrayChunk | null = null,
  ) {}

  getAttribute(name: string): unknown {
    if (Object.hasOwn(this.exports, name) && !name.startsWith('_')) return this.exports[name]
    return new Undefined(`'${this.templateName}' has no attribute '${name}'`)
  }

  repr(): string {
    return `<TemplateModule '${this.templateName}'>`
  }

  toStr(): string {
    if (this.stray !== null) throw strayError(this.stray)
    return this.body
  }
}

/** `self`: `self.<block>()` renders that block as the template's most derived version. */
export class TemplateReference implements HasAttributes {
  constructor(private readonly renderBlock: (name: string) => string | undefined) {}

  getAttribute(name: string): unknown {
    const render = this.renderBlock
    return new BoundFunction(name, () => {
      const text = render(name)
      if (text === undefined) throw typeError(`no block named '${name}'`)
      return text
    })
  }

  repr(): string {
    return '<TemplateReference>'
  }
}

export { BoundFunction }
