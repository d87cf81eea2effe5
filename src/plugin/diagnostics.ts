/**
 * Diagnostics → Rollup/Vite reporting.
 *
 * Contract: `reportDiagnostics(context, file, diagnostics, logger, root, options)` sends
 * warnings to `context.warn` and info to the logger, then, when there are errors, fails the
 * module with `context.error(locatedError(message, loc))` for the first error (the others are
 * listed in its message, each as `also at <path>:<line>:<column>: <message>`), so `vite build`
 * fails with file:line. A dev server passes `failOnError: false`: its documents stay served and
 * their failures are told by dev-failures.ts, located by `failureAt` the same way (issue #34). `locatedError` is a real `Error`
 * carrying `id`, `loc` and `frame` (a code frame of the file on disk, code-frame.ts): Vite's
 * dev plugin container throws what it is given as is (a plain object would reach
 * `transformRequest` callers without being an `Error`), Rollup wraps either.
 *
 * One coordinate system (issue #18). Every location the plugin reports is the line and column
 * an editor opens, both 1-based: in messages (`insitu.toml:3:1`), in `loc`, and so in what Vite
 * prints from `loc` as it is: the dev server's `File: <id>:<loc.line>:<loc.column>` line, the
 * overlay's file line, whose link asks `/__open-in-editor?file=<file>:<line>:<column>`, and
 * launch-editor hands those numbers to the editor verbatim (`code -g file:3:1`, vim's
 * `cursor(3, 1)`: editors count columns from 1); Rolldown's and Rollup's build output print
 * `<id>:<line>:<column>` the same way. (Vite's own `loc` from an offset is 0-based, which is
 * why a frame Vite or Rolldown generates from a `loc` would put its caret one column to the
 * right: the plugin always supplies `frame` itself.) Where a diagnostic says which file is wrong
 * (`at`: a SQL model's `.sql` file and line, a TOML error's line and column), the dev server
 * points there (`linkOtherFiles`); a build points at the module's own file when `at` is another
 * file, since Rolldown prints the module id with `loc`'s numbers (the message names the file).
 *
 * `reportValidation(context, diagnostics, logger, root, { failOnError })` reports the
 * validators' project-wide diagnostics the same way (warnings `context.warn`, info the
 * logger), except that errors fail only when `failOnError` (a build); otherwise (the dev
 * server, which keeps serving) each error goes to `logger.error`.
 *
 * `engineStartError(error)` is the error a hook fails with when the engine could not start:
 * its message, located at the file, line and column of a `ConfigError`. `logEngineStartError`
 * logs it (dev: once, at start) as `vite-plugin-insitu: <message>`.
 *
 * The errors made here are the user's (a region, a config file, an extension failed): their
 * message says everything, without our plugin's name (Vite and Rollup add
 * `[plugin:vite-plugin-insitu]`), without a cause and without a stack trace: `stack` is empty,
 * since every printer shows a non-empty one (Vite 5–7's build output prints `stack` unless it
 * starts with `Error: <message>` and a line break, and Rollup's `Could not load …` prefix on the
 * message of a failed `load` defeats that; Rolldown appends `stack` to its summary), so no
 * `at ...` line and no second copy of the message is printed; the overlay shows none either.
 * user-errors.ts makes them, and `isUserError` tells them apart (build-errors.ts keeps Rolldown's frames away from them).
 *
 * `printErrorsOnce(server)` (dev): Vite logs a failing module once when it pre-transforms it
 * (an import of a served module) and again for each request of it; a failed engine start fails
 * every managed module with the same error. It wraps the server logger's `error` so that each
 * of these user errors (same file, same message) is printed once, until a file changes
 * (any watcher event); the overlay still receives every one. Other messages pass unchanged.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Logger } from 'vite'
import { ConfigError } from '../host/config.js'
import type { Diagnostic } from '../protocol/schemas.js'
import type { LocatedDiagnostic } from '../engine/render-document.js'
import { codeFrame } from './code-frame.js'
import { PLUGIN_NAME } from './options.js'
import type { PluginLogger } from './plugin-logger.js'
import { isUserError, userError } from './user-errors.js'

/** A location as an editor opens it: absolute file, 1-based line and column (see the header). */
export interface SourceLocation {
  file: string
  line: number
  column: number
}

export interface ReportingContext {
  error(error: Error & { id?: string; loc?: SourceLocation; frame?: string }): never
  warn(warning: { message: string; id?: string; loc?: SourceLocation; frame?: string }): void
}


/** A user error without a location (a check or sync report, a start failure without a file). */
export function reportError(message: string): Error {
  return userError(message)
}

/**
 * An `Error` for `this.error` pointing at `loc` (its `id` is the file) with the code frame
 * there; a line-only location (`column` null) points at the line's first non-blank character.
 */
export function locatedError(
  message: string,
  loc: { file: string; line: number; column: number | null },
): Error & { id: string; loc: SourceLocation; frame?: string } {
  const { located, frame } = frameAt(loc)
  return Object.assign(userError(message), { id: loc.file, loc: located }, frame === undefined ? {} : { frame })
}

