/**
 * Errors raised by the Jinja engine (jinja-*.ts), named as Jinja2 names them.
 *
 * Contract:
 * - `TemplateSyntaxError(message, name, line)`: a template that does not parse (lexer or parser),
 *   with the template's name and 1-based line.
 * - `TemplateRuntimeError` subclasses carry Python's exception class in `pythonType`
 *   (`UndefinedError`, `TypeError`, `ValueError`, `ZeroDivisionError`, `TemplateNotFound`, …);
 *   the engine stamps `templateName` and `line` on any error leaving a render (the innermost
 *   template position it was evaluating), once.
 * - `TemplateTimeoutError` (a `TemplateRuntimeError`, `pythonType` `TimeoutError`): the render
 *   was still running at its deadline (render-budget.ts); `budgetMs` is the time it was given.
 * - `TemplateLimitError` (a `TemplateRuntimeError`, `pythonType` `MemoryError` for sizes,
 *   `RecursionError` for depths): the template would build a string, list, output or int larger than
 *   limits.ts allows, or recursed deeper than it allows (`limit` names which, `max` its value).
 */
export class TemplateSyntaxError extends Error {
  readonly pythonType = 'TemplateSyntaxError'
  constructor(
    message: string,
    readonly templateName: string | undefined,
    readonly line: number,
    readonly column?: number,
  ) {
    super(message)
    this.name = 'TemplateSyntaxError'
  }
}

/** An error while rendering, with Python's exception class name. */
export class TemplateRuntimeError extends Error {
  templateName: string | undefined
  line: number | undefined
  column: number | undefined
  constructor(
    message: string,
    readonly pythonType: string = 'TemplateRuntimeError',
  ) {
    super(message)
    this.name = pythonType
  }
}

export const undefinedError = (message: string) => new TemplateRuntimeError(message, 'UndefinedError')
export const typeError = (message: string) => new TemplateRuntimeError(message, 'TypeError')
export const valueError = (message: string) => new TemplateRuntimeError(message, 'ValueError')

/** The position of an error: set once, by the innermost evaluation that saw it. */
export function stampPosition(error: unknown, templateName: string, line: number, column?: number): void {
  if (error instanceof TemplateSyntaxError) return
  const target = error as { templateName?: string; line?: number; column?: number; jinjaStamped?: boolean }
  if (typeof error !== 'object' || error === null || target.jinjaStamped) return
  target.templateName = templateName
  target.line = line
  target.column = column
  Object.defineProperty(target, 'jinjaStamped', { value: true, enumerable: false })
}

/** A render still running at its deadline (engine.ts `RenderOptions.deadline`). */
export class TemplateTimeoutError extends TemplateRuntimeError {
  constructor(
    /** The time the render was given, in milliseconds (deadline minus the render's start). */
    readonly budgetMs: number,
    /** How long it had run when it was stopped, in milliseconds. */
    readonly elapsedMs: number,
  ) {
    super(`rendering took longer than the ${budgetMs} ms it was given (stopped after ${elapsedMs} ms)`, 'TimeoutError')
    this.name = 'TemplateTimeoutError'
  }
}

/** Which bound of limits.ts a `TemplateLimitError` hit. */
export type LimitName = 'string' | 'list' | 'output' | 'integer' | 'macro-depth' | 'loop-depth' | 'template-depth' | 'stack'

/** A template that would go past a size or depth bound of limits.ts. */
export class TemplateLimitError extends TemplateRuntimeError {
  constructor(
    message: string,
    readonly limit: LimitName,
    /** The bound's value (characters, items or levels); 0 for `stack` (the JavaScript stack ran out). */
    readonly max: number,
  ) {
    super(message, limit === 'string' || limit === 'list' || limit === 'output' || limit === 'integer' ? 'MemoryError' : 'RecursionError')
    this.name = 'TemplateLimitError'
  }
}
