/**
 * The `fs:` host resources (SPEC §6): `fs:file:<rel>`, `fs:glob:<pattern>`, `fs:dir:<rel dir>`.
 *
 * Contract (each resolver takes the full identifier and reports `[identifier]` as dependencies):
 * - `fs:file:<rel>` → the file's UTF-8 text, a BOM kept (as Python's `read_text()` keeps it;
 *   invalid UTF-8 is an error, `file is not valid UTF-8: <rel>`). A `?query` suffix names the
 *   same file, exactly as the permission check ignores it, so the file read is always the file
 *   the permission covered. For a managed document (`ctx.isManagedDocument`) every region body is
 *   blanked (`blankRegionBodies`): generated output never becomes input; the query `?raw` (the
 *   host's `include`, SPEC §11: a file as it is on disk) reads it unblanked.
 *   Missing → `file not found: <rel>`; a folder → `not a file: <rel>`. `sources.exclude` does
 *   not apply: any file inside the root can be read by name.
 * - `fs:glob:<pattern>` → sorted project-relative paths of the files the walker lists minus
 *   `sources.exclude` only (`listProjectFiles` without gitignore rules: gitignored files are
 *   listed, as the Python implementation lists them, SPEC §11) that match the single gitignore
 *   pattern (`globMatcher`): `*.md` and
 *   `**\/*.md` match at any depth, `docs/*.md` is anchored, a folder pattern matches the files
 *   inside it. Only the pattern's static base folder (`globBase`) is walked; the walker never
 *   lists anything behind a symlink leading outside the root. A pattern with a `..` segment
 *   → `resource escapes project root: <identifier>`.
 * - `fs:dir:<rel dir>` (`""`/`.` = root) → every entry strictly below the folder minus
 *   `sources.exclude`, recursively, as `{path (project-relative), kind}` sorted by path; an entry
 *   git ignores (with `respectGitignore`, inside a git work tree) is listed too, marked
 *   `ignored: true` (SPEC §11; the `tree` builtin leaves those out, as the Python tree does). Missing →
 *   `directory not found: <rel>`; a file → `not a directory: <rel>`.
 * - `fs:file:` and `fs:dir:` paths are confined with `resolveInsideRoot`
 *   (`resource escapes project root: <identifier>`), and the file is then read from the opened
 *   descriptor after verifying where it really is (`readConfinedFile`), so a symlink swapped in
 *   after the check yields the same error, never the outside file; folders are listed the same way.
 * - A path or pattern deeper than 256 segments or longer than 4096 bytes →
 *   `resource path too deep: <identifier> (…)` (`assertPathDepth`), before any file-system work.
 */
import fs from 'node:fs'
import ignore from 'ignore'
import { isUnresolvable } from '../documents/fs-errors.js'
import { blankRegionBodies } from '../documents/regions.js'
import { listProjectEntries, listProjectFiles, type ProjectEntry } from '../documents/project-files.js'
import { readConfinedFile } from '../documents/confined-files.js'
import { assertPathDepth, resolveInsideRoot, toPosixRelative } from './confine.js'
import { stripQuery } from './identifiers.js'
import { realPathSync } from '../documents/real-path.js'

export interface FsResolveContext {
  /** Absolute project root. */
  root: string
  /** `sources.exclude`. */
  exclude: readonly string[]
  /** `sources.respect_gitignore`. */
  respectGitignore: boolean
  /** Whether the project-relative POSIX path is a managed (region-bearing) document. */
  isManagedDocument(relPath: string): boolean
}

export interface FsRead<T> {
  value: T
  dependencies: string[]
}

const FILE_SCHEME = 'fs:file:'
const GLOB_SCHEME = 'fs:glob:'
const DIR_SCHEME = 'fs:dir:'

function identifierBody(identifier: string, scheme: string): string {
  if (!identifier.startsWith(scheme)) throw new Error(`unsupported host resource: ${identifier}`)
  return identifier.slice(scheme.length)
}

function statOrUndefined(absolute: string): fs.Stats | undefined {
  try {
    return fs.statSync(absolute)
  } catch (error) {
    if (isUnresolvable(error)) return undefined
    throw error
  }
}

