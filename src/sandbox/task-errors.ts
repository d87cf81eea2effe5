/**
 * A task's error across the process boundary of the sandbox (process-pool.ts): what makes an
 * error useful to its caller here, the file and line it points at (`position`), what the failed
 * task had read (`dependencies`), whether it ran out of time (`timedOut`) and the bound a query's
 * rows passed (`tooLarge`), travels as data.
 *
 * Contract: `taskErrorReply(error)` (in the sandbox process) is the `{ message, code, data }` of
 * an error; `fromSandboxError(error)` (here) rebuilds an `Error` with the same message and
 * properties from a `SandboxTaskError`, and returns any other error as it is.
 */
import { SandboxTaskError } from './process-pool.js'

/** The properties of an error that travel (see the contract). */
const CARRIED = ['position', 'dependencies', 'timedOut', 'tooLarge'] as const

export function taskErrorReply(error: unknown): { message: string; code: string | null; data: Record<string, unknown> } {
  const source = (error ?? {}) as Record<string, unknown>
  const code = source.code
  const data: Record<string, unknown> = {}
  for (const key of CARRIED) if (source[key] !== undefined) data[key] = source[key]
  return { message: error instanceof Error ? error.message : String(error), code: typeof code === 'string' ? code : null, data }
}

export function fromSandboxError(error: unknown): unknown {
  if (!(error instanceof SandboxTaskError)) return error
  const rebuilt = new Error(error.message)
  if (error.code !== null) Object.assign(rebuilt, { code: error.code })
  const data = (error.data ?? {}) as Record<string, unknown>
  for (const key of CARRIED) if (data[key] !== undefined) Object.assign(rebuilt, { [key]: data[key] })
  return rebuilt
}
