/**
 * Build watch mode (`vite build --watch`, `rollup.watch`): which cached modules must be
 * transformed again, and waking the bundler for what its own watcher cannot see.
 *
 * Contract:
 * - `start(engine, outDir)` (once per engine, awaited at `buildStart`) starts the project
 *   watcher of build-watcher.ts (creates and deletes of files and folders the bundler does not
 *   watch) and the git metadata watcher; `wakeFile` is then the file to hand to
 *   `addWatchFile`: it changes when a change the bundler cannot see affects a module.
 * - `watchChange(engine, id, event)`: a change the bundler reports marks the affected modules
 *   stale (a deleted file's records are forgotten); our own watcher reports a little later
 *   (see build-watcher.ts) and skips paths the bundler reported within BUNDLER_REPORT_WINDOW_MS,
 *   so a change the bundler also saw is handled once and one it missed (a folder it stopped
 *   watching, a watcher not ready yet) is still handled. At worst a change costs one extra
 *   rebuild, never a missed one.
 * - `transformed(id)` clears a module's stale mark; `shouldTransform(id)` answers Rollup's
 *   `shouldTransformCachedModule`: true (once) for a stale module, else null.
 * - `ignoreOutput(dir)`: Rollup names its output folder only at `renderStart`; never watched.
 * - Write mode: `ownDocuments(files)` names the documents the bundler does not watch (builds.ts
 *   excludes them); the project watcher reports their updates too, and each goes through
 *   `selfWrites` (the ledger the `buildStart` writes are recorded in): the echo of the plugin's
 *   own write, or a state already handled, wakes nothing; any other edit marks the document and
 *   what it affects stale and wakes the bundler: one rebuild.
 * - `stop()` closes both watchers (the engine lifecycle's stop step).
 * Module keys are absolute POSIX files (module-ids.ts `moduleKey`).
 */
import fs from 'node:fs'
import path from 'node:path'
import { createPathMatcher } from '../documents/project-files.js'
import { type AffectedResult, type InsituEngine, ownerFile } from '../engine/engine.js'
import { toPosixPath } from '../host/config.js'
import { type GitWatcher, watchEngineGit } from '../sync/git-watcher.js'
import { diskState, SelfWrites } from '../sync/self-writes.js'
import { type BuildWatcher, startBuildWatcher } from './build-watcher.js'
import type { PluginLogger } from './plugin-logger.js'
import { moduleFile, moduleKey } from './module-ids.js'
import { PLUGIN_NAME } from './options.js'

/** How long a `watchChange` report keeps the plugin's own watcher from handling the same path. */
const BUNDLER_REPORT_WINDOW_MS = 2_000

export class BuildWatch {
  private watcher: BuildWatcher | undefined
  private gitWatcher: GitWatcher | undefined
  /** When `watchChange` last reported each absolute path (the bundler saw it). */
  private readonly reportedByBundler = new Map<string, number>()
  /** Modules whose cached transform must be redone (until they are transformed). */
  private readonly staleModules = new Set<string>()
  /** Write mode: the plugin's own writes, recorded at `buildStart` (their echoes wake nothing). */
  readonly selfWrites = new SelfWrites()
  /** Absolute paths of the documents the bundler does not watch (write mode). */
  private readonly unwatchedByBundler = new Set<string>()

  constructor(private readonly logger: () => PluginLogger) {}

  ownDocuments(files: readonly string[]): void {
    for (const file of files) this.unwatchedByBundler.add(path.resolve(file))
  }

  get wakeFile(): string | undefined {
    return this.watcher?.wakeFile
  }

  async start(engine: InsituEngine, outDir: string | undefined): Promise<void> {
    if (this.watcher) return
    const onError = (message: string) => this.logger().error(`${PLUGIN_NAME}: ${message}`)
    const watcher = startBuildWatcher({
      root: engine.root,
      isExcluded: createPathMatcher(engine.config.sources.exclude),
      ignoredDirs: outDir ? [outDir] : [],
      reportsUpdates: (file) => this.unwatchedByBundler.has(file),
      onChange: (events) => {
        const fresh = events.filter((event) => !this.seenByBundler(event.path) && !this.isOwnEcho(event))
        const documents = fresh.filter((event) => event.type === 'update').map((event) => event.path)
        for (const file of documents) this.staleModules.add(moduleKey(file))
        return this.markStale(engine, engine.affected(fresh)) || documents.length > 0
      },
      debounceMs: engine.config.watch.debounce_ms,
      onError: (error) => onError(`build watcher: ${error.message}`),
    })
    this.watcher = watcher
    this.gitWatcher ??= watchEngineGit(
      engine,
      (affected) => {
        if (this.markStale(engine, affected)) watcher.wake()
      },
      onError,
    )
    await Promise.all([watcher.ready, this.gitWatcher?.ready])
  }

  watchChange(engine: InsituEngine, id: string, event: 'create' | 'update' | 'delete'): void {
    const absolute = path.resolve(id)
    if (this.watcher && absolute === this.watcher.wakeFile) return
    this.reportedByBundler.set(absolute, Date.now())
    if (this.reportedByBundler.size > 10_000) this.reportedByBundler.clear()
    if (event === 'delete') engine.forget(id)
    this.markStale(engine, engine.affected([{ type: event, path: id }]))
  }

  transformed(id: string): void {
    this.staleModules.delete(moduleKey(id))
  }

  shouldTransform(id: string): true | null {
    const file = moduleKey(id)
    if (!this.staleModules.has(file)) return null
    this.staleModules.delete(file)
    return true
  }

  /** A missing file a document reads under `sources.exclude`: its creation wakes the bundler (build-watcher.ts). */
  watchMissing(file: string): void {
    this.watcher?.watchMissing(file)
  }

  ignoreOutput(dir: string): void {
    this.watcher?.ignore(dir)
  }

  async stop(): Promise<void> {
    await Promise.all([this.watcher?.close(), this.gitWatcher?.close()])
    this.watcher = undefined
    this.gitWatcher = undefined
  }

  /** Whether an update event of a document the bundler does not watch is the plugin's own write, or already handled. */
  private isOwnEcho(event: { type: string; path: string }): boolean {
    if (event.type !== 'update' || !this.unwatchedByBundler.has(event.path)) return false
    let bytes: Buffer
    let stat: fs.Stats
    try {
      stat = fs.statSync(event.path)
      bytes = fs.readFileSync(event.path)
    } catch {
      return false
    }
    return this.selfWrites.classify(toPosixPath(event.path), diskState(stat, bytes)).kind !== 'new'
  }

  /** Mark the affected modules stale; true when there are any. */
  private markStale(engine: InsituEngine, { owners }: AffectedResult): boolean {
    for (const owner of owners) this.staleModules.add(moduleFile(engine.root, ownerFile(owner)))
    return owners.length > 0
  }

  private seenByBundler(file: string): boolean {
    const at = this.reportedByBundler.get(path.resolve(file))
    return at !== undefined && Date.now() - at < BUNDLER_REPORT_WINDOW_MS
  }
}
