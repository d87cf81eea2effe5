/**
 * What every command of the command line shares: where it writes, its exit codes, its name.
 *
 * Contract: commands write reports to `io.stdout` and problems, logs and extension stderr to
 * `io.stderr`; they resolve to one of the exit codes below and never call `process.exit`.
 */

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

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