// ignoreBOM: the BOM stays in the text, as in Python's read_text() (issue #15).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** `fs:file:<rel>`: the file's text, managed documents with region bodies blanked (unless `?raw`). */
export function resolveFsFile(identifier: string, ctx: FsResolveContext): FsRead<string> {
  const body = identifierBody(identifier, FILE_SCHEME)
  const rel = stripQuery(body)
  const raw = body.length > rel.length && new URLSearchParams(body.slice(rel.length + 1)).has('raw')
  const absolute = resolveInsideRoot(ctx.root, rel, identifier)
  // Read what was checked: the opened descriptor is verified, a symlink swapped in is refused.
  const read = readConfinedFile(realPathSync(ctx.root), absolute)
  if (read.kind === 'outside') throw new Error(`resource escapes project root: ${identifier}`)
  if (read.kind === 'missing') throw new Error(`file not found: ${rel}`)
  if (read.kind !== 'file') throw new Error(`not a file: ${rel}`)
  let text: string
  try {
    text = utf8.decode(read.bytes)
  } catch (error) {
    if (error instanceof TypeError) throw new Error(`file is not valid UTF-8: ${rel}`)
    throw error
  }
  const relPath = toPosixRelative(ctx.root, absolute)
  const value = !raw && ctx.isManagedDocument(relPath) ? blankRegionBodies(text) : text
  return { value, dependencies: [identifier] }
}

/**
 * The file matcher `fs:glob:<pattern>` uses: the single gitignore pattern, case-sensitive,
 * against a project-relative POSIX file path (a path inside a matching folder matches too).
 */
export function globMatcher(pattern: string): (relPath: string) => boolean {
  const matcher = ignore({ ignoreCase: false, allowRelativePaths: true }).add([pattern])
  return (relPath) => relPath !== '' && matcher.ignores(relPath)
}

const GLOB_SPECIAL = /[*?[\]\\!]/

/**
 * The deepest folder every match of `pattern` lies in (`""` when unknown): the leading literal
 * segments of an anchored pattern, without its last segment. Exported for the watch layer.
 */
export function globBase(pattern: string): string {
  const trimmed = pattern.replace(/\/+$/, '')
  const inner = trimmed.replace(/^\//, '')
  const anchored = trimmed.startsWith('/') || inner.includes('/')
  if (!anchored || pattern.startsWith('!') || pattern.startsWith('#')) return ''
  const segments = inner.split('/').slice(0, -1)
  const base: string[] = []
  for (const segment of segments) {
    if (segment === '' || segment === '.' || segment === '..' || GLOB_SPECIAL.test(segment)) break
    base.push(segment)
  }
  return base.join('/')
}

/** `fs:glob:<pattern>`: sorted project-relative paths of the visible files matching it. */
export function resolveFsGlob(identifier: string, ctx: FsResolveContext): FsRead<string[]> {
  const pattern = identifierBody(identifier, GLOB_SCHEME)
  assertPathDepth(pattern, identifier)
  if (pattern.split('/').includes('..')) throw new Error(`resource escapes project root: ${identifier}`)
  const base = globBase(pattern)
  const matches = globMatcher(pattern)
  // Gitignored files are listed too, as the Python implementation lists them (issue #15).
  const files = listProjectFiles(ctx.root, { exclude: ctx.exclude, respectGitignore: false }, base)
  return { value: files.filter(matches), dependencies: [identifier] }
}

/** `fs:dir:<rel dir>`: every entry below the folder but the excluded ones, recursively (git-ignored ones marked). */
export function resolveFsDir(identifier: string, ctx: FsResolveContext): FsRead<ProjectEntry[]> {
  const rel = identifierBody(identifier, DIR_SCHEME)
  const absolute = resolveInsideRoot(ctx.root, rel === '' ? '.' : rel, identifier)
  const stat = statOrUndefined(absolute)
  if (!stat) throw new Error(`directory not found: ${rel}`)
  if (!stat.isDirectory()) throw new Error(`not a directory: ${rel}`)
  const under = toPosixRelative(ctx.root, absolute)
  const entries = listProjectEntries(ctx.root, { exclude: ctx.exclude, respectGitignore: ctx.respectGitignore, markIgnored: true }, under)
  return { value: entries, dependencies: [identifier] }
}
