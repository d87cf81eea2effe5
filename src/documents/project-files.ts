/**
 * The project file walker: which files and folders of a project exist for insitu.
 *
 * Contract:
 * - Input: the project root, `sources.exclude` (gitignore patterns, relative to the root) and
 *   `sources.respect_gitignore`. Output: project-relative POSIX paths, sorted by UTF-16 code
 *   unit (`Array.prototype.sort` order).
 * - A path is skipped when `exclude` matches it (gitignore semantics via `ignore`,
 *   case-sensitive), or, with `respectGitignore`, when the `.gitignore` files met on the way
 *   down (each relative to its own folder, deeper files taking precedence, `!` re-includes)
 *   or `.git/info/exclude` ignore it. With `respectGitignore`, entries named `.git` are always
 *   skipped (git never treats them as worktree content).
 * - Excluded or ignored folders are never entered, and are not listed themselves. A folder
 *   whose whole content an `X/**` pattern excludes counts as excluded when `exclude` has no
 *   `!` patterns (so the default `node_modules/**` and `.git/**` prune those folders).
 * - Symlinks are listed under their own path as what they point to, only when their target
 *   lies inside the (real) root; a symlinked folder that is one of its own ancestors is listed
 *   but not entered. Dangling links, sockets, FIFOs and devices are skipped. Each folder is
 *   listed through an opened descriptor verified to lie inside the real root
 *   (`listConfinedFolder`), so a folder swapped for a symlink to outside mid-walk is skipped.
 * - Only `.gitignore` files inside the root are read (not those of a parent repository).
 */
import fs from 'node:fs'
import path from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { listConfinedFolder } from './confined-files.js'
import { isInsideFolder, normalizePosixRelPath } from './project-paths.js'

export interface ProjectFilesOptions {
  /** gitignore-style patterns relative to the project root (`sources.exclude`). */
  exclude: readonly string[]
  /** Whether `.gitignore` files and `.git/info/exclude` also hide paths. */
  respectGitignore: boolean
}

export interface ProjectEntry {
  /** Project-relative POSIX path. */
  path: string
  kind: 'file' | 'directory'
}

function createIgnore(patterns: readonly string[] | string): Ignore {
  return ignore({ ignoreCase: false, allowRelativePaths: true }).add(
    typeof patterns === 'string' ? patterns : [...patterns],
  )
}

/**
 * A matcher for gitignore patterns relative to the root: `(relPath, isDirectory)` → matched.
 * Directories are tested with a trailing `/` so that directory-only patterns (`build/`) apply.
 * A path is also matched when one of its parent folders is.
 */
