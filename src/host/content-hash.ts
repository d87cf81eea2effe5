/**
 * The `sha256` of an installed extension that `insitu.lock` records (SPEC §12), computed as the
 * Python insitu tool computes it, so that a lock either tool wrote checks out under the other.
 *
 * Contract:
 * - `extensionContentHash(dir)` → lowercase hex SHA-256 over every file of the tree under `dir`
 *   (regular files and symlinks to files; folders are entered unless they are symlinks, as
 *   Python 3.11's `Path.rglob` walks), skipping any path with a segment in `IGNORED_NAMES`,
 *   ordered by the path's segment list (segments compared element-wise by code point, as Python
 *   sorts `Path` objects), each file contributing its POSIX relative path's UTF-8 bytes and then
 *   its bytes. An empty tree hashes to SHA-256 of nothing. Reads only; records nothing.
 * - `IGNORED_NAMES` are also the names `extension add` leaves out when it copies a tree.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { compareCodePoints } from '../values/code-point-order.js'

export const IGNORED_NAMES: ReadonlySet<string> = new Set(['.git', '.insitu', '__pycache__', 'node_modules', 'target'])

export function extensionContentHash(dir: string): string {
  const files = treeFiles(dir)
  files.sort(compareSegments)
  const digest = createHash('sha256')
  for (const segments of files) {
    digest.update(Buffer.from(segments.join('/'), 'utf8'))
    digest.update(fs.readFileSync(path.join(dir, ...segments)))
  }
  return digest.digest('hex')
}

/** Relative segment lists of the tree's files, ignored names left out. */
function treeFiles(dir: string, prefix: readonly string[] = []): string[][] {
  const files: string[][] = []
  for (const entry of fs.readdirSync(path.join(dir, ...prefix), { withFileTypes: true })) {
    if (IGNORED_NAMES.has(entry.name)) continue
    const segments = [...prefix, entry.name]
    if (entry.isDirectory()) {
      files.push(...treeFiles(dir, segments))
    } else if (entry.isFile()) {
      files.push(segments)
    } else if (entry.isSymbolicLink()) {
      // Python's is_file() follows the link; rglob does not enter a linked folder.
      try {
        if (fs.statSync(path.join(dir, ...segments)).isFile()) files.push(segments)
      } catch {
        // a dangling link is not a file
      }
    }
  }
  return files
}

function compareSegments(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const order = compareCodePoints(a[i]!, b[i]!)
    if (order !== 0) return order
  }
  return a.length - b.length
}
