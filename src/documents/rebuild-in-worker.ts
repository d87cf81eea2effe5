/**
 * A document index whose first full scan runs in a worker thread (src/index-worker.ts): what
 * `new DocumentIndex(options)` then `rebuild({ persist })` do here, done on another core while
 * this thread goes on (a dev server binds its port and its watcher scans the project).
 *
 * Contract:
 * - `rebuildInWorker(options, { persist, signal })` resolves to an index holding the rows that
 *   work gives (handed over: `DocumentIndexOptions.handedOver`; its `stateId` that of the
 *   snapshot written, the warnings the scan gave told through `options.warn`, once, as it
 *   would have told them), or to null when the thread did not give them: its program missing,
 *   the thread failing to start or ending early, anything thrown there (an unreadable folder,
 *   SQLite's native part not loading). The caller then does the work itself, in this thread,
 *   and meets the same error, reported as it always was.
 * - Not with `onDocumentRead` (a function cannot cross to the thread), nor for a project whose
 *   scan costs less than starting a thread (`worthAThread`: a snapshot under `SNAPSHOT_BYTES`,
 *   or, without one, fewer than `SCAN_ENTRIES` entries in a look at its first folders): null at
 *   once.
 * - Aborting `signal` ends the thread and rejects with the signal's reason.
 * - The program: `dist/index-worker.js` from the published bundle; from source (tests,
 *   benchmarks) a bundle of src/index-worker.ts (sandbox/source-child.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { childProgram } from '../sandbox/child-programs.js'
import type { IndexWorkerData, IndexWorkerReply } from '../index-worker.js'
import { DocumentIndex, type DocumentIndexOptions } from './document-index.js'
import { createPathMatcher } from './project-files.js'

/**
 * A snapshot this large (about 4,000 documents) is worth a thread: the scan that reconciles it
 * costs about 20 µs a document here, a thread about 80 ms to start and load its program.
 */
export const SNAPSHOT_BYTES = 3 * 1024 * 1024
/** Without a snapshot (about 45 µs a document to read and parse), this many entries are. */
export const SCAN_ENTRIES = 2000
/** The most folders `worthAThread` lists (the rest are estimated from their average). */
const LOOK_FOLDERS = 64

export async function rebuildInWorker(
  options: DocumentIndexOptions,
  run: { persist: boolean; signal?: AbortSignal; /** Whatever the project's size (the caller asked `worthAThread` already; tests). */ always?: boolean },
): Promise<DocumentIndex | null> {
  if (options.onDocumentRead || !(run.always || worthAThread(options))) return null
  run.signal?.throwIfAborted()
  const program = workerProgram()
  if (program === null) return null
  const { warn, onDocumentRead, handedOver, sandbox, ...cloneable } = options
  const data: IndexWorkerData = { options: cloneable, persist: run.persist }
  const reply = await new Promise<IndexWorkerReply | null>((resolve, reject) => {
    let worker: Worker
    try {
      worker = new Worker(program, { workerData: data })
    } catch {
      resolve(null)
      return
    }
    const onAbort = () => {
      void worker.terminate()
      reject(run.signal?.reason)
    }
    run.signal?.addEventListener('abort', onAbort, { once: true })
    const settle = (value: IndexWorkerReply | null) => {
      run.signal?.removeEventListener('abort', onAbort)
      resolve(value)
    }
    worker.once('message', (message: IndexWorkerReply) => settle(message))
    worker.once('error', () => settle(null))
    worker.once('exit', () => settle(null))
  })
  if (reply === null || 'failed' in reply) return null
  const index = new DocumentIndex({ ...options, handedOver: reply.handover })
  for (const message of reply.handover.warned) warn?.(message)
  return index
}

/** The worker's program (child-programs.ts); null when missing. */
function workerProgram(): string | null {
  try {
    return childProgram('index-worker')
  } catch {
    return null
  }
}

/**
 * Whether the first scan is worth a thread: a snapshot of `SNAPSHOT_BYTES` or more, or, without
 * one, a project of about `SCAN_ENTRIES` entries or more (folders listed breadth first, excluded
 * folders and symlinks not looked into, at most `LOOK_FOLDERS` of them: the folders left are
 * counted at the average of those listed). A look that fails says no (the scan here meets the error).
 */
export function worthAThread(options: DocumentIndexOptions): boolean {
  if (options.statePath !== undefined) {
    try {
      return fs.statSync(options.statePath).size >= SNAPSHOT_BYTES
    } catch {
      // no snapshot: look at the project
    }
  }
  const excluded = createPathMatcher(options.exclude)
  const pending = ['']
  let entries = 0
  let listed = 0
  try {
    while (pending.length > 0 && listed < LOOK_FOLDERS) {
      const folder = pending.shift() as string
      listed += 1
      for (const dirent of fs.readdirSync(path.join(options.root, folder), { withFileTypes: true })) {
        // Folders only are matched (an excluded one, node_modules say, is not looked into):
        // matching each file would cost more than the look saves.
        if (dirent.isDirectory()) {
          const relPath = folder === '' ? dirent.name : `${folder}/${dirent.name}`
          if (excluded(relPath, true)) continue
          pending.push(relPath)
        }
        entries += 1
        if (entries >= SCAN_ENTRIES) return true
      }
    }
  } catch {
    return false
  }
  return entries + pending.length * (entries / listed) >= SCAN_ENTRIES
}