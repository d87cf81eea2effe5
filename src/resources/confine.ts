/**
 * Confinement of resource paths to the project root (SPEC §6: "Paths are confined to the
 * project root (after resolving `..` and symlinks)").
 *
 * Contract:
 * - `resolveInsideRoot(root, relPath, resource)` returns the absolute (lexically normalized)
 *   path of `relPath` under `root`, or throws `resource escapes project root: <resource>` when
 *   `relPath` is absolute, when `..` segments climb above the root, or when any existing
 *   component is a symlink whose target lies outside the (real) root. Dangling symlinks are
 *   followed through their target text, so a dangling link pointing outside is rejected too.
 *   `""` and `"."` denote the root itself. Nothing is required to exist.
 * - `physicalPath(p)` is that symlink resolution on its own (the manifest's cwd check uses it too).
 * - `toPosixRelative(root, abs)` is the project-relative POSIX path (`""` for the root); it lives
 *   in documents/project-paths.ts and is re-exported here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isUnresolvable } from '../documents/fs-errors.js'
import { isInsideFolder } from '../documents/project-paths.js'

export { toPosixRelative } from '../documents/project-paths.js'

const MAX_SYMLINK_HOPS = 40

/**
 * The physical location of absolute path `p`: symlinks resolved in every component that
 * exists (dangling ones through their target text), missing trailing components appended.
 */
export function physicalPath(p: string, hops = 0): string {
  try {
    return fs.realpathSync(p)
  } catch (error) {
    if (!isUnresolvable(error)) throw error
  }
  const parent = path.dirname(p)
  if (parent === p) return p
  const physicalParent = physicalPath(parent, hops)
  let stat: fs.Stats | undefined
  try {
    stat = fs.lstatSync(p)
  } catch {
    stat = undefined
  }
  if (stat?.isSymbolicLink() && hops < MAX_SYMLINK_HOPS) {
    const target = path.resolve(physicalParent, fs.readlinkSync(p))
    return physicalPath(target, hops + 1)
  }
  return path.join(physicalParent, path.basename(p))
}

/** Absolute path of `relPath` inside `root`; throws when it would leave the root. */
export function resolveInsideRoot(root: string, relPath: string, resource: string): string {
  const escape = new Error(`resource escapes project root: ${resource}`)
  if (path.isAbsolute(relPath) || path.win32.isAbsolute(relPath)) throw escape
  const absoluteRoot = path.resolve(root)
  const absolute = path.resolve(absoluteRoot, relPath)
  if (!isInsideFolder(absoluteRoot, absolute)) throw escape
  if (!isInsideFolder(physicalPath(absoluteRoot), physicalPath(absolute))) throw escape
  return absolute
}
