/**
 * Sync or check every managed document of a project, and report it for people.
 *
 * Contract:
 * - `syncProject(engine, { write })` runs `syncDocument` on every managed document
 *   (`engine.index.documentPaths()`), at most `CONCURRENCY` at a time, and returns the documents
 *   that still exist, sorted by path (code point order), with counts: `stale` documents whose
 *   text is not current (with `write`: not current and not written), `written` documents, and
 *   `failed` documents (any error diagnostic). With `validate`, the project's validators run
 *   too (after the documents: they see the written files) and their diagnostics are in
 *   `validation`, errors counted in `validationErrors`.
 * - `formatSyncReport(report, mode)` is the text the command line prints (and `vite build`'s
 *   check mode fails with). check: per stale job `<path>:<line> region <id> is stale` (front
 *   matter: `<path>:<line> frontmatter <id> is stale`) followed by its diff indented by 4
 *   spaces; sync: `wrote <path>` per written document. Both then list every error and warning
 *   as `<path>:<line>: <severity>: <message>` and end with one summary line, where a document
 *   counts as current only when it is neither stale nor failed (issue #18: a failing region must
 *   not make its document look current): check `<n> of <m> documents stale (<j> stale jobs)[, <f>
 *   failed]`; nothing stale: `<m> documents current`, `<c> of <m> documents current, <f> failed`,
 *   or `<m> documents failed` when none is current; sync `wrote <w> of <m> documents[, <f>
 *   failed]`; validator errors and warnings are listed
 *   after the documents' (`<path>:<line>: …`, `validator: …` without a path) and the summary
 *   adds `, <e> validator errors`. Counts of one take the singular (`1 document current`).
 * - `writtenSummary(report)`: `wrote <w> of <m> documents` (`of 1 document`), the line the dev
 *   server and a build log after writing documents back.
 */
import type { InsituEngine } from '../engine/engine.js'
import type { Diagnostic } from '../protocol/schemas.js'
import type { SelfWrites } from './self-writes.js'
import { type DocumentSync, syncDocument } from './sync-document.js'

export interface ProjectSync {
  documents: DocumentSync[]
  /** Documents whose file is not current (after writing, when writing). */
  stale: number
  written: number
  failed: number
  /** Validator diagnostics (empty unless `validate`). */
  validation: Diagnostic[]
  validationErrors: number
}

/** Documents rendered at once (jobs within a document already run concurrently). */
const CONCURRENCY = 8

export async function syncProject(
  engine: InsituEngine,
  options: {
    write: boolean
    /** Run the validators too. @default false */
    validate?: boolean
    /** Told of each document as soon as it is synced. */
    onDocument?: (document: DocumentSync) => void
    /** Record each write in this ledger before it can be seen (see self-writes.ts). */
    selfWrites?: SelfWrites
    /** See `SyncOptions.settle`. @default 'now' */
    settle?: 'now' | 'later'
    /** See `SyncOptions.explain`. @default false */
    explain?: boolean
    /** Runs each document's sync (the live sync chains it with the document's other writes). @default runs it */
    around?: (relPath: string, sync: () => Promise<DocumentSync | null>) => Promise<DocumentSync | null>
  },
): Promise<ProjectSync> {
  const paths = engine.index.documentPaths()
  const documents: DocumentSync[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      const relPath = paths[next++]!
      const run = () =>
        syncDocument(engine, relPath, {
          write: options.write,
          selfWrites: options.selfWrites && { ledger: options.selfWrites, depth: 0 },
          settle: options.settle,
          explain: options.explain,
        })
      const sync = await (options.around ? options.around(relPath, run) : run())
      if (!sync) continue
      options.onDocument?.(sync)
      documents.push(sync)
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, paths.length) }, worker))
  documents.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const validation = options.validate ? await engine.host.validate() : []
  return {
    validation,
    validationErrors: validation.filter((d) => d.severity === 'error').length,
    documents,
    stale: documents.filter((d) => d.text !== d.source && !d.written).length,
    written: documents.filter((d) => d.written).length,
    failed: documents.filter((d) => d.failed).length,
  }
}

export function formatSyncReport(report: ProjectSync, mode: 'check' | 'sync'): string {
  const lines: string[] = []
  for (const document of report.documents) {
    if (mode === 'check') {
      for (const job of document.stale) {
        const state = job.state === 'hand-edited' ? `was edited by hand: ${job.why}` : 'is stale'
        lines.push(`${document.path}:${job.line} ${job.target} ${job.id} ${state}`)
        for (const line of job.diff.split('\n')) lines.push(`    ${line}`)
      }
    } else if (document.written) {
      lines.push(`wrote ${document.path}`)
    }
  }
  for (const document of report.documents) {
    for (const diagnostic of document.diagnostics) {
      if (diagnostic.severity !== 'info') lines.push(describeDiagnostic(document.path, diagnostic))
    }
  }
  for (const diagnostic of report.validation) {
    if (diagnostic.severity !== 'info') lines.push(describeDiagnostic('validator', diagnostic))
  }
  const total = report.documents.length
  const invalid = report.validationErrors > 0 ? `, ${plural(report.validationErrors, 'validator error')}` : ''
  const failed = `${report.failed > 0 ? `, ${report.failed} failed` : ''}${invalid}`
  if (mode === 'check') {
    const jobs = report.documents.reduce((n, d) => n + d.stale.filter((job) => job.state !== 'hand-edited').length, 0)
    const handEdited = report.documents.reduce((n, d) => n + d.stale.filter((job) => job.state === 'hand-edited').length, 0)
    const counted = [jobs > 0 || handEdited === 0 ? plural(jobs, 'stale job') : null, handEdited > 0 ? `${handEdited} edited by hand` : null].filter((part) => part !== null).join(', ')
    const current = report.documents.filter((d) => !d.failed && d.text === d.source).length
    lines.push(
      report.stale > 0
        ? `${report.stale} of ${plural(total, 'document')} stale (${counted})${failed}`
        : report.failed === 0
          ? `${plural(total, 'document')} current${invalid}`
          : current === 0
            ? `${plural(total, 'document')} failed${invalid}`
            : `${current} of ${plural(total, 'document')} current${failed}`,
    )
  } else {
    const left = report.stale > 0 ? `, ${report.stale} not written` : ''
    lines.push(`${writtenSummary(report)}${left}${failed}`)
  }
  return `${lines.join('\n')}\n`
}

/** `docs/a.md:5: error: transform explode failed in boom: …` (line omitted when unknown). */
export function writtenSummary(report: ProjectSync): string {
  return `wrote ${report.written} of ${plural(report.documents.length, 'document')}`
}

export function describeDiagnostic(documentPath: string, diagnostic: Diagnostic): string {
  const where = `${diagnostic.path ?? documentPath}${diagnostic.line !== null ? `:${diagnostic.line}` : ''}`
  return `${where}: ${diagnostic.severity}: ${diagnostic.message}`
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}
