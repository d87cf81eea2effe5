/**
 * The one small interface templates are rendered behind (DESIGN.md): a Jinja2 3.1 environment
 * implemented in this package (lexer.ts, parser.ts, compiler.ts and the value model of values.ts),
 * used by the `jinja` renderer (builtins/jinja.ts) and by SQL models (documents/sql-models.ts).
 *
 * Contract:
 * - `createJinjaEngine(options)` is one environment: StrictUndefined, autoescape off,
 *   `keep_trailing_newline`, `trim_blocks`/`lstrip_blocks` (both on unless turned off), every
 *   stock filter, test and global, plus `options.filters` / `options.globals`.
 * - `render(name, context, options?)` loads `name` through `options.loader` (and every template it
 *   includes, imports or extends, by name through the same loader, each time: the loader decides
 *   what is current); `renderString(source, context, name?, options?)` renders a source text.
 * - `options.deadline` (a `performance.now()` timestamp) bounds a render's time: still running
 *   then, it throws a `TemplateTimeoutError` (render-budget.ts: checked at every loop iteration,
 *   macro call, include/import/extends and inside filters, methods and operators; without a
 *   deadline the checks cost a counter decrement). A render inside a render (a filter that
 *   renders) keeps the earlier deadline.
 * - Bounds (limits.ts): strings and the output at most `MAX_STRING_LENGTH` / `MAX_OUTPUT_LENGTH`
 *   characters, lists `MAX_LIST_LENGTH` items, ints `MAX_INT_BITS` bits (a `TemplateLimitError`
 *   before the value is made); nesting `MAX_NESTING_DEPTH` (a `TemplateSyntaxError`); macro,
 *   recursive-loop and include/import/extends recursion `MAX_MACRO_DEPTH`, `MAX_LOOP_DEPTH`,
 *   `MAX_TEMPLATE_DEPTH` (a `TemplateLimitError`). A JavaScript RangeError leaving a render (the
 *   stack, string or array length) becomes a `TemplateLimitError` with a sentence.
 * - Compiled templates are cached per engine, keyed by name and source text, so re-rendering an
 *   unchanged file parses nothing, and an edited file is compiled afresh (at most 256 entries).
 * - Context values follow the value model of values.ts (PythonFloat and bigint included).
 *   `{{ }}` prints as Jinja prints: Python's `str()` (`None`, `True`, `False`, `2.0`; SPEC §11).
 * - Errors: a `TemplateSyntaxError` (`templateName`, `line`, `column`) when a template does not
 *   parse; any other error thrown by a render carries `templateName`, `line` and `column` of the
 *   innermost statement that raised it (`errorPosition`). A missing template is a
 *   `TemplateRuntimeError` whose `pythonType` is `TemplateNotFound`.
 */
import type { CompileHost, CompiledTemplate, FilterFunction, RenderState, TestFunction } from './compiled-template.js'
import { strayError } from './chunks.js'
import { compileTemplate } from './compiler.js'
import { TemplateRuntimeError, TemplateSyntaxError } from './errors.js'
import { STOCK_FILTERS } from './filters.js'
import { parseTemplate } from './parser.js'
import { renderTemplate } from './inheritance.js'
import type { Scope } from './runtime.js'
import { STOCK_TESTS, stockGlobals } from './tests.js'
import { fromRangeError } from './limits.js'
import { withDeadline } from './render-budget.js'

export { TemplateLimitError, TemplateRuntimeError, TemplateSyntaxError, TemplateTimeoutError, type LimitName } from './errors.js'
export {
  MAX_INT_BITS,
  MAX_LIST_LENGTH,
  MAX_LOOP_DEPTH,
  MAX_MACRO_DEPTH,
  MAX_NESTING_DEPTH,
  MAX_OUTPUT_LENGTH,
  MAX_STRING_LENGTH,
  MAX_TEMPLATE_DEPTH,
} from './limits.js'

export interface TemplateLoader {
  /** The source text of template `name`; throws (e.g. `templateNotFound(name)`) when there is none. */
  load(name: string): { source: string }
}

/** A filter added to the environment: the value, positional arguments and keyword arguments. */
export type EngineFilter = (value: unknown, args: unknown[], kwargs: Record<string, unknown>) => unknown

