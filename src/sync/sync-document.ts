/**
 * Sync one managed document with its regenerated text: find its stale jobs, optionally write it back.
 *
 * Contract:
 * - `renderText(engine, file, text, query?)` renders a document's text as the plugin serves it: a
 *   leading BOM (U+FEFF) is taken off for rendering (front matter is still recognized) and put
 *   back on the result; line endings are the engine's (a CRLF document stays CRLF). Its `edits`
 *   are offsets in `text` (BOM included), ready for a source map; `result` is the engine's.
 * - `staleJobs(source, result)` lists the jobs whose regenerated output differs from `source`
 *   (BOM-free): a region whose body changes, each with a unified diff of its old → new body; a
 *   front-matter materialization whose value would change the front matter if written alone,
 *   with the diff of the front-matter lines as they are and as they would be written. It is empty
 *   exactly when the document text does not change (a front-matter edit that no single value
 *   explains is charged to the first successful materialization).
 * - With `explain`, each stale region says whether its body is stale (and why: which inputs
 *   changed since it was generated) or was edited by hand (region-states.ts).
 * - `syncDocument(engine, file, { write })` reads the file from disk and renders it. Returns null
 *   when the file does not exist. A file that is not a document's text within the limits of
 *   input-limits.ts is never rendered nor written, but reported as an error diagnostic at its
 *   line: not valid UTF-8 (decoding it would lose bytes: `not valid UTF-8 at line 3 (the byte
 *   at offset 57 is 0xff); not rendered, not written`), holding a NUL byte, or larger than
 *   `MAX_DOCUMENT_BYTES` (told by its size before it is read: `document is 100 MiB (…), over the
 *   limit of 16 MiB; not rendered, not written`). With `write`, a changed text goes
 *   through write-back.ts's `replaceDocument`, recorded in `selfWrites` before it can be seen:
 *   on 'conflict' (the file was edited since it was read, or an editor's save raced the write
 *   and won) it reads and renders again, up to `MAX_CONFLICTS` times, then gives up with a
 *   warning and writes nothing;
 *   on 'missing' (deleted meanwhile) it returns null; a write error (EACCES, EROFS…) becomes an
 *   error diagnostic `cannot write <path>: <reason>` at the document. Nothing is ever lost.
 *   A written document's diagnostics name lines of the text written, which the file now holds
 *   (render-document.ts `outputLine`: a region below a regenerated body moves with it).
 */
import path from 'node:path'
import { materializationJobs, splitFrontMatter, writeGeneratedValues } from '../documents/frontmatter.js'
import { documentBytesProblem, documentTooLargeMessage, readBounded } from '../documents/input-limits.js'
import { lineEndingOf, regionBodyText, scanRegions } from '../documents/regions.js'
import type { InsituEngine } from '../engine/engine.js'
import { type DocumentResult, outputLine, type TextEdit } from '../engine/render-document.js'
import { describeRegionState } from '../engine/region-states.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { toPosixPath } from '../host/config.js'
import { diskState, type SelfWrites } from './self-writes.js'
import { unifiedDiff } from './unified-diff.js'
import { replaceDocument, type WrittenFile } from './write-back.js'

export interface StaleJob {
  id: string
  kind: string
  line: number
  target: 'region' | 'frontmatter'
  /** Unified diff lines of the job's old → new output, joined with `\n` (capped, see unified-diff.ts). */
  diff: string
  /**
   * With `explain`: `hand-edited` for a region whose body no generation of it wrote, with
   * `why` the sentence of region-states.ts (a stale one: which inputs changed since).
   */
  state?: 'stale' | 'hand-edited'
  why?: string
}

export interface DocumentSync {
  /** Project-relative POSIX path. */
  path: string
  /** The regenerated text, as the plugin's transform serves it (BOM and line endings kept). */
  text: string
  /** The file text it was rendered from. */
  source: string
  /** Jobs whose regenerated output differs from the file (empty: the file is current). */
  stale: StaleJob[]
  written: boolean
  /** A write to settle (`settle: 'later'`): its replaced inode is still held, see write-back.ts. */
  writtenFile?: WrittenFile
  /** Every diagnostic of the render (errors of failed jobs included) and of the write. */
  diagnostics: Diagnostic[]
  /** Whether any diagnostic is an error. */
  failed: boolean
  dependencies: string[]
}

const BOM = '\uFEFF'

/** How many times a document edited under our feet is rendered again before giving up. */
export const MAX_CONFLICTS = 5

export async function renderText(
  engine: InsituEngine,
  file: string,
  text: string,
  query = '',
  options: { prefetch?: boolean; lastGood?: boolean } = {},
): Promise<{ result: DocumentResult; text: string; edits: TextEdit[] }> {
  if (!text.startsWith(BOM)) {
    const result = await engine.renderDocument(file, text, query, options)
    return { result, text: result.text, edits: result.edits }
  }
  const result = await engine.renderDocument(file, text.slice(BOM.length), query, options)
  const edits = result.edits.map((edit) => ({ ...edit, start: edit.start + BOM.length, end: edit.end + BOM.length }))
  return { result, text: BOM + result.text, edits }
}

