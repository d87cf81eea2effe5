/**
 * Resource identifier text: queries and the paths `fs:` identifiers name.
 *
 * Contract: `stripQuery` drops a `?query`; `splitQuery` splits `name?k=v&…` into the name and
 * its string-valued query (SPEC §6: query values are strings); `fsPathOf` gives the
 * normalized project-relative POSIX path an `fs:file:`/`fs:dir:` body names (query removed,
 * `.`/`..` segments resolved, `""` for the root), or null when it is absolute or leaves the
 * root. Permission checks and the dependency graph both key on `fsPathOf`, so the path that is
 * permitted and watched is the path that is read.
 */
import path from 'node:path/posix'
import { isRootedPath } from '../documents/project-paths.js'

/** Removes a `?query` suffix (everything from the first `?`). */
export function stripQuery(text: string): string {
  const at = text.indexOf('?')
  return at < 0 ? text : text.slice(0, at)
}

/** `name?k=v&k2=v2` → the name and its string-valued query. */
export function splitQuery(text: string): { name: string; query: Record<string, string> } {
  const at = text.indexOf('?')
  if (at < 0) return { name: text, query: {} }
  return { name: text.slice(0, at), query: Object.fromEntries(new URLSearchParams(text.slice(at + 1))) }
}

/**
 * A body `fsPathOf` gives back as it is: `/`-separated segments, none empty, `.` or `..`, with
 * no `?` or `\\`, not starting with a drive (`C:`). The dependency graph keys every dependency
 * of every run with it (issue #17: the full normalization was about 5% of a folder index's render).
 */
const ALREADY_NORMAL = /^(?![A-Za-z]:)(?!\.\.?(?:\/|$))[^/?\\]+(?:\/(?!\.\.?(?:\/|$))[^/?\\]+)*$/

/** The normalized project-relative path of an `fs:file:`/`fs:dir:` body, or null outside the root. */
export function fsPathOf(body: string): string | null {
  if (ALREADY_NORMAL.test(body)) return body
  const text = stripQuery(body).replace(/\\/g, '/')
  if (isRootedPath(text)) return null
  const normalized = path.normalize(text === '' ? '.' : text).replace(/\/+$/, '')
  if (normalized === '..' || normalized.startsWith('../')) return null
  return normalized === '.' ? '' : normalized
}
