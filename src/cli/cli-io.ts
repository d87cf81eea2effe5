/**
 * What every command of the command line shares: where it writes, its exit codes, its name.
 *
 * Contract: commands write reports to `io.stdout` and problems, logs and extension stderr to
 * `io.stderr`; they resolve to one of the exit codes below and never call `process.exit`.
 * `startErrorExitCode(error)`: the exit code of an error that kept a command from starting:
 * `EXIT_USAGE` (2) for a config error (`ConfigError`) and for a better-sqlite3 whose native
 * part cannot load (`SqliteBindingError`: the install needs a step, nothing was checked), else
 * `EXIT_STALE_OR_FAILED` (1).
 */
import { SqliteBindingError } from '../documents/sqlite-database.js'
import { ConfigError } from '../host/config.js'

export interface CliOutput {
  write(text: string): unknown
}

export interface CliIo {
  stdout: CliOutput
  stderr: CliOutput
  /** The folder the command runs in (where the project is looked for, and relative paths start). */
  cwd: string
}

export const CLI_NAME = 'vite-plugin-insitu'

export const EXIT_CLEAN = 0
export const EXIT_STALE_OR_FAILED = 1
export const EXIT_USAGE = 2

export function startErrorExitCode(error: unknown): number {
  return error instanceof ConfigError || error instanceof SqliteBindingError ? EXIT_USAGE : EXIT_STALE_OR_FAILED
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