export interface SyncOptions {
  write: boolean
  /** Render as this module id's query (the engine's owner). @default '' */
  query?: string
  /** Record each write in this ledger (before it can be seen on disk), at this write-chain depth. */
  selfWrites?: { ledger: SelfWrites; depth: number }
  /**
   * 'now': each write is settled at once (a save that raced it is restored, and the document
   * rendered again); 'later': the caller settles `DocumentSync.writtenFile` (the live sync, after
   * its grace period). @default 'now'
   */
  settle?: 'now' | 'later'
  /** Tell each stale region's state and why (region-states.ts: `check`'s report). @default false */
  explain?: boolean
}

export async function syncDocument(engine: InsituEngine, file: string, options: SyncOptions): Promise<DocumentSync | null> {
  const absolute = path.resolve(engine.root, file)
  const relPath = engine.relativePath(absolute)
  if (relPath === null) throw new Error(`not inside the insitu project ${engine.root}: ${file}`)
  for (let conflicts = 0; ; conflicts++) {
    const readAt = Date.now()
    let bytes: Buffer | number
    try {
      bytes = readBounded(absolute) // synchronous: an update waits on no other work (live-sync.ts readState)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return null
      return unreadable(relPath, `cannot read ${relPath}: ${(error as Error).message}`, null)
    }
    if (typeof bytes === 'number') return unreadable(relPath, `${documentTooLargeMessage(bytes)}; not rendered, not written`, 1)
    const problem = documentBytesProblem(bytes)
    const source = bytes.toString('utf8')
    if (problem !== null) return unreadable(relPath, `${problem.message}; not rendered, not written`, problem.line, source)
    // Rendered ahead of any request (see InsituEngine.renderDocument's `prefetch`).
    // A failed job's last good body is for serving: a written file gets only this text's output.
    const rendered = await renderText(engine, absolute, source, options.query, { prefetch: true, lastGood: !options.write })
    const sync: DocumentSync = {
      path: relPath,
      text: rendered.text,
      source,
      stale: staleJobs(source.startsWith(BOM) ? source.slice(1) : source, rendered.result),
      written: false,
      diagnostics: [...rendered.result.diagnostics],
      failed: false,
      dependencies: rendered.result.dependencies,
    }
    sync.failed = sync.diagnostics.some((d) => d.severity === 'error')
    if (options.explain && sync.stale.some((job) => job.target === 'region')) await explainStale(engine, absolute, source, readAt, rendered.result, sync.stale)
    if (!options.write || sync.text === source) return sync
    const ledger = options.selfWrites
    const recordAs = toPosixPath(absolute)
    let result
    try {
      result = await replaceDocument(absolute, source, sync.text, {
        name: relPath,
        beforeReplace: (state) => {
          ledger?.ledger.wrote(recordAs, diskState(state, sync.text), ledger.depth)
          ledger?.ledger.replaced(recordAs, source)
        },
        replaceFailed: () => ledger?.ledger.withdraw(recordAs),
      })
    } catch (error) {
      sync.diagnostics.push({ severity: 'error', message: (error as Error).message, path: relPath, line: null, code: 'insitu/write' })
      sync.failed = true
      return sync
    }
    if (result.outcome === 'missing') return null
    if (result.outcome === 'unchanged') return sync
    if (result.outcome === 'written') {
      if ((options.settle ?? 'now') === 'later') {
        sync.written = true
        sync.writtenFile = result.written
        return withWrittenLines(sync, rendered.edits)
      }
      if (result.written.settle() === 'kept') {
        sync.written = true
        return withWrittenLines(sync, rendered.edits)
      }
      ledger?.ledger.withdraw(recordAs) // an editor's save won: render its text again
    }
    if (conflicts + 1 >= MAX_CONFLICTS) {
      const message = `${relPath} kept changing while it was being written (${MAX_CONFLICTS} times): not written`
      sync.diagnostics.push({ severity: 'warning', message, path: relPath, line: null, code: 'insitu/write' })
      return sync
    }
  }
}

/** Each stale region's state (stale or edited by hand) and why. */
async function explainStale(engine: InsituEngine, file: string, source: string, readAt: number, result: DocumentResult, stale: StaleJob[]): Promise<void> {
  const reports = await engine.regionStates(file, source.startsWith(BOM) ? source.slice(1) : source, result, () => readAt)
  for (const job of stale) {
    const report = reports.find((r) => r.region.line === job.line && r.region.id === job.id)
    if (!report || (report.state.kind !== 'stale' && report.state.kind !== 'hand-edited')) continue
    job.state = report.state.kind
    job.why = describeRegionState(job.id, report.state)
  }
}

/**
 * A written document's diagnostics at the lines of the text written (what the file and the
 * user's editor now hold): a region's begin below a regenerated body moves with it (issue #34).
 */
