/**
 * Regenerate one managed document: its regions and its front-matter materializations.
 *
 * Contract:
 * - Every job (region or materialization) of the document runs concurrently through the
 *   host (`transform` by kind, with the region's options and the document's Location).
 * - A failing job yields an error diagnostic at the job's line whose message names the
 *   capability, its extension (when not a builtin) and the job id; that region keeps its
 *   previous body (the materialization its previous value) and other jobs still apply. When
 *   the error says which file is wrong (`errorPosition`: a SQL model's file and line), the
 *   diagnostic carries it as `at`; the plugin points Vite's overlay there.
 * - One region's problem fails that region alone (issue #18): a header that is not valid TOML
 *   fails its job with the parser's message (no capability is invoked; `at` is the TOML error's
 *   line and column), an unknown kind fails as its invocation does. An unterminated begin
 *   comment is an error at its line (`insitu/document`); the regions before it still run and
 *   nothing after it is touched (nothing there can be a region).
 * - A builtin transform's region with option keys that builtin does not read gets a warning
 *   at its line (`unknown include option: pth; did you mean path?`); when the job fails, the
 *   same text is added to its error instead (Python ignores such keys: never an error alone).
 * - A document whose front matter cannot be read, or with duplicate owners, yields one error
 *   diagnostic and its text unchanged; so does one past a limit of input-limits.ts (larger than
 *   16 MiB or holding a NUL, at line 1 or the NUL's line; front matter too large, too deep or
 *   expanding too many aliases; more than 1,000 regions, at the first region past it). Each end comment closing no region adds a warning at
 *   its line (`stray insitu:end without a matching begin`).
 * - Front-matter values follow the Python implementation: kind `sql` without `template`
 *   gives the model's rows (one row → that object), an entry with `source` gives the raw
 *   resource value, anything else the transform's content.
 * - The result lists, per job, its id, kind, line, content, dependencies and diagnostics,
 *   and the union of every job's dependencies (also of failed jobs, when known).
 * - Each job goes through `runJob` (the engine's job memo): it may serve a job's outcome
 *   without invoking anything (`reused`); the document is spliced the same way. A failure is
 *   thrown by `runJob`, never served.
 * - `options.lastGood(job)`: the output a job last produced without failing, in this process
 *   (the engine remembers it per document and job id). A failed job's region gets that body (a
 *   failed materialization that value) instead of the one in the text, so a dev server that
 *   serves a document with one broken region keeps showing what it showed (issue #34); with none
 *   remembered, the text's own body stays.
 */
import { bodyOffsetOf, FrontMatterWriteError, generatedValuesEdit, ownershipConflicts } from '../documents/frontmatter.js'
import { LineError } from '../documents/line-error.js'
import { lineEndingOf, type Region, regionBodyText, scanRegions } from '../documents/regions.js'
import { errorDependencies } from '../documents/dependency-errors.js'
import { errorPosition, type SourcePosition } from '../documents/error-positions.js'
import { describeUnknownKeys, unknownOptionKeys } from '../builtins/option-keys.js'
import { type InsituHost, InvocationError } from '../host/host.js'
import { BUILTIN_OWNER } from '../host/registry.js'
import type { Diagnostic, InvocationResult, Location } from '../protocol/schemas.js'
import { type DocumentReading, readDocument } from './document-readings.js'
import type { JobOutcome, JobSpec } from './job-memo.js'

/** A diagnostic of a render; `at`, when set, is where the problem is (another file, or a precise column). */
export type LocatedDiagnostic = Diagnostic & { at?: SourcePosition }

export interface JobResult {
  id: string
  kind: string
  line: number
  target: 'region' | 'frontmatter'
  /** The regenerated body (region) or the text form of the value (front matter); null on failure. */
  content: string | null
  value: unknown
  dependencies: string[]
  diagnostics: LocatedDiagnostic[]
  /** Set when the job failed; the document keeps that job's previous output. */
  error: string | null
  /** The outcome came from the job memo: nothing was invoked. */
  reused: boolean
  /** It failed for running out of its time (a query, a render, an extension's answer): see `isTimeout`. */
  timedOut?: boolean
}

