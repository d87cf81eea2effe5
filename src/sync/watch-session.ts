/**
 * One `watch` run: the engine, the live sync that keeps documents current on disk, the project
 * and git watchers, and the restarts a config change asks for — without Vite.
 *
 * Contract:
 * - `start()` reads the project config (`insitu.toml` found from `root`, or exactly there),
 *   starts the project watcher (src/sync/project-watcher.ts: the root minus `sources.exclude`,
 *   `.git` and the state folder), then the engine, the live sync in write mode
 *   (src/sync/live-sync.ts) and the git metadata watcher; it writes every stale document
 *   (`wrote <path>` per written file), runs the validators once, and resolves after printing
 *   `watching <root>`. A config error (a bad `insitu.toml`, manifest or `insitu.lock`) or any
 *   other start failure rejects (the command exits 2 or 1).
 * - Then every watcher event goes to the live sync, in order per file (a folder created or
 *   deleted goes through `engine.affected()`); a save the watcher dropped is reported back into
 *   the same pipeline. A written document prints `wrote <path>`; a document whose render has
 *   errors or warnings prints them as `sync` does (`<path>:<line>: error: …`), once per
 *   distinct set (a document that renders cleanly again is forgotten). An event whose handling
 *   throws is printed (`handling the change of <path> failed: …`), and the documents that may
 *   read the path are synced all the same.
 * - A change of `insitu.toml`, an extension manifest or an extension program (restart-triggers.ts)
 *   prints `<file> changed, restarting` and, RESTART_DELAY_MS after the last such change, closes
 *   the engine (its jobs aborted, its writes settled) and starts again from the config. A config
 *   that cannot be read is printed (stderr, `file:line:col: …`) with
 *   `waiting for <file> to change`, and nothing runs until the next edit of that file. When the
 *   file that caused a restart changed again while it ran (an editor's second write), it
 *   restarts once more. A reported change of a file still as the last restart it asked for
 *   found it (mtime and size, taken before that restart read it) restarts nothing and prints
 *   nothing: one save reported twice (its truncation, then its write, which chokidar dropped and
 *   dropped-changes.ts reports once the restart has begun) restarts once.
 * - `stop()` stops everything: jobs in flight abort, the watchers close, every write still held
 *   is settled (a save into the replaced file is kept), the engine closes and no extension
 *   process is left. Failures after `stop()` began are not printed.
 * - With an `observer` (the language server, src/lsp/), nothing is written and no document is
 *   synced: the session keeps an engine current with the project (its index, its jobs' inputs,
 *   restarts) and tells the observer of every engine it starts (`engineStarted`), of the owners
 *   each change affects (`affected`, from the watcher or the git watcher; after an event whose
 *   handling threw, `engine.mayBeAffected`'s owners) and of every engine it stops
 *   (`engineStopped`, before the engine closes). `wrote` and `watching` lines are not printed.
 * Status lines go to `output.report` (stdout), logs (extension stderr, config errors, failures of
 * the watch itself) to `output.log` (stderr); both start with `prefix` where they name the tool.
 */
import path from 'node:path'
import { type AffectedResult, InsituEngine, readProjectConfig } from '../engine/engine.js'
import { createPathMatcher } from '../documents/project-files.js'
import { isInsideFolder, toPosixPath } from '../documents/project-paths.js'
import { ConfigError, type ProjectConfig } from '../host/config.js'
import { fileStamp, isRestartTrigger } from './restart-triggers.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { fsPathOf } from '../resources/identifiers.js'
import { type GitWatcher, watchEngineGit } from './git-watcher.js'
import { LiveSync, untilWrittenAfterTruncation } from './live-sync.js'
import { type ProjectWatcher, type ProjectWatchEvent, watchProject } from './project-watcher.js'
import type { DocumentSync } from './sync-document.js'
import { describeDiagnostic } from './sync-project.js'

export interface WatchOutput {
  /** A status line for stdout (`watching`, `wrote`, diagnostics, restarts). */
  report(line: string): void
  /** A log line for stderr (extension stderr, config errors, failures of the watch itself). */
  log(line: string): void
}

export interface WatchSessionOptions {
  /** Where the project is looked for (`searchParents`), or exactly the project folder. */
  root: string
  searchParents: boolean
  /** Read and write the persistent cache in the state folder. @default true */
  cache?: boolean
  /** Poll the file system every this many milliseconds instead of using its events. @default undefined (events) */
  pollMs?: number
  output: WatchOutput
  /** The name log lines start with (`<prefix>: project watcher: …`). */
  prefix: string
  /** Observe instead of writing (see the contract). @default undefined (write mode: the command line's watch) */
  observer?: WatchObserver
}

