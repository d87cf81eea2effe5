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
