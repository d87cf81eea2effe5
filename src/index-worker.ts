/**
 * The document index's first full scan in a worker thread (src/documents/rebuild-in-worker.ts
 * starts it): a dev server's main thread meanwhile binds its port and scans the project for
 * its watcher, on the machine's other core.
 *
 * Contract: `workerData` is `{ options, persist }` (`DocumentIndexOptions` without functions);
 * the thread makes `new DocumentIndex(options)`, `rebuild({ persist })` (the snapshot written
 * from here), and posts `{ handover }` (`DocumentIndex.handOver()`: the rows, the snapshot state,
 * the warnings given), or `{ failed }` with the message of anything thrown: the caller then
 * does the work itself and meets the error as it always did.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { DocumentIndex, type DocumentIndexOptions, type IndexHandover } from './documents/document-index.js'

export type IndexWorkerData = { options: Omit<DocumentIndexOptions, 'warn' | 'onDocumentRead' | 'handedOver' | 'sandbox'>; persist: boolean }
export type IndexWorkerReply = { handover: IndexHandover } | { failed: string }

const { options, persist } = workerData as IndexWorkerData
let reply: IndexWorkerReply
try {
  const index = new DocumentIndex(options)
  index.rebuild({ persist })
  reply = { handover: index.handOver() }
} catch (error) {
  reply = { failed: error instanceof Error ? error.message : String(error) }
}
parentPort?.postMessage(reply)
