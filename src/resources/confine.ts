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
 * - `toPosixRelative(root, abs)` is the project-relative POSIX path (`""` for the root).
 */
import fs from 'node:fs'
import path from 'node:path'

const MAX_SYMLINK_HOPS = 40

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined
}

/**
 * The physical location of absolute path `p`: symlinks resolved in every component that
 * exists (dangling ones through their target text), missing trailing components appended.
 */
export function physicalPath(p: string, hops = 0): string {
  try {
    return fs.realpathSync(p)
  } catch (error) {
    const code = errorCode(error)
    if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'ELOOP') throw error
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

function isWithin(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate)
  if (relative === '') return true
  return !path.isAbsolute(relative) && !/^\.\.(?:[\\/]|$)/.test(relative)
}

/** Absolute path of `relPath` inside `root`; throws when it would leave the root. */
export function resolveInsideRoot(root: string, relPath: string, resource: string): string {
  const escape = new Error(`resource escapes project root: ${resource}`)
  if (path.isAbsolute(relPath) || path.win32.isAbsolute(relPath)) throw escape
  const absoluteRoot = path.resolve(root)
  const absolute = path.resolve(absoluteRoot, relPath)
  if (!isWithin(absoluteRoot, absolute)) throw escape
  if (!isWithin(physicalPath(absoluteRoot), physicalPath(absolute))) throw escape
  return absolute
}

/** Project-relative POSIX path of `abs` (`""` for the root itself). */
export function toPosixRelative(root: string, abs: string): string {
  return path.relative(path.resolve(root), abs).split(path.sep).join('/')
}
