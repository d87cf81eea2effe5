/**
 * Go to definition and document links in region headers: `model = "…"` to the SQL model file,
 * `template = "…"` to the template, `path = "…"` of an include to the file (relative to the
 * document's folder, as the builtin reads it), and the capability name (the inline kind or
 * `kind = "…"`) to the manifest of the extension that provides it.
 *
 * Contract: `definitionAt(engine, analysis, position)` gives the target of the name under the
 * cursor (a `Location` at the file's start), or null; `documentLinks(engine, analysis)` one link
 * per model, template and include path of every region of the document whose file exists.
 * Paths come from the project's configuration (`[paths] models`, `templates`).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { DocumentLink, Location, Position } from 'vscode-languageserver'
import type { InsituEngine } from '../engine/engine.js'
import type { DocumentAnalysis } from './document-analysis.js'
import { entryAt, headerEntries, type HeaderEntry, type HeaderSpan, openHeaderAt } from './region-header.js'
import { offsetOf, rangeOf, uriOfPath } from './uris.js'

const START = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }

export function definitionAt(engine: InsituEngine, analysis: DocumentAnalysis, position: Position): Location[] | null {
  const offset = offsetOf(analysis.text, position)
  const header = openHeaderAt(analysis.text, offset)
  if (!header) return null
  const entries = headerEntries(analysis.text, header)
  const kind = kindOf(header, entries)
  let target: string | null = null
  if (header.kind && offset >= header.kind.start && offset <= header.kind.end) target = manifestOf(engine, kind)
  else {
    const entry = entryAt(entries, offset)
    if (entry?.key === 'kind') target = manifestOf(engine, kind)
    else if (entry) target = entryTarget(engine, analysis.relPath, kind, entry)
  }
  return target !== null && fs.existsSync(target) ? [{ uri: uriOfPath(target), range: START }] : null
}

export function documentLinks(engine: InsituEngine, analysis: DocumentAnalysis): DocumentLink[] {
  const links: DocumentLink[] = []
  for (const { region } of analysis.reports) {
    const header = openHeaderAt(analysis.text, region.start + 4)
    if (!header) continue
    const entries = headerEntries(analysis.text, header)
    const kind = kindOf(header, entries)
    for (const entry of entries) {
      const target = entryTarget(engine, analysis.relPath, kind, entry)
      if (target === null || !fs.existsSync(target)) continue
      links.push({ range: rangeOf(analysis.text, entry.valueStart, entry.valueEnd), target: uriOfPath(target) })
    }
  }
  return links
}

/** The capability a header names: the inline kind, else `kind = "…"`, else `sql`. */
export function kindOf(header: HeaderSpan, entries: readonly HeaderEntry[]): string {
  if (header.kind?.name) return header.kind.name
  return entries.find((entry) => entry.key === 'kind')?.value || 'sql'
}

/** The file an option names (model, template, include path), or null. */
export function entryTarget(engine: InsituEngine, document: string, kind: string, entry: HeaderEntry): string | null {
  if (!entry.quoted || entry.value === '') return null
  const { root, paths } = engine.config
  if (entry.key === 'model') return path.join(root, paths.models, `${entry.value}.sql`)
  if (entry.key === 'template') return path.join(root, paths.templates, entry.value)
  if (entry.key === 'path' && kind === 'include' && !path.isAbsolute(entry.value)) return path.join(root, path.dirname(document), entry.value)
  return null
}

/** The manifest of the extension providing a capability (null for a builtin or an unknown name). */
export function manifestOf(engine: InsituEngine, kind: string): string | null {
  const owner = engine.host.ownerOf('transform', kind) ?? engine.host.ownerOf('resource', kind)
  return engine.host.extensions.find((e) => e.manifest.name === owner)?.manifest.file ?? null
}
