/**
 * Serving modules: the bodies of `load` (managed documents imported with `?raw`) and
 * `transform` (managed documents, module rules), with their source maps and watch files.
 *
 * Contract:
 * - `load(context, id)`: a `?raw` import of a managed document is served as its regenerated
 *   text (`export default "<text>"`, an empty source map); anything else is left to others.
 * - The cheap path of a plain build (no dev server, no build watch; issue #17): a document
 *   that holds no job (job-free.ts: no `insitu:` marker, no `insitu` front-matter key) renders to
 *   itself, so `load` serves the text it read and `transform` leaves the code alone, neither
 *   waiting for the engine nor asking it anything (one substring check, and the front matter
 *   parsed when there is one). A start failure still fails the build (builds.ts, `buildEnd`).
 *   A document the starting engine's index read and parsed (plugin-core.ts `indexedRead`) is
 *   neither read nor parsed again: `load` serves the index's text and verdict.
 * - `transform(context, code, id)`: a managed document whose `code` is its Markdown (the file's
 *   own text, or the text this plugin's last write of it replaced) is regenerated (a BOM kept,
 *   sync-document.ts `renderText`) with a source map (word-boundary mappings, line mappings
 *   above LINE_MAPS_ABOVE); code another plugin's `load` produced (Astro compiles Markdown
 *   there) is left untouched. In a build, `code` is known to be the file's text without reading
 *   the file again when its SHA-256 is the content hash the document index holds for the file
 *   (the index read those bytes); otherwise (and always in a dev server) the file is read and compared. A module matched by a module rule runs its transform capability
 *   (errors fail the module at line 1). Modules that are neither are rejected before the
 *   engine (and its extensions' handshakes) is awaited.
 * - In build watch, every result's dependencies become watch files (watch-targets.ts; never a
 *   missing path). A dev server gets none: its watcher covers the whole project (dev-server.ts
 *   `watchServer`) and the plan of each file event names the modules to update, so a watch
 *   file only added a graph node that Vite resolved through every plugin's `resolveId` on each
 *   request of the module (issue #17) and that `hotUpdate` had to drop again. A `?raw`
 *   document's own file is still handed to `addWatchFile` in `load`, as Vite's own `?raw`
 *   loader does. Diagnostics are reported: warnings `this.warn`; errors fail the module with
 *   file:line in a build, while a dev server serves the document (each failed region with its
 *   last good body, render-document.ts `lastGood`) and tells the failure (dev-failures.ts;
 *   `PluginCore.keepsServingFailures` decides). In a dev server an engine that could not start
 *   leaves documents served as they are (`hooks.startFailed` tells it); a module rule's module
 *   fails either way (there is no text to serve in its place).
 * - A document over the size limit (input-limits.ts `MAX_DOCUMENT_BYTES`; the index warned about
 *   it once, by its size) is neither read nor rendered here: its `?raw` module fails with the
 *   limit's message (Vite's own `?raw` would read it whole and fail with a JavaScript internal);
 *   code another plugin already read is left as it is.
 * - `hooks.transformed(id)` is told of every module transformed (build watch clears its stale
 *   mark); `hooks.replacedText(file, code)` answers for the dev server's write-backs.
 */
import fs from 'node:fs'
import path from 'node:path'
import MagicString from 'magic-string'
import { type InsituEngine, ownerQuery } from '../engine/engine.js'
import { isJobFree } from '../engine/job-free.js'
import { hashContent } from '../documents/document-record.js'
import { documentTooLargeMessage, MAX_DOCUMENT_BYTES, readBounded } from '../documents/input-limits.js'
import type { DocumentResult } from '../engine/render-document.js'
import { renderText } from '../sync/sync-document.js'
import { locatedError, type ReportingContext, reportDiagnostics } from './diagnostics.js'
import { cleanId, isSkippedId, NON_TEXT_QUERY, RAW_QUERY } from './module-ids.js'
import { isClosing, type PluginCore } from './plugin-core.js'
import { watchTargets } from './watch-targets.js'
import { fsPathOf } from '../resources/identifiers.js'

export interface ServeContext extends ReportingContext {
  addWatchFile(id: string): void
  meta?: { watchMode?: boolean }
}

export interface ServeHooks {
  transformed(id: string): void
  /** A dev server's engine could not start: its documents are served as they are, the failure told (dev-failures.ts). */
  startFailed(error: unknown): void
  /** Build watch: a missing file a job read (its creation must start a rebuild). */
  missingFile(file: string): void
  replacedText(file: string, code: string): boolean
}