/** Runs one job, or serves its memoized outcome (`reused`). Throws when the job fails. */
export type JobRunner = (job: JobSpec, invoke: () => Promise<JobOutcome>) => Promise<{ outcome: JobOutcome; reused: boolean }>

/** Runs every job. */
export const runEveryJob: JobRunner = async (_job, invoke) => ({ outcome: await invoke(), reused: false })

/** Replace `[start, end)` of the source text with `text` (offsets in UTF-16 code units). */
export interface TextEdit {
  start: number
  end: number
  text: string
}

export interface DocumentResult {
  /** Project-relative POSIX path. */
  path: string
  /** The regenerated document text (the source with `edits` applied). */
  text: string
  /** Non-overlapping edits of the source, in order: for source maps. */
  edits: TextEdit[]
  changed: boolean
  /** SHA-1 of `text` (set by the engine): equal hashes, equal output. */
  outputHash?: string
  /** A failed job's region (or value) was given its last good output (`options.lastGood`): for serving, not for writing. */
  lastGoodApplied?: boolean
  jobs: JobResult[]
  dependencies: string[]
  diagnostics: LocatedDiagnostic[]
}

/** The Location of a project-relative document path (SPEC §4). */
export function locationOf(relPath: string): Location {
  const slash = relPath.lastIndexOf('/')
  const directory = slash < 0 ? '' : relPath.slice(0, slash)
  return { path: relPath, directory, root: '.', depth: directory === '' ? 0 : directory.split('/').length }
}

/** A capability failure named for the user: capability, extension, job id. */
export function describeFailure(host: InsituHost, kind: string, id: string, error: unknown): string {
  // The extension that failed this very capability (a decorator's may differ from the owner's).
  const own = error instanceof InvocationError && error.node === `transform:${kind}` ? error : undefined
  const owner = own?.extension ?? host.ownerOf('transform', kind)
  const who = owner && owner !== BUILTIN_OWNER ? `transform ${kind} (extension ${owner})` : `transform ${kind}`
  const message = own ? own.reason : error instanceof Error ? error.message : String(error)
  return `${who} failed in ${id}: ${message}`
}

/** A job's last output without failure (see the contract): a region's content, a materialization's value. */
export type LastGoodOutput = (job: { id: string; target: JobResult['target'] }) => { content: string | null; value: unknown } | undefined

