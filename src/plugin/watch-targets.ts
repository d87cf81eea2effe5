/**
 * Which paths to hand to `addWatchFile` for one dependency identifier (DESIGN.md's table).
 *
 * Contract: `watchTargets(engine, dependency, buildWatch)` returns absolute paths (native
 * separators, as Rollup's watcher reports them) that exist right now — `addWatchFile` on a
 * missing path becomes a failing import in dev.
 * - Dev server: an existing `fs:file:` file only; everything else goes through `hotUpdate`.
 * - Build watch (Rollup, Rolldown): also, for a missing `fs:file:`, its nearest existing
 *   parent folder (so creating the file starts a rebuild); the static base folder of an
 *   `fs:glob:` and the folder of an `fs:dir:`; and every managed document for `index:documents`
 *   and `sql:model:*`. A folder is never the project root (nor above it): Rollup and Rolldown
 *   watch folders recursively, the root holds the build output (`dist/`), and watching it
 *   would make every output write start another build, endlessly. So in build watch, a file
 *   created directly at the root, or under a glob or `fs:dir:` based at the root, goes unseen.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { InsituEngine } from '../engine/engine.js'
import { isBelowFolder } from '../documents/project-paths.js'
import { fsPathOf } from '../resources/identifiers.js'
import { globBase } from '../resources/fs.js'

export function watchTargets(engine: InsituEngine, dependency: string, buildWatch: boolean): string[] {
  const root = engine.root
  if (dependency.startsWith('fs:file:')) {
    // The path that is read (query dropped, `..` resolved); never one outside the project.
    const relative = fsPathOf(dependency.slice('fs:file:'.length))
    if (relative === null || relative === '') return []
    const file = path.resolve(root, relative)
    if (fs.existsSync(file)) return [file]
    if (!buildWatch) return []
    const folder = nearestExistingFolder(path.dirname(file))
    return folder !== null && isBelowFolder(root, folder) ? [folder] : []
  }
  if (!buildWatch) return []
  const folder = dependency.startsWith('fs:glob:')
    ? globBase(dependency.slice('fs:glob:'.length))
    : dependency.startsWith('fs:dir:')
      ? dependency.slice('fs:dir:'.length)
      : null
  if (folder !== null) {
    const relative = fsPathOf(folder)
    if (relative === null || relative === '') return []
    const absolute = path.resolve(root, relative)
    return isBelowFolder(root, absolute) && fs.existsSync(absolute) ? [absolute] : []
  }
  if (dependency === 'index:documents' || dependency.startsWith('sql:model:')) {
    return engine.index.documentPaths().map((p) => path.resolve(root, p))
  }
  return []
}

function nearestExistingFolder(start: string): string | null {
  let folder = start
  for (;;) {
    try {
      if (fs.statSync(folder).isDirectory()) return folder
      return null
    } catch {
      const parent = path.dirname(folder)
      if (parent === folder) return null
      folder = parent
    }
  }
}
