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
 *
 * `reportValidation(context, diagnostics, logger, root, { failOnError })` reports the
 * validators' project-wide diagnostics the same way (warnings `context.warn`, info the
 * logger), except that errors fail only when `failOnError` (a build); otherwise (the dev
 * server, which keeps serving) each error goes to `logger.error`.
 *
 * `engineStartError(error)` is the error a hook fails with when the engine could not start:
 * its message, located at the file and line of a `ConfigError`. `logEngineStartError` logs it
 * (dev: once, at start) as `vite-plugin-insitu: <message>`.
 *
 * The errors made here are the user's (a region, a config file, an extension failed): their
 * message says everything, without our plugin's name (Vite and Rollup add
 * `[plugin:vite-plugin-insitu]`) and without a stack trace (`stack` is the message line only,
 * so Vite prints no `at ...` lines and the overlay shows none).
 *
 * `printErrorsOnce(server)` (dev): Vite logs a failing module once when it pre-transforms it
 * (an import of a served module) and again for each request of it; a failed engine start fails
 * every managed module with the same error. It wraps the server logger's `error` so that each
 * of these user errors (same file, same message) is printed once, until a file changes
 * (any watcher event); the overlay still receives every one. Other messages pass unchanged.
 */
import path from 'node:path'
import type { Logger } from 'vite'
import { ConfigError } from '../host/config.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { PLUGIN_NAME } from './options.js'

export interface SourceLocation {
  file: string
  line: number
  column: number
}

export interface ReportingContext {
  error(error: Error & { id?: string; loc?: SourceLocation }): never
  warn(warning: { message: string; id?: string; loc?: SourceLocation }): void
}

/** Errors made here: the user's to fix, printed once (see `printErrorsOnce`). */
const userErrors = new WeakSet<Error>()

/** An `Error` without stack frames (its `stack` is its message line). */
function userError(message: string, options?: ErrorOptions): Error {
  const error = new Error(message, options)
  error.stack = `Error: ${message}`
  userErrors.add(error)
  return error
}

/** An `Error` for `this.error` pointing at `loc` (its `id` is the file). */
export function locatedError(message: string, loc: SourceLocation): Error & { id: string; loc: SourceLocation } {
  return Object.assign(userError(message), { id: loc.file, loc })
}

export interface PluginLogger {
  info(message: string): void
  warn(message: string): void
  /** `error`: what the message reports, when it is one of this module's errors (printed once). */
  error(message: string, error?: Error): void
}

/** The same user error (file and message) prints once per watcher event. */
function userErrorKey(error: unknown): string | undefined {
  if (!(error instanceof Error) || !userErrors.has(error)) return undefined
  const id = (error as { id?: unknown }).id
  return `${typeof id === 'string' ? id : ''}\u0000${error.message}`
}

const printedBy = new WeakMap<Logger, Set<string>>()

export function printErrorsOnce(server: { config: { logger: Logger }; watcher: { on(event: 'all', listener: () => void): unknown } }): void {
  const logger = server.config.logger
  let printed = printedBy.get(logger)
  if (!printed) {
    const seen = new Set<string>()
    printed = seen
    printedBy.set(logger, seen)
    const print = logger.error.bind(logger)
    logger.error = (message, options) => {
      const key = userErrorKey(options?.error)
      if (key !== undefined) {
        if (seen.has(key)) return
        seen.add(key)
      }
      print(message, options)
    }
  }
  const seen = printed
  seen.clear()
  server.watcher.on('all', () => seen.clear())
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

export function reportValidation(
  context: ReportingContext,
  diagnostics: readonly Diagnostic[],
  logger: PluginLogger,
  root: string,
  options: { failOnError: boolean },
): void {
  const errors: Diagnostic[] = []
  for (const diagnostic of diagnostics) {
    const where = diagnostic.path ? { file: path.resolve(root, diagnostic.path), line: diagnostic.line ?? 1, column: 0 } : undefined
    const text = `${where ? `${describeLocation(where, root)}: ` : ''}${diagnostic.message}`
    if (diagnostic.severity === 'error') {
      if (options.failOnError) errors.push(diagnostic)
      else logger.error(`[insitu] validation error: ${text}`)
    } else if (diagnostic.severity === 'warning') {
      context.warn(where ? { message: diagnostic.message, id: where.file, loc: where } : { message: diagnostic.message })
    } else {
      logger.info(`[insitu] ${text}`)
    }
  }
  const first = errors[0]
  if (!first) return
  const others = errors
    .slice(1)
    .map((d) => `\n  also: ${d.path ? `${describeLocation({ file: path.resolve(root, d.path), line: d.line ?? 1, column: 0 }, root)}: ` : ''}${d.message}`)
    .join('')
  const message = `${first.message}${others}`
  context.error(
    first.path ? locatedError(message, { file: path.resolve(root, first.path), line: first.line ?? 1, column: 0 }) : userError(message),
  )
}

function describeLocation(loc: SourceLocation, root: string): string {
  return `${path.relative(root, loc.file).split(path.sep).join('/')}:${loc.line}`
}

/** The engine was asked for while (or after) the plugin stopped: not worth reporting. */
export class PluginStoppedError extends Error {
  constructor() {
    super('the plugin has been stopped')
  }
}

export function engineStartError(error: unknown): Error {
  const message = messageOf(error)
  if (error instanceof ConfigError) {
    return locatedError(message, {
      file: path.resolve(error.file),
      line: error.line ?? 1,
      column: Math.max(0, (error.column ?? 1) - 1),
    })
  }
  return userError(message, { cause: error })
}

/** Log why the engine could not start: `vite-plugin-insitu: <message>` (printed once in dev). */
export function logEngineStartError(logger: PluginLogger, error: unknown): void {
  const failure = engineStartError(error)
  logger.error(`${PLUGIN_NAME}: ${failure.message}`, failure)
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function locate(diagnostic: Diagnostic, file: string, root: string): SourceLocation {
  const target = diagnostic.path ? path.resolve(root, diagnostic.path) : file
  return { file: target, line: diagnostic.line ?? 1, column: 0 }
}