export async function renderDocument(
  host: InsituHost,
  relPath: string,
  text: string,
  runJob: JobRunner = runEveryJob,
  options: { lastGood?: LastGoodOutput } = {},
): Promise<DocumentResult> {
  const lastGood = options.lastGood ?? (() => undefined)
  const location = locationOf(relPath)
  const failed = (message: string, line: number | null): DocumentResult => {
    const edits = lastGoodBodies(text, lastGood)
    return {
      path: relPath,
      text: applyEdits(text, edits),
      edits,
      changed: edits.length > 0,
      ...(edits.length > 0 ? { lastGoodApplied: true } : {}),
      jobs: [],
      dependencies: [],
      diagnostics: [{ severity: 'error', message, path: relPath, line, code: 'insitu/document' }],
    }
  }
  let reading: DocumentReading
  try {
    reading = readDocument(relPath, text)
  } catch (error) {
    if (error instanceof LineError) return failed(error.message, error.line)
    throw error
  }
  const { frontMatter, regions, unterminated, strayEnds, materializations } = reading
  const conflicts = ownershipConflicts([
    ...regions.map((r) => `region:${r.id}`),
    ...materializations.map((m) => `frontmatter:${m.pointer}`),
  ])
  if (conflicts.length > 0) return failed(conflicts.join('; '), null)

  const run = async (
    id: string,
    kind: string,
    line: number,
    target: JobResult['target'],
    options: Record<string, unknown>,
    invoke: () => Promise<InvocationResult & { frontMatterValue?: unknown }>,
  ): Promise<JobResult> => {
    const job = { id, kind, line, target }
    const spec: JobSpec = { target, kind, provider: providerOf(host, kind), options, location, ...(target === 'region' ? { id } : {}) }
    // Keys a builtin does not read (a typo): said beside the job's outcome, never failing it alone.
    const unknown = target === 'region' && host.isBareBuiltin('transform', kind) ? unknownOptionKeys(kind, options) : []
    const unknownText = unknown.length > 0 ? describeUnknownKeys(kind, unknown) : null
    try {
      const { outcome, reused } = await runJob(spec, async () => {
        const result = await invoke()
        const value = result.frontMatterValue !== undefined ? result.frontMatterValue : result.value
        return { content: result.content, value, dependencies: result.dependencies, diagnostics: result.diagnostics }
      })
      const warnings: LocatedDiagnostic[] =
        unknownText === null ? [] : [{ severity: 'warning', message: unknownText, path: relPath, line, code: 'insitu/options' }]
      return {
        ...job,
        content: outcome.content,
        value: outcome.value,
        dependencies: outcome.dependencies,
        diagnostics: [...outcome.diagnostics.map((d) => ({ ...d, path: d.path ?? relPath, line: d.line ?? line })), ...warnings],
        error: null,
        reused,
      }
    } catch (error) {
      const message = `${describeFailure(host, kind, id, error)}${unknownText === null ? '' : ` (${unknownText})`}`
      const at = errorPosition(error)
      return { ...failedJob(job, message, errorDependencies(error), at), ...(isTimeout(error) ? { timedOut: true } : {}) }
    }
  }

  const failedJob = (
    job: Pick<JobResult, 'id' | 'kind' | 'line' | 'target'>,
    message: string,
    dependencies: string[],
    at: SourcePosition | null,
  ): JobResult => ({
    ...job,
    content: null,
    value: null,
    dependencies,
    diagnostics: [{ severity: 'error', message, path: relPath, line: job.line, code: 'insitu/job', ...(at ? { at } : {}) }],
    error: message,
    reused: false,
  })

  const jobs = await Promise.all([
    ...regions.map((region) =>
      region.problem
        ? // Its header could not be read: this region fails on its own, nothing is invoked for it.
          failedJob({ id: region.id, kind: region.kind, line: region.line, target: 'region' }, region.problem.message, [], {
            path: relPath,
            line: region.problem.line,
            column: region.problem.column,
          })
        : run(region.id, region.kind, region.line, 'region', region.options, () => host.transform(region.kind, region.options, location)),
    ),
    ...materializations.map((job) =>
      run(job.id, job.kind, job.line, 'frontmatter', job.options, () => materializeFrontMatter(host, job.kind, job.options, location)),
    ),
  ])

  const edits: TextEdit[] = []
  // Jobs are regions first, then materializations, in order: pair them by position (ids may repeat).
  let lastGoodApplied = false
  const values = materializations.flatMap((materialization, i) => {
    const job = jobs[regions.length + i]!
    if (job.error === null) return [{ pointer: materialization.pointer, value: job.value }]
    const good = lastGood(job)
    if (good === undefined) return []
    lastGoodApplied = true
    return [{ pointer: materialization.pointer, value: good.value }]
  })
  if (values.length > 0 && frontMatter.hasData) {
    // Only the generated values' text changes; the user's own bytes stay (issue #14).
    let edit
    try {
      edit = generatedValuesEdit(text, values)
    } catch (error) {
      if (!(error instanceof FrontMatterWriteError)) throw error
      return failed(error.message, materializations.find((m) => m.pointer === error.pointer)?.line ?? null)
    }
    if (edit !== null && edit.end > frontMatter.bodyOffset) throw new Error('front matter rewrite changed the document body')
    if (edit !== null) edits.push(edit)
  }
  const eol = lineEndingOf(text)
  regions.forEach((region, i) => {
    const job = jobs[i]!
    const good = job.error === null ? undefined : lastGood(job)
    if (good !== undefined) lastGoodApplied = true
    const content = job.error === null ? job.content : good?.content
    if (content !== undefined) edits.push({ start: region.bodyStart, end: region.bodyEnd, text: regionBodyText(content ?? '', eol) })
  })
  const changedEdits = edits.filter((e) => text.slice(e.start, e.end) !== e.text)
  const output = applyEdits(text, changedEdits)
  return {
    path: relPath,
    text: output,
    edits: changedEdits,
    changed: output !== text,
    ...(lastGoodApplied ? { lastGoodApplied: true } : {}),
    jobs,
    dependencies: [...new Set(jobs.flatMap((j) => j.dependencies))],
    diagnostics: [
      ...jobs.flatMap((j) => j.diagnostics),
      ...(unterminated ? [{ severity: 'error', message: unterminated.message, path: relPath, line: unterminated.line, code: 'insitu/document' } as const] : []),
      ...strayEnds.map((line): Diagnostic => ({ severity: 'warning', message: 'stray insitu:end without a matching begin', path: relPath, line, code: 'insitu/document' })),
    ],
  }
}

