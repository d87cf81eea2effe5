/**
 * The language server's workspace: one project, its engine kept current by a watch session in
 * observe mode (src/sync/watch-session.ts: the project watcher, the git watcher, restarts on
 * `insitu.toml` or extension changes), and the documents the editor has open.
 *
 * Contract:
 * - `start()` finds the project from the workspace folder as `watch` does and starts the
 *   session (extension processes start once, here; `stop()` ends them: no process is left). A
 *   configuration that cannot be read is published as a diagnostic on its file (`insitu.toml`,
 *   a manifest, `insitu.lock`) at its line; the next edit of that file starts it again.
 * - `open`/`change`/`close` track the editor's text. An open managed document is analyzed
 *   (document-analysis.ts) from the editor's text, saved or not, after `CHANGE_DELAY_MS` of
 *   quiet (at once when opened), and its diagnostics published with the version analyzed; one
 *   analysis runs at a time per document and a newer text waits for it. Closing clears them.
 * - Each region body's time (since when it is as it is: when the document was opened, or the
 *   change that made it so) tells a body typed after the engine generated one (edited by hand)
 *   from one that was there before (region-states.ts).
 * - A change on disk (a task edited in another file, a file a glob covers added, a commit)
 *   re-analyzes the open documents whose results it may change (`engine.affected`), and any
 *   open document when the engine restarts.
 * - Diagnostics for other files (SQL models, templates) are the union of every open document's,
 *   published for each such file and cleared when no analysis names it any more. An open model or
 *   template also has the documents that name it (up to `MAX_READERS`, found by the text of their
 *   headers in the document index) analyzed from disk in the background, for its own errors;
 *   they are analyzed again when a change on disk affects them, and forgotten when it closes.
 * - `analysis(uri)` is the analysis of the document's current text (waiting for one in flight,
 *   running one when the text changed since), or undefined for a document that is not a managed
 *   document of the project, or while no engine runs.
 * Nothing in the project is written (the engine's cache folder aside, as every host does).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Diagnostic } from 'vscode-languageserver'
import { type InsituEngine, ownerFile, readProjectConfig } from '../engine/engine.js'
import { ConfigError } from '../host/config.js'
import { fileStamp } from '../sync/restart-triggers.js'
import { WatchSession } from '../sync/watch-session.js'
import type { Region } from '../documents/regions.js'
import { analyzeDocument, type DocumentAnalysis, SOURCE } from './document-analysis.js'
import { lineRange, pathOfUri, pointRange, uriOfPath } from './uris.js'

/** Quiet after a keystroke before the document is analyzed again. */
export const CHANGE_DELAY_MS = 75

/** What an analysis resolves to when a newer one replaced it before it ran, or its engine stopped. */
const SUPERSEDED = Symbol('superseded')
type AnalysisOutcome = DocumentAnalysis | undefined | typeof SUPERSEDED
/** Documents analyzed for one open model or template at most. */
export const MAX_READERS = 50

/** The name a region uses for a SQL model (`models/a/b.sql` → `a/b`) or a template file, or null. */
function referenceName(engine: InsituEngine, file: string): string | null {
  const inside = (folder: string) => {
    const relative = path.relative(path.resolve(engine.root, folder), file)
    return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative.split(path.sep).join('/') : null
  }
  const model = inside(engine.config.paths.models)
  if (model !== null) return model.endsWith('.sql') ? model.slice(0, -4) : null
  return inside(engine.config.paths.templates)
}

export interface WorkspaceOutput {
  publish(uri: string, diagnostics: Diagnostic[], version?: number): void
  log(message: string): void
  /** A problem no document shows (the engine could not start for another reason than its configuration). */
  error(message: string): void
}

export interface WorkspaceOptions {
  /** The workspace folder (the project is found from it as `watch` finds it). */
  folder: string
  /** Read and write the persistent cache. @default true */
  cache?: boolean
  /** Poll the file system instead of using its events. @default undefined */
  pollMs?: number
  output: WorkspaceOutput
}

