/**
 * Generations: which inputs produced each region body the engine generated, so that a body
 * found in a document can be traced back to the run that wrote it (issue #37). A body that
 * matches a generation whose inputs have changed since is stale, and the changed inputs say
 * why; a body that matches none, in a region whose inputs have not changed since insitu last
 * generated it, was edited by hand (region-states.ts decides).
 *
 * Contract:
 * - `record(document, job, generation)` keeps a generation of region `job` (`regionJob(id)`:
 *   `region:<id>`) of a document (project-relative path), keyed by the hash of its body as
 *   written (`bodyHash(content)`: `regionBodyText` with LF line ends). The newest
 *   `KEPT_PER_REGION` distinct bodies per region are kept, newest first; recording a body again
 *   moves it first with its new inputs.
 * - With a store (the job store, job-store.ts), a document's generations are one entry under
 *   the key `generations\0<document>` (never a job memo key: those are hashes), written at the
 *   next `flush()` merged with what the store holds then (another process's generations of the
 *   same document are kept, newest first). Reads merge the store's entry (as the store sees the
 *   file: it looks again at most once a second) with this process's. Generations are what an
 *   engine saw; they are never validated: they explain, they are never served.
 * - `find(document, job, bodyText)`: the generation whose body is `bodyText` (CRLF or LF), of
 *   that region, else of another region of the document (a region without an `id` changes its
 *   id when its options change: `job` says whose it was), or undefined.
 *   `latestBefore(document, job, time)`: the newest generation of the region made before `time`.
 *   `latest(document, job)`: the newest.
 * - Row summaries: a generation keeps, per query its job ran, each row's `path` (when the row
 *   has a string `path`) and fingerprint, for at most `MAX_SUMMARIZED_ROWS` rows (more: null):
 *   `changedRows` names the rows that differ now (`tasks/b.md`, `row 3`). Summaries cost about
 *   5 ms per 1,000 rows, so they are made only when asked for (`summarized(generation)`: a
 *   hover, a stale region's why) or when the store is written (`flush()`, before the store's own
 *   flush): until then `record` keeps the rows themselves, for the newest generation of each
 *   region only and for at most `MAX_UNSUMMARIZED` generations in all (the oldest give theirs
 *   up). Rows a template changed since (Jinja's `append`, `sort` mutate lists in place) no
 *   longer match their query's hash and are not summarized. A generation whose rows are not
 *   summarized can say that its query's rows changed, not which.
 */
import type { Location } from '../protocol/schemas.js'
import { regionBodyText } from '../documents/regions.js'
import { fingerprintValue, hashText } from './dependency-fingerprints.js'
import type { JobStore } from './job-store.js'

/** Distinct bodies kept per region. */
export const KEPT_PER_REGION = 16
/** A query with more rows is summarized by its hash alone. */
export const MAX_SUMMARIZED_ROWS = 2_000
/** Generations holding rows not summarized yet, at most (in one process). */
export const MAX_UNSUMMARIZED = 64
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
  /** The fingerprint of each dependency the engine could fingerprint. */
  fingerprints: [string, string][]
  queries: GeneratedQuery[]
  /** Extensions the job involved, with their program fingerprints. */
  extensions: { name: string; program: string }[]
}

const STORE_PREFIX = 'generations\u0000'

/** A document's generations by region (`region:<id>`), newest first. */
type DocumentGenerations = Record<string, Generation[]>

/** The job name of a region: what `record` and `find` take. */
export function regionJob(id: string): string {
  return `region:${id}`
}

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
  /** What this process recorded, by document. */
  private readonly memory = new Map<string, DocumentGenerations>()
  /** Rows not summarized yet, by generation, oldest first (null: too many rows to summarize). */
  private readonly unsummarized = new Map<Generation, (unknown[] | null)[]>()
  /** Documents recorded since the last flush. */
  private readonly pending = new Set<string>()

  constructor(private readonly store: JobStore | null) {}

  /** `rawRows[i]`: the rows query `i` returned (summarized later, see the header). */
  record(document: string, job: string, generation: Generation, rawRows?: readonly unknown[]): void {
    const mine = this.memory.get(document) ?? {}
    const before = mine[job] ?? []
    // Only the newest generation of a region keeps its rows: the others are summarized now or never.
    for (const older of before) this.unsummarized.delete(older)
    mine[job] = newestFirst([generation, ...before])
    this.memory.set(document, mine)
    if (rawRows) {
      this.unsummarized.set(generation, rawRows.map((rows) => (Array.isArray(rows) && rows.length <= MAX_SUMMARIZED_ROWS ? rows : null)))
      for (const oldest of this.unsummarized.keys()) {
        if (this.unsummarized.size <= MAX_UNSUMMARIZED) break
        this.unsummarized.delete(oldest)
      }
    }
    if (this.store) this.pending.add(document)
  }

  /** The generation's queries with their rows summarized (made now when they were not yet). */
  summarized(generation: Generation): GeneratedQuery[] {
    const raw = this.unsummarized.get(generation)
    if (raw) {
      this.unsummarized.delete(generation)
      generation.queries = generation.queries.map((query, i) => {
        const rows = raw[i]
        // Rows a template changed in place since are not what the query returned.
        return rows === null || rows === undefined || fingerprintValue(rows) !== query.hash ? query : { ...query, rows: summarizeRows(rows) }
      })
    }
    return generation.queries
  }

  /** Hand what was recorded since the last flush to the store (summarized, merged with what it holds), before it writes. */
  flush(): void {
    for (const document of this.pending) {
      const merged = this.all(document)
      for (const list of Object.values(merged)) for (const generation of list) this.summarized(generation)
      this.store?.put(storeKey(document), merged)
    }
    this.pending.clear()
  }

  find(document: string, job: string, bodyText: string): { job: string; generation: Generation } | undefined {
    const hash = hashText(bodyText.replace(/\r\n/g, '\n'))
    const all = this.all(document)
    const own = all[job]?.find((g) => g.bodyHash === hash)
    if (own) return { job, generation: own }
    for (const [other, list] of Object.entries(all)) {
      const generation = list.find((g) => g.bodyHash === hash)
      if (generation) return { job: other, generation }
    }
    return undefined
  }

  /** The newest generation of the region made before `time` (epoch ms), or undefined. */
  latestBefore(document: string, job: string, time: number): Generation | undefined {
    return this.all(document)[job]?.find((generation) => generation.at < time)
  }

  /** The newest generation of a region, or undefined. */
  latest(document: string, job: string): Generation | undefined {
    return this.all(document)[job]?.[0]
  }

  /** The store's generations of a document merged with this process's (this process's objects win). */
  private all(document: string): DocumentGenerations {
    const stored = this.store?.get(storeKey(document)) as DocumentGenerations | undefined
    const mine = this.memory.get(document)
    if (!stored || typeof stored !== 'object') return mine ?? {}
    if (!mine) return stored
    const merged: DocumentGenerations = { ...stored }
    for (const [job, list] of Object.entries(mine)) merged[job] = newestFirst([...list, ...(Array.isArray(stored[job]) ? stored[job] : [])])
    return merged
  }
}

/** Distinct bodies, newest first (the first of equal bodies wins), at most `KEPT_PER_REGION`. */
function newestFirst(generations: readonly Generation[]): Generation[] {
  const seen = new Set<string>()
  return [...generations]
    .sort((a, b) => b.at - a.at)
    .filter((generation) => !seen.has(generation.bodyHash) && seen.add(generation.bodyHash))
    .slice(0, KEPT_PER_REGION)
}

function storeKey(document: string): string {
  return `${STORE_PREFIX}${document}`
}
