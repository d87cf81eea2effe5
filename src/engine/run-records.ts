/**
 * Run records: what the engine last did for each owner (a module id's key `<rel>[?query]`),
 * and why. The engine's own record of its work, read by introspection (`/__insitu/`), the
 * plugin's update log and its browser diagnostics; nothing else keeps a second account.
 *
 * Contract:
 * - `selected(owners, events, git, graphAffected)` is called by `affected()` with the owners
 *   it invalidated: each owner gets a pending reason naming the causes that selected it. A
 *   batch of at most `ATTRIBUTED_BATCH` events is attributed event by event (an owner gets the
 *   events whose paths select it, `git changed` when git metadata selected it); an owner that
 *   no single event selects (through the document index's projection) or a larger batch gets
 *   every event of the batch. Reasons pending from earlier batches are merged (at most
 *   `MAX_CAUSES` causes are named, the rest counted).
 * - `ran(owner, run)` records a completed run: its time, duration, jobs (id, kind, line,
 *   provider, reused, and the dependencies each job reported: which region read what),
 *   dependencies (the union), diagnostics, whether its output differs from the previous
 *   run's, and its reason: the pending one (consumed), else `first request` when the owner
 *   never ran, else `own text changed` when its input text differs from the last run's, else
 *   `not cached` (e.g. the previous run failed, so its result was not kept).
 * - `cached(owner)` records a request served from the cache: the owner's reason becomes
 *   `cached` (its last run and that run's reason stay) — except the first request after a run
 *   recorded with `prefetched` (made ahead of it, e.g. the dev server's early cutoff): that
 *   request is the run's delivery and the reason stays the run's.
 * - `forget(owner)` drops an owner (its file was deleted). `list()` gives every record,
 *   sorted by owner. `onRun(listener)` is told of every recorded run (not of cached ones);
 *   it returns the unsubscribe function; a throwing listener never fails a run.
 * - Times: `at` is epoch milliseconds of the run's end, `durationMs` wall time of the run.
 */
import type { Diagnostic } from '../protocol/schemas.js'
import type { FileEvent, FileEventType } from './dependency-graph.js'
import type { DocumentResult } from './render-document.js'

/** One thing that selected an owner for a re-run: a file event, or a change of git metadata. */
export type RunCause = { type: FileEventType; path: string } | { type: 'git' }

export type RunReason =
  | { kind: 'first' }
  /** `batch`: which `affected()` call (numbered from 1) selected it last. */
  | { kind: 'selected'; causes: RunCause[]; more: number; batch: number }
  | { kind: 'source' }
  | { kind: 'uncached' }

export interface JobRecord {
  id: string
  kind: string
  line: number
  target: 'region' | 'frontmatter' | 'module'
  /** Extension name of the capability's provider, or `insitu` for a builtin; `?` when unknown. */
  provider: string
  /** The result came from the job memo (no invocation). */
  reused: boolean
  /** The job failed with this message. */
  error: string | null
  /** What this job read (its result's dependencies; for a failed job, what it had read so far). */
  dependencies: readonly string[]
}

export interface RunRecord {
  /** Epoch milliseconds when the run ended. */
  at: number
  durationMs: number
  reason: RunReason
  jobs: JobRecord[]
  dependencies: readonly string[]
  diagnostics: readonly Diagnostic[]
  /** The run failed as a whole (a module transform threw, a document could not be parsed). */
  error: string | null
  /** The output text differs from the previous run's (true on a first run). */
  outputChanged: boolean
  /** A document's output differs from its input text (a body regenerated: what write mode writes). */
  rewrites: boolean
}

export interface OwnerRecord {
  owner: string
  /** Project-relative file of the owner. */
  file: string
  type: 'document' | 'module'
  /** The reason of the owner's last request: its last run's, or `cached`. */
  reason: RunReason | { kind: 'cached' }
  lastRun: RunRecord
  runs: number
  cachedRequests: number
  /** Why the next run will happen, when `affected()` invalidated the owner since its last run. */
  pending: RunReason | null
}

