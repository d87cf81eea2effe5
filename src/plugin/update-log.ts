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
 *   module's own text changed) or its output is the same as before (no update to speak of).
 *   Jobs served from the memo (`reused`) did not re-run and are not named.
 * - `logPluginUpdates(engine, info)` subscribes to the engine's runs and logs each line once
 *   per file and `affected()` batch (`README.md` and `README.md?raw` re-running for the same
 *   change log one line). Returns the unsubscribe function.
 */
import type { InsituEngine } from '../engine/engine.js'
import { describeReason, type OwnerRecord, type RunReason } from '../engine/run-records.js'

export function formatUpdateLine(file: string, jobIds: readonly string[], reason: RunReason): string {
  const jobs = jobIds.length > 0 ? ` (${jobIds.join(', ')})` : ''
  return `insitu: ${file}${jobs} ← ${describeReason(reason)}`
}

export function updateLine(record: OwnerRecord): string | null {
  const run = record.lastRun
  if (run.reason.kind !== 'selected' || !run.outputChanged) return null
  const ids = [...new Set(run.jobs.filter((job) => !job.reused).map((job) => job.id))]
  return formatUpdateLine(record.file, ids, run.reason)
}

/** How many (file, batch) pairs are remembered for de-duplication. */
const REMEMBERED = 1_000

export function logPluginUpdates(engine: InsituEngine, info: (message: string) => void): () => void {
  const logged = new Set<string>()
  return engine.runRecords.onRun((record) => {
    const line = updateLine(record)
    if (line === null || record.lastRun.reason.kind !== 'selected') return
    const key = `${record.file}\u0000${record.lastRun.reason.batch}`
    if (logged.has(key)) return
    if (logged.size >= REMEMBERED) logged.clear()
    logged.add(key)
    info(line)
  })
}
