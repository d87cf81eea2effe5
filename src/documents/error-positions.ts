/**
 * Errors that say where in the project the problem is (issue #18: a SQL error in a model should
 * point at the `.sql` file and its line, not at the document whose region ran the model).
 *
 * Contract: `withPosition(error, position)` returns the error (an `Error`) carrying `position`:
 * a project-relative POSIX `path` and, when known, the 1-based `line` and `column` an editor
 * opens. `errorPosition(error)` reads it back (null when the error carries none, or a malformed
 * one). The engine attaches it to the failed job's diagnostic (`at`), and the plugin points
 * Vite's overlay there.
 */

export interface SourcePosition {
  /** Project-relative POSIX path of the file that is wrong. */
  path: string
  /** 1-based line, or null when only the file is known. */
  line: number | null
  /** 1-based column, or null when unknown (the line's start). */
  column: number | null
}

export function withPosition(error: unknown, position: SourcePosition): Error {
  const failure = error instanceof Error ? error : new Error(String(error))
  return Object.assign(failure, { position })
}

export function errorPosition(error: unknown): SourcePosition | null {
  const position = (error as { position?: unknown } | null)?.position as Partial<SourcePosition> | undefined
  if (typeof position !== 'object' || position === null || typeof position.path !== 'string' || position.path === '') return null
  const count = (value: unknown): number | null => (typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : null)
  return { path: position.path, line: count(position.line), column: count(position.column) }
}
