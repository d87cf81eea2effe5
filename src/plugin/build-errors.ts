/**
 * `vite build` output for the user's errors: the message, its location and the frame or diff,
 * nothing else (issue #18).
 *
 * Why: Rolldown (Vite 8) gathers a build's errors into one `Error` of its own
 * (`Build failed with 1 error: …`, made in its `aggregateBindingErrorsIntoJsError`, with the
 * plugin's errors in its `errors` property), and Vite's command line prints that error with
 * `util.inspect` (`error during build:\n${inspect(e)}`, vite/src/node/cli.ts): Rolldown's and
 * Vite's stack frames (`at aggregateBindingErrorsIntoJsError …`, about seven lines) and
 * `{ errors: [Getter/Setter] }` follow the plugin's message. Our own errors carry no frames (see
 * diagnostics.ts); the wrapper's cannot be avoided from a hook. (Vite 5–7 build with Rollup,
 * which throws the plugin's error itself, printed by its `stack`: nothing to do there.)
 *
 * Contract: `quietUserErrors(builder, isUserError)` (from the `buildApp` hook, which runs before
 * any environment is built) wraps `builder.build` once per builder: when an environment's build
 * fails with Rolldown's wrapper and every error in it is a user error of this plugin, the
 * wrapper gets a `util.inspect.custom` printing exactly, per error,
 * `[vite-plugin-insitu] <file>:<line>:<column>` (when located), the message and the frame; the
 * error is rethrown otherwise unchanged (its message, `errors` and stack stay as Rolldown made
 * them for programmatic callers). Any other failure passes through untouched.
 */
import { inspect } from 'node:util'
import { PLUGIN_NAME } from './options.js'

export interface EnvironmentBuilder {
  build(environment: never): Promise<unknown>
}

const quieted = new WeakSet<object>()

export function quietUserErrors(builder: EnvironmentBuilder, isUserError: (error: unknown) => boolean): void {
  if (quieted.has(builder)) return
  quieted.add(builder)
  const build = builder.build.bind(builder)
  builder.build = async (environment: never) => {
    try {
      return await build(environment)
    } catch (error) {
      throw quietWrapper(error, isUserError)
    }
  }
}

/** Rolldown's wrapper of user errors, printed as those errors alone; anything else as it is. */
export function quietWrapper(error: unknown, isUserError: (error: unknown) => boolean): unknown {
  const inner = (error as { errors?: unknown } | null)?.errors
  if (!(error instanceof Error) || !Array.isArray(inner) || inner.length === 0 || !inner.every(isUserError)) return error
  const text = (inner as PrintedError[]).map(describeUserError).join('\n\n')
  Object.defineProperty(error, inspect.custom, { value: () => text, configurable: true })
  return error
}

interface PrintedError {
  message: string
  id?: string
  loc?: { file?: string; line: number; column: number }
  frame?: string
}

/** `[vite-plugin-insitu] <file>:<line>:<column>`, the message, the frame. */
export function describeUserError(error: PrintedError): string {
  const file = error.loc?.file ?? error.id
  const where = file === undefined ? '' : ` ${file}${error.loc ? `:${error.loc.line}:${error.loc.column}` : ''}`
  return [`[${PLUGIN_NAME}]${where}`, error.message, ...(error.frame ? [error.frame] : [])].join('\n')
}
