/**
 * The project file walker: which files and folders of a project exist for insitu.
 *
 * Contract:
 * - Input: the project root, `sources.exclude` (gitignore patterns, relative to the root) and
 *   `sources.respect_gitignore`. Output: project-relative POSIX paths, sorted by UTF-16 code
 *   unit (`Array.prototype.sort` order).
 * - A path is skipped when `exclude` matches it (gitignore semantics via `ignore`,
 *   case-sensitive), or, with `respectGitignore` and only inside a git work tree (SPEC §11), when
 *   git's ignore rules ignore it (gitignore-rules.ts: `info/exclude`, the `.gitignore` files of the
 *   work tree above the root and those met on the way down, deeper files taking precedence, `!`
 *   re-includes). With `respectGitignore`, entries named `.git` are always skipped (git never
 *   treats them as worktree content). With `markIgnored`, what git ignores is listed instead,
 *   marked `ignored: true` (its folders entered, everything in them marked too): the `fs:dir:`
 *   listing, which the `tree` builtin filters itself.
 * - Excluded or ignored folders are never entered, and are not listed themselves. A folder
 *   whose whole content an `X/**` pattern excludes counts as excluded when `exclude` has no
 *   `!` patterns (so the default `node_modules/**` and `.git/**` prune those folders).
 * - Symlinks are listed under their own path as what they point to, only when their target
 *   lies inside the (real) root; a symlinked folder that is one of its own ancestors is listed
 *   but not entered (a loop of links ends there: the walk is finite), and a listing `under` such
 *   a folder is empty, as the walk from the root has nothing under it. Dangling links, sockets, FIFOs and devices are skipped. Each folder is
 *   listed through an opened descriptor verified to lie inside the real root
 *   (`listConfinedFolder`), so a folder swapped for a symlink to outside mid-walk is skipped.
 */
import fs from 'node:fs'
import path from 'node:path'
import { listConfinedFolder } from './confined-files.js'
import { createIgnore, folderLayer, type GitignoreLayer, isGitignored, rootLayers } from './gitignore-rules.js'
import { isInsideFolder, isWriteBackTemporaryName, normalizePosixRelPath } from './project-paths.js'
import { realPathSync } from './real-path.js'

export interface ProjectFilesOptions {
  /** gitignore-style patterns relative to the project root (`sources.exclude`). */
  exclude: readonly string[]
  /** Whether git's ignore rules (inside a git work tree) also hide paths. */
  respectGitignore: boolean
  /** List what git ignores, marked `ignored: true`, instead of hiding it. @default false */
  markIgnored?: boolean
}

export interface ProjectEntry {
  /** Project-relative POSIX path. */
  path: string
  kind: 'file' | 'directory'
  /** Git ignores it (listed only with `markIgnored`). */
  ignored?: true
}

/**
 * A matcher for gitignore patterns relative to the root: `(relPath, isDirectory)` → matched.
 * Directories are tested with a trailing `/` so that directory-only patterns (`build/`) apply.
 * A path is also matched when one of its parent folders is.
 */
export function createPathMatcher(patterns: readonly string[]): (relPath: string, isDirectory?: boolean) => boolean {
  const suffixes = suffixPatterns(patterns)
  if (suffixes) return (relPath) => relPath !== '' && suffixes.some((suffix) => relPath.endsWith(suffix) || relPath.includes(`${suffix}/`))
  const matcher = createIgnore(patterns)
  return (relPath, isDirectory = false) => relPath !== '' && matcher.ignores(isDirectory ? `${relPath}/` : relPath)
}

/** `*.md` or `** /*.md` (no space), with a plain extension: a name suffix. */
const SUFFIX_PATTERN = /^(?:\*\*\/)?\*(\.[A-Za-z0-9_-]+)$/

/**
 * The suffixes when every pattern is a plain `*.ext` / `** /*.ext` (the default `include`):
 * gitignore matching then says a path matches exactly when one of its segments ends with one
 * of them (a folder `x.md` matches, and so does everything in it), whether it is a file or a
 * folder; asked for every file of every walk (issue #17), a suffix test costs far less than
 * the general matcher. Undefined for any other pattern list.
 */
