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
 *   `""` and `"."` denote the root itself. Nothing is required to exist. This is the check that
 *   names the problem; reads then go through documents/confined-files.ts, which verifies the
 *   opened descriptor, so a symlink swapped in after this check is never followed.
 * - `assertPathDepth(text, resource)`: a path or pattern longer than `MAX_PATH_BYTES` (4096, the
 *   Linux PATH_MAX) or with more than `MAX_PATH_SEGMENTS` (256) `/`-separated segments throws
 *   `resource path too deep: <resource> (<n> segments, <b> bytes; at most 256 segments and 4096
 *   bytes)` (a resource longer than 120 characters is shown cut, ending in `…`).
 *   `resolveInsideRoot` applies it first.
 * - `physicalPath(p)` is that symlink resolution on its own (the manifest's cwd check uses it
 *   too): one `lstat` per component, iterative, at most 40 symlinks followed.
 * - `toPosixRelative(root, abs)` is the project-relative POSIX path (`""` for the root); it lives
 *   in documents/project-paths.ts and is re-exported here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isUnresolvable } from '../documents/fs-errors.js'
import { isInsideFolder } from '../documents/project-paths.js'
import { realPathSync } from '../documents/real-path.js'

export { toPosixRelative } from '../documents/project-paths.js'

const MAX_SYMLINK_HOPS = 40
export const MAX_PATH_BYTES = 4096
export const MAX_PATH_SEGMENTS = 256
const SHOWN_RESOURCE_CHARS = 120

/** Throws `resource path too deep: …` when `text` exceeds the path limits. */
export function assertPathDepth(text: string, resource: string): void {
  const bytes = Buffer.byteLength(text)
  let segments = 0
  for (const segment of text.split(/[\\/]/)) if (segment !== '') segments += 1
  if (bytes <= MAX_PATH_BYTES && segments <= MAX_PATH_SEGMENTS) return
  const shown = resource.length > SHOWN_RESOURCE_CHARS ? `${resource.slice(0, SHOWN_RESOURCE_CHARS)}…` : resource
  throw new Error(
    `resource path too deep: ${shown} (${segments} segments, ${bytes} bytes; ` +
      `at most ${MAX_PATH_SEGMENTS} segments and ${MAX_PATH_BYTES} bytes)`,
  )
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p)
  } catch (error) {
    if (isUnresolvable(error)) return undefined
    throw error
  }
}

/**
 * The physical location of absolute path `p`: symlinks resolved in every component that
 * exists (dangling ones through their target text), missing trailing components appended.
 */
export function physicalPath(p: string): string {
  try {
    return realPathSync(p)
  } catch (error) {
    if (!isUnresolvable(error)) throw error
  }
  let resolved = path.parse(p).root
  // Components still to resolve, the next one last (symlink targets are pushed in front).
  const pending = p.slice(resolved.length).split(path.sep).reverse()
  let hops = 0
  while (pending.length > 0) {
    const name = pending.pop() as string
    if (name === '' || name === '.') continue
    if (name === '..') {
      resolved = path.dirname(resolved)
      continue
    }
    const candidate = path.join(resolved, name)
    if (hops < MAX_SYMLINK_HOPS && lstatOrUndefined(candidate)?.isSymbolicLink()) {
      hops += 1
      const target = fs.readlinkSync(candidate)
      if (path.isAbsolute(target)) resolved = path.parse(target).root
      const targetComponents = path.isAbsolute(target) ? target.slice(resolved.length) : target
      for (const component of targetComponents.split(/[\\/]/).reverse()) pending.push(component)
      continue
    }
    resolved = candidate
  }
  return spelledAsResolved(resolved)
}

/**
 * `p` (symlinks already resolved) with its deepest existing folder spelled as `realPathSync`
 * spells it, the missing rest appended: on a case-insensitive volume `realpath(3)` gives the
 * on-disk case, so a missing file below a root given in another case must get the root's
 * spelling too, or it would not compare as inside the root (`resolveInsideRoot`).
 */
function spelledAsResolved(p: string): string {
  const missing: string[] = []
  for (let at = p; ; ) {
    try {
      const real = realPathSync(at)
      return missing.length === 0 ? real : path.join(real, ...missing.reverse())
    } catch (error) {
      if (!isUnresolvable(error)) throw error
    }
    const parent = path.dirname(at)
    if (parent === at) return p
    missing.push(path.basename(at))
    at = parent
  }
}

/** Absolute path of `relPath` inside `root`; throws when it would leave the root or is too deep. */
export function resolveInsideRoot(root: string, relPath: string, resource: string): string {
  assertPathDepth(relPath, resource)
  const escape = new Error(`resource escapes project root: ${resource}`)
  if (path.isAbsolute(relPath) || path.win32.isAbsolute(relPath)) throw escape
  const absoluteRoot = path.resolve(root)
  const absolute = path.resolve(absoluteRoot, relPath)
  if (!isInsideFolder(absoluteRoot, absolute)) throw escape
  if (!isInsideFolder(physicalPath(absoluteRoot), physicalPath(absolute))) throw escape
  return absolute
}
