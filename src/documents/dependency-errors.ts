/**
 * Errors that carry what a failed job had depended on so far.
 *
 * Contract: a failure (a missing file, template or SQL model) is still a dependency: the
 * engine watches it and re-runs the job when it appears. `withDependencies(error, earlier)`
 * returns the error (an `Error`) carrying `earlier` then its own `dependencies`, de-duplicated
 * in first-seen order; `errorDependencies(error)` reads them back ([] when none).
 */

/** What a failed invocation had depended on so far (an error's `dependencies`), or []. */
export function errorDependencies(error: unknown): string[] {
  const own = (error as { dependencies?: unknown } | null)?.dependencies
  return Array.isArray(own) ? own.filter((d): d is string => typeof d === 'string') : []
}

/** The error, carrying `earlier` then its own `dependencies` (first-seen order). */
export function withDependencies(error: unknown, earlier: readonly string[]): Error {
  const failure = error instanceof Error ? error : new Error(String(error))
  return Object.assign(failure, { dependencies: [...new Set([...earlier, ...errorDependencies(failure)])] })
}