/**
 * The line of the text with `edits` applied that holds what line `line` (1-based) of `text` held
 * (a region's begin comment below a regenerated body moves by the lines that body gained or
 * lost). A line inside an edited span maps to the edit's first line.
 */
export function outputLine(text: string, edits: readonly TextEdit[], line: number): number {
  let start = 0
  for (let current = 1; current < line; current++) {
    const next = text.indexOf('\n', start)
    if (next < 0) break
    start = next + 1
  }
  let shift = 0
  for (const edit of edits) {
    if (edit.start >= start) break
    const removed = countNewlines(text, Math.min(edit.start, start), Math.min(edit.end, start))
    const added = edit.end <= start ? countNewlines(edit.text, 0, edit.text.length) : 0
    shift += added - removed
  }
  return line + shift
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0
  for (let at = text.indexOf('\n', from); at >= 0 && at < to; at = text.indexOf('\n', at + 1)) count++
  return count
}

export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  let output = ''
  let cursor = 0
  for (const edit of edits) {
    output += text.slice(cursor, edit.start) + edit.text
    cursor = edit.end
  }
  return output + text.slice(cursor)
}

/**
 * A document that cannot be rendered (its front matter does not parse, two jobs own one target):
 * the last good body of each region found (none in a process that never rendered it: the text
 * stays as it is), so a dev server keeps showing what it showed while the user fixes it.
 */
function lastGoodBodies(text: string, lastGood: LastGoodOutput): TextEdit[] {
  let regions: readonly Region[]
  try {
    regions = text.includes('insitu:') ? scanRegions(text, bodyOffsetOf(text)).regions : []
  } catch {
    return []
  }
  const eol = lineEndingOf(text)
  const edits: TextEdit[] = []
  for (const region of regions) {
    const good = lastGood({ id: region.id, target: 'region' })
    if (good === undefined) continue
    const body = regionBodyText(good.content ?? '', eol)
    if (text.slice(region.bodyStart, region.bodyEnd) !== body) edits.push({ start: region.bodyStart, end: region.bodyEnd, text: body })
  }
  return edits
}

/** Whether an error (or one it was caused by) says it ran out of its time (`timedOut: true`). */
export function isTimeout(error: unknown): boolean {
  for (let current = error, depth = 0; current !== null && typeof current === 'object' && depth < 8; depth++) {
    if ((current as { timedOut?: unknown }).timedOut === true) return true
    current = (current as { cause?: unknown }).cause
  }
  return false
}

/** The owner of a capability's base provider, as job memo keys name it. */
export function providerOf(host: InsituHost, kind: string): string {
  return host.ownerOf('transform', kind) ?? host.ownerOf('resource', kind) ?? ''
}

/** A front-matter job's value, as the Python implementation computes it. */
async function materializeFrontMatter(
  host: InsituHost,
  kind: string,
  options: Record<string, unknown>,
  location: Location,
): Promise<InvocationResult & { frontMatterValue: unknown }> {
  if (kind === 'sql' && options.template === undefined) {
    if (typeof options.model !== 'string' || !options.model) throw new Error('SQL materialization requires model')
    const result = await host.resource('sql', options, location)
    const rows = Array.isArray(result.value) ? result.value : []
    return { ...result, frontMatterValue: rows.length === 1 ? rows[0] : rows }
  }
  if (typeof options.source === 'string' && !options.source.includes(':') && options.renderer === undefined) {
    const result = await host.resource(options.source, options, location)
    return { ...result, frontMatterValue: result.value }
  }
  const result = await host.transform(kind, options, location)
  return { ...result, frontMatterValue: result.value ?? result.content }
}
