/**
 * Fingerprints: short hashes that say whether an input of a job is still what the job saw.
 *
 * Contract:
 * - `fingerprintValue(value)` hashes any value the structured-clone algorithm accepts (rows,
 *   file text, listings, git values); `fingerprintFailure(error)` hashes a failed read by its
 *   message (a missing file stays "missing" until it appears). Equal inputs, equal hashes.
 * - `canonicalJson(value)` is JSON with object keys sorted at every depth (Dates, `PythonFloat`
 *   boxes and bigints tagged), the form job keys use for options.
 * - `queryKey(sql, params)` names one SQL query with its bound parameters.
 * - `extensionFingerprint(extension, projectRoot)` hashes what an extension runs: its manifest
 *   file, its resolved command line, and every file of its folder except what runtimes and
 *   tools write there (`node_modules`, `__pycache__`, `.git`, virtualenvs, caches), at most
 *   `MAX_PROGRAM_FILES` files; a folder holding the project root, or a larger one, hashes the
 *   manifest, the command line and the command's own files instead.
 * - `configFingerprint(parts)` hashes the project config text, the effective config and the
 *   engine options that change results. `pluginVersion()` is this package's version.
 * Pure but for the file reads named above.
 */
import { createHash, hash as oneShotHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import type { DiscoveredExtension } from '../host/manifest.js'
import { isInsideFolder } from '../documents/project-paths.js'
import { PythonFloat } from '../values/python-float.js'
import { isFile } from '../documents/file-kinds.js'

export const MAX_PROGRAM_FILES = 2000

const GENERATED_FOLDERS = new Set(['node_modules', '__pycache__', '.git', '.venv', 'venv', '.mypy_cache', '.pytest_cache', '.ruff_cache', '.tox'])

export function hashText(text: string | Uint8Array): string {
  return oneShotHash('sha1', text, 'hex')
}

export function fingerprintValue(value: unknown): string {
  return hashText(v8.serialize(value))
}

export function fingerprintFailure(error: unknown): string {
  return hashText(`error\u0000${error instanceof Error ? error.message : String(error)}`)
}

export function canonicalJson(value: unknown): string {
  return JSON.stringify(canonical(value))
}

function canonical(value: unknown): unknown {
  if (value instanceof Date) return { $date: value.toISOString() }
  // The float 2.0 and the int 2 are different options (`:n / 2`), and JSON.stringify cannot write a bigint.
  if (value instanceof PythonFloat) return { $float: value.value }
  if (typeof value === 'bigint') return { $int: value.toString() }
  if (Array.isArray(value)) return value.map(canonical)
  if (value && typeof value === 'object') {
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) sorted[key] = canonical((value as Record<string, unknown>)[key])
    return sorted
  }
  return value
}

export function queryKey(sql: string, params: Record<string, unknown>): string {
  return hashText(`${sql}\u0000${canonicalJson(params)}`)
}

export function extensionFingerprint(extension: DiscoveredExtension, command: readonly string[], projectRoot: string): string {
  const { manifest } = extension
  const hash = createHash('sha1')
  const addFile = (file: string) => {
    hash.update(`\u0000${path.relative(manifest.dir, file)}\u0000`)
    try {
      hash.update(fs.readFileSync(file))
    } catch {
      hash.update('<unreadable>')
    }
  }
  hash.update(JSON.stringify(command))
  addFile(manifest.file)
  const files = isInsideFolder(manifest.dir, projectRoot) ? null : programFiles(manifest.dir)
  const named = command
    .map((arg) => path.resolve(manifest.dir, manifest.extension.cwd, arg))
    .filter((file) => isInsideFolder(manifest.dir, file) && isFile(file))
  for (const file of files ?? named) if (file !== manifest.file) addFile(file)
  return hash.digest('hex')
}

/** Sorted files of an extension folder, or null when there are more than `MAX_PROGRAM_FILES`. */
function programFiles(dir: string): string[] | null {
  const files: string[] = []
  const walk = (folder: string): boolean => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true })
    } catch {
      return true
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) {
        if (GENERATED_FOLDERS.has(entry.name) || entry.name.endsWith('_cache')) continue
        if (!walk(full)) return false
      } else if (entry.isFile() && !entry.name.endsWith('.pyc')) {
        files.push(full)
        if (files.length > MAX_PROGRAM_FILES) return false
      }
    }
    return true
  }
  return walk(dir) ? files : null
}

export interface ConfigParts {
  /** The project config file's text, or null without one. */
  configText: string | null
  /** The effective config (sources overridden by engine options). */
  effective: unknown
  /** Engine options that change what jobs compute. */
  options: Record<string, unknown>
}

export function configFingerprint(parts: ConfigParts): string {
  return hashText(canonicalJson(parts))
}

let version: string | undefined

/**
 * This package's version: the nearest package.json above this module named
 * `vite-plugin-insitu` (src/engine/ when run from source, dist/chunks/ in the published bundle).
 */
export function pluginVersion(): string {
  if (version === undefined) {
    version = 'unknown'
    for (let folder = path.dirname(fileURLToPath(import.meta.url)); ; folder = path.dirname(folder)) {
      try {
        const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown }
        if (manifest.name === 'vite-plugin-insitu') {
          if (typeof manifest.version === 'string') version = manifest.version
          break
        }
      } catch {
        // no package.json here (or an unreadable one): look further up
      }
      if (path.dirname(folder) === folder) break
    }
  }
  return version
}
