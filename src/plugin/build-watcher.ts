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
 * Updates of existing files are left to the bundler (it watches every file a result read).
 * `close()` stops it and removes the wake file.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { watch } from 'chokidar'
import type { FileEventType } from '../engine/dependency-graph.js'

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
  close(): Promise<void>
}

export function startBuildWatcher(options: BuildWatcherOptions): BuildWatcher {
  const root = path.resolve(options.root)
  const folder = path.join(os.tmpdir(), 'vite-plugin-insitu')
  fs.mkdirSync(folder, { recursive: true })
  const id = createHash('sha1').update(root).digest('hex').slice(0, 12)
  const wakeFile = path.join(folder, `${id}-${process.pid}.wake`)
  let wakes = 0
  fs.writeFileSync(wakeFile, `${wakes}\n`)

  const ignoredDirs = options.ignoredDirs.map((dir) => path.resolve(dir))
  const isIgnoredDir = (absolute: string) => ignoredDirs.some((dir) => absolute === dir || absolute.startsWith(dir + path.sep))
  const ignored = (file: string, stats?: fs.Stats): boolean => {
    const absolute = path.resolve(file)
    if (isIgnoredDir(absolute)) return true
    const relative = path.relative(root, absolute).split(path.sep).join('/')
    if (relative === '' || relative.startsWith('../')) return false
    if (relative === '.git' || relative.startsWith('.git/')) return true
    const directory = stats?.isDirectory() ?? false
    // A folder all of whose contents are excluded (`dist/**`) is not entered either.
    return options.isExcluded(relative, directory) || options.isExcluded(`${relative}/-`, false)
  }
  const watcher = watch(root, { ignoreInitial: true, ignored })
  const wake = () => fs.writeFileSync(wakeFile, `${++wakes}\n`)

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
    if (isIgnoredDir(absolute)) return
    pending.push({ type, path: absolute, directory })
    if (timer) clearTimeout(timer)
    timer = setTimeout(flush, options.debounceMs)
  }
  watcher
    .on('add', record('create', false))
    .on('unlink', record('delete', false))
    .on('addDir', record('create', true))
    .on('unlinkDir', record('delete', true))
    .on('error', (error) => options.onError(error instanceof Error ? error : new Error(String(error))))
  const ready = new Promise<void>((resolve) => {
    watcher.once('ready', () => resolve())
    watcher.once('error', () => resolve())
  })
  return {
    wakeFile,
    ready,
    wake,
    ignore(folder) {
      const absolute = path.resolve(folder)
      // Never the project root itself: that would silence everything.
      if (absolute !== root && !ignoredDirs.includes(absolute)) ignoredDirs.push(absolute)
    },
    async close() {
      if (timer) clearTimeout(timer)
      await watcher.close()
      fs.rmSync(wakeFile, { force: true })
    },
  }
}