export interface JinjaEngineOptions {
  /** Where `render`, `include`, `import` and `extends` find templates by name. @default none (only `renderString`) */
  loader?: TemplateLoader
  /** Filters beside the stock ones. @default {} */
  filters?: Record<string, EngineFilter>
  /** Globals beside the stock ones (`range`, `dict`, `cycler`, `joiner`, `namespace`, `lipsum`). @default {} */
  globals?: Record<string, unknown>
  /** Jinja's `trim_blocks`. @default true */
  trimBlocks?: boolean
  /** Jinja's `lstrip_blocks`. @default true */
  lstripBlocks?: boolean
}

/** Options of one render. */
export interface RenderOptions {
  /**
   * A `performance.now()` timestamp: a render still running then throws a `TemplateTimeoutError`
   * (checked cooperatively, about every millisecond of work). @default none
   */
  deadline?: number
}

export interface JinjaEngine {
  render(name: string, context: Record<string, unknown>, options?: RenderOptions): string
  renderString(source: string, context: Record<string, unknown>, name?: string, options?: RenderOptions): string
}

const CACHE_LIMIT = 256

export function templateNotFound(name: string): TemplateRuntimeError {
  return new TemplateRuntimeError(name, 'TemplateNotFound')
}

export function createJinjaEngine(options: JinjaEngineOptions = {}): JinjaEngine {
  const lexer = { trimBlocks: options.trimBlocks ?? true, lstripBlocks: options.lstripBlocks ?? true }
  const filters: Record<string, FilterFunction> = { ...STOCK_FILTERS }
  for (const [name, filter] of Object.entries(options.filters ?? {})) {
    filters[name] = (_host, value, args, kwargs) => filter(value, args, kwargs)
  }
  const tests: Record<string, TestFunction> = { ...STOCK_TESTS }
  const globals = Object.assign(Object.create(null) as Scope, stockGlobals(), options.globals ?? {})
  const cache = new Map<string, CompiledTemplate>()

  const compile = (source: string, name: string): CompiledTemplate => {
    const key = `${name}\0${source}`
    const cached = cache.get(key)
    if (cached) return cached
    const compiled = compileTemplate(parseTemplate(source, name, lexer), name, host)
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string)
    cache.set(key, compiled)
    return compiled
  }

  const host: CompileHost = {
    filters,
    tests,
    getTemplate(name) {
      if (!options.loader) throw templateNotFound(name)
      return compile(options.loader.load(name).source, name)
    },
    newRootScope: () => Object.create(globals) as Scope,
  }

  const run = (template: () => CompiledTemplate, context: Record<string, unknown>, options: RenderOptions | undefined): string => {
    try {
      return withDeadline(options?.deadline, () => {
        const compiled = template()
        const scope = Object.create(globals) as Scope
        for (const key of Object.keys(context)) {
          const value = context[key]
          if (value !== undefined) scope[key] = value
        }
        const state: RenderState = { out: '', chunks: 0, stray: null, host, blocks: new Map(), context: scope, blockContext: null, parent: null, macros: [], templates: [], inheritance: [] }
        renderTemplate(compiled, scope, state)
        // Python joins the top level's chunks after the render (no template line to blame).
        if (state.stray !== null) throw strayError(state.stray)
        return state.out
      })
    } catch (error) {
      // The last resort: JavaScript's own RangeErrors (the stack, string or array length) as a
      // sentence, at the template position stamped on them.
      throw fromRangeError(error)
    }
  }

  return {
    render: (name, context, options) => run(() => host.getTemplate(name), context, options),
    renderString: (source, context, name = '<template>', options) => run(() => compile(source, name), context, options),
  }
}

/** Where a render error happened: the template's name, line and (when known) column of its tag. */
export function errorPosition(error: unknown): { templateName: string; line: number; column?: number } | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { templateName, line, column } = error as { templateName?: unknown; line?: unknown; column?: unknown }
  if (typeof templateName !== 'string' || typeof line !== 'number') return undefined
  return { templateName, line, ...(typeof column === 'number' ? { column } : {}) }
}

export function isTemplateNotFound(error: unknown): boolean {
  return error instanceof TemplateRuntimeError && error.pythonType === 'TemplateNotFound'
}

export function isSyntaxError(error: unknown): error is TemplateSyntaxError {
  return error instanceof TemplateSyntaxError
}