/** What the engine reports when a run completes. */
export interface CompletedRun {
  type: OwnerRecord['type']
  file: string
  startedAt: number
  inputHash: string
  outputHash: string | null
  jobs: JobRecord[]
  dependencies: readonly string[]
  diagnostics: readonly Diagnostic[]
  error: string | null
}

export type RunListener = (record: OwnerRecord) => void

/** Largest batch whose events are attributed one by one. */
export const ATTRIBUTED_BATCH = 16
/** How many causes a reason names. */
export const MAX_CAUSES = 8

interface Entry {
  record: OwnerRecord | null
  inputHash: string | null
  outputHash: string | null
  pending: { causes: RunCause[]; more: number; batch: number } | null
  /** The last run was made ahead of a request: the next cache hit delivers it (not a cached request). */
  prefetched: boolean
}

export class RunRecords {
  private readonly entries = new Map<string, Entry>()
  private readonly listeners = new Set<RunListener>()
  private batches = 0

  /** The current time for `CompletedRun.startedAt`. */
  static now(): number {
    return performance.now()
  }

  selected(
    owners: ReadonlySet<string>,
    events: readonly FileEvent[],
    git: boolean,
    graphAffected: (events: readonly FileEvent[], git: boolean) => ReadonlySet<string>,
  ): void {
    if (owners.size === 0) return
    const batch = ++this.batches
    const all: RunCause[] = events.map((e) => ({ type: e.type, path: e.path }))
    if (git) all.push({ type: 'git' })
    const byOwner = new Map<string, RunCause[]>()
    if (events.length + (git ? 1 : 0) > 1 && events.length <= ATTRIBUTED_BATCH) {
      const add = (selected: ReadonlySet<string>, cause: RunCause) => {
        for (const owner of selected) if (owners.has(owner)) byOwner.set(owner, [...(byOwner.get(owner) ?? []), cause])
      }
      for (const event of events) add(graphAffected([event], false), { type: event.type, path: event.path })
      if (git) add(graphAffected([], true), { type: 'git' })
    }
    for (const owner of owners) {
      const entry = this.entry(owner)
      entry.pending = { ...mergeCauses(entry.pending, byOwner.get(owner) ?? all), batch }
      if (entry.record) entry.record.pending = { kind: 'selected', ...entry.pending }
    }
  }

  ran(owner: string, run: CompletedRun, prefetched = false): void {
    const entry = this.entry(owner)
    entry.prefetched = prefetched
    const previous = entry.record
    const reason: RunReason = entry.pending
      ? { kind: 'selected', ...entry.pending }
      : !previous
        ? { kind: 'first' }
        : entry.inputHash !== run.inputHash
          ? { kind: 'source' }
          : { kind: 'uncached' }
    const lastRun: RunRecord = {
      at: Date.now(),
      durationMs: Math.max(0, RunRecords.now() - run.startedAt),
      reason,
      jobs: run.jobs,
      // The run's own arrays (never mutated), not copies: a record costs little at 10,000 documents.
      dependencies: run.dependencies,
      diagnostics: run.diagnostics,
      error: run.error,
      outputChanged: run.outputHash === null || run.outputHash !== entry.outputHash,
      rewrites: run.type === 'document' && run.outputHash !== null && run.outputHash !== run.inputHash,
    }
    entry.pending = null
    entry.inputHash = run.inputHash
    entry.outputHash = run.outputHash
    const record: OwnerRecord = {
      owner,
      file: run.file,
      type: run.type,
      reason,
      lastRun,
      runs: (previous?.runs ?? 0) + 1,
      cachedRequests: previous?.cachedRequests ?? 0,
      pending: null,
    }
    entry.record = record
    for (const listener of this.listeners) {
      try {
        listener(record)
      } catch {
        // a listener's failure is its own business: the run stands
      }
    }
  }

  cached(owner: string): void {
    const entry = this.entries.get(owner)
    const record = entry?.record
    if (!entry || !record) return
    if (entry.prefetched) {
      entry.prefetched = false // the request the run was made for
      return
    }
    record.reason = { kind: 'cached' }
    record.cachedRequests++
  }

  forget(owner: string): void {
    this.entries.delete(owner)
  }

  get(owner: string): OwnerRecord | undefined {
    return this.entries.get(owner)?.record ?? undefined
  }

