/**
 * Generations: which inputs produced each region body the engine generated, so that a body
 * found in a document can be traced back to the run that wrote it (issue #37). A body that
 * matches a generation whose inputs have changed since is stale, and the changed inputs say
 * why; a body that matches no generation of its region while one is known was edited by hand.
 *
 * Contract:
 * - `record(document, job, generation)` keeps a generation of region `job` (`region:<id>`) of
 *   a document (project-relative path), keyed by the hash of its body as written
 *   (`bodyHash(content)`: `regionBodyText` with LF line ends). The newest `KEPT` distinct bodies
 *   per region are kept, newest first; recording a body again moves it first with its new inputs.
 * - With a store (the job store, job-store.ts), each region's list is one entry under the key
 *   `generations\0<document>\0<job>` (never a job memo key: those are hashes), written at the
 *   store's next flush; `find` and `knownBefore` read the store for regions not recorded in this
 *   process. Generations are what the engine saw; they are never validated: they explain, they
 *   are never served.
 * - `find(document, job, bodyText)`: the generation whose body is `bodyText` (CRLF or LF), or
 *   undefined. `knownBefore(document, job, time)`: whether a generation of that region recorded
 *   before `time` is known (a body written before any known generation may come from another
 *   tool; one that differs from a generation made before it was written was edited by hand).
 * - Row summaries: a generation keeps, per query its job ran, each row's `path` (when the row
 *   has a string `path`) and fingerprint, for at most `MAX_SUMMARIZED_ROWS` rows (more: null):
 *   `changedRows` names the rows that differ now (`tasks/b.md`, `row 3`). Summaries cost about
 *   5 ms per 1,000 rows, so they are made only when asked for (`summarized(generation)`: a
 *   hover, a stale region's why) or when the store is written (`flush()`, before the store's own
 *   flush): until then `record` keeps the rows themselves (`rawRows`), never more than
 *   `MAX_SUMMARIZED_ROWS` per query, and only for the generations kept.
 */
import type { Location } from '../protocol/schemas.js'
import { regionBodyText } from '../documents/regions.js'
import { fingerprintValue, hashText } from './dependency-fingerprints.js'
import type { JobStore } from './job-store.js'

/** Distinct bodies kept per region. */
export const KEPT = 4
/** A query with more rows is summarized by its hash alone. */
export const MAX_SUMMARIZED_ROWS = 2_000

/** One row as a generation remembers it: its `path` (or null) and its fingerprint. */
export type RowSummary = [label: string | null, fingerprint: string]

export interface GeneratedQuery {
  sql: string
  params: Record<string, unknown>
  hash: string
  /** The rows it returned, summarized (null: too many, or not known). */
  rows: RowSummary[] | null
}

export interface Generation {
  bodyHash: string
  /** Epoch milliseconds of the run that generated it. */
  at: number
  /** Canonical hash of the region's options then (another hash: its options changed since). */
  optionsHash: string
  location: Location
  /** Every dependency the job reported. */
  dependencies: string[]
  /** The fingerprint of each dependency the engine could fingerprint. */
  fingerprints: [string, string][]
  queries: GeneratedQuery[]
  /** Extensions the job involved, with their program fingerprints. */
  extensions: { name: string; program: string }[]
}

const STORE_PREFIX = 'generations\u0000'

export function bodyHash(content: string | null): string {
  return hashText(regionBodyText(content ?? '', '\n'))
}

export function summarizeRows(rows: unknown): RowSummary[] | null {
  if (!Array.isArray(rows) || rows.length > MAX_SUMMARIZED_ROWS) return null
  return rows.map((row) => {
    const label = row !== null && typeof row === 'object' && typeof (row as { path?: unknown }).path === 'string' ? (row as { path: string }).path : null
    return [label, fingerprintValue(row)]
  })
}

/** The rows of `now` that are not in `then` and those of `then` gone from `now`, named by `path` (else `row <n>`). */
export function changedRows(then: readonly RowSummary[], now: readonly RowSummary[]): string[] {
  const before = new Set(then.map(([, fingerprint]) => fingerprint))
  const after = new Set(now.map(([, fingerprint]) => fingerprint))
  const names = new Set<string>()
  now.forEach(([label, fingerprint], i) => {
    if (!before.has(fingerprint)) names.add(label ?? `row ${i + 1}`)
  })
  then.forEach(([label, fingerprint], i) => {
    if (!after.has(fingerprint)) names.add(label ?? `row ${i + 1} (then)`)
  })
  return [...names]
}

export class Generations {
  private readonly memory = new Map<string, Generation[]>()
  /** The rows of each query of a generation not summarized yet (by query index). */
  private readonly raw = new WeakMap<Generation, unknown[]>()
  /** Keys recorded since the last flush. */
  private readonly pending = new Set<string>()

  constructor(private readonly store: JobStore | null) {}

  /** `rawRows[i]`: the rows query `i` returned (its summary is made later, see the header). */
  record(document: string, job: string, generation: Generation, rawRows?: readonly unknown[]): void {
    const key = storeKey(document, job)
    const kept = [generation, ...this.list(key).filter((g) => g.bodyHash !== generation.bodyHash)].slice(0, KEPT)
    if (rawRows) this.raw.set(generation, rawRows.map((rows) => (Array.isArray(rows) && rows.length <= MAX_SUMMARIZED_ROWS ? rows : null)))
    this.memory.set(key, kept)
    if (this.store) this.pending.add(key)
  }

  /** The generation's queries with their rows summarized (made now when they were not yet). */
  summarized(generation: Generation): GeneratedQuery[] {
    const raw = this.raw.get(generation)
    if (raw) {
      generation.queries = generation.queries.map((query, i) => ({ ...query, rows: raw[i] === null || raw[i] === undefined ? query.rows : summarizeRows(raw[i]) }))
      this.raw.delete(generation)
    }
    return generation.queries
  }

  /** Hand what was recorded since the last flush to the store (summarized), before it writes. */
  flush(): void {
    for (const key of this.pending) {
      const kept = this.memory.get(key)
      if (!kept) continue
      for (const generation of kept) this.summarized(generation)
      this.store?.put(key, kept)
    }
    this.pending.clear()
  }

  find(document: string, job: string, bodyText: string): Generation | undefined {
    const hash = hashText(bodyText.replace(/\r\n/g, '\n'))
    return this.list(storeKey(document, job)).find((g) => g.bodyHash === hash)
  }

  /** Whether a generation of the region recorded before `time` (epoch ms) is known. */
  knownBefore(document: string, job: string, time: number): boolean {
    return this.list(storeKey(document, job)).some((generation) => generation.at < time)
  }

  /** The newest generation of a region, or undefined. */
  latest(document: string, job: string): Generation | undefined {
    return this.list(storeKey(document, job))[0]
  }

  private list(key: string): Generation[] {
    let kept = this.memory.get(key)
    if (kept === undefined) {
      const stored = this.store?.get(key)
      kept = Array.isArray(stored) ? (stored as Generation[]) : []
      this.memory.set(key, kept)
    }
    return kept
  }
}

function storeKey(document: string, job: string): string {
  return `${STORE_PREFIX}${document}\u0000${job}`
}
