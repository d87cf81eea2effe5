/**
 * The state of each region of a document against what its inputs generate now (issue #37):
 * current, failed, stale (and why), or edited by hand. Read by the language server's
 * diagnostics and hovers and by `check`'s report.
 *
 * Contract: `regionStates(explain, relPath, regions, text, result, bodySince)` pairs the regions
 * of `text` (the text `result` was rendered from) with their jobs and gives each a state
 * (`bodySince(region, body)`: since when its body has been as it is, epoch ms):
 * - `failed`: its job failed (the render's diagnostics say how).
 * - `current`: its body is what its job generated.
 * - otherwise its body is looked up among the document's generations (generations.ts):
 *   - found for another region id or under other options: `stale`, cause `options` (a region
 *     without an `id` gets another id when its options change);
 *   - found: `stale` with cause `inputs` and what changed since (`JobMemo.changedSince`;
 *     nothing it can name: `unknown`);
 *   - not found and blank: `stale`, cause `never` (never generated);
 *   - not found, and the region's newest generation made before the body became what it is
 *     (`bodySince`) had these options and inputs that have not changed since: `hand-edited`
 *     (insitu generated it from the inputs it has now, and the body is none it generated);
 *   - otherwise (inputs changed too, a body another tool or a run without the cache wrote, or
 *     no generation from before): `stale`, cause `unknown`.
 * Without generations (an engine created without them) a body that differs is `stale`, cause
 * `unknown` (or `never` when blank). `describeRegionState` is the sentence people read.
 */
import { type Region, regionBodyText, lineEndingOf } from '../documents/regions.js'
import { fsPathOf } from '../resources/identifiers.js'
import { canonicalJson, hashText } from './dependency-fingerprints.js'
import { type Generation, type Generations, regionJob } from './generations.js'
import type { InputChanges } from './job-memo.js'
import type { DocumentResult, JobResult } from './render-document.js'

export type StaleCause =
  | { kind: 'inputs'; changes: InputChanges }
  | { kind: 'options' }
  | { kind: 'never' }
  | { kind: 'unknown' }

export type RegionState =
  | { kind: 'current' }
  | { kind: 'failed'; message: string }
  | { kind: 'stale'; cause: StaleCause }
  | { kind: 'hand-edited' }

export interface RegionReport {
  region: Region
  job: JobResult
  state: RegionState
  /** The generation its body came from, when known (for "generated at"). */
  generation: Generation | undefined
}

/** Since when (epoch ms) a region's body has been what it is in the text (at most: when the text was read). */
export type BodySince = (region: Region, body: string) => number

/** What `regionStates` asks the engine. */
export interface RegionExplainer {
  generations: Generations | undefined
  changedSince(generation: Generation): Promise<InputChanges>
}

/** The sentence of a hand-edited region (issue #37's wording). */
export const HAND_EDITED_MESSAGE = 'this region is generated: edits here are replaced; change its inputs or move the text outside the markers'

export async function regionStates(
  explain: RegionExplainer,
  relPath: string,
  regions: readonly Region[],
  text: string,
  result: DocumentResult,
  bodySince: BodySince,
): Promise<RegionReport[]> {
  const eol = lineEndingOf(text)
  const jobs = result.jobs.filter((job) => job.target === 'region')
  if (jobs.length !== regions.length) return []
  const generations = explain.generations
  return Promise.all(
    regions.map(async (region, i): Promise<RegionReport> => {
      const job = jobs[i]!
      const body = text.slice(region.bodyStart, region.bodyEnd)
      const name = regionJob(region.id)
      const found = generations?.find(relPath, name, body)
      const report = (state: RegionState): RegionReport => ({ region, job, state, generation: found?.generation })
      if (job.error !== null) return report({ kind: 'failed', message: job.error })
      if (body === regionBodyText(job.content ?? '', eol)) return report({ kind: 'current' })
      const optionsHash = hashText(canonicalJson(region.options))
      if (found) {
        // Generated for another id (a region without an `id` changes it with its options) or other options.
        if (found.job !== name || found.generation.optionsHash !== optionsHash) return report({ kind: 'stale', cause: { kind: 'options' } })
        const changes = await explain.changedSince(found.generation)
        return report({ kind: 'stale', cause: hasChanges(changes) ? { kind: 'inputs', changes } : { kind: 'unknown' } })
      }
      if (body.trim() === '') return report({ kind: 'stale', cause: { kind: 'never' } })
      // Typed after insitu generated this region from inputs that are still the same: edited by hand.
      const before = generations?.latestBefore(relPath, name, bodySince(region, body))
      if (before && before.optionsHash === optionsHash && !hasChanges(await explain.changedSince(before))) return report({ kind: 'hand-edited' })
      return report({ kind: 'stale', cause: { kind: 'unknown' } })
    }),
  )
}

function hasChanges(changes: InputChanges): boolean {
  return changes.dependencies.length + changes.rows.length + changes.queries.length + changes.extensions.length > 0
}

/** How many changed inputs a sentence names before `and <n> more`. */
const NAMED = 5

/** The sentence for a region's state (`region tasks is stale: tasks/b.md changed since it was generated`). */
export function describeRegionState(id: string, state: RegionState): string {
  switch (state.kind) {
    case 'current':
      return `region ${id} is current`
    case 'failed':
      return state.message
    case 'hand-edited':
      return HAND_EDITED_MESSAGE
    case 'stale':
      return `region ${id} is stale: ${describeCause(state.cause)}`
  }
}

function describeCause(cause: StaleCause): string {
  switch (cause.kind) {
    case 'never':
      return 'it was never generated'
    case 'options':
      return 'its options changed since it was generated'
    case 'unknown':
      return 'its body is not what its inputs generate now'
    case 'inputs': {
      const names = changedInputNames(cause.changes)
      const shown = names.slice(0, NAMED).join(', ')
      const more = names.length > NAMED ? ` and ${names.length - NAMED} more` : ''
      return `${shown}${more} changed since it was generated`
    }
  }
}

/** The changed inputs as people name them: files by their path, rows by `path`, extensions by name. */
export function changedInputNames(changes: InputChanges): string[] {
  return [
    ...changes.dependencies.map(dependencyName),
    ...changes.rows,
    ...changes.queries.map((sql) => `the rows of \`${oneLine(sql)}\``),
    ...changes.extensions.map((name) => `extension ${name}`),
  ]
}

/**
 * A dependency as people name it: `fs:file:tasks/a.md` (and `…?raw`) → `tasks/a.md`,
 * `fs:glob:notes/*.md` → `the files matching notes/*.md`, `fs:dir:layout` → `the folder layout`,
 * `sql:model:open` → `model open`, `index:documents` → `the documents table`; others as they are.
 */
export function dependencyName(dependency: string): string {
  const [scheme, rest] = splitScheme(dependency)
  switch (scheme) {
    case 'fs:file:':
      return fsPathOf(rest) ?? dependency
    case 'fs:glob:':
      return `the files matching ${rest}`
    case 'fs:dir:':
      return `the folder ${fsPathOf(rest) || '.'}`
    case 'sql:model:':
      return `model ${rest}`
    case 'index:':
      return rest === 'documents' ? 'the documents table' : `the index's ${rest}`
    default:
      return dependency
  }
}

function splitScheme(dependency: string): [string, string] {
  for (const scheme of ['fs:file:', 'fs:glob:', 'fs:dir:', 'sql:model:', 'index:']) {
    if (dependency.startsWith(scheme)) return [scheme, dependency.slice(scheme.length)]
  }
  return ['', dependency]
}

function oneLine(sql: string): string {
  const text = sql.replace(/\s+/g, ' ').trim()
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