/** The location with its column settled, and the code frame of the file on disk there. */
function frameAt(loc: { file: string; line: number; column: number | null }): { located: SourceLocation; frame?: string } {
  let text: string
  try {
    text = fs.readFileSync(loc.file, 'utf8')
  } catch {
    return { located: { file: loc.file, line: loc.line, column: loc.column ?? 1 } }
  }
  const framed = codeFrame(text, loc.line, loc.column)
  if (!framed) return { located: { file: loc.file, line: loc.line, column: loc.column ?? 1 } }
  return { located: { file: loc.file, line: loc.line, column: framed.column }, frame: framed.frame }
}


/** The same user error (file and message) prints once per watcher event. */
function userErrorKey(error: unknown): string | undefined {
  if (!(error instanceof Error) || !isUserError(error)) return undefined
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
  diagnostics: readonly LocatedDiagnostic[],
  logger: PluginLogger,
  root: string,
  options: {
    /** Point at the file a diagnostic says is wrong (`at`) even when it is not `file` (the dev server). @default false */
    linkOtherFiles?: boolean
    /**
     * Fail the module on the first error. False where a failing job leaves its module served (a
     * dev server: its failures are told by dev-failures.ts); errors are then left to that.
     * @default true
     */
    failOnError?: boolean
  } = {},
): void {
  const errors: LocatedDiagnostic[] = []
  const failOnError = options.failOnError ?? true
  for (const diagnostic of diagnostics) {
    const located = locate(diagnostic, file, root, options.linkOtherFiles ?? false)
    if (diagnostic.severity === 'error') {
      if (failOnError) errors.push(diagnostic)
    }
    else if (diagnostic.severity === 'warning') {
      const { located: loc, frame } = frameAt(located)
      context.warn({ message: diagnostic.message, id: loc.file, loc, ...(frame === undefined ? {} : { frame }) })
    } else logger.info(`[insitu] ${describeLocation(located, root)}: ${diagnostic.message}`)
  }
  const first = errors[0]
  if (!first) return
  const loc = locate(first, file, root, options.linkOtherFiles ?? false)
  const others = errors
    .slice(1)
    .map((d) => `\n  also at ${describeLocation(locate(d, file, root, false), root)}: ${d.message}`)
    .join('')
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
    const where = diagnostic.path ? { file: path.resolve(root, diagnostic.path), line: diagnostic.line ?? 1, column: null } : undefined
    const text = `${where ? `${describeLocation(where, root)}: ` : ''}${diagnostic.message}`
    if (diagnostic.severity === 'error') {
      if (options.failOnError) errors.push(diagnostic)
      else logger.error(`[insitu] validation error: ${text}`)
    } else if (diagnostic.severity === 'warning') {
      if (where) {
        const { located, frame } = frameAt(where)
        context.warn({ message: diagnostic.message, id: located.file, loc: located, ...(frame === undefined ? {} : { frame }) })
      } else context.warn({ message: diagnostic.message })
    } else {
      logger.info(`[insitu] ${text}`)
    }
  }
  const first = errors[0]
  if (!first) return
  const others = errors
    .slice(1)
    .map((d) => `\n  also: ${d.path ? `${describeLocation({ file: path.resolve(root, d.path), line: d.line ?? 1, column: null }, root)}: ` : ''}${d.message}`)
    .join('')
  const message = `${first.message}${others}`
  context.error(first.path ? locatedError(message, { file: path.resolve(root, first.path), line: first.line ?? 1, column: null }) : userError(message))
}

/**
 * What the dev server shows of an error diagnostic of `file` (dev-failures.ts): its message, where
 * it points (the file it names, `at`, even another one) with the column settled, and the code frame there.
 */
export function failureAt(diagnostic: LocatedDiagnostic, file: string, root: string): { message: string; loc: SourceLocation; frame?: string } {
  const { located, frame } = frameAt(locate(diagnostic, file, root, true))
  return { message: diagnostic.message, loc: located, ...(frame === undefined ? {} : { frame }) }
}

/** `docs/a.md:5:1` (project-relative; the column when known). */
function describeLocation(loc: { file: string; line: number; column: number | null }, root: string): string {
  const relative = path.relative(root, loc.file).split(path.sep).join('/')
  return `${relative}:${loc.line}${loc.column === null ? '' : `:${loc.column}`}`
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
    // ConfigError's column is 1-based, as its message's `file:line:col` (see the header).
    return locatedError(message, { file: path.resolve(error.file), line: error.line ?? 1, column: error.column ?? null })
  }
  // No `cause`: Rolldown would print it, stack and all, under the message.
  return userError(message)
}

/** Log why the engine could not start: `vite-plugin-insitu: <message>` (printed once in dev). */
export function logEngineStartError(logger: PluginLogger, error: unknown): void {
  const failure = engineStartError(error)
  logger.error(`${PLUGIN_NAME}: ${failure.message}`, failure)
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Where a diagnostic points: its `at` (another file only with `linkOtherFiles`), else its path and line. */
function locate(
  diagnostic: LocatedDiagnostic,
  file: string,
  root: string,
  linkOtherFiles: boolean,
): { file: string; line: number; column: number | null } {
  const target = diagnostic.path ? path.resolve(root, diagnostic.path) : file
  const at = diagnostic.at
  if (at) {
    const atFile = path.resolve(root, at.path)
    // A file without a line (a model that failed while running): its first line.
    if (atFile === target ? at.line !== null : linkOtherFiles) return { file: atFile, line: at.line ?? 1, column: at.column }
  }
  return { file: target, line: diagnostic.line ?? 1, column: null }
}