interface OpenDocument {
  uri: string
  file: string | null
  text: string
  version: number
  timer: NodeJS.Timeout | undefined
  /** The analysis in flight or done, and the text and version it is of. */
  analysis: { text: string; version: number; done: Promise<AnalysisOutcome> } | undefined
  /** The files outside it its last analysis published diagnostics for. */
  elsewhere: Map<string, Diagnostic[]>
  /** Its inputs changed since its last analysis began. */
  inputsChanged: boolean
  /** When the text last changed (opened, or a change from the editor), epoch ms. */
  changedAt: number
  /** Each region's body as last analyzed, and since when it has been so (region-states.ts `BodySince`). */
  bodies: Map<string, { body: string; since: number }>
}

export class LspWorkspace {
  private session: WatchSession | undefined
  private current: InsituEngine | undefined
  private readonly documents = new Map<string, OpenDocument>()
  /** Files given diagnostics for a configuration problem. */
  private configProblems = new Set<string>()
  /** Files given diagnostics from documents' analyses (SQL models, templates). */
  private elsewherePublished = new Set<string>()
  /**
   * Documents not open but analyzed from disk because an open SQL model or template is theirs
   * (by absolute path): their diagnostics for other files, and the open files they are for.
   */
  private readonly readers = new Map<string, { elsewhere: Map<string, Diagnostic[]>; for: Set<string>; run: number }>()
  private retryWatch: { file: string; listener: () => void } | undefined
  private stopped = false
  private engineReady: { promise: Promise<void>; resolve: () => void }

  constructor(private readonly options: WorkspaceOptions) {
    this.engineReady = waiting()
  }

  get engine(): InsituEngine | undefined {
    return this.current
  }

