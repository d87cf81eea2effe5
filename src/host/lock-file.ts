/**
 * `insitu.lock` (SPEC §12): the record of installed extensions, read and written byte for byte as
 * the Python insitu tool reads and writes it.
 *
 * Contract:
 * - `formatLockFile(entries)` → the file's text: `version = 1`, an empty line, then per entry
 *   (sorted by name, code point order) `[[extensions]]`, `name`, `version`, `source`,
 *   `revision` (only when there is one), `sha256`, `protocol`, `dependencies = [..]`,
 *   `permissions = [..]` and an empty line; lines joined with `\n` (so the text ends with one
 *   `\n`). Strings are written `"…"` with only `\` and `"` escaped, as the Python tool does.
 * - `readLockFile(root)` → the entries of `<root>/insitu.lock` by name, or null when there is no
 *   such file. Syntax errors and bad entries are `ConfigError`s naming the file (with line and
 *   column where known). Keys the Python tool does not write are ignored.
 * - `lockFilePath(root)`, `extensionSlug(name)` (`/` and `.` → `-`), `installedExtensionsDir(root)`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { ConfigError, parseTomlFile } from './config.js'
import { compareCodePoints } from '../values/code-point-order.js'

export const LOCK_FILE = 'insitu.lock'

export interface LockedExtension {
  name: string
  version: string
  /** SOURCE as given to `extension add` (a dependency: as resolved against its dependent). */
  source: string
  /** `git rev-parse HEAD` of the checkout, when it is a git work tree. */
  revision: string | null
  sha256: string
  protocol: number
  /** Names of the extension's non-capability dependencies. */
  dependencies: string[]
  permissions: string[]
}

const LockedExtensionSchema = z.object({
  name: z.string().min(1),
  version: z.string().min(1),
  source: z.string(),
  revision: z.string().nullable().default(null),
  sha256: z.string(),
  protocol: z.int().default(1),
  dependencies: z.array(z.string()).default([]),
  permissions: z.array(z.string()).default([]),
})

const LockFileSchema = z.object({
  version: z.int().default(1),
  extensions: z.array(LockedExtensionSchema).default([]),
})

export function lockFilePath(root: string): string {
  return path.join(root, LOCK_FILE)
}

export function installedExtensionsDir(root: string): string {
  return path.join(root, '.insitu', 'extensions')
}

export function extensionSlug(name: string): string {
  return name.replaceAll('/', '-').replaceAll('.', '-')
}

export function readLockFile(root: string): Map<string, LockedExtension> | null {
  const file = lockFilePath(root)
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new ConfigError(`${file}: cannot read extension lock: ${(error as Error).message}`, { file, cause: error })
  }
  const { value } = parseTomlFile(LockFileSchema, text, file)
  return new Map(value.extensions.map((entry) => [entry.name, entry]))
}

export function formatLockFile(entries: Iterable<LockedExtension>): string {
  const lines = ['version = 1', '']
  for (const lock of [...entries].sort((a, b) => compareCodePoints(a.name, b.name))) {
    lines.push(
      '[[extensions]]',
      `name = ${tomlString(lock.name)}`,
      `version = ${tomlString(lock.version)}`,
      `source = ${tomlString(lock.source)}`,
      ...(lock.revision ? [`revision = ${tomlString(lock.revision)}`] : []),
      `sha256 = ${tomlString(lock.sha256)}`,
      `protocol = ${lock.protocol}`,
      `dependencies = [${lock.dependencies.map(tomlString).join(', ')}]`,
      `permissions = [${lock.permissions.map(tomlString).join(', ')}]`,
      '',
    )
  }
  return lines.join('\n')
}

/** The Python tool's `_toml`: only backslash and double quote are escaped. */
export function tomlString(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
}
