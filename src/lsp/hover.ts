/**
 * Hover on a region's begin comment: what the region is and what it last did.
 *
 * Contract: `hoverAt(engine, analysis, position)` on a region's begin comment (markers to
 * `-->`) gives Markdown: the capability and who provides it (`builtin` or `extension <name>`),
 * the region's state (current, stale and why, edited by hand, failed and why), its options (as
 * TOML in the header), what its job read this time (files, globs, models, git refs, the document
 * index), the documents its queries saw (the rows' `path`, when its body's generation is
 * known), and when its body was generated (when known; for a body the engine did not make, when
 * it last made one). Elsewhere: null.
 */
import type { Hover, Position } from 'vscode-languageserver'
import type { InsituEngine } from '../engine/engine.js'
import { regionJob } from '../engine/generations.js'
import { dependencyName, describeRegionState } from '../engine/region-states.js'
import { BUILTIN_OWNER } from '../host/registry.js'
import type { DocumentAnalysis } from './document-analysis.js'
import { offsetOf, rangeOf } from './uris.js'

/** Paths of rows a hover lists before `and <n> more`. */
const LISTED_ROWS = 10

export function hoverAt(engine: InsituEngine, analysis: DocumentAnalysis, position: Position): Hover | null {
  const offset = offsetOf(analysis.text, position)
  const report = analysis.reports.find(({ region }) => offset >= region.start && offset < region.bodyStart)
  if (!report) return null
  const { region, job, state, generation } = report
  const owner = engine.host.ownerOf('transform', region.kind)
  const provider = owner === undefined ? 'unknown capability' : owner === BUILTIN_OWNER ? 'builtin' : `extension \`${owner}\``
  const lines = [`**insitu region \`${region.id}\`**: \`${region.kind}\` (${provider})`, '', describeRegionState(region.id, state)]
  const options = Object.entries(region.options)
  if (options.length > 0) lines.push('', 'Options: ' + options.map(([key, value]) => `\`${key} = ${JSON.stringify(value)}\``).join(', '))
  if (job.dependencies.length > 0) {
    lines.push('', 'Read:')
    for (const dependency of job.dependencies) lines.push(`- \`${dependencyName(dependency)}\``)
  }
  const queries = generation ? (engine.generations?.summarized(generation) ?? generation.queries) : []
  const rows = queries.flatMap((query) => (query.rows ?? []).map(([label]) => label).filter((label): label is string => label !== null))
  if (rows.length > 0) {
    const unique = [...new Set(rows)]
    const more = unique.length > LISTED_ROWS ? `, and ${unique.length - LISTED_ROWS} more` : ''
    lines.push('', `Documents its queries saw: ${unique.slice(0, LISTED_ROWS).map((p) => `\`${p}\``).join(', ')}${more}`)
  }
  if (generation) lines.push('', `Generated ${new Date(generation.at).toISOString()}`)
  else {
    // Its body is none the engine made (edited by hand, or another tool's): when it last made one.
    const latest = engine.generations?.latest(analysis.relPath, regionJob(region.id))
    if (latest) lines.push('', `Last generated ${new Date(latest.at).toISOString()} (not the body it has now)`)
  }
  return { contents: { kind: 'markdown', value: lines.join('\n') }, range: rangeOf(analysis.text, region.start, region.bodyStart) }
}
