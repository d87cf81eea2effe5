/**
 * Watch a repository's metadata (HEAD, refs/, packed-refs, index) for the plugin.
 *
 * Vite's watcher ignores `.git`, so git dependencies need a watcher of their own. Contract:
 * `watchGitMetadata(paths, isMetadata, onChange, debounceMs, onError)` watches the folders
 * holding `paths` (from `gitMetadataPaths`) without entering objects/, logs/ or hooks/, and
 * calls `onChange(files)` once per burst of metadata events (debounced). `ready` resolves once
 * the initial scan is done, so changes from then on are seen — or when the watcher reports an
 * error, or is closed: it never keeps the caller waiting. Watcher errors go to `onError` and
 * never throw (an `error` event without a listener would). `close()` stops it.
 * `watchEngineGit(engine, onAffected, onError)` does this for an engine's repository (none
 * without one): each burst goes through `engine.affected()`, then to `onAffected` (the dev
 * server reloads the modules, build watch wakes the bundler, `watch` writes documents).
 * `options.pollMs` polls instead of using file system events (`watch --poll`).
 */
import path from 'node:path'
import { watch } from 'chokidar'
import type { AffectedResult, InsituEngine } from '../engine/engine.js'

export interface GitWatcher {
  ready: Promise<void>
  close(): Promise<void>
}

const SKIPPED = /[\\/](objects|logs|hooks|lfs|modules|worktrees|info|rr-cache)([\\/]|$)/

export interface GitWatchOptions {
  /** Poll every this many milliseconds instead of using file system events (`watch --poll`). @default undefined (events) */
  pollMs?: number
}

export function watchGitMetadata(
  metadataPaths: readonly string[],
  isMetadata: (absolutePath: string) => boolean,
  onChange: (files: string[]) => void,
  debounceMs: number,
  onError: (error: Error) => void,
  options: GitWatchOptions = {},
): GitWatcher {
  const folders = [...new Set(metadataPaths.map((p) => path.dirname(p)))]
  const polling = options.pollMs === undefined ? {} : { usePolling: true, interval: options.pollMs, binaryInterval: options.pollMs }
  const watcher = watch(folders, {
    ignoreInitial: true,
    depth: 8,
    // Judged below the most specific watched folder holding it (a linked worktree's metadata lives
    // under `.git/worktrees/<name>/`, which must not read as the skipped `worktrees/` of `.git/`).
    ignored: (file: string) => {
      const holder = folders.filter((folder) => file === folder || file.startsWith(folder + path.sep)).sort((a, b) => b.length - a.length)[0]
      return holder !== undefined && SKIPPED.test(file.slice(holder.length))
    },
    ...polling,
  })
  let pending = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  const flush = () => {
    timer = undefined
    const files = [...pending]
    pending = new Set()
    if (files.length > 0) onChange(files)
  }
  const record = (file: string) => {
    if (!isMetadata(file)) return
    pending.add(file)
    if (timer) clearTimeout(timer)
    timer = setTimeout(flush, debounceMs)
  }
  watcher.on('add', record).on('change', record).on('unlink', record)
  let markReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => {
    markReady = resolve
  })
  watcher.once('ready', () => markReady())
  watcher.on('error', (error: unknown) => {
    markReady()
    onError(error instanceof Error ? error : new Error(String(error)))
  })
  return {
    ready,
    async close() {
      markReady()
      if (timer) clearTimeout(timer)
      await watcher.close()
    },
  }
}

export function watchEngineGit(
  engine: InsituEngine,
  onAffected: (affected: AffectedResult) => void,
  onError: (message: string) => void,
  options: GitWatchOptions = {},
): GitWatcher | undefined {
  if (!engine.gitPaths) return undefined
  return watchGitMetadata(
    engine.gitPaths,
    (file) => engine.isGitMetadata(file),
    (files) => {
      try {
        onAffected(engine.affected(files.map((file) => ({ type: 'update' as const, path: file }))))
      } catch (error) {
        onError(`a git change could not be processed: ${error instanceof Error ? error.message : String(error)}`)
      }
    },
    engine.config.watch.debounce_ms,
    (error) => onError(`git metadata watcher: ${error.message}`),
    options,
  )
}
