/**
 * Which file changes restart the dev server (a new engine reads the config and starts the
 * extensions afresh).
 *
 * Contract: `isRestartTrigger(file, triggers)` is true for the project's `insitu.toml`
 * (`configFiles`), an extension's manifest, and any file inside an extension's folder (its
 * program: `extension.py`, helper modules) — except what runtimes write there on their own
 * (`__pycache__/`, `*.pyc`, `node_modules/`, virtualenvs, tool caches), which would restart
 * the server after every start. An extension whose folder holds the project root restarts on
 * its manifest only (any project edit would otherwise restart the server). Paths are compared
 * as absolute POSIX paths; `file` may use either separator.
 */
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

export function isRestartTrigger(file: string, triggers: RestartTriggers): boolean {
  const posix = toPosixPath(path.resolve(file))
  if (triggers.configFiles.includes(posix)) return true
  for (const extension of triggers.extensions) {
    if (posix === extension.file) return true
    if (isInsideFolder(extension.dir, triggers.root)) continue
    if (!isBelowFolder(extension.dir, posix)) continue
    const relative = toPosixRelative(extension.dir, posix)
    if (GENERATED_FILE.test(relative) || relative.split('/').some((segment) => GENERATED_SEGMENTS.has(segment))) continue
    return true
  }
  return false
}