function suffixPatterns(patterns: readonly string[]): string[] | undefined {
  if (patterns.length === 0) return undefined
  const suffixes: string[] = []
  for (const pattern of patterns) {
    const suffix = SUFFIX_PATTERN.exec(pattern)?.[1]
    if (suffix === undefined) return undefined
    suffixes.push(suffix)
  }
  return suffixes
}

/**
 * Folder patterns implied by `X/**` patterns: `X/**` matches everything inside `X`, so with
 * no `!` pattern able to re-include something, the folder `X` itself can be skipped. Anchoring
 * is kept: `dist/**` (anchored, it has an inner slash) becomes `/dist/`, not `dist/`.
 */
function impliedFolderPatterns(patterns: readonly string[]): string[] {
  if (patterns.some((pattern) => pattern.startsWith('!'))) return []
  const folders: string[] = []
  for (const pattern of patterns) {
    if (!pattern.endsWith('/**') || pattern.length <= 3) continue
    const base = pattern.slice(0, -3)
    folders.push(base.includes('/') ? `${base}/` : `/${base}/`)
  }
  return folders
}

interface ExcludeMatcher {
  file(relPath: string): boolean
  directory(relPath: string): boolean
}

/**
 * `X/**` with at most a leading `**` segment in `X`: it excludes exactly what lies in the
 * folders its implied folder pattern matches (`impliedFolderPatterns`), never one of those
 * folders' ancestors or a path elsewhere.
 */
function isFolderContentPattern(pattern: string): boolean {
  if (pattern.startsWith('!') || !pattern.endsWith('/**') || pattern.length <= 3 || pattern.includes('\\')) return false
  return pattern
    .slice(0, -3)
    .split('/')
    .every((segment, i) => segment !== '' && (i === 0 || !segment.includes('**')))
}

/** `X/` (gitignore: matches folders only), written plainly (no `!`, no escapes). */
function isFolderOnlyPattern(pattern: string): boolean {
  return pattern.length > 1 && pattern.endsWith('/') && !pattern.startsWith('!') && !pattern.includes('\\')
}

/**
 * One matcher per `exclude` list (the options' own array, kept as long as they are): every
 * walk, and every watcher event's `isIgnored`, would otherwise compile the same patterns again.
 */
const excludeMatchers = new WeakMap<readonly string[], ExcludeMatcher>()

function excludeMatcherOf(patterns: readonly string[]): ExcludeMatcher {
  let matcher = excludeMatchers.get(patterns)
  if (!matcher) {
    matcher = createExcludeMatcher(patterns)
    excludeMatchers.set(patterns, matcher)
  }
  return matcher
}

function createExcludeMatcher(patterns: readonly string[]): ExcludeMatcher {
  const implied = impliedFolderPatterns(patterns)
  const impliedMatches = implied.length > 0 ? createPathMatcher(implied) : () => false
  if (patterns.some((pattern) => pattern.startsWith('!'))) {
    // A `!` pattern re-includes by order: every pattern is tested, as written.
    const matches = createPathMatcher(patterns)
    return {
      file: (relPath) => matches(relPath, false),
      directory: (relPath) => matches(relPath, true) || impliedMatches(relPath, true),
    }
  }
  // The walk tests a path only once none of its folders is excluded (it never enters one, and
  // `isIgnored` tests the folders first). Then an `X/**` pattern matches nothing more than its
  // implied folder pattern does, and a folder-only `X/` no file: each path is tested against
  // the patterns that can still match it (the default `exclude` leaves files none at all, so
  // a walk of 10,000 files tests none of them).
  const forFolders = patterns.filter((pattern) => !isFolderContentPattern(pattern))
  const forFiles = forFolders.filter((pattern) => !isFolderOnlyPattern(pattern))
  const folderMatches = forFolders.length > 0 ? createPathMatcher(forFolders) : () => false
  const fileMatches = forFiles.length > 0 ? createPathMatcher(forFiles) : () => false
  return {
    file: (relPath) => fileMatches(relPath, false),
    directory: (relPath) => folderMatches(relPath, true) || impliedMatches(relPath, true),
  }
}

