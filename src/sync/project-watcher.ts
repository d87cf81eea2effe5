/**
 * Watch a project's files without Vite (the command line's `watch`): creates, updates and
 * deletes of files and folders, handed on in order per path.
 *
 * Contract:
 * - `watchProject(options)` watches `root` with chokidar (native file system events, as Vite's
 *   watcher by default; or polling every `pollMs`), never entering `.git`, the excluded paths
 *   (`isExcluded`: the project's `sources.exclude`; a folder all of whose contents are excluded
 *   is not entered either) or `ignoredFolders` (the state folder). Write-back temporaries and
 *   backups (`isWriteBackTemporary`) are never reported. `alsoWatch(folder)` adds a folder
 *   whatever the exclusions (an extension's folder outside the root or in an excluded part of
 *   it: its edits restart the watch), without the folders its runtime writes (`RUNTIME_FOLDERS`);
 *   `alsoWatchFile(file)` adds one file whatever the exclusions (a document reads it), existing
 *   or not, followed through its deletion and re-creation (src/sync/unwatched-files.ts).
 *   `covers(file)`: whether the root watch itself covers a path (inside the root, not ignored).
 * - Every event `{ type, path, directory }` (`path` absolute) goes to `onEvent`. The events of
 *   one path are handed on one at a time, in the order they came: the next waits until the
 *   handler's promise for the previous one settles. Events of different paths run concurrently.
 *   A handler that throws goes to `onError`, and the path's next event still runs.
 * - A change chokidar drops (a second `change` of a path inside its throttle window) is reported
 *   all the same, as one more `update` (dropped-changes.ts).
 * - `report(type, file)` hands an event of the caller's own to the same pipeline (a racing save
 *   the live sync put back into place), in order with the watcher's.
 * - `ready` resolves once the initial scan is done: a change made from then on is reported
 *   (also when the watcher failed or was closed: nobody waits for ever).
 * - `close()` stops reporting and resolves once every handler in progress has settled.
 * `projectWatchIgnore(...)` is the exclusion rule alone, shared with build watch (build-watcher.ts).
 */
import fs from 'node:fs'
import path from 'node:path'
import { type ChokidarOptions, type FSWatcher, watch } from 'chokidar'
import type { FileEventType } from '../engine/dependency-graph.js'
import { isInsideFolder } from '../documents/project-paths.js'
import { guardDroppedChanges } from './dropped-changes.js'
import { trackUnwatchedFiles } from './unwatched-files.js'
import { isWriteBackTemporary } from './write-back.js'

export interface ProjectWatchEvent {
  type: FileEventType
  /** Absolute path. */
  path: string
  /** A folder was created or deleted (files inside it get events of their own). */
  directory: boolean
}

export interface ProjectWatcherOptions {
  /** Absolute project root. */
  root: string
  /** Excluded project-relative paths (`sources.exclude`), never watched. */
  isExcluded: (relPath: string, isDirectory: boolean) => boolean
  /** Absolute folders never watched (the state folder). */
  ignoredFolders: readonly string[]
  /** Handle one event (the path's next event waits for it). */
  onEvent: (event: ProjectWatchEvent) => Promise<void> | void
  onError: (error: Error) => void
  /** Poll every this many milliseconds instead of using file system events. @default undefined (events) */
  pollMs?: number
}

export interface ProjectWatcher {
  ready: Promise<void>
  report(type: FileEventType, file: string): void
  /** Whether the root watch covers `file` (inside the root, not excluded, not ignored). */
  covers(file: string): boolean
  alsoWatch(folder: string): void
  alsoWatchFile(file: string): void
  close(): Promise<void>
}

/** Folders an extension's runtime or tooling writes (never an edit of the extension itself). */
const RUNTIME_FOLDERS = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', '.mypy_cache', '.pytest_cache', '.ruff_cache'])

/**
 * Whether a watcher should skip `file`: inside an ignored folder, `.git`, or excluded by
 * `isExcluded` (folders too, and a folder whose contents are all excluded). `ignoredDirs` is
 * read at every call, so a folder added to it later is skipped from then on.
 */
export function projectWatchIgnore(options: {
  root: string
  isExcluded: (relPath: string, isDirectory: boolean) => boolean
  ignoredDirs: readonly string[]
}): (file: string, stats?: fs.Stats) => boolean {
  const root = path.resolve(options.root)
  return (file, stats) => {
    const absolute = path.resolve(file)
    if (options.ignoredDirs.some((dir) => absolute === dir || absolute.startsWith(dir + path.sep))) return true
    const relative = path.relative(root, absolute).split(path.sep).join('/')
    if (relative === '' || relative.startsWith('../')) return false
    if (relative === '.git' || relative.startsWith('.git/')) return true
    const directory = stats?.isDirectory() ?? false
    // A folder all of whose contents are excluded (`dist/**`) is not entered either.
    return options.isExcluded(relative, directory) || options.isExcluded(`${relative}/-`, false)
  }
}

