/**
 * Build watch mode (`vite build --watch`, `rollup.watch`): see what the bundler's watcher
 * cannot, and wake it.
 *
 * A bundler rebuilds only when a file it watches changes, and a plugin cannot start a
 * rebuild itself. Contract: `startBuildWatcher(options)` watches the project (never its
 * excluded folders, `.git`, or the build output) for files and folders created or deleted;
 * each debounced batch goes to `onChange`, and when that reports affected modules the
 * watcher rewrites `wakeFile`, which the plugin hands to `addWatchFile`, so the bundler
 * rebuilds. `wake()` does the same for changes noticed elsewhere (the git metadata watcher).
 * A wake is one change of the file (one `write` in place, no truncate first; a missing file
 * is renamed into place), so it costs one rebuild. The wake file sits in a private `mkdtemp`
 * folder, removed on `close()` and when the process ends (a temp cleaner that removes it
 * earlier may cost the bundler its watch of it: Rolldown's is lost).
 * Updates of existing files are left to the bundler (it watches every file a result read),
 * except those `reportsUpdates` names (files the bundler was told not to watch).
 * `close()` stops it and removes the wake file.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { watch } from 'chokidar'
import type { FileEventType } from '../engine/dependency-graph.js'
import { onProcessEnd } from '../sandbox/process-end.js'
import { trackUnwatchedFiles } from '../sync/unwatched-files.js'
import { projectWatchIgnore } from '../sync/project-watcher.js'
import { isWriteBackTemporary } from '../sync/write-back.js'

export interface BuildWatchEvent {
  type: FileEventType
  /** Absolute path. */
  path: string
  directory: boolean
}

export interface BuildWatcherOptions {
  /** Absolute project root. */
  root: string
  /** Excluded project-relative paths (`sources.exclude`), never watched. */
  isExcluded: (relPath: string, isDirectory: boolean) => boolean
  /** Absolute folders never watched (the build output). */
  ignoredDirs: readonly string[]
  /** Handle one batch of events; true when a rebuild is needed. */
  onChange: (events: BuildWatchEvent[]) => boolean
  /** Files whose updates are reported too (the bundler does not watch them). @default none */
  reportsUpdates?: (absolutePath: string) => boolean
  debounceMs: number
  onError: (error: Error) => void
}

export interface BuildWatcher {
  /** The file to hand to `addWatchFile`: it changes when a rebuild is needed. */
  readonly wakeFile: string
  ready: Promise<void>
  /** Make the bundler rebuild. */
  wake(): void
  /** Never report changes at or under this folder (an output folder learnt late). */
  ignore(folder: string): void
  /**
   * Report the creation of this missing file although it lies under the exclusions (a document
   * reads it by name: `sources.exclude` does not apply to reads): the folders on its way are
   * watched, nothing else under the exclusions (src/sync/unwatched-files.ts).
   */
  watchMissing(file: string): void
  close(): Promise<void>
}

/** The least time between a change and its report to `onChange`. */
const REPORT_DELAY_MS = 150

/** The wake file's text after `wakes` wakes: always the same length (it is rewritten in place). */
function wakeText(wakes: number): string {
  return `${String(wakes).padStart(15, '0')}\n`
}

/**
 * Rewrite a file with one `write` at offset 0, never truncating it first: a truncate and a write
 * are two changes to a watcher, and a bundler whose watcher runs on its own thread (Rolldown)
 * can see them apart, rebuild on the first and again on the second. A file that is missing, or
 * not as long as `text`, is replaced whole instead (a temporary file renamed over it: one
 * change too; creating it and writing would be two).
 */
function writeInPlace(file: string, text: string): void {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_WRONLY)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    return replaceWhole(file, text)
  }
  try {
    if (fs.fstatSync(fd).size !== Buffer.byteLength(text)) return replaceWhole(file, text)
    fs.writeSync(fd, text, 0)
  } finally {
    fs.closeSync(fd)
  }
}

