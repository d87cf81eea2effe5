/**
 * Builtin transform `tree` (SPEC §8): a ```text tree of the document's directory, as the
 * Python implementation prints it.
 *
 * Options: `depth` (default 1, 0..32; 0 prints the root line only), `directories_only`
 * (default false), `exclude` (gitignore patterns matched against PROJECT-ROOT-relative paths,
 * folders with a trailing `/`; as with Python's pathspec, `a/**` also matches the folder `a/`
 * itself; an excluded folder hides everything in it). Entries come from `fs:dir:<dir or .>`
 * (so the walk's `sources.exclude` applies and that identifier is the dependency); entries it
 * marks `ignored` (git ignores them, inside a work tree) are left out, as the Python tree leaves
 * them out. Directories come first, then names ordered by Python's `str.casefold()`, ties by
 * code point (SPEC §11: not UTF-16 units, not `toLowerCase()`); directories end with `/`. The first line is the folder's own name with `/`: at the project root, the project
 * folder's name (`my-site/`), never `./`.
 */
import path from 'node:path/posix'
import type { ProjectEntry } from '../documents/project-files.js'
import { createPathMatcher } from '../documents/project-files.js'
import type { BuiltinCapability } from '../host/host.js'
import { compareCasefolded } from '../values/python-casefold.js'
import { optionalBoolean, optionalInteger, optionalStringArray } from './options.js'

interface TreeNode {
  name: string
  directory: boolean
  children: TreeNode[]
}

export const treeTransform: BuiltinCapability = {
  kind: 'transform',
  name: 'tree',
  async invoke({ options, location }, context) {
    const depth = optionalInteger(options, 'depth', 'tree', 0, 32) ?? 1
    const directoriesOnly = optionalBoolean(options, 'directories_only', 'tree') ?? false
    const exclude = optionalStringArray(options, 'exclude', 'tree')
    const directory = location.directory || '.'
    const entries = (await context.read(`fs:dir:${directory}`)) as ProjectEntry[]
    const excluded = createTreeExcludeMatcher(exclude)
    const rootName = path.basename(directory === '.' ? context.host.config.root : directory)
    const root: TreeNode = { name: rootName, directory: true, children: [] }
    const nodes = new Map<string, TreeNode>([['', root]])
    const prefix = directory === '.' ? '' : `${directory}/`
    for (const entry of entries) {
      const relative = entry.path.startsWith(prefix) ? entry.path.slice(prefix.length) : entry.path
      const isDirectory = entry.kind === 'directory'
      if (!relative || entry.ignored || (directoriesOnly && !isDirectory)) continue
      if (relative.split('/').length > depth) continue
      if (excluded(entry.path, isDirectory)) continue
      const parent = nodes.get(path.dirname(relative) === '.' ? '' : path.dirname(relative))
      if (!parent) continue
      const node: TreeNode = { name: path.basename(relative), directory: isDirectory, children: [] }
      parent.children.push(node)
      if (isDirectory) nodes.set(relative, node)
    }
    return { content: ['```text', `${root.name}/`, ...renderChildren(root, ''), '```'].join('\n') }
  },
}

/**
 * `exclude` as pathspec's gitwildmatch applies it to `path` (+ `/` for a folder): gitignore
 * rules, last match wins, and `X/**` (or `!X/**`) also matches the folder `X/` itself, so each
 * such pattern is followed by its folder form (anchored like the original).
 */
function createTreeExcludeMatcher(patterns: readonly string[]): (relPath: string, isDirectory: boolean) => boolean {
  const expanded = patterns.flatMap((pattern) => {
    const negated = pattern.startsWith('!')
    const body = negated ? pattern.slice(1) : pattern
    if (!body.endsWith('/**') || body.length <= 3) return [pattern]
    const base = body.slice(0, -3)
    const folder = base.includes('/') ? `${base}/` : `/${base}/`
    return [pattern, `${negated ? '!' : ''}${folder}`]
  })
  return createPathMatcher(expanded)
}

function renderChildren(node: TreeNode, indent: string): string[] {
  const children = [...node.children].sort(
    (a, b) => Number(b.directory) - Number(a.directory) || compareCasefolded(a.name, b.name),
  )
  return children.flatMap((child, i) => {
    const last = i === children.length - 1
    const line = `${indent}${last ? '└── ' : '├── '}${child.name}${child.directory ? '/' : ''}`
    return [line, ...renderChildren(child, indent + (last ? '    ' : '│   '))]
  })
}

