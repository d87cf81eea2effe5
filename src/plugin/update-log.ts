/**
 * One terminal line per plugin-caused update (dev):
 * `insitu: README.md (open, mix) ← tasks/a.md changed`.
 *
 * Contract:
 * - `formatUpdateLine(file, jobIds, reason)` is the line: the owner's file, the ids of the
 *   jobs that re-ran in parentheses (omitted when none did), then the causes that selected it
 *   (`<path> changed|created|deleted`, `git changed`; see `describeReason`).
 * - `updateLine(record)` is the line for a completed run, or null when the run was not the
 *   plugin's doing (its reason is not a selection by `affected()`: a first request, the
 *   module's own text changed), its output is the same as before (no update to speak of), or it
 *   failed (see `failureLine`). Jobs served from the memo (`reused`) did not re-run and are not
 *   named.
 * - `failureLine(record)`: a plugin-caused run in which a job (or the whole run) failed is no
 *   normal update (issue #18): `insitu: README.md (open) failed ← insitu/models/open_tasks.sql
 *   changed: <the first failure's message>`, naming the failed jobs; null for other runs.
 * - `logPluginUpdates(engine, logger, options)` subscribes to the engine's runs and logs each line
 *   once per file and `affected()` batch (`README.md` and `README.md?raw` re-running for the same
 *   change log one line): updates with `logger.info`, failures with `logger.error` unless
 *   `options.failures` is false (a dev server tells failures once, with their frame:
 *   dev-failures.ts). Returns the unsubscribe function.
 */
import type { InsituEngine } from '../engine/engine.js'
import { describeReason, type OwnerRecord, type RunReason } from '../engine/run-records.js'

export function formatUpdateLine(file: string, jobIds: readonly string[], reason: RunReason): string {
  const jobs = jobIds.length > 0 ? ` (${jobIds.join(', ')})` : ''
  return `insitu: ${file}${jobs} ← ${describeReason(reason)}`
}

export function updateLine(record: OwnerRecord): string | null {
  const run = record.lastRun
  if (run.reason.kind !== 'selected' || !run.outputChanged || failed(record)) return null
  const ids = [...new Set(run.jobs.filter((job) => !job.reused).map((job) => job.id))]
  return formatUpdateLine(record.file, ids, run.reason)
}

export function failureLine(record: OwnerRecord): string | null {
  const run = record.lastRun
  if (run.reason.kind !== 'selected' || !failed(record)) return null
  const failedJobs = run.jobs.filter((job) => job.error !== null)
  const ids = [...new Set(failedJobs.map((job) => job.id))]
  const message = run.error ?? failedJobs[0]?.error ?? run.diagnostics.find((d) => d.severity === 'error')?.message ?? 'failed'
  const jobs = ids.length > 0 ? ` (${ids.join(', ')})` : ''
  return `insitu: ${record.file}${jobs} failed ← ${describeReason(run.reason)}: ${message}`
}

/** A job, the run as a whole or the document (an unterminated region) failed. */
function failed(record: OwnerRecord): boolean {
  const run = record.lastRun
  return run.error !== null || run.jobs.some((job) => job.error !== null) || run.diagnostics.some((d) => d.severity === 'error')
}

/** How many (file, batch) pairs are remembered for de-duplication. */
const REMEMBERED = 1_000

export function logPluginUpdates(
  engine: InsituEngine,
  logger: { info(message: string): void; error(message: string): void },
  options: {
    /** Log failed runs too. @default true */
    failures?: boolean
  } = {},
): () => void {
  const logged = new Set<string>()
  const logFailures = options.failures ?? true
  return engine.runRecords.onRun((record) => {
    const failure = failureLine(record)
    if (failure !== null && !logFailures) return
    const line = failure ?? updateLine(record)
    if (line === null || record.lastRun.reason.kind !== 'selected') return
    const key = `${record.file}\u0000${record.lastRun.reason.batch}`
    if (logged.has(key)) return
    if (logged.size >= REMEMBERED) logged.clear()
    logged.add(key)
    if (failure !== null) logger.error(failure)
    else logger.info(line)
  })
}