/** Documents longer than this (UTF-16 code units) get line-level source maps. */
const LINE_MAPS_ABOVE = 64 * 1024

/**
 * "This code has no source": with `map: null` Vite's dev server generates an identity source map
 * of the whole served module (word-boundary resolution: milliseconds for a large document on
 * every request); an empty map is what its own `?raw` loader returns.
 */
const NO_SOURCE_MAP = { mappings: '' } as const

export class DocumentServer {
  constructor(
    private readonly core: PluginCore,
    private readonly hooks: ServeHooks,
  ) {}

  async load(context: ServeContext, id: string): Promise<{ code: string; map: typeof NO_SOURCE_MAP } | null> {
    if (!RAW_QUERY.test(id) || isSkippedId(id)) return null
    const file = cleanId(id)
    const watching = this.watching(context)
    // A plain build: the document as the index read it at the start, when it did (a managed document).
    const indexed = watching ? undefined : this.core.indexedRead(file)
    if (!indexed && !this.core.projectScope().isManaged(file)) return null
    if (!watching) {
      // A plain build: a document without jobs renders to its own text (the cheap path).
      const text = indexed?.text ?? (await fs.promises.readFile(file, 'utf8'))
      if (indexed ? indexed.jobFree : isJobFree(text)) return { code: `export default ${JSON.stringify(text)}`, map: NO_SOURCE_MAP }
      const engine = await this.core.engineFor(context)
      if (!engine.isDocument(file)) return null
      const rendered = await this.render(context, engine, file, text, ownerQuery(id))
      return { code: `export default ${JSON.stringify(rendered.text)}`, map: NO_SOURCE_MAP }
    }
    const engine = await this.documentEngine(context)
    if (!engine?.isDocument(file)) return null
    // Over the document limit: never read (the index warned, by its size). Vite's own `?raw` would
    // read it whole and fail with a JavaScript internal; say what is wrong instead.
    // Synchronous (as transform's check below): a page's request right after an update does not
    // wait behind Vite's watcher re-reading the changed file's folder (live-sync.ts readState).
    const bytes = readBounded(file)
    if (typeof bytes === 'number') return context.error(locatedError(documentTooLargeMessage(bytes), { file, line: 1, column: 1 }))
    const code = bytes.toString('utf8')
    context.addWatchFile(file)
    const rendered = await this.render(context, engine, file, code, ownerQuery(id))
    return { code: `export default ${JSON.stringify(rendered.text)}`, map: NO_SOURCE_MAP }
  }

  async transform(context: ServeContext, code: string, id: string): Promise<{ code: string; map: unknown } | null> {
    if (isSkippedId(id) || NON_TEXT_QUERY.test(id)) return null
    const file = cleanId(id)
    const project = this.core.projectScope()
    // Cheap rejection: neither a managed document nor a module rule's, so no engine wait.
    const managed = project.isManaged(file)
    if (!managed && !project.moduleRule(file)) return null
    // A plain build: code without jobs comes out as it went in, whoever produced it (the cheap path).
    if (managed && !this.watching(context) && !project.moduleRule(file) && isJobFree(code)) return null
    const engine = managed && !project.moduleRule(file) ? await this.documentEngine(context) : await this.core.engineFor(context)
    if (!engine) return null
    // Transformed now (Rollup also re-runs modules whose watch files changed): no longer stale.
    this.hooks.transformed(id)
    if (managed && engine.isDocument(file)) {
      // Over the document limit (UTF-16 units never outnumber UTF-8 bytes): left as it is, unread again.
      if (code.length > MAX_DOCUMENT_BYTES) return null
      // Code another plugin's `load` produced (Astro compiles Markdown there) is not the
      // document's Markdown: leave it untouched (write mode keeps the file itself current).
      // (Or the text a write-back of this plugin replaced after Vite read it: the disk moved on.)
      // In a build, a hash of the code against the index saves reading every document again
      // (issue #17); a dev server, racing its own write-backs and the user's saves, compares with the disk.
      const known = !this.core.serving && isIndexedText(engine, file, code)
      if (!known && !isFileText(file, code) && !this.hooks.replacedText(file, code)) return null
      const rendered = await this.render(context, engine, file, code, ownerQuery(id))
      if (!rendered.result.changed) return null
      const magic = new MagicString(code)
      for (const edit of rendered.edits) {
        if (edit.start === edit.end) magic.appendLeft(edit.start, edit.text)
        else magic.overwrite(edit.start, edit.end, edit.text)
      }
      // Word-boundary mappings for ordinary documents; line mappings for large ones, where
      // the finer map costs milliseconds per update and maps nothing anyone debugs.
      const hires = code.length > LINE_MAPS_ABOVE ? false : 'boundary'
      return { code: magic.toString(), map: magic.generateMap({ hires, source: file, includeContent: true }) }
    }
    const rule = project.moduleRule(file)
    if (!rule) return null
    let result
    try {
      result = await engine.transformModule(file, code, { transform: rule.transform, options: rule.options }, ownerQuery(id))
    } catch (error) {
      if (isClosing(error)) throw error // Vite drops the request quietly
      return context.error(locatedError((error as Error).message, { file, line: 1, column: null }))
    }
    this.recordWatchFiles(context, engine, result.dependencies)
    reportDiagnostics(context, file, result.diagnostics, this.core.logger, engine.root, { linkOtherFiles: this.core.serving })
    return { code: result.code, map: NO_SOURCE_MAP }
  }