/** Told what an observing session's engines do (the language server). */
export interface WatchObserver {
  engineStarted(engine: InsituEngine): void | Promise<void>
  affected(engine: InsituEngine, affected: AffectedResult): void | Promise<void>
  engineStopped(engine: InsituEngine): void
  /** An engine could not start (a bad `insitu.toml`, manifest or lock: a `ConfigError`); the next edit of that file restarts. */
  startFailed?(error: unknown): void
}

const FILE = 'fs:file:'

/** How long after the last change of a restart trigger the restart begins (an editor's save may come in two writes). */
export const RESTART_DELAY_MS = 50

interface Running {
  engine: InsituEngine
  /** Undefined when observing. */
  live: LiveSync | undefined
  git: GitWatcher | undefined
}

export class WatchSession {
  private root: string
  private configFile = ''
  private watcher: ProjectWatcher | undefined
  /** What the project watcher was started with (a restart with other excludes starts a new one). */
  private watchScope = ''
  private running: Running | undefined
  private starting = false
  private startAbort: AbortController | undefined
  /** Events seen while the engine started (its index may have been read before them). */
  private early: ProjectWatchEvent[] = []
  /** Config or manifest files whose errors stopped the last start (their edits restart). */
  private readonly failedConfigFiles = new Set<string>()
  /** The manifests of the extensions of the last engine (their edits restart, also while the config is broken). */
  private extensions: { file: string; dir: string }[] = []
  /** The diagnostics last printed per document. */
  private readonly printed = new Map<string, string>()
  private restartTimer: NodeJS.Timeout | undefined
  /** The trigger files whose changes asked for the next restart (it stamps them as it begins). */
  private readonly restartFiles = new Set<string>()
  /**
   * Each trigger file's stamp (`fileStamp`) as the last restart it asked for began, before that
   * restart read it: a change reported while the file is still so stamped is one of a state a
   * restart has read, or is reading.
   */
  private readonly restartStamps = new Map<string, string>()
  private restarting: Promise<void> | undefined
  /** The first start (a restart asked for meanwhile waits for it: one engine at a time). */
  private firstStart: Promise<void> | undefined
  private restartAgain = false
  private stopping = false

  constructor(private readonly options: WatchSessionOptions) {
    this.root = options.root
  }

  async start(): Promise<void> {
    const config = readProjectConfig(this.options.root, this.options.searchParents)
    this.root = config.root
    this.configFile = config.file
    await this.openWatcher(config)
    this.firstStart = this.startEngine(config)
    await this.firstStart
  }

  async stop(): Promise<void> {
    this.stopping = true
    clearTimeout(this.restartTimer)
    const reason = new Error('watch stopped')
    this.startAbort?.abort(reason)
    this.running?.engine.abort(reason)
    await this.watcher?.close()
    await this.restarting
    await this.stopEngine()
  }

  private get output() {
    return this.options.output
  }

  /** The project watcher for `config`'s excludes and state folder (a new one when they changed). */
  private async openWatcher(config: ProjectConfig): Promise<void> {
    const stateFolder = path.dirname(path.resolve(config.root, config.paths.state))
    const scope = JSON.stringify([config.sources.exclude, stateFolder])
    if (this.watcher && scope === this.watchScope) return
    await this.watcher?.close()
    this.watchScope = scope
    const isExcluded = createPathMatcher(config.sources.exclude)
    const watcher = watchProject({
      root: config.root,
      isExcluded,
      ignoredFolders: [stateFolder],
      pollMs: this.options.pollMs,
      onEvent: (event) => this.handle(event),
      onError: (error) => {
        if (!this.stopping) this.output.log(`${this.options.prefix}: project watcher: ${error.message}`)
      },
    })
    this.watcher = watcher
    await watcher.ready
  }

