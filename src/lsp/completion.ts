/**
 * Completion inside region headers, from the text as typed (the header need not parse yet).
 *
 * Contract: `completionsAt(engine, file, text, position)`:
 * - after `insitu:begin ` on the begin line, and in the value of `kind = "…"`: the capability
 *   names (the builtins' and the project's extensions' transforms), with their provider;
 * - at the start of a header line (a key being typed): the option keys of the region's
 *   capability (a builtin's keys, the properties of an extension's options schema: pinned in its
 *   manifest, else declared by its runtime, e.g. the SDK's `params`), keys already set left
 *   out, inserted as `key = `; in a value: the schema's `enum` values, `true`/`false` for a
 *   boolean option;
 * - in the value of `model = "…"`: the project's SQL models; `template = "…"`: its templates;
 *   `path = "…"` of an include: files and folders under the folder typed so far, relative to
 *   the document's folder;
 * - anywhere else: nothing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type CompletionItem, CompletionItemKind, type Position } from 'vscode-languageserver'
import { loadSqlModels } from '../documents/sql-models.js'
import { BUILTIN_OPTION_KEYS } from '../builtins/option-keys.js'
import type { InsituEngine } from '../engine/engine.js'
import { BUILTIN_OWNER } from '../host/registry.js'
import { kindOf } from './navigation.js'
import { headerEntries, openHeaderAt } from './region-header.js'
import { offsetOf } from './uris.js'

/** Template files listed at most (a templates folder is small; a runaway one is cut). */
const MAX_LISTED = 500

export function completionsAt(engine: InsituEngine, file: string, text: string, position: Position): CompletionItem[] {
  const offset = offsetOf(text, position)
  const header = openHeaderAt(text, offset)
  if (!header) return []
  if (header.kind && offset >= header.kind.start && offset <= header.kind.end) return capabilities(engine)
  if (offset < header.linesStart) return []
  const entries = headerEntries(text, header)
  const kind = kindOf(header, entries)
  const inValue = entries.find((entry) => entry.quoted && offset >= entry.valueStart && offset <= entry.valueEnd)
  if (inValue) {
    const typed = text.slice(inValue.valueStart, offset)
    if (inValue.key === 'kind') return capabilities(engine)
    if (inValue.key === 'model') return values(loadSqlModels(engine.root, engine.config.paths.models).names(), CompletionItemKind.File)
    if (inValue.key === 'template') return values(listFiles(path.join(engine.root, engine.config.paths.templates)), CompletionItemKind.File)
    if (inValue.key === 'path' && kind === 'include') {
      const relDocument = engine.relativePath(file) ?? ''
      return pathsUnder(path.join(engine.root, path.dirname(relDocument)), typed)
    }
    return optionValues(engine, kind, inValue.key, true)
  }
  const bareValue = entries.find((entry) => !entry.quoted && offset >= entry.valueStart && offset <= entry.valueEnd)
  if (bareValue) return optionValues(engine, kind, bareValue.key, false)
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1
  const typedLine = text.slice(lineStart, offset)
  if (!/^\s*[A-Za-z0-9_-]*$/.test(typedLine)) return []
  const set = new Set(entries.map((entry) => entry.key))
  return optionKeys(engine, kind)
    .filter((key) => !set.has(key))
    .map((key) => ({ label: key, kind: CompletionItemKind.Property, insertText: `${key} = ` }))
}

function capabilities(engine: InsituEngine): CompletionItem[] {
  return engine.host.capabilityNames('transform').map((name) => {
    const owner = engine.host.ownerOf('transform', name)
    return { label: name, kind: CompletionItemKind.Function, detail: owner === BUILTIN_OWNER ? 'builtin' : `extension ${owner}` }
  })
}

/** The option keys a capability reads: a builtin's, or the properties of an extension's `params_schema`. */
export function optionKeys(engine: InsituEngine, kind: string): string[] {
  const builtin = BUILTIN_OPTION_KEYS[kind]
  return [...new Set([...(builtin ?? []), ...Object.keys(schemaProperties(engine, kind)), 'id'])]
}

/** The properties of a capability's declared options schema (`InsituHost.paramsSchema`). */
function schemaProperties(engine: InsituEngine, kind: string): Record<string, Record<string, unknown>> {
  const properties = engine.host.paramsSchema('transform', kind)?.properties
  return properties !== null && typeof properties === 'object' ? (properties as Record<string, Record<string, unknown>>) : {}
}

/** Builtin options whose values are booleans. */
const BUILTIN_BOOLEANS = new Set(['include.raw', 'tree.directories_only'])

/** The values an option may take, as TOML (an `enum`'s, or `true`/`false`), or []. */
function optionValues(engine: InsituEngine, kind: string, key: string, quoted: boolean): CompletionItem[] {
  const property = schemaProperties(engine, kind)[key]
  const values: unknown[] = Array.isArray(property?.enum) ? property.enum : property?.type === 'boolean' || BUILTIN_BOOLEANS.has(`${kind}.${key}`) ? [true, false] : []
  return values
    .filter((value) => (typeof value === 'string') === quoted)
    .map((value) => ({ label: typeof value === 'string' ? value : JSON.stringify(value), kind: CompletionItemKind.Value }))
}

function values(names: readonly string[], kind: CompletionItemKind): CompletionItem[] {
  return names.map((label) => ({ label, kind }))
}

function listFiles(folder: string): string[] {
  const found: string[] = []
  const walk = (dir: string, prefix: string) => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (found.length >= MAX_LISTED) return
      if (entry.isDirectory()) walk(path.join(dir, entry.name), `${prefix}${entry.name}/`)
      else if (entry.isFile()) found.push(`${prefix}${entry.name}`)
    }
  }
  walk(folder, '')
  return found
}

/** Entries of the folder the typed path names so far (`../src/` lists `../src`). */
function pathsUnder(base: string, typed: string): CompletionItem[] {
  const slash = typed.lastIndexOf('/')
  const folder = path.join(base, slash < 0 ? '.' : typed.slice(0, slash + 1))
  let entries: fs.Dirent[]
  try {
    entries = fs.readdirSync(folder, { withFileTypes: true })
  } catch {
    return []
  }
  return entries
    .filter((entry) => !entry.name.startsWith('.'))
    .slice(0, MAX_LISTED)
    .map((entry) => ({
      label: entry.isDirectory() ? `${entry.name}/` : entry.name,
      kind: entry.isDirectory() ? CompletionItemKind.Folder : CompletionItemKind.File,
    }))
}
