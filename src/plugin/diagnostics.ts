/**
 * Diagnostics → Rollup/Vite reporting.
 *
 * Contract: `reportDiagnostics(context, file, diagnostics, logger)` sends warnings to
 * `context.warn` and info to the logger, then, when there are errors, fails the module with
 * `context.error(locatedError(message, { file, line, column: 0 }))` for the first error (the
 * others are listed in its message), so the dev overlay points at the region and
 * `vite build` fails with file:line. `locatedError` is a real `Error` carrying `id` and `loc`:
 * Vite's dev plugin container throws what it is given as is (a plain object would reach
 * `transformRequest` callers without being an `Error`), Rollup wraps either.
 */
import path from 'node:path'
import type { Diagnostic } from '../protocol/schemas.js'

export interface SourceLocation {
  file: string
  line: number
  column: number
}

export interface ReportingContext {
  error(error: Error & { id?: string; loc?: SourceLocation }): never
  warn(warning: { message: string; id?: string; loc?: SourceLocation }): void
}

/** An `Error` for `this.error` pointing at `loc` (its `id` is the file). */
export function locatedError(message: string, loc: SourceLocation): Error & { id: string; loc: SourceLocation } {
  return Object.assign(new Error(message), { id: loc.file, loc })
}

export interface PluginLogger {
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

export function reportDiagnostics(
  context: ReportingContext,
  file: string,
  diagnostics: readonly Diagnostic[],
  logger: PluginLogger,
  root: string,
): void {
  const errors: Diagnostic[] = []
  for (const diagnostic of diagnostics) {
    const located = locate(diagnostic, file, root)
    if (diagnostic.severity === 'error') errors.push(diagnostic)
    else if (diagnostic.severity === 'warning') context.warn({ message: diagnostic.message, id: located.file, loc: located })
    else logger.info(`[insitu] ${path.relative(root, located.file)}:${located.line}: ${diagnostic.message}`)
  }
  const first = errors[0]
  if (!first) return
  const loc = locate(first, file, root)
  const others = errors.slice(1).map((d) => `\n  also at line ${d.line ?? '?'}: ${d.message}`).join('')
  context.error(locatedError(`${first.message}${others}`, loc))
}

function locate(diagnostic: Diagnostic, file: string, root: string): SourceLocation {
  const target = diagnostic.path ? path.resolve(root, diagnostic.path) : file
  return { file: target, line: diagnostic.line ?? 1, column: 0 }
}
