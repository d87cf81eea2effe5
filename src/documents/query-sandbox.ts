/**
 * The project's SQL queries, run in the sandbox's processes (src/sandbox/process-pool.ts) on
 * copies of the document index (index-copy.ts), so that a query that never ends (a recursive CTE
 * without an end, a join of every document with every document three times) is stopped when its
 * time is up and never holds the process that serves pages (issue #34).
 *
 * Contract:
 * - `queryHooks(journal, options)`: the pool hooks that keep each process's copy current: a
 *   process gets its copy from the index's bytes (`journal.snapshot()`) before its first query
 *   (one that only renders templates never gets one), the writes since before each task
 *   (`index-apply`), and is no longer used once the journal dropped writes it had not received
 *   (index-journal.ts: it ends once its own tasks are answered; a fresh one follows). The
 *   journal's log is kept only as far back as the process furthest behind needs; with no copy
 *   left it stops following.
 * - `runQuery(pool, sql, params, timeoutMs)` resolves to the rows of a read-only query on a copy
 *   of the index as it is when it is called (the copies replay the index's writes in order, so a
 *   query sent after a write sees it), read as the index reads them, or rejects with SQLite's
 *   error (message and `code`), a `QueryTimeoutError` once it has run `timeoutMs` (its process is
 *   killed), or a `QueryTooLargeError` when its rows would hold more than `maxRowBytes`.
 */
import { describeDuration, type PoolHooks, type ProcessPool, type SandboxProcess } from '../sandbox/process-pool.js'
import { fromSandboxError } from '../sandbox/task-errors.js'
import type { IndexCopySetup, QueryTask } from './index-copy.js'
import type { IndexJournal } from './index-journal.js'
import { formatSize } from './input-limits.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'

/** A query ran out of its time (the caller names the model: sql-models.ts). */
export class QueryTimeoutError extends Error {
  readonly timedOut = true
  constructor(readonly timeoutMs: number) {
    super(`the query ran longer than ${describeDuration(timeoutMs)}`)
  }
}

/** A query's rows would hold more than a sandbox process lets one query hold. */
export class QueryTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the query returned more than ${formatSize(maxBytes)} of rows`)
  }
}

/** The most a query's rows may hold (texts and blobs by length). */
export const MAX_ROW_BYTES = 64 * 1024 * 1024
/** What SQLite in a process may allocate beyond twice the index's size. */
const HEAP_HEADROOM = 256 * 1024 * 1024

/** The journal position a process's copy has received. */
interface CopyState {
  position: number
}

export function queryHooks(journal: IndexJournal, options: { maxRowBytes?: number } = {}): PoolHooks {
  const copies = new Set<SandboxProcess>()
  const positionOf = (process: SandboxProcess) => (process.state as CopyState | undefined)?.position ?? -1
  const forgetApplied = () => {
    if (copies.size === 0) journal.reset()
    else journal.forget(Math.min(...[...copies].map(positionOf)))
  }
  return {
    catchUp(process, payload) {
      const state = process.state as CopyState | undefined
      if (state === undefined) {
        // A process gets its copy at its first query (one that only renders templates never does).
        if ((payload as { kind?: unknown } | null)?.kind !== 'query') return []
        const { bytes, position } = journal.snapshot()
        process.state = { position } satisfies CopyState
        copies.add(process)
        const init: IndexCopySetup = { kind: 'index-init', bytes, maxRowBytes: options.maxRowBytes ?? MAX_ROW_BYTES, heapLimit: 2 * bytes.length + HEAP_HEADROOM }
        return [init]
      }
      if (journal.end <= state.position) return []
      const apply: IndexCopySetup = { kind: 'index-apply', entries: journal.since(state.position) }
      state.position = journal.end
      forgetApplied()
      return [apply]
    },
    // A process without a copy yet can take a query (it gets one); one behind the journal cannot.
    usable: (process) => process.state === undefined || positionOf(process) >= journal.start,
    ended(process) {
      if (copies.delete(process)) forgetApplied()
    },
  }
}

export async function runQuery(pool: ProcessPool, sql: string, params: Record<string, unknown>, timeoutMs: number): Promise<Record<string, unknown>[]> {
  const task: QueryTask = { kind: 'query', sql, params: toCloneable(params) }
  try {
    return fromCloneable(await pool.run(task, { timeoutMs, timedOut: () => new QueryTimeoutError(timeoutMs) })) as Record<string, unknown>[]
  } catch (error) {
    // SQLite's errors keep their code (sql-models.ts locates them by it).
    const rebuilt = fromSandboxError(error) as { tooLarge?: unknown }
    if (typeof rebuilt.tooLarge === 'number') throw new QueryTooLargeError(rebuilt.tooLarge)
    throw rebuilt
  }
}

