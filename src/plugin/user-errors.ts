/**
 * The user's errors: a region, a config file or an extension failed, and the message says
 * everything (diagnostics.ts makes them; build-errors.ts keeps Rolldown's frames away from them).
 *
 * Contract: `userError(message)` is an `Error` without stack frames or cause (`stack` is empty:
 * every printer shows a non-empty one, see diagnostics.ts); `isUserError(error)` is true for
 * exactly the errors `userError` made in this process, by any copy of this module: the
 * published entry and the runtime's bundle (runtime-module.ts) each hold one, so the mark is a
 * symbol of the global registry, not a set of this copy's. A module of its own, without
 * dependencies, so that the plugin's entry (plugin.ts) can make them from what its build
 * process reports (build-process.ts) without loading the rest.
 */

const USER_ERROR = Symbol.for('vite-plugin-insitu.user-error')

export function userError(message: string): Error {
  const error = new Error(message)
  error.stack = ''
  Object.defineProperty(error, USER_ERROR, { value: true })
  return error
}

export function isUserError(error: unknown): boolean {
  return error instanceof Error && Object.hasOwn(error, USER_ERROR)
}