interface Walk {
  root: string
  realRoot: string
  respectGitignore: boolean
  /** git's rules apply: `respectGitignore` and the root lies in a git work tree. */
  gitRules: boolean
  markIgnored: boolean
  exclude: ExcludeMatcher
  entries: ProjectEntry[]
  activeRealDirs: Set<string>
}

/** Whether entry `relPath` is excluded (`true`), git ignores it (`'ignored'`), or neither, given the layers of its folder. */
function hiddenAs(walk: Walk, layers: readonly GitignoreLayer[], relPath: string, name: string, isDirectory: boolean): boolean | 'ignored' {
  if (isDirectory ? walk.exclude.directory(relPath) : walk.exclude.file(relPath)) return true
  if (!walk.respectGitignore) return false
  if (name === '.git') return true
  return walk.gitRules && isGitignored(layers, relPath, isDirectory) ? 'ignored' : false
}

function isHidden(walk: Walk, layers: readonly GitignoreLayer[], relPath: string, name: string, isDirectory: boolean): boolean {
  return hiddenAs(walk, layers, relPath, name, isDirectory) !== false
}

function entryKind(walk: Walk, absolute: string, dirent: fs.Dirent): { kind: 'file' | 'directory'; realPath?: string } | undefined {
  if (dirent.isFile()) return { kind: 'file' }
  if (dirent.isDirectory()) return { kind: 'directory' }
  if (!dirent.isSymbolicLink()) return undefined
  let realPath: string
  let stat: fs.Stats
  try {
    realPath = realPathSync(absolute)
    stat = fs.statSync(realPath)
  } catch {
    return undefined
  }
  if (!isInsideFolder(walk.realRoot, realPath)) return undefined
  if (stat.isFile()) return { kind: 'file', realPath }
  if (stat.isDirectory()) return { kind: 'directory', realPath }
  return undefined
}

function walkFolder(walk: Walk, relDir: string, realDir: string, inherited: readonly GitignoreLayer[], ignored = false): void {
  let layers = inherited
  if (walk.respectGitignore && relDir !== '' && !ignored && walk.gitRules) {
    const own = folderLayer(walk.root, relDir)
    if (own) layers = [...inherited, own]
  }
  let dirents: fs.Dirent[] | string
  try {
    // Listed from the opened folder after verifying it is inside the root (no symlink swap race).
    dirents = listConfinedFolder(walk.realRoot, path.join(walk.root, relDir))
  } catch {
    return
  }
  if (typeof dirents === 'string') return
  walk.activeRealDirs.add(realDir)
  for (const dirent of dirents) {
    const name = dirent.name
    // A write-back's temporary or backup file (there for microseconds, or left by a killed process): never listed.
    if (isWriteBackTemporaryName(name)) continue
    const relPath = relDir === '' ? name : `${relDir}/${name}`
    const found = entryKind(walk, path.join(walk.root, relPath), dirent)
    if (!found) continue
    const isDirectory = found.kind === 'directory'
    // Inside an ignored folder everything is ignored (git cannot re-include it) unless excluded.
    const own = hiddenAs(walk, layers, relPath, name, isDirectory)
    const hidden = own === false && ignored ? 'ignored' : own
    if (hidden === true || (hidden === 'ignored' && !walk.markIgnored)) continue
    walk.entries.push(hidden === 'ignored' ? { path: relPath, kind: found.kind, ignored: true } : { path: relPath, kind: found.kind })
    if (!isDirectory) continue
    const realChild = found.realPath ?? path.join(realDir, name)
    if (!walk.activeRealDirs.has(realChild)) walkFolder(walk, relPath, realChild, layers, hidden === 'ignored')
  }
  walk.activeRealDirs.delete(realDir)
}

function byPath(a: ProjectEntry, b: ProjectEntry): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0
}

/**
 * Every visible file and folder of the project (or, with `under`, strictly below that
 * project-relative folder), sorted by path. `under` is trusted: confine it first
 * (`resolveInsideRoot`). A hidden, missing or non-folder `under` yields `[]`. A write-back's
 * temporary or backup file (`isWriteBackTemporaryName`) is never listed, nor ignored-and-listed.
 */