  private async startEngine(config: ProjectConfig): Promise<void> {
    this.starting = true
    const abort = new AbortController()
    this.startAbort = abort
    const log = (message: string) => this.output.log(message)
    let engine: InsituEngine
    try {
      engine = await InsituEngine.create({
        root: config.root,
        config,
        logger: { info: log, warn: log, error: log },
        cache: this.options.cache ?? true,
        signal: abort.signal,
      })
    } catch (error) {
      this.early = []
      if (error instanceof ConfigError) this.failedConfigFiles.add(toPosixPath(path.resolve(error.file)))
      this.options.observer?.startFailed?.(error)
      throw error
    } finally {
      this.starting = false
      this.startAbort = undefined
    }
    if (this.stopping) {
      await engine.close()
      return
    }
    this.failedConfigFiles.clear()
    this.printed.clear() // a new engine: its documents' problems are news again
    this.extensions = engine.host.extensions.map(({ manifest }) => ({ file: manifest.file, dir: manifest.dir }))
    const watcher = this.watcher!
    // Extension folders the project watcher does not cover: their edits restart too.
    for (const { dir } of this.extensions) if (!watcher.covers(dir)) watcher.alsoWatch(dir)
    const observer = this.options.observer
    const live = observer
      ? undefined
      : new LiveSync(engine, {
          disk: 'write',
          logger: { info: log, warn: log, error: log },
          prefix: this.options.prefix,
          onMissedChange: (file) => this.watcher?.report('update', file),
          onWritten: (document) => this.output.report(`wrote ${document.path}`),
          summary: false, // each written file is printed already
          onSynced: (document) => this.documentSynced(watcher, document),
        })
    // Changes made while it started: the index learns them before anything is written.
    const early = this.early.splice(0)
    if (early.length > 0) engine.affected(early.map((event) => ({ type: event.type, path: event.path, directory: event.directory })))
    const git = watchEngineGit(
      engine,
      (affected) => {
        if (affected.owners.length === 0) return
        this.deliver(running, affected, null).catch((error: unknown) => this.failed(engine, 'a git change', error))
      },
      (message) => {
        if (!this.stopping) this.output.log(`${this.options.prefix}: ${message}`)
      },
      { pollMs: this.options.pollMs },
    )
    const running: Running = { engine, live, git }
    this.running = running
    await git?.ready
    if (observer) {
      try {
        await observer.engineStarted(engine)
      } catch (error) {
        this.failed(engine, 'the start', error)
      }
      return
    }
    try {
      await live!.syncAll()
      const validation = await engine.host.validate()
      this.printDiagnostics('validator', validation)
    } catch (error) {
      this.failed(engine, 'the first sync', error)
    }
    if (this.running === running) this.output.report(`watching ${this.root}`)
  }

  /** Owners a change affected: synced (write mode) or told to the observer. */
  private async deliver(running: Running, affected: AffectedResult, file: string | null): Promise<void> {
    if (running.live) await running.live.updatesFor(affected, { file, depth: 0 })
    else await this.options.observer!.affected(running.engine, affected)
  }

  /** Close the running engine: its jobs abort, its watchers close, its held writes settle. */
  private async stopEngine(): Promise<void> {
    const running = this.running
    this.running = undefined
    if (!running) return
    running.engine.abort(new Error(this.stopping ? 'watch stopped' : 'restarting'))
    await running.git?.close()
    running.live?.close()
    this.options.observer?.engineStopped(running.engine)
    await running.engine.close()
  }

  /** One watcher event (events of one path come one at a time, in order). */
  private async handle(event: ProjectWatchEvent): Promise<void> {
    if (this.stopping) return
    if (isRestartTrigger(event.path, this.restartTriggers())) {
      this.requestRestart(event.path)
      return
    }
    if (!isInsideFolder(this.root, event.path)) return // a file of an extension folder outside the project
    const running = this.running
    if (!running) {
      if (this.starting) this.early.push(event)
      return
    }
    try {
      if (!event.directory && running.live) {
        await running.live.changed(event.type, event.path)
        return
      }
      // An editor's save may truncate first: the index reads the file once it is written (as write mode's live sync does).
      if (event.type === 'update' && !event.directory && !running.live) await untilWrittenAfterTruncation(event.path)
      const affected = running.engine.affected([{ type: event.type, path: event.path, directory: event.directory }])
      // A deleted document's results go (write mode's live sync does it as it handles the event).
      if (event.type === 'delete' && !event.directory && !running.live) running.engine.forget(event.path)
      if (affected.owners.length > 0) await this.deliver(running, affected, null)
    } catch (error) {
      this.failed(running.engine, `the change of ${this.relative(event.path)}`, error)
      await this.syncMayBeAffected(running, event)
    }
  }

  /**
   * After an event whose handling threw (the index could not refresh the path, say): the
   * documents that may read the path are synced all the same (`LiveSync.fallback`, as the dev
   * server's `failedPlan` does), so none is left on disk as it was before the change, silently.
   * Not while stopping, nor for an engine a restart replaced.
   */
  private async syncMayBeAffected(running: Running, event: ProjectWatchEvent): Promise<void> {
    if (this.stopping || this.running !== running) return
    try {
      if (running.live) await running.live.fallback(event.type, event.path, event.directory)
      else await this.options.observer!.affected(running.engine, running.engine.mayBeAffected([{ type: event.type, path: event.path, directory: event.directory }]))
    } catch (error) {
      this.failed(running.engine, `the documents that may read ${this.relative(event.path)}`, error)
    }
  }