  /** Render a document's text as served (a BOM kept, see renderText), recording watch files and reporting diagnostics. */
  private async render(
    context: ServeContext,
    engine: InsituEngine,
    file: string,
    code: string,
    query: string,
  ): Promise<{ result: DocumentResult; text: string; edits: DocumentResult['edits'] }> {
    const rendered = await renderText(engine, file, code, query)
    this.recordWatchFiles(context, engine, rendered.result.dependencies)
    // A dev server serves a document with a failing job (its last good body kept): the failure
    // is told by dev-failures.ts, where people look. Builds fail on it.
    const serving = this.core.keepsServingFailures
    reportDiagnostics(context, file, rendered.result.diagnostics, this.core.logger, engine.root, { linkOtherFiles: serving, failOnError: !serving })
    return rendered
  }

  /**
   * The engine, for a document: in a dev server, an engine that could not start leaves the
   * document to be served as it is (null), its failure told once (`hooks.startFailed`); a build
   * fails the module with it (`engineFor`).
   */
  private async documentEngine(context: ServeContext): Promise<InsituEngine | null> {
    if (!this.core.keepsServingFailures) return this.core.engineFor(context)
    try {
      return await this.core.lifecycle.start()
    } catch (error) {
      if (isClosing(error)) throw error // Vite drops the request quietly
      this.hooks.startFailed(error)
      return null
    }
  }

  /** Whether the current run watches files (dev, or a build in watch mode): else addWatchFile is wasted work. */
  private watching(context: ServeContext): boolean {
    return this.core.serving || context.meta?.watchMode === true
  }

  /** Build watch only (see the contract: a dev server's plan decides its updates). */
  private recordWatchFiles(context: ServeContext, engine: InsituEngine, dependencies: readonly string[]): void {
    if (this.core.serving || context.meta?.watchMode !== true) return
    for (const dependency of dependencies) {
      const targets = watchTargets(engine, dependency)
      for (const file of targets) if (fs.existsSync(file)) context.addWatchFile(file)
      if (targets.length === 0 && dependency.startsWith('fs:file:')) {
        const relative = fsPathOf(dependency.slice('fs:file:'.length))
        if (relative) this.hooks.missingFile(path.resolve(engine.root, relative))
      }
    }
  }
}

/**
 * Whether `code` is the text of the file as the document index last read it (its SHA-256 is the
 * file's `content_hash`): then no plugin's `load` replaced it, and the file need not be read
 * again. A BOM Vite dropped still counts. False says nothing (the index may be behind the disk).
 */
function isIndexedText(engine: InsituEngine, file: string, code: string): boolean {
  const relPath = engine.relativePath(file)
  if (relPath === null) return false
  let indexed: unknown
  try {
    indexed = engine.index.query('select content_hash from _documents where path = :path', { path: relPath })[0]?.content_hash
  } catch {
    return false
  }
  if (typeof indexed !== 'string') return false
  const bytes = Buffer.from(code, 'utf8')
  if (hashContent(bytes) === indexed) return true
  return hashContent(Buffer.concat([BOM_BYTES, bytes])) === indexed
}

const BOM_BYTES = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * Whether `code` is the file's own text (Vite read it from disk, no plugin's `load` replaced
 * it). A BOM Vite dropped still counts as the same text.
 */
function isFileText(file: string, code: string): boolean {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch {
    return false
  }
  return text === code || (text.charCodeAt(0) === 0xfeff && text.slice(1) === code)
}
