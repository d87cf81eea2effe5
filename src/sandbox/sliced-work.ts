/**
 * Work that usually ends at once but may never end (a template's render, a SQL model's
 * templates): it runs in this process for a slice of its budget and, when it runs out of the
 * slice, again in the sandbox with what is left, where it can be stopped (issue #34).
 *
 * Contract: `runSliced({ budgetMs, pool, here, outOfTime, task, killed, skipHere, onOutOfSlice })` returns
 * `here(deadline)`, run with the deadline `IN_PROCESS_SLICE_MS` (at most the budget) from now,
 * when it ends in time or throws anything but running out of it (`outOfTime(error)`); its value
 * is returned as it is, not in a promise. Without a pool (`pool` null) `here` has the whole budget
 * and its errors are thrown. Past the slice (`onOutOfSlice()` is told), or at once with
 * `skipHere`, the sandbox runs
 * `task(remainingMs)` (the budget less the time spent here, at least 1 ms) as slow work
 * (process-pool.ts), killed `SANDBOX_GRACE_MS` after that; `killed()` is the failure then. Its
 * errors come back through task-errors.ts `fromSandboxError`.
 */
import { IN_PROCESS_SLICE_MS, type ProcessPool, SANDBOX_GRACE_MS } from './process-pool.js'
import { fromSandboxError } from './task-errors.js'

export interface SlicedWork<T> {
  budgetMs: number
  /** The sandbox, or null where there is none (the work then runs here with the whole budget). */
  pool: (() => ProcessPool) | null
  here: (deadline: number) => T
  /** The error `here` throws when it ran out of its deadline. */
  outOfTime: (error: unknown) => boolean
  /** The sandbox's task, given the milliseconds left of the budget. */
  task: (remainingMs: number) => unknown
  /** The failure when the sandbox had to kill the task. */
  killed: () => Error
  /** Known to take long: straight to the sandbox. @default false */
  skipHere?: boolean
  /** Told when `here` ran out of its slice and the work goes to the sandbox. */
  onOutOfSlice?: () => void
}

export function runSliced<T>(work: SlicedWork<T>): T | Promise<T> {
  const started = performance.now()
  const slice = work.pool ? Math.min(IN_PROCESS_SLICE_MS, work.budgetMs) : work.budgetMs
  if (!work.skipHere || !work.pool) {
    try {
      return work.here(started + slice)
    } catch (error) {
      if (!work.outOfTime(error) || slice >= work.budgetMs) throw error
      work.onOutOfSlice?.()
    }
  }
  const remainingMs = Math.max(1, Math.round(work.budgetMs - (performance.now() - started)))
  return inSandbox(work.pool!(), work.task(remainingMs), remainingMs, work.killed)
}

async function inSandbox<T>(pool: ProcessPool, task: unknown, remainingMs: number, killed: () => Error): Promise<T> {
  try {
    return (await pool.run(task, { slow: true, timeoutMs: remainingMs + SANDBOX_GRACE_MS, timedOut: killed })) as T
  } catch (error) {
    throw fromSandboxError(error)
  }
}