  private restartTriggers() {
    return {
      configFiles: [this.configFile, ...this.failedConfigFiles],
      root: this.root,
      extensions: this.extensions,
    }
  }

  private requestRestart(file: string): void {
    // One save reported twice (chokidar reports a truncation and drops the write that follows in
    // its throttle window; dropped-changes.ts reports that write after the restart began): the
    // restart reads the file as it is now already, or has read it.
    if (this.restartStamps.get(file) === fileStamp(file)) return
    if (this.restartTimer === undefined && !this.restartAgain) this.output.report(`${this.relative(file)} changed, restarting`)
    this.restartFiles.add(file)
    if (this.restarting) {
      this.restartAgain = true
      return
    }
    clearTimeout(this.restartTimer)
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined
      this.restarting = this.restart().finally(() => {
        this.restarting = undefined
      })
    }, RESTART_DELAY_MS)
  }

  private async restart(): Promise<void> {
    await this.firstStart?.catch(() => undefined)
    do {
      this.restartAgain = false
      const triggers = [...this.restartFiles]
      this.restartFiles.clear()
      for (const file of triggers) this.restartStamps.set(file, fileStamp(file))
      await this.stopEngine()
      if (this.stopping) return
      try {
        const config = readProjectConfig(this.root, false)
        this.configFile = config.file
        await this.openWatcher(config)
        if (this.stopping) return
        await this.startEngine(config)
      } catch (error) {
        if (this.stopping) return
        this.options.observer?.startFailed?.(error)
        this.output.log(error instanceof ConfigError ? error.message : `${this.options.prefix}: ${messageOf(error)}`)
        const waitingFor = [...this.failedConfigFiles].map((file) => this.relative(file))
        this.output.report(`waiting for ${waitingFor.length > 0 ? waitingFor.join(', ') : this.relative(this.configFile)} to change`)
      }
      // Written again while the restart read it (the second write of a save): read it once more.
      for (const file of triggers) {
        if (fileStamp(file) === this.restartStamps.get(file)) continue
        this.restartFiles.add(file)
        this.restartAgain = true
      }
    } while (this.restartAgain && !this.stopping)
  }

  /** Print a synced document's errors and warnings once per distinct set (write failures the live sync logs itself). */
  private documentSynced(watcher: ProjectWatcher, document: DocumentSync): void {
    this.watchDependencies(document.dependencies, watcher)
    const shown = document.diagnostics.filter((d) => d.severity !== 'info' && d.code !== 'insitu/write')
    const key = JSON.stringify(shown)
    if (shown.length === 0) {
      this.printed.delete(document.path)
      return
    }
    if (this.printed.get(document.path) === key) return
    this.printed.set(document.path, key)
    this.printDiagnostics(document.path, shown)
  }

  /**
   * Files a document reads where the project watcher does not look (an excluded folder:
   * `fs:file:dist/version.txt`) are watched too, existing or not (write mode does it for each
   * synced document; an observer for what it renders).
   */
  watchDependencies(dependencies: readonly string[], watcher = this.watcher): void {
    if (!watcher) return
    for (const dependency of dependencies) {
      const relPath = dependency.startsWith(FILE) ? fsPathOf(dependency.slice(FILE.length)) : null
      if (!relPath) continue
      const file = path.join(this.root, relPath)
      if (!watcher.covers(file)) watcher.alsoWatchFile(file) // one that does not exist yet too
    }
  }

  private printDiagnostics(documentPath: string, diagnostics: readonly Diagnostic[]): void {
    for (const diagnostic of diagnostics) {
      if (diagnostic.severity !== 'info') this.output.report(describeDiagnostic(documentPath, diagnostic))
    }
  }

  /** A failure of the watch itself (not a document's): logged, unless it is the engine stopping. */
  private failed(engine: InsituEngine, what: string, error: unknown): void {
    if (this.stopping || this.running?.engine !== engine) return
    this.output.log(`${this.options.prefix}: handling ${what} failed: ${messageOf(error)}`)
  }

  private relative(file: string): string {
    const relative = path.relative(this.root, path.resolve(file)).split(path.sep).join('/')
    return relative === '' || relative.startsWith('../') ? toPosixPath(path.resolve(file)) : relative
  }
}


function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
