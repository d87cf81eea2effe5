/**
 * Path text of a project: native paths to project-relative POSIX paths, and folder containment.
 *
 * Contract (pure: no I/O, no symlinks resolved; see resources/confine.ts for that):
 * - `toPosixPath(p)`: `p` with the platform separator turned into `/` (unchanged on POSIX).
 * - `toPosixRelative(from, to)`: `path.relative(from, to)` as POSIX (`""` when they are the same).
 * - `normalizeRelPath(p)`: `./a//b/` → `a/b`, `.` and `""` → `""` (the root); `\` separates like `/`
 *   (paths from config files and watchers). `normalizePosixRelPath(p)` is the same for paths that
 *   are already POSIX, where `\` is a file-name character. Both keep `..` segments.
 * - `isRootedPath(p)`: `p` (with `\` read as `/`) is absolute on some platform: it starts with
 *   `/` or a drive letter (`C:`).
 * - `projectRelativePath(root, p)`: the POSIX path of `p` (absolute, or relative to `root`)
 *   below `root`, or null when it is `root` itself or outside it.
 * - `isInsideFolder(folder, p)`: `p` is `folder` or lies below it, lexically (`path.relative`);
 *   `isBelowFolder(folder, p)`: strictly below it. A relative path starting with `..` then `/`
 *   or `\` leaves the folder on every platform (project paths read `\` as a separator); a name
 *   that merely starts with `..` (`..notes`) is inside.
 * - `isWriteBackTemporaryName(name)`: a file name of a write-back's temporary or backup file
 *   (`.<name>.insitu-<12 hex>.tmp|.bak`, sync/write-back.ts): never a project file.
 */
import path from 'node:path'

/** `p` with `/` separators. */
export function toPosixPath(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/')
}

/** The POSIX path of `to` relative to `from` (`""` for `from` itself). */
export function toPosixRelative(from: string, to: string): string {
  return toPosixPath(path.relative(path.resolve(from), to))
}

/** `./a//b/` → `a/b`; `.` and `` → `` (the root). `\` separates too. */
export function normalizeRelPath(relPath: string): string {
  return normalizePosixRelPath(relPath.replaceAll('\\', '/'))
}

/** `./a//b/` → `a/b`; `.` and `` → `` (the root). Only `/` separates. */
export function normalizePosixRelPath(relPath: string): string {
  return relPath
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/')
}

/** Whether `p` is absolute on some platform (`/x`, `\x`, `C:…`). */
export function isRootedPath(p: string): boolean {
  const text = p.replaceAll('\\', '/')
  return text.startsWith('/') || /^[A-Za-z]:/.test(text)
}

/** Whether `p` is `folder` itself or lies below it (lexically). */
export function isInsideFolder(folder: string, p: string): boolean {
  if (isNormalAbsolute(folder) && isNormalAbsolute(p)) return p === folder || startsBelow(folder, p)
  const relative = path.relative(folder, p)
  return relative === '' || isDescending(relative)
}

/** Whether `p` lies strictly below `folder` (lexically). */
export function isBelowFolder(folder: string, p: string): boolean {
  if (isNormalAbsolute(folder) && isNormalAbsolute(p)) return startsBelow(folder, p)
  const relative = path.relative(folder, p)
  return relative !== '' && isDescending(relative)
}

/**
 * A POSIX absolute path `path.resolve` leaves as it is (no empty, `.` or `..` segment, no
 * trailing `/`) and without `\` (`..\x` leaves a folder, see the header): for two such paths
 * "inside" is a string prefix ending at a `/`, which skips
 * `path.relative`'s two resolves (the confined reads check every file they open: issue #17).
 */
const NORMAL_ABSOLUTE = /^(?:\/(?!\.\.?(?:\/|$))[^/\\]+)+$/

function isNormalAbsolute(p: string): boolean {
  return path.sep === '/' && (p === '/' || NORMAL_ABSOLUTE.test(p))
}

function startsBelow(folder: string, p: string): boolean {
  if (folder === '/') return p !== '/'
  return p.length > folder.length + 1 && p.startsWith(folder) && p.charCodeAt(folder.length) === 47
}

function isDescending(relative: string): boolean {
  return !/^\.\.(?:[\\/]|$)/.test(relative) && !path.isAbsolute(relative)
}

/** A `.` or `..` segment, or an empty one (`//`): a path that `path.resolve` would change. */
const NOT_NORMAL = /(?:^|\/)\.{1,2}(?:\/|$)|\/\//

/** The POSIX path of `p` below `root` (`p` absolute or relative to `root`); null at or outside `root`. */
export function projectRelativePath(root: string, p: string): string | null {
  // Fast path (POSIX): a normal absolute path below a normal absolute root, as Vite's module
  // files are; asked for every module, so `path.resolve`/`path.relative` are worth skipping.
  if (
    path.sep === '/' &&
    p.length > root.length + 1 &&
    p.charCodeAt(root.length) === 47 && // '/'
    p.startsWith(root) &&
    root.startsWith('/') &&
    !p.endsWith('/') &&
    !NOT_NORMAL.test(p)
  ) {
    return p.slice(root.length + 1)
  }
  const absolute = path.resolve(root, p)
  return isBelowFolder(root, absolute) ? toPosixRelative(root, absolute) : null
}

/** Temporary and backup files of a write-back: `.<name>.insitu-<12 hex>.tmp` / `.bak`, next to the file they replace. */
const WRITE_BACK_TEMPORARY = /^\..+\.insitu-[0-9a-f]{12}\.(?:tmp|bak)$/

export function isWriteBackTemporaryName(name: string): boolean {
  return WRITE_BACK_TEMPORARY.test(name)
}
