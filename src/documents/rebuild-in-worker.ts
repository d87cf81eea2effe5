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
 * - Not with `onDocumentRead` (a function cannot cross to the thread): null at once.
 * - Aborting `signal` ends the thread and rejects with the signal's reason.
 * - The program: `dist/index-worker.js` from the published bundle; from source (tests,
 *   benchmarks) a bundle of src/index-worker.ts (sandbox/source-child.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { sourceChild } from '../sandbox/source-child.js'
import type { IndexWorkerData, IndexWorkerReply } from '../index-worker.js'
import { DocumentIndex, type DocumentIndexOptions } from './document-index.js'

export async function rebuildInWorker(options: DocumentIndexOptions, run: { persist: boolean; signal?: AbortSignal }): Promise<DocumentIndex | null> {
  if (options.onDocumentRead) return null
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

/** `dist/index-worker.js` when bundled; from source, a bundle made once per process; null when missing. */
function workerProgram(): string | null {
  const here = fileURLToPath(import.meta.url)
  if (here.endsWith('.ts')) {
    try {
      return sourceChild(path.resolve(path.dirname(here), '../index-worker.ts'))
    } catch {
      return null
    }
  }
  for (let folder = path.dirname(here); ; folder = path.dirname(folder)) {
    const file = path.join(folder, 'index-worker.js')
    if (fs.existsSync(file)) return file
    if (path.dirname(folder) === folder) return null
  }
}