  async start(): Promise<void> {
    let config
    try {
      config = readProjectConfig(this.options.folder, true)
    } catch (error) {
      this.startFailed(error)
      if (error instanceof ConfigError) this.retryWhenChanged(error.file)
      return
    }
    const session = new WatchSession({
      root: config.root,
      searchParents: false,
      cache: this.options.cache,
      pollMs: this.options.pollMs,
      prefix: 'insitu',
      output: { report: (line) => this.options.output.log(line), log: (line) => this.options.output.log(line) },
      observer: {
        engineStarted: (engine) => this.engineStarted(engine),
        affected: (engine, affected) => {
          if (engine !== this.current) return
          const files = new Set(affected.owners.map((owner) => path.resolve(engine.root, ownerFile(owner))))
          for (const document of this.documents.values()) if (document.file !== null && files.has(document.file)) this.schedule(document, 0, true)
          for (const file of this.readers.keys()) if (files.has(file)) this.analyzeReader(engine, file)
        },
        engineStopped: (engine) => {
          if (engine === this.current) {
            this.current = undefined
            this.engineReady = waiting()
          }
        },
        startFailed: (error) => this.startFailed(error),
      },
    })
    this.session = session
    try {
      await session.start()
    } catch (error) {
      // A configuration problem was published (startFailed); its next edit restarts the session.
      if (!(error instanceof ConfigError)) this.options.output.log(`insitu: ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.retryWatch) fs.unwatchFile(this.retryWatch.file, this.retryWatch.listener)
    for (const document of this.documents.values()) clearTimeout(document.timer)
    await this.session?.stop()
  }

  open(uri: string, text: string, version: number): void {
    const document: OpenDocument = { uri, file: pathOfUri(uri), text, version, timer: undefined, analysis: undefined, elsewhere: new Map(), inputsChanged: false, changedAt: Date.now(), bodies: new Map() }
    this.documents.set(uri, document)
    this.schedule(document, 0)
  }

  change(uri: string, text: string, version: number): void {
    const document = this.documents.get(uri)
    if (!document) return
    document.text = text
    document.version = version
    document.changedAt = Date.now()
    this.schedule(document, CHANGE_DELAY_MS)
  }

  close(uri: string): void {
    const document = this.documents.get(uri)
    if (!document) return
    clearTimeout(document.timer)
    this.documents.delete(uri)
    this.options.output.publish(uri, [])
    document.elsewhere.clear()
    for (const [file, reader] of this.readers) {
      reader.for.delete(uri)
      if (reader.for.size === 0) this.readers.delete(file)
    }
    this.publishElsewhere()
  }

  /** The analysis of the document's current text (see the contract). */
  async analysis(uri: string): Promise<DocumentAnalysis | undefined> {
    const document = this.documents.get(uri)
    const engine = this.current
    if (!document || !engine || document.file === null || !engine.isDocument(document.file)) return undefined
    // An analysis that a newer one replaced, or whose engine stopped, gives way to the newest.
    for (let tries = 0; tries < 4; tries++) {
      if (document.analysis?.text !== document.text || document.inputsChanged) {
        clearTimeout(document.timer)
        document.timer = undefined
        this.analyze(document)
      }
      const pending = document.analysis!
      const outcome = await pending.done
      if (outcome !== SUPERSEDED) return outcome
      if (document.analysis === pending) document.inputsChanged = true // nothing newer yet: analyze again
    }
    return undefined
  }

  /** The text the editor has for `uri` (open documents), else undefined. */
  textOf(uri: string): string | undefined {
    return this.documents.get(uri)?.text
  }

  private schedule(document: OpenDocument, delay: number, inputsChanged = false): void {
    clearTimeout(document.timer)
    document.inputsChanged ||= inputsChanged
    document.timer = setTimeout(() => {
      document.timer = undefined
      this.analyze(document)
    }, delay)
  }

  /** Analyze the document's current text (after the analysis in flight), publishing its diagnostics. */
  private analyze(document: OpenDocument): void {
    const { text, version } = document
    document.inputsChanged = false
    const previous = document.analysis?.done ?? Promise.resolve(undefined)
    const done: Promise<AnalysisOutcome> = previous
      .catch(() => undefined)
      // One analysis at a time per document; one that a newer text replaced meanwhile never runs.
      .then(() => (document.analysis?.done === done ? this.analyzeNow(document, text) : SUPERSEDED))
    document.analysis = { text, version, done }
    done.then(
      (analysis) => {
        if (analysis === SUPERSEDED || this.stopped || this.documents.get(document.uri) !== document || document.analysis?.done !== done) return
        if (analysis === undefined) {
          // Not a managed document: what it has are other documents' diagnostics for it (a model's errors).
          if (document.file === null || !this.elsewherePublished.has(document.file)) this.options.output.publish(document.uri, [], version)
          return
        }
        this.options.output.publish(document.uri, analysis.diagnostics, version)
        document.elsewhere = analysis.elsewhere
        this.publishElsewhere()
        if (analysis.result) this.session?.watchDependencies(analysis.result.dependencies)
      },
      (error: unknown) => this.options.output.log(`insitu: analyzing ${document.uri} failed: ${error instanceof Error ? error.message : String(error)}`),
    )
  }

  private async analyzeNow(document: OpenDocument, text: string): Promise<AnalysisOutcome> {
    if (document.file === null || this.stopped) return undefined
    const changedAt = document.changedAt
    await this.engineReady.promise
    const engine = this.current
    if (!engine) return SUPERSEDED
    if (!engine.isDocument(document.file)) {
      await this.findReaders(engine, document.uri, document.file)
      return undefined
    }
    // A body unchanged since the last analysis keeps its time: typing elsewhere in the document
    // does not make a body the engine generated since it was opened look typed after that.
    const bodySince = (region: Region, body: string): number => {
      const known = document.bodies.get(region.id)
      if (known?.body === body) return known.since
      document.bodies.set(region.id, { body, since: changedAt })
      return changedAt
    }
    const analysis = await analyzeDocument(engine, document.file, text, document.version, bodySince)
    // Rendered by an engine that stopped meanwhile (a restart): its failures say `restarting`.
    if (engine !== this.current) return SUPERSEDED
    const regions = new Set(analysis.reports.map((report) => report.region.id))
    for (const id of document.bodies.keys()) if (!regions.has(id)) document.bodies.delete(id)
    return analysis
  }

  /**
   * An open SQL model or template: the managed documents that name it (at most `MAX_READERS`, by
   * the document index's text of their headers) are analyzed from disk, so its errors are
   * published at their line in it even when none of its documents is open.
   */
  private async findReaders(engine: InsituEngine, uri: string, file: string): Promise<void> {
    const name = referenceName(engine, file)
    if (name === null) return
    const rows = engine.index.query('select path from _documents where instr(body, :name) > 0 order by path limit :limit', { name, limit: MAX_READERS }) as { path: string }[]
    for (const { path: relPath } of rows) {
      const reader = path.resolve(engine.root, relPath)
      const known = this.readers.get(reader)
      if (known) known.for.add(uri)
      else this.readers.set(reader, { elsewhere: new Map(), for: new Set([uri]), run: 0 })
      if (!known) this.analyzeReader(engine, reader)
    }
  }

  /** Analyze a document for the open models and templates it names (the newest run's result wins). */
  private analyzeReader(engine: InsituEngine, file: string): void {
    const reader = this.readers.get(file)
    if (!reader || this.isOpen(file)) return // an open document is analyzed as such
    const run = ++reader.run
    const finish = (elsewhere: Map<string, Diagnostic[]>) => {
      if (this.stopped || engine !== this.current || this.readers.get(file) !== reader || reader.run !== run) return
      reader.elsewhere = elsewhere
      this.publishElsewhere()
    }
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
    } catch {
      finish(new Map()) // gone: it names nothing any more
      return
    }
    analyzeDocument(engine, file, text, null, () => Date.now()).then(
      (analysis) => finish(analysis.elsewhere),
      (error: unknown) => this.options.output.log(`insitu: analyzing ${file} failed: ${error instanceof Error ? error.message : String(error)}`),
    )
  }

  private isOpen(file: string): boolean {
    for (const document of this.documents.values()) if (document.file === file) return true
    return false
  }

  private async engineStarted(engine: InsituEngine): Promise<void> {
    this.current = engine
    this.clearConfigProblems()
    this.engineReady.resolve()
    // A new engine (a restart): every open document is analyzed again, and the documents read for open models.
    for (const document of this.documents.values()) this.schedule(document, 0, true)
    for (const file of this.readers.keys()) this.analyzeReader(engine, file)
  }

  private startFailed(error: unknown): void {
    this.clearConfigProblems()
    if (!(error instanceof ConfigError)) {
      // Not the configuration (better-sqlite3 that cannot load, say): said where people look.
      this.options.output.error(`insitu could not start: ${error instanceof Error ? error.message : String(error)}`)
      return
    }
    const file = path.resolve(error.file)
    let text = ''
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch {
      // a missing file: the diagnostic goes at its first line all the same
    }
    const range = error.line === undefined ? lineRange(text, 1) : pointRange(text, error.line, error.column ?? null)
    const message = error.message.replace(/^[^\n]*?:\d+(?::\d+)?: /, '')
    this.configProblems.add(file)
    this.options.output.publish(uriOfPath(file), [{ range, message, severity: 1, source: SOURCE, code: 'insitu/config' }])
  }

  private clearConfigProblems(): void {
    for (const file of this.configProblems) this.options.output.publish(uriOfPath(file), [])
    this.configProblems.clear()
  }

  /** Before the first engine: the configuration file's next edit starts the workspace again. */
  private retryWhenChanged(file: string): void {
    const before = fileStamp(file)
    const interval = this.options.pollMs ?? 200
    const listener = () => {
      if (this.retryWatch?.listener !== listener || fileStamp(file) === before) return
      fs.unwatchFile(file, listener)
      clearTimeout(check)
      this.retryWatch = undefined
      if (!this.stopped) void this.start()
    }
    this.retryWatch = { file, listener }
    fs.watchFile(file, { interval }, listener)
    // watchFile takes its first reading in the background: an edit made before it is looked for once.
    const check = setTimeout(listener, interval * 2)
    check.unref()
  }

  private publishElsewhere(): void {
    const union = new Map<string, Diagnostic[]>()
    const readers = [...this.readers].filter(([file]) => !this.isOpen(file)).map(([, reader]) => reader.elsewhere)
    const sources = [...[...this.documents.values()].map((document) => document.elsewhere), ...readers]
    for (const elsewhere of sources) {
      for (const [file, diagnostics] of elsewhere) union.set(file, [...(union.get(file) ?? []), ...diagnostics])
    }
    for (const file of this.elsewherePublished) if (!union.has(file)) this.options.output.publish(uriOfPath(file), [])
    for (const [file, diagnostics] of union) this.options.output.publish(uriOfPath(file), diagnostics)
    this.elsewherePublished = new Set(union.keys())
  }
}


function waiting(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((done) => {
    resolve = done
  })
  return { promise, resolve }
}