function replaceWhole(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, text)
  fs.renameSync(temporary, file)
}

export function startBuildWatcher(options: BuildWatcherOptions): BuildWatcher {
  const root = path.resolve(options.root)
  // A private folder per watcher (mkdtemp: unguessable, owned by this user), removed on close
  // and when the process ends, however it ends.
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'vite-plugin-insitu-'))
  const removeFolder = () => fs.rmSync(folder, { recursive: true, force: true })
  const unregister = onProcessEnd(removeFolder)
  const wakeFile = path.join(folder, 'wake')
  let wakes = 0
  fs.writeFileSync(wakeFile, wakeText(wakes))

  const ignoredDirs = options.ignoredDirs.map((dir) => path.resolve(dir))
  const isIgnoredDir = (absolute: string) => ignoredDirs.some((dir) => absolute === dir || absolute.startsWith(dir + path.sep))
  // The same exclusions as the command line's `watch` (reads `ignoredDirs` live: `ignore()` adds to it).
  const excluded = projectWatchIgnore({ root, isExcluded: options.isExcluded, ignoredDirs })
  // Created before the watcher: chokidar may ask `ignored` about the root at once.
  const unwatched = trackUnwatchedFiles(root, { add: (folder) => watcher.add(folder) }, (file) => record('create', false)(file))
  const ignored = (file: string, stats?: fs.Stats) => {
    if (isWriteBackTemporary(file)) return true
    if (unwatched.onTheWay(path.resolve(file))) return false
    return excluded(file, stats)
  }
  const watcher = watch(root, { ignoreInitial: true, ignored })
  const wake = () => {
    try {
      // A temp cleaner may have removed it (a bundler may have lost its watch of the file then:
      // Rolldown's watcher does not see a file created again in a folder created again).
      fs.mkdirSync(folder, { recursive: true })
      writeInPlace(wakeFile, wakeText(++wakes))
    } catch (error) {
      options.onError(error as Error)
    }
  }

  let pending: BuildWatchEvent[] = []
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    timer = undefined
    const events = pending
    pending = []
    let rebuild = false
    try {
      rebuild = events.length > 0 && options.onChange(events)
    } catch (error) {
      options.onError(error as Error)
      return
    }
    if (rebuild) wake()
  }
  const record = (type: FileEventType, directory: boolean) => (file: string) => {
    const absolute = path.resolve(file)
    unwatched.reported(absolute)
    if (isIgnoredDir(absolute)) return
    pending.push({ type, path: absolute, directory })
    if (timer) clearTimeout(timer)
    // Report after the bundler's own watcher (it usually sees the change within milliseconds),
    // so the plugin can tell which changes the bundler already handles.
    timer = setTimeout(flush, Math.max(options.debounceMs, REPORT_DELAY_MS))
  }
  watcher
    .on('add', record('create', false))
    .on('unlink', record('delete', false))
    .on('change', (file: string) => {
      if (options.reportsUpdates?.(path.resolve(file))) record('update', false)(file)
    })
    .on('addDir', record('create', true))
    .on('unlinkDir', record('delete', true))
    .on('error', (error) => options.onError(error instanceof Error ? error : new Error(String(error))))
  let settleReady!: () => void
  const ready = new Promise<void>((resolve) => (settleReady = resolve))
  watcher.once('ready', settleReady).once('error', settleReady)
  return {
    wakeFile,
    ready,
    wake,
    ignore(folder) {
      const absolute = path.resolve(folder)
      // Never the project root itself: that would silence everything.
      if (absolute !== root && !ignoredDirs.includes(absolute)) ignoredDirs.push(absolute)
    },
    watchMissing(file) {
      unwatched.add(file)
    },
    async close() {
      if (timer) clearTimeout(timer)
      unwatched.close()
      settleReady() // chokidar drops its listeners on close: nobody may wait for ever
      await watcher.close()
      removeFolder()
      unregister()
    },
  }
}