export function createPathMatcher(patterns: readonly string[]): (relPath: string, isDirectory?: boolean) => boolean {
  const matcher = createIgnore(patterns)
  return (relPath, isDirectory = false) => relPath !== '' && matcher.ignores(isDirectory ? `${relPath}/` : relPath)
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
 * Whether every pattern is `X/**` with at most a leading `**` segment in `X`: then a path is
 * excluded exactly when one of its folders matches an implied folder pattern, and the walk,
 * which never enters such a folder, need not test the paths it meets (the default `exclude`).
 */
function onlyFolderPatterns(patterns: readonly string[]): boolean {
  return patterns.every((pattern) => {
    if (pattern.startsWith('!') || !pattern.endsWith('/**') || pattern.length <= 3 || pattern.includes('\\')) return false
    return pattern
      .slice(0, -3)
      .split('/')
      .every((segment, i) => segment !== '' && (i === 0 || !segment.includes('**')))
  })
}

function createExcludeMatcher(patterns: readonly string[]): ExcludeMatcher {
  const implied = impliedFolderPatterns(patterns)
  const impliedMatches = implied.length > 0 ? createPathMatcher(implied) : () => false
  if (onlyFolderPatterns(patterns)) return { file: () => false, directory: (relPath) => impliedMatches(relPath, true) }
  const matches = createPathMatcher(patterns)
  return {
    file: (relPath) => matches(relPath, false),
    directory: (relPath) => matches(relPath, true) || impliedMatches(relPath, true),
  }
}

/** The rules of one `.gitignore` (or `.git/info/exclude`), relative to folder `base` (`""` or `dir/`). */
interface GitignoreLayer {
  base: string
  matcher: Ignore
}

function readRulesFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

function gitignoreLayer(root: string, relDir: string): GitignoreLayer | undefined {
  const text = readRulesFile(path.join(root, relDir, '.gitignore'))
  if (text === undefined) return undefined
  return { base: relDir === '' ? '' : `${relDir}/`, matcher: createIgnore(text) }
}

function rootLayers(root: string): GitignoreLayer[] {
  const layers: GitignoreLayer[] = []
  const infoExclude = readRulesFile(path.join(root, '.git', 'info', 'exclude'))
  if (infoExclude !== undefined) layers.push({ base: '', matcher: createIgnore(infoExclude) })
  const top = gitignoreLayer(root, '')
  if (top) layers.push(top)
  return layers
}

/** Decides with the deepest layer that has an opinion (ignored, or re-included with `!`). */
function isGitignored(layers: readonly GitignoreLayer[], relPath: string, isDirectory: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i -= 1) {
    const layer = layers[i] as GitignoreLayer
    const local = relPath.slice(layer.base.length)
    const result = layer.matcher.test(isDirectory ? `${local}/` : local)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}

interface Walk {
  root: string
  realRoot: string
  respectGitignore: boolean
  exclude: ExcludeMatcher
  entries: ProjectEntry[]
  activeRealDirs: Set<string>
}

/** Whether entry `relPath` is hidden, given the layers that apply in its folder. */
function isHidden(walk: Walk, layers: readonly GitignoreLayer[], relPath: string, name: string, isDirectory: boolean): boolean {
  if (isDirectory ? walk.exclude.directory(relPath) : walk.exclude.file(relPath)) return true
  if (!walk.respectGitignore) return false
  if (name === '.git') return true
  return isGitignored(layers, relPath, isDirectory)
}

function entryKind(walk: Walk, absolute: string, dirent: fs.Dirent): { kind: 'file' | 'directory'; realPath?: string } | undefined {
  if (dirent.isFile()) return { kind: 'file' }
  if (dirent.isDirectory()) return { kind: 'directory' }
  if (!dirent.isSymbolicLink()) return undefined
  let realPath: string
  let stat: fs.Stats
  try {
    realPath = fs.realpathSync(absolute)
    stat = fs.statSync(realPath)
  } catch {
    return undefined
  }
  if (!isInsideFolder(walk.realRoot, realPath)) return undefined
  if (stat.isFile()) return { kind: 'file', realPath }
  if (stat.isDirectory()) return { kind: 'directory', realPath }
  return undefined
}

function walkFolder(walk: Walk, relDir: string, realDir: string, inherited: readonly GitignoreLayer[]): void {
  let layers = inherited
  if (walk.respectGitignore && relDir !== '') {
    const own = gitignoreLayer(walk.root, relDir)
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
    const relPath = relDir === '' ? name : `${relDir}/${name}`
    const found = entryKind(walk, path.join(walk.root, relPath), dirent)
    if (!found) continue
    const isDirectory = found.kind === 'directory'
    if (isHidden(walk, layers, relPath, name, isDirectory)) continue
    walk.entries.push({ path: relPath, kind: found.kind })
    if (!isDirectory) continue
    const realChild = found.realPath ?? path.join(realDir, name)
    if (!walk.activeRealDirs.has(realChild)) walkFolder(walk, relPath, realChild, layers)
  }
  walk.activeRealDirs.delete(realDir)
}

function byPath(a: ProjectEntry, b: ProjectEntry): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : 0
}

/**
 * Every visible file and folder of the project (or, with `under`, strictly below that
 * project-relative folder), sorted by path. `under` is trusted: confine it first
 * (`resolveInsideRoot`). A hidden, missing or non-folder `under` yields `[]`.
 */
export function listProjectEntries(root: string, options: ProjectFilesOptions, under = ''): ProjectEntry[] {
  const absoluteRoot = path.resolve(root)
  const walk = newWalk(absoluteRoot, fs.realpathSync(absoluteRoot), options)
  const start = normalizePosixRelPath(under)
  let layers = walk.respectGitignore ? rootLayers(absoluteRoot) : []
  let realStart = walk.realRoot
  if (start !== '') {
    const segments = start.split('/')
    for (let i = 0; i < segments.length; i += 1) {
      const relPath = segments.slice(0, i + 1).join('/')
      if (isHidden(walk, layers, relPath, segments[i] as string, true)) return []
      if (walk.respectGitignore && i < segments.length - 1) {
        const own = gitignoreLayer(absoluteRoot, relPath)
        if (own) layers = [...layers, own]
      }
    }
    try {
      realStart = fs.realpathSync(path.join(absoluteRoot, start))
      if (!fs.statSync(realStart).isDirectory() || !isInsideFolder(walk.realRoot, realStart)) return []
    } catch {
      return []
    }
  }
  walkFolder(walk, start, realStart, layers)
  return walk.entries.sort(byPath)
}

function newWalk(root: string, realRoot: string, options: ProjectFilesOptions): Walk {
  return {
    root,
    realRoot,
    respectGitignore: options.respectGitignore,
    exclude: createExcludeMatcher(options.exclude),
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
  let layers = walk.respectGitignore ? rootLayers(absoluteRoot) : []
  for (let i = 0; i < segments.length; i += 1) {
    const current = segments.slice(0, i + 1).join('/')
    const last = i === segments.length - 1
    if (isHidden(walk, layers, current, segments[i] as string, last ? isDirectory : true)) return true
    if (!last && walk.respectGitignore) {
      const own = gitignoreLayer(absoluteRoot, current)
      if (own) layers = [...layers, own]
    }
  }
  return false
}
