/**
 * Node file-system errors told apart by their `code`.
 *
 * - `errorCode(e)`: the `code` of a system error (`'ENOENT'`, `'SQLITE_CORRUPT'`, …) as a
 *   string; undefined for anything without one.
 * - `isMissing(e)`: the path, or a folder on the way to it, does not exist (`ENOENT`, `ENOTDIR`).
 * - `isUnresolvable(e)`: missing, a symlink loop stands in the way (`ELOOP`), or the path or a name
 *   on it is longer than the system allows (`ENAMETOOLONG`: no such file can exist).
 */

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined
}

export function isMissing(error: unknown): boolean {
  const code = errorCode(error)
  return code === 'ENOENT' || code === 'ENOTDIR'
}

export function isUnresolvable(error: unknown): boolean {
  const code = errorCode(error)
  return isMissing(error) || code === 'ELOOP' || code === 'ENAMETOOLONG'
}