  /** Every owner with a record, unsorted. */
  owners(): IterableIterator<string> {
    return this.entries.keys()
  }

  list(): OwnerRecord[] {
    const records: OwnerRecord[] = []
    for (const entry of this.entries.values()) if (entry.record) records.push(entry.record)
    return records.sort((a, b) => (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0))
  }

  onRun(listener: RunListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private entry(owner: string): Entry {
    let entry = this.entries.get(owner)
    if (!entry) this.entries.set(owner, (entry = { record: null, inputHash: null, outputHash: null, pending: null, prefetched: false }))
    return entry
  }
}

/** Causes of an earlier pending reason followed by new ones, without repeats, at most `MAX_CAUSES` named. */
export function mergeCauses(
  pending: { causes: RunCause[]; more: number } | null,
  causes: readonly RunCause[],
): { causes: RunCause[]; more: number } {
  const merged = [...(pending?.causes ?? [])]
  let more = pending?.more ?? 0
  const key = (c: RunCause) => (c.type === 'git' ? 'git' : `${c.type}\u0000${c.path}`)
  const seen = new Set(merged.map(key))
  for (const cause of causes) {
    if (seen.has(key(cause))) continue
    seen.add(key(cause))
    if (merged.length < MAX_CAUSES) merged.push(cause)
    else more++
  }
  return { causes: merged, more }
}

/** `tasks/a.md changed`, `b.md created`, `c.md deleted`, `git changed`. */
export function describeCause(cause: RunCause): string {
  if (cause.type === 'git') return 'git changed'
  const verb = cause.type === 'create' ? 'created' : cause.type === 'delete' ? 'deleted' : 'changed'
  return `${cause.path} ${verb}`
}

/** A reason in words: `tasks/a.md changed, git changed (+2 more)`, `first request`, `cached`, … */
export function describeReason(reason: RunReason | { kind: 'cached' }): string {
  switch (reason.kind) {
    case 'first':
      return 'first request'
    case 'cached':
      return 'cached'
    case 'source':
      return 'own text changed'
    case 'uncached':
      return 'not cached'
    case 'selected':
      return reason.causes.map(describeCause).join(', ') + (reason.more > 0 ? ` (+${reason.more} more)` : '')
  }
}

/** A document's completed run, as `ran()` takes it. */
export function documentRun(
  file: string,
  startedAt: number,
  inputHash: string,
  outputHash: string,
  result: DocumentResult,
  providerOf: (kind: string) => string,
): CompletedRun {
  const unparsed = result.jobs.length === 0 ? result.diagnostics.find((d) => d.severity === 'error' && d.code === 'insitu/document') : undefined
  return {
    type: 'document',
    file,
    startedAt,
    inputHash,
    outputHash,
    jobs: result.jobs.map((job) => ({
      id: job.id,
      kind: job.kind,
      line: job.line,
      target: job.target,
      provider: providerOf(job.kind),
      reused: (job as { reused?: boolean }).reused === true,
      error: job.error,
      dependencies: job.dependencies,
    })),
    dependencies: result.dependencies,
    diagnostics: result.diagnostics,
    error: unparsed?.message ?? null,
  }
}

/** A module transform's completed run (`result` a module's code, or the error it failed with). */
export function moduleRun(
  file: string,
  startedAt: number,
  inputHash: string,
  transform: string,
  result: { code: string; dependencies: readonly string[]; diagnostics: readonly Diagnostic[] } | { error: unknown },
  providerOf: (kind: string) => string,
  hashText: (text: string) => string,
): CompletedRun {
  const error = 'error' in result ? (result.error instanceof Error ? result.error.message : String(result.error)) : null
  return {
    type: 'module',
    file,
    startedAt,
    inputHash,
    outputHash: 'error' in result ? null : hashText(result.code),
    jobs: [
      {
        id: transform,
        kind: transform,
        line: 1,
        target: 'module',
        provider: providerOf(transform),
        reused: false,
        error,
        dependencies: 'error' in result ? [] : result.dependencies,
      },
    ],
    dependencies: 'error' in result ? [] : result.dependencies,
    diagnostics: 'error' in result ? [] : result.diagnostics,
    error,
  }
}