export function listProjectEntries(root: string, options: ProjectFilesOptions, under = ''): ProjectEntry[] {
  const absoluteRoot = path.resolve(root)
  const walk = newWalk(absoluteRoot, realPathSync(absoluteRoot), options)
  const start = normalizePosixRelPath(under)
  let layers = gitLayers(walk, absoluteRoot)
  let realStart = walk.realRoot
  let ignored = false
  if (start !== '') {
    const segments = start.split('/')
    for (let i = 0; i < segments.length; i += 1) {
      const relPath = segments.slice(0, i + 1).join('/')
      const own = hiddenAs(walk, layers, relPath, segments[i] as string, true)
      const hidden: boolean | 'ignored' = own === false && ignored ? 'ignored' : own
      if (hidden === true || (hidden === 'ignored' && !walk.markIgnored)) return []
      ignored = hidden === 'ignored'
      if (walk.respectGitignore && i < segments.length - 1 && !ignored && walk.gitRules) {
        const own = folderLayer(absoluteRoot, relPath)
        if (own) layers = [...layers, own]
      }
    }
    try {
      realStart = realPathSync(path.join(absoluteRoot, start))
      if (!fs.statSync(realStart).isDirectory() || !isInsideFolder(walk.realRoot, realStart)) return []
      // The folders above `under` are being walked, as in a walk from the root: a link among
      // them back to one of them is listed there and not entered, so it is not entered here.
      walk.activeRealDirs.add(walk.realRoot)
      for (let i = 1; i < segments.length; i += 1) walk.activeRealDirs.add(realPathSync(path.join(absoluteRoot, ...segments.slice(0, i))))
    } catch {
      return []
    }
    if (walk.activeRealDirs.has(realStart)) return []
  }
  walkFolder(walk, start, realStart, layers, ignored)
  return walk.entries.sort(byPath)
}

/** The root's git ignore layers (none outside a work tree, which `walk.gitRules` then says). */
function gitLayers(walk: Walk, absoluteRoot: string): GitignoreLayer[] {
  const layers = walk.respectGitignore ? rootLayers(absoluteRoot) : undefined
  walk.gitRules = layers !== undefined
  return layers ?? []
}

function newWalk(root: string, realRoot: string, options: ProjectFilesOptions): Walk {
  return {
    root,
    realRoot,
    respectGitignore: options.respectGitignore,
    gitRules: false,
    markIgnored: options.markIgnored ?? false,
    exclude: excludeMatcherOf(options.exclude),
    entries: [],
    activeRealDirs: new Set(),
  }
}

/** Project-relative POSIX paths of the visible regular files (see `listProjectEntries`). */
export function listProjectFiles(root: string, options: ProjectFilesOptions, under = ''): string[] {
  return listProjectEntries(root, options, under)
    .filter((entry) => entry.kind === 'file')
    .map((entry) => entry.path)
}

/**
 * Whether the walker would hide `relPath` (it, or one of its parent folders, is excluded or
 * gitignored). Reads the `.gitignore` files along the path on every call; for one-off checks
 * such as a watcher event, not for bulk use.
 */
export function isIgnored(root: string, options: ProjectFilesOptions, relPath: string, isDirectory = false): boolean {
  const absoluteRoot = path.resolve(root)
  const walk = newWalk(absoluteRoot, absoluteRoot, options)
  const segments = normalizePosixRelPath(relPath).split('/').filter((segment) => segment !== '')
  if (!isDirectory && segments.length > 0 && isWriteBackTemporaryName(segments.at(-1)!)) return true
  let layers = gitLayers(walk, absoluteRoot)
  for (let i = 0; i < segments.length; i += 1) {
    const current = segments.slice(0, i + 1).join('/')
    const last = i === segments.length - 1
    if (isHidden(walk, layers, current, segments[i] as string, last ? isDirectory : true)) return true
    if (!last && walk.gitRules) {
      const own = folderLayer(absoluteRoot, current)
      if (own) layers = [...layers, own]
    }
  }
  return false
}
