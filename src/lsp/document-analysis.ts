/**
 * One open document as the language server sees it: rendered from the editor's text (saved or
 * not) by the engine, each region's state, and the diagnostics that follow.
 *
 * Contract: `analyzeDocument(engine, file, text, version, bodySince)` renders `text` (the editor's
 * `version` of it, or null when read from disk) as the managed document `file`
 * (absolute) through the engine (its job memo and caches: an unchanged region runs nothing) and
 * returns the analysis:
 * - `diagnostics` of the document, each at the line its problem is at (a region's at its begin
 *   comment's line; a TOML error of a header at its own line and column):
 *   - a failed region or materialization: error, its message (the engine's: capability,
 *     extension, job id, reason, did-you-mean);
 *   - a stale region: warning `region <id> is stale: <why>` (region-states.ts), code `insitu/stale`;
 *   - a region edited by hand: warning `HAND_EDITED_MESSAGE`, code `insitu/hand-edited` (a body
 *     none of the region's generations made, typed after one was made: `bodySince` says when
 *     each body became what it is);
 *   - a stale front-matter materialization (its value would change the front matter, as `check`
 *     finds it: sync-document.ts `staleJobs`): warning `front matter <id> is stale`, code `insitu/stale`;
 *   - every other diagnostic of the render (unknown option keys, stray ends, documents that
 *     cannot be read) at its line with its severity.
 *   Every diagnostic of a region carries `data: { region: <id> }` (code actions use it).
 * - `elsewhere`: diagnostics for other files, by absolute path: a SQL model's error at its line
 *   in the `.sql` file, a template's at its line in the template (the failing job's `at`).
 * - `result` (null when rendering threw: the message is a diagnostic at line 1), `reports`.
 * Nothing is written anywhere.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Diagnostic, DiagnosticSeverity } from 'vscode-languageserver'
import type { InsituEngine } from '../engine/engine.js'
import type { DocumentResult, LocatedDiagnostic } from '../engine/render-document.js'
import { type BodySince, describeRegionState, type RegionReport } from '../engine/region-states.js'
import { staleJobs } from '../sync/sync-document.js'
import { lineRange, pointRange } from './uris.js'

export const SOURCE = 'insitu'

export interface DocumentAnalysis {
  relPath: string
  text: string
  /** The editor's version of `text` (null: read from disk). */
  version: number | null
  result: DocumentResult | null
  reports: RegionReport[]
  diagnostics: Diagnostic[]
  /** Diagnostics for other files (SQL models, templates), by absolute path. */
  elsewhere: Map<string, Diagnostic[]>
}

/** What a diagnostic carries for code actions. */
export interface RegionDiagnosticData {
  region: string
}

const SEVERITY = { error: DiagnosticSeverity.Error, warning: DiagnosticSeverity.Warning, info: DiagnosticSeverity.Information } as const

export async function analyzeDocument(engine: InsituEngine, file: string, text: string, version: number | null, bodySince: BodySince): Promise<DocumentAnalysis> {
  const relPath = engine.relativePath(file) ?? file
  const analysis: DocumentAnalysis = { relPath, text, version, result: null, reports: [], diagnostics: [], elsewhere: new Map() }
  let result: DocumentResult
  try {
    result = await engine.renderDocument(file, text, '', { lastGood: false })
  } catch (error) {
    analysis.diagnostics.push(diagnostic(lineRange(text, 1), `${error instanceof Error ? error.message : String(error)}`, DiagnosticSeverity.Error, 'insitu/document'))
    return analysis
  }
  analysis.result = result
  analysis.reports = await engine.regionStates(file, text, result, bodySince)
  const regionAtLine = new Map(analysis.reports.map((report) => [report.region.line, report.region.id]))
  for (const found of result.diagnostics) {
    const at = found.at
    const line = found.line ?? 1
    const region = regionAtLine.get(line)
    const data = region === undefined ? undefined : { region }
    const sameFile = at !== undefined && at.path === relPath
    const range = sameFile && at.line !== null ? pointRange(text, at.line, at.column) : lineRange(text, line)
    analysis.diagnostics.push(diagnostic(range, found.message, SEVERITY[found.severity], found.code, data))
    if (at && !sameFile) addElsewhere(engine, analysis, at, found)
  }
  for (const report of analysis.reports) {
    const { state, region } = report
    if (state.kind !== 'stale' && state.kind !== 'hand-edited') continue
    const code = state.kind === 'stale' ? 'insitu/stale' : 'insitu/hand-edited'
    analysis.diagnostics.push(diagnostic(lineRange(text, region.line), describeRegionState(region.id, state), DiagnosticSeverity.Warning, code, { region: region.id }))
  }
  // Front matter: each materialization whose value would change the front matter (sync-document.ts's rule).
  for (const job of staleJobs(text, result)) {
    if (job.target === 'frontmatter') analysis.diagnostics.push(diagnostic(lineRange(text, job.line), `front matter ${job.id} is stale`, DiagnosticSeverity.Warning, 'insitu/stale'))
  }
  return analysis
}

function diagnostic(range: Diagnostic['range'], message: string, severity: DiagnosticSeverity, code: string | null | undefined, data?: RegionDiagnosticData): Diagnostic {
  return { range, message, severity, source: SOURCE, ...(code ? { code } : {}), ...(data ? { data } : {}) }
}

/** A job's error at the file it names (a SQL model's line, a template's), when that file can be read. */
function addElsewhere(engine: InsituEngine, analysis: DocumentAnalysis, at: NonNullable<LocatedDiagnostic['at']>, found: LocatedDiagnostic): void {
  const file = path.resolve(engine.root, at.path)
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '') // editors count positions after a BOM
  } catch {
    return
  }
  const range = at.line === null ? lineRange(text, 1) : pointRange(text, at.line, at.column)
  const list = analysis.elsewhere.get(file) ?? []
  list.push(diagnostic(range, `${found.message} (from ${analysis.relPath}:${found.line ?? 1})`, SEVERITY[found.severity], found.code))
  analysis.elsewhere.set(file, list)
}
