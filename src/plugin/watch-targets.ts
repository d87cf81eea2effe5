/**
 * Which paths build watch hands to `addWatchFile` for one dependency identifier (the table of
 * docs/guide/hot-reload.md; a dev server hands none, serve-document.ts).
 *
 * Contract: `watchTargets(engine, dependency)` returns absolute paths (native separators, as
 * Rollup's watcher reports them) of files that exist right now: an existing `fs:file:` file,
 * and every managed document for `index:documents` and `sql:model:*`. Never a folder: Rollup
 * and Rolldown watch folders recursively, so a folder handed to them reports every file written
 * inside it — the write-back's own temporary and backup files beside a written document (issue
 * #14.5: a `tree` region over a document's own folder rebuilt twice per change), and the build
 * output under the root. What a folder dependency waits for (a file created or deleted under an
 * `fs:glob:` base or an `fs:dir:`, a missing `fs:file:` appearing) the plugin's own build
 * watcher reports (build-watcher.ts: the whole project, minus `sources.exclude`, the output and
 * write-back files), waking the bundler once (a missing `fs:file:` under `sources.exclude` too:
 * serve-document.ts hands it to that watcher, `watchMissing`).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { InsituEngine } from '../engine/engine.js'
import { fsPathOf } from '../resources/identifiers.js'

export function watchTargets(engine: InsituEngine, dependency: string): string[] {
  const root = engine.root
  if (dependency.startsWith('fs:file:')) {
    // The path that is read (query dropped, `..` resolved); never one outside the project.
    const relative = fsPathOf(dependency.slice('fs:file:'.length))
    if (relative === null || relative === '') return []
    const file = path.resolve(root, relative)
    return fs.existsSync(file) ? [file] : []
  }
  if (dependency === 'index:documents' || dependency.startsWith('sql:model:')) {
    return engine.index.documentPaths().map((p) => path.resolve(root, p))
  }
  return []
}
