/**
 * Which file changes restart the dev server (a new engine reads the config and starts the
 * extensions afresh), and when.
 *
 * Contract: `isRestartTrigger(file, triggers)` is true for the project's `insitu.toml`
 * (`configFiles`), an extension's manifest, and any file inside an extension's folder (its
 * program: `extension.py`, helper modules) — except what runtimes write there on their own
 * (`__pycache__/`, `*.pyc`, `node_modules/`, virtualenvs, tool caches) and editors' own files
 * (`.x.py.swp`, `x.py~`, `.#x.py`, `#x.py#`, vim's `4913` probe), which would restart the server
 * after every start or while a file is merely open. An extension whose folder holds the project
 * root restarts on its manifest only (any project edit would otherwise restart the server).
 * Paths are compared as absolute POSIX paths; `file` may use either separator.
 *
 * `ServerRestarts` decides when and how a restart is announced (issue #18: `sed -i` and many
 * editors write a temporary file beside the file and rename it over it, and the log named
 * `tools/pyhello/sedx3ajcv` instead of the file that changed). `note(type, file)` records a
 * trigger's event; once no trigger event arrived for `settleMs`, the files that really changed
 * are those that exist now, or were deleted without having been created in that window: a file
 * that appeared and vanished again (a temporary file renamed over another one) is none of them.
 * When some file really changed, it logs `insitu: <file>[, <file>…] changed, restarting server`
 * (paths relative to `root`) and calls `restart()` (events during a restart are its business
 * and are dropped); when none did, nothing happens. `settling` is true while events wait;
 * `cancel()` drops what is pending (the server is closing).
 */
import fs from 'node:fs'
import path from 'node:path'
import { isBelowFolder, isInsideFolder, toPosixPath, toPosixRelative } from '../documents/project-paths.js'

export interface RestartTriggers {
  /** Absolute POSIX paths of the project config (`insitu.toml`) and of files whose errors stopped the start. */
  configFiles: readonly string[]
  /** The project root (absolute POSIX). */
  root: string
  /** The discovered extensions' manifests (absolute POSIX `file` and `dir`). */
  extensions: readonly { file: string; dir: string }[]
}

/** Folders inside an extension that its runtime or tooling writes to. */
const GENERATED_SEGMENTS = new Set([
  '__pycache__',
  'node_modules',
  '.git',
  '.venv',
  'venv',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.pyrefly',
])
const GENERATED_FILE = /\.py[co]$/
/** Editors' swap, backup and lock files, and vim's write probe `4913`. */
const EDITOR_FILE = /(?:^|\/)(?:\.[^/]*\.sw[a-px]|[^/]*~|\.#[^/]*|#[^/]*#|4913)$/

export function isRestartTrigger(file: string, triggers: RestartTriggers): boolean {
  const posix = toPosixPath(path.resolve(file))
  if (triggers.configFiles.includes(posix)) return true
  for (const extension of triggers.extensions) {
    if (posix === extension.file) return true
    if (isInsideFolder(extension.dir, triggers.root)) continue
    if (!isBelowFolder(extension.dir, posix)) continue
    const relative = toPosixRelative(extension.dir, posix)
    if (GENERATED_FILE.test(relative) || EDITOR_FILE.test(relative)) continue
    if (relative.split('/').some((segment) => GENERATED_SEGMENTS.has(segment))) continue
    return true
  }
  return false
}

/** How long trigger events must pause before the restart: a temporary file's rename lands within it. */
export const RESTART_SETTLE_MS = 100

/** A file's modification time and size, to tell whether it changed (`missing` when it does not exist). */
export function fileStamp(file: string): string {
  try {
    const stat = fs.statSync(file)
    return `${stat.mtimeMs}:${stat.size}`
  } catch {
    return 'missing'
  }
}

export class ServerRestarts {
  /** Per absolute file: the type of its first event in the current window. */
  private readonly pending = new Map<string, 'create' | 'update' | 'delete'>()
  private timer: ReturnType<typeof setTimeout> | undefined
  private restarting: Promise<void> | undefined

  constructor(
    private readonly options: {
      /** Folder the logged paths are relative to (Vite's root). */
      root: string
      restart(): Promise<void>
      log(message: string): void
      error(message: string): void
      /** @default RESTART_SETTLE_MS */
      settleMs?: number
      /** @default fs.existsSync */
      exists?: (file: string) => boolean
    },
  ) {}

  note(type: 'create' | 'update' | 'delete', file: string): void {
    if (this.restarting) return
    const absolute = path.resolve(file)
    if (!this.pending.has(absolute)) this.pending.set(absolute, type)
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.settle(), this.options.settleMs ?? RESTART_SETTLE_MS)
    this.timer.unref?.()
  }

  /** Whether trigger events are waiting to settle. */
  get settling(): boolean {
    return this.timer !== undefined
  }

  cancel(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.pending.clear()
  }

  private settle(): void {
    this.timer = undefined
    const exists = this.options.exists ?? fs.existsSync
    const changed = [...this.pending].filter(([file, first]) => exists(file) || first !== 'create').map(([file]) => file)
    this.pending.clear()
    if (changed.length === 0) return // only files that came and went: nothing to restart for
    const names = changed.map((file) => toPosixPath(path.relative(this.options.root, file)))
    this.options.log(`insitu: ${names.join(', ')} changed, restarting server`)
    this.restarting = this.options
      .restart()
      .catch((error: unknown) => this.options.error(`server restart failed: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        this.restarting = undefined
      })
  }
}