export function watchProject(options: ProjectWatcherOptions): ProjectWatcher {
  const root = path.resolve(options.root)
  const ignoredDirs = options.ignoredFolders.map((folder) => path.resolve(folder)).filter((folder) => folder !== root)
  const excluded = projectWatchIgnore({ root, isExcluded: options.isExcluded, ignoredDirs })
  const extraFolders: string[] = []
  // Created before the watcher: chokidar may ask `ignored` about the root at once.
  const unwatched = trackUnwatchedFiles(root, { add: (folder) => watcher.add(folder) }, (file) => record('create', false)(file))
  const ignored = (file: string, stats?: fs.Stats): boolean => {
    const absolute = path.resolve(file)
    if (isWriteBackTemporary(absolute)) return true
    if (unwatched.onTheWay(absolute)) return false
    const extra = extraFolders.find((folder) => isInsideFolder(folder, absolute))
    if (extra !== undefined) {
      return path.relative(extra, absolute).split(path.sep).some((segment) => RUNTIME_FOLDERS.has(segment))
    }
    return excluded(absolute, stats)
  }
  const chokidarOptions: ChokidarOptions = { ignoreInitial: true, ignorePermissionErrors: true, ignored }
  if (options.pollMs !== undefined) Object.assign(chokidarOptions, { usePolling: true, interval: options.pollMs, binaryInterval: options.pollMs })
  const watcher: FSWatcher = watch(root, chokidarOptions)

  let closed = false
  /** The handler chain of each path (removed once it is idle). */
  const queues = new Map<string, Promise<void>>()
  const dispatch = (event: ProjectWatchEvent) => {
    if (closed) return
    const key = event.path
    const run = (queues.get(key) ?? Promise.resolve()).then(async () => {
      try {
        await options.onEvent(event)
      } catch (error) {
        options.onError(error instanceof Error ? error : new Error(String(error)))
      }
    })
    queues.set(key, run)
    void run.then(() => {
      if (queues.get(key) === run) queues.delete(key)
    })
  }
  const record = (type: FileEventType, directory: boolean) => (file: string) => {
    const absolute = path.resolve(file)
    unwatched.reported(absolute)
    dispatch({ type, path: absolute, directory })
  }
  // A change chokidar drops inside its throttle window is reported all the same (dropped-changes.ts).
  const dropped = guardDroppedChanges((file) => dispatch({ type: 'update', path: file, directory: false }), { pollIntervalMs: options.pollMs })
  const changed = (file: string, stats?: fs.Stats) => {
    const absolute = path.resolve(file)
    unwatched.reported(absolute)
    dispatch({ type: 'update', path: absolute, directory: false })
    dropped.reported(absolute, stats)
  }
  watcher
    .on('add', record('create', false))
    .on('change', changed)
    .on('unlink', record('delete', false))
    .on('addDir', record('create', true))
    .on('unlinkDir', record('delete', true))
    .on('error', (error) => options.onError(error instanceof Error ? error : new Error(String(error))))
  let settleReady!: () => void
  const ready = new Promise<void>((resolve) => (settleReady = resolve))
  watcher.once('ready', settleReady).once('error', settleReady)

  return {
    ready,
    report(type, file) {
      const absolute = path.resolve(root, file)
      if (!isWriteBackTemporary(absolute)) dispatch({ type, path: absolute, directory: false })
    },
    covers(file) {
      const absolute = path.resolve(root, file)
      return isInsideFolder(root, absolute) && !excluded(absolute)
    },
    alsoWatch(folder) {
      const absolute = path.resolve(folder)
      if (closed || extraFolders.includes(absolute)) return
      extraFolders.push(absolute)
      watcher.add(absolute)
    },
    alsoWatchFile(file) {
      const absolute = path.resolve(file)
      // There or not yet: the folders on its way are watched for it (unwatched-files.ts).
      if (!closed && excluded(absolute)) unwatched.add(absolute)
    },
    async close() {
      closed = true
      dropped.close()
      unwatched.close()
      settleReady() // chokidar drops its listeners on close: nobody may wait for ever
      await watcher.close()
      while (queues.size > 0) await Promise.all(queues.values())
    },
  }
}