function withWrittenLines(sync: DocumentSync, edits: readonly TextEdit[]): DocumentSync {
  if (edits.length === 0) return sync
  sync.diagnostics = sync.diagnostics.map((d) => {
    if (d.path !== sync.path || typeof d.line !== 'number' || d.code === 'insitu/write') return d
    const delta = outputLine(sync.source, edits, d.line) - d.line
    return delta === 0 ? d : shiftDocumentLines(d, sync.path, delta)
  })
  return sync
}

/**
 * A document's diagnostic moved `delta` lines down (or up): its line, its `at` when that is in
 * the document, and the document lines its message names (`unterminated Insitu region at line
 * 14`, `invalid TOML in Insitu region at line 3: … (line 4, column 8)`: the region's begin and
 * header move together, nothing edited lies between them). A template's or model's line in a
 * message is another file's and stays.
 */
function shiftDocumentLines(diagnostic: Diagnostic & { at?: { path: string; line: number | null; column: number | null } }, relPath: string, delta: number): Diagnostic {
  const shift = (text: string) => String(Number(text) + delta)
  let message = diagnostic.message.replace(/\b((?:begins )?at line )(\d+)\b/, (_, words: string, line: string) => words + shift(line))
  if (/(?:^|: )invalid TOML in Insitu region at line /.test(diagnostic.message)) message = message.replace(/\(line (\d+), column /, (_, line: string) => `(line ${shift(line)}, column `)
  const at = diagnostic.at && diagnostic.at.path === relPath && diagnostic.at.line !== null ? { ...diagnostic.at, line: diagnostic.at.line + delta } : diagnostic.at
  return { ...diagnostic, message, line: (diagnostic.line ?? 0) + delta, ...(at ? { at } : {}) }
}

function unreadable(relPath: string, message: string, line: number | null, source = ''): DocumentSync {
  return {
    path: relPath,
    text: source,
    source,
    stale: [],
    written: false,
    diagnostics: [{ severity: 'error', message, path: relPath, line, code: 'insitu/document' }],
    failed: true,
    dependencies: [],
  }
}

export function staleJobs(source: string, result: DocumentResult): StaleJob[] {
  if (result.text === source || result.jobs.length === 0) return []
  let frontMatter
  let regions
  let materializations
  try {
    frontMatter = splitFrontMatter(source)
    // Every region, one with a broken header too: the render made a (failed) job of each (issue #18).
    regions = scanRegions(source, frontMatter.bodyOffset).regions
    materializations = materializationJobs(frontMatter.data, source)
  } catch {
    return [] // unparsable: the render changed nothing either
  }
  // Jobs are regions first, then materializations, in document order (see render-document.ts).
  if (result.jobs.length !== regions.length + materializations.length) return []
  const eol = lineEndingOf(source)
  const stale: StaleJob[] = []
  regions.forEach((region, i) => {
    const job = result.jobs[i]!
    if (job.error !== null) return
    const before = source.slice(region.bodyStart, region.bodyEnd)
    const after = regionBodyText(job.content ?? '', eol)
    if (before !== after) stale.push(staleJob(job, bodyDiff(before, after)))
  })
  const valueJobs = materializations.map((m, i) => ({ pointer: m.pointer, job: result.jobs[regions.length + i]! }))
  const frontMatterStale: StaleJob[] = []
  const yamlBefore = source.slice(0, frontMatter.bodyOffset)
  for (const { pointer, job } of valueJobs) {
    if (job.error !== null) continue
    // The diff shows the generated lines as they will be written (issue #14).
    const written = writeGeneratedValues(source, [{ pointer, value: job.value }])
    if (written !== source) frontMatterStale.push(staleJob(job, bodyDiff(yamlBefore, frontMatterOf(written))))
  }
  // A front-matter edit no single value explains (edits only hold changed text).
  const blockEdit = frontMatter.data === null ? undefined : result.edits.find((e) => e.end <= frontMatter.bodyOffset)
  if (blockEdit && frontMatterStale.length === 0) {
    const first = valueJobs.find(({ job }) => job.error === null)
    if (first) frontMatterStale.push(staleJob(first.job, bodyDiff(yamlBefore, frontMatterOf(result.text))))
  }
  return [...stale, ...frontMatterStale]
}

function staleJob(job: DocumentResult['jobs'][number], diff: string): StaleJob {
  return { id: job.id, kind: job.kind, line: job.line, target: job.target, diff }
}

function bodyDiff(before: string, after: string): string {
  const lines = unifiedDiff(trimBreaks(before), trimBreaks(after))
  return lines.length > 0 ? lines.join('\n') : '(only blank lines or line endings differ)'
}

/** A region body without the line breaks that frame it. */
function trimBreaks(text: string): string {
  return text.replace(/^(?:\r?\n)+/, '').replace(/(?:\r?\n)+$/, '')
}

/** The front matter block (fences included) of a text that has one. */
function frontMatterOf(text: string): string {
  return text.slice(0, splitFrontMatter(text).bodyOffset)
}
