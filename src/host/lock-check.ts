/**
 * The lock check every start makes (SPEC §12): do the extensions installed under
 * `.insitu/extensions/` match `insitu.lock`?
 *
 * Contract:
 * - `inspectInstalledExtensions(root)` reads `<root>/insitu.lock` (none: no entries) and every
 *   folder of `<root>/.insitu/extensions/` holding an `insitu-extension.toml` (folder-name
 *   order), and returns each with its `problem`, the Python tool's message or null:
 *   `installed extension is not locked: <name>` (no lock entry), `extension lock metadata
 *   changed: <name>` (version or protocol differ), `extension content hash changed: <name>`
 *   (the files' sha256 differs, see content-hash.ts); plus `missing`, the sorted names of lock
 *   entries without an installed folder (`lockMissingMessage` words them:
 *   `locked extension is missing: <a, b>`). A bad lock file or manifest throws its `ConfigError`.
 * - `LockError` is a `ConfigError` of `insitu.lock` (`<lock file>: <message>`), carrying the
 *   extension it is about.
 * Reads files only; nothing is written or recorded.
 */
import fs from 'node:fs'
import path from 'node:path'
import { ConfigError } from './config.js'
import { loadManifest, type Manifest, MANIFEST_FILE } from './manifest.js'
import { compareCodePoints } from '../values/code-point-order.js'
import { extensionContentHash } from './content-hash.js'
import { installedExtensionsDir, type LockedExtension, lockFilePath, readLockFile } from './lock-file.js'
import { isFile, isFolder } from '../documents/file-kinds.js'

export interface InstalledExtension {
  /** Absolute folder under `.insitu/extensions/`. */
  dir: string
  manifest: Manifest
  lock: LockedExtension | null
  /** Why this extension may not run, or null when it matches its lock entry. */
  problem: string | null
}

export interface InstalledExtensions {
  lockFile: string
  locks: Map<string, LockedExtension>
  installed: InstalledExtension[]
  /** Lock entries without an installed folder, sorted by name. */
  missing: string[]
}

export class LockError extends ConfigError {
  override name = 'LockError'
  constructor(
    readonly lockFile: string,
    /** The Python tool's message, without the file. */
    readonly reason: string,
    /** The extension (or extensions, comma-separated) it is about. */
    readonly extension: string,
  ) {
    super(`${lockFile}: ${reason}`, { file: lockFile })
  }
}

export function lockMissingMessage(missing: readonly string[]): string {
  return `locked extension is missing: ${missing.join(', ')}`
}

export function inspectInstalledExtensions(root: string): InstalledExtensions {
  const locks = readLockFile(root) ?? new Map<string, LockedExtension>()
  const base = installedExtensionsDir(root)
  let folders: string[] = []
  try {
    folders = fs
      .readdirSync(base, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() || (entry.isSymbolicLink() && isFolder(path.join(base, entry.name))))
      .map((entry) => entry.name)
      .sort(compareCodePoints)
  } catch {
    // no .insitu/extensions: nothing installed
  }
  const installed: InstalledExtension[] = []
  for (const folder of folders) {
    const dir = path.join(base, folder)
    if (!isFile(path.join(dir, MANIFEST_FILE))) continue
    const manifest = loadManifest(dir)
    const lock = locks.get(manifest.name) ?? null
    installed.push({ dir, manifest, lock, problem: problemOf(manifest, lock, dir) })
  }
  const present = new Set(installed.map((extension) => extension.manifest.name))
  const missing = [...locks.keys()].filter((name) => !present.has(name)).sort()
  return { lockFile: lockFilePath(root), locks, installed, missing }
}

function problemOf(manifest: Manifest, lock: LockedExtension | null, dir: string): string | null {
  if (lock === null) return `installed extension is not locked: ${manifest.name}`
  if (lock.version !== manifest.version || lock.protocol !== manifest.protocol) return `extension lock metadata changed: ${manifest.name}`
  if (lock.sha256 !== extensionContentHash(dir)) return `extension content hash changed: ${manifest.name}`
  return null
}

