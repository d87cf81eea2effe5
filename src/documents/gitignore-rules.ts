/**
 * git's ignore rules as they apply to a project's paths (`sources.respect_gitignore`, SPEC §11:
 * `.gitignore` files apply only inside a git work tree, as the Python implementation asks libgit2).
 *
 * Contract:
 * - `findWorkTree(root)`: the git work tree holding the project root — the nearest folder at or
 *   above the (real) root that has a `.git` folder, or a `.git` file naming the git folder
 *   (`gitdir: <path>`, a linked work tree or a submodule) — as `{ top, gitDir }`, or undefined
 *   outside any work tree (then no ignore rules apply at all).
 * - `rootLayers(root)`: the rules that apply at the project root: `<git dir>/info/exclude`, then
 *   every `.gitignore` from the work tree's top folder down to the root itself (a project in a
 *   subfolder of a repository gets its parents' rules, as git does), shallowest first;
 *   undefined outside a work tree (no rules at all, not even a folder's own `.gitignore`). `folderLayer(root, relDir)` is the `.gitignore` of a folder inside the
 *   project, or undefined. Each layer tests paths relative to its own folder.
 * - `isGitignored(layers, relPath, isDirectory)`: the deepest layer with an opinion decides
 *   (ignored, or re-included with `!`); folders are tested with a trailing `/`.
 * Not read: `core.excludesFile` (the user's global ignore file).
 */
import fs from 'node:fs'
import path from 'node:path'
import ignore, { type Ignore } from 'ignore'
import { realPathSync } from './real-path.js'

/** The rules of one ignore file, for project paths below `base` (`""` or `dir/`). */
export interface GitignoreLayer {
  /** Project-relative folder prefix the layer applies under (`""`: the whole project). */
  base: string
  /** The path from the layer's own folder down to `base` (`""`, or `docs/site/` for a parent's file). */
  above: string
  matcher: Ignore
}

export function createIgnore(patterns: readonly string[] | string): Ignore {
  return ignore({ ignoreCase: false, allowRelativePaths: true }).add(typeof patterns === 'string' ? patterns : [...patterns])
}

function readRulesFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}

export interface WorkTree {
  /** Absolute real path of the work tree's top folder. */
  top: string
  /** Absolute path of its git folder. */
  gitDir: string
}

export function findWorkTree(root: string): WorkTree | undefined {
  let folder: string
  try {
    folder = realPathSync(root)
  } catch {
    return undefined
  }
  for (;;) {
    const dotGit = path.join(folder, '.git')
    const stat = fs.statSync(dotGit, { throwIfNoEntry: false })
    if (stat?.isDirectory()) return { top: folder, gitDir: dotGit }
    if (stat?.isFile()) {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readRulesFile(dotGit) ?? '')
      if (pointer?.[1]) return { top: folder, gitDir: path.resolve(folder, pointer[1]) }
    }
    const parent = path.dirname(folder)
    if (parent === folder) return undefined
    folder = parent
  }
}

export function rootLayers(root: string): GitignoreLayer[] | undefined {
  const tree = findWorkTree(root)
  if (!tree) return undefined
  const realRoot = realPathSync(root)
  const fromTop = path.relative(tree.top, realRoot).split(path.sep).filter((segment) => segment !== '')
  const layers: GitignoreLayer[] = []
  const infoExclude = readRulesFile(path.join(tree.gitDir, 'info', 'exclude'))
  const aboveOf = (depth: number) => fromTop.slice(depth).map((segment) => `${segment}/`).join('')
  if (infoExclude !== undefined) layers.push({ base: '', above: aboveOf(0), matcher: createIgnore(infoExclude) })
  for (let depth = 0; depth <= fromTop.length; depth++) {
    const text = readRulesFile(path.join(tree.top, ...fromTop.slice(0, depth), '.gitignore'))
    if (text !== undefined) layers.push({ base: '', above: aboveOf(depth), matcher: createIgnore(text) })
  }
  return layers
}

export function folderLayer(root: string, relDir: string): GitignoreLayer | undefined {
  const text = readRulesFile(path.join(root, relDir, '.gitignore'))
  if (text === undefined) return undefined
  return { base: relDir === '' ? '' : `${relDir}/`, above: '', matcher: createIgnore(text) }
}

export function isGitignored(layers: readonly GitignoreLayer[], relPath: string, isDirectory: boolean): boolean {
  for (let i = layers.length - 1; i >= 0; i -= 1) {
    const layer = layers[i] as GitignoreLayer
    const local = layer.above + relPath.slice(layer.base.length)
    const result = layer.matcher.test(isDirectory ? `${local}/` : local)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}
