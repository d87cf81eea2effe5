/**
 * Files a watcher must report although they lie where it does not look (an excluded folder, say
 * `dist/`), whether they exist yet or not: a document reads `dist/version.txt`, which a build
 * writes, a clean deletes with its folder, and the next build writes again. Shared by build
 * watch (src/plugin/build-watcher.ts) and the command line's `watch` (project-watcher.ts).
 *
 * Contract: `trackUnwatchedFiles(root, watcher, onFound)` returns a tracker.
 * - `add(file)` (absolute, inside `root`, not `root` itself; else ignored; once per file): the
 *   nearest folder of it that exists is added to the chokidar `watcher` (its scan skipped the
 *   excluded folders). From then on the file and the folders on its way are let through
 *   (`onTheWay`), so it is reported when it appears, changes, goes, and appears again (a folder
 *   on its way created again is seen from the watched folder above it). A file missing when
 *   added is looked for again `MISSING_RECHECK_MS` later: chokidar sets a new watch up in the
 *   background, so a file created before it is ready is reported by no event. Found then and
 *   reported by no event meanwhile: `onFound(file)`.
 * - `onTheWay(path)`: whether `path` is such a file or a folder on the way to one (the watcher's
 *   `ignored` must let those through, and only those, under its exclusions).
 * - `reported(path)`: the watcher reported an event of `path` (it is not looked for again).
 * - `close()` cancels the pending looks.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isInsideFolder } from '../documents/project-paths.js'

/** When a missing file is looked for again, in case it appeared before the watch was set up. */
export const MISSING_RECHECK_MS = [300, 1500]

export interface UnwatchedFiles {
  add(file: string): void
  onTheWay(absolute: string): boolean
  reported(absolute: string): void
  close(): void
}

export function trackUnwatchedFiles(root: string, watcher: { add(path: string): unknown }, onFound: (file: string) => void): UnwatchedFiles {
  const tracked = new Set<string>()
  const unreported = new Set<string>()
  const looks = new Set<NodeJS.Timeout>()
  let closed = false
  return {
    add(file) {
      const absolute = path.resolve(file)
      if (closed || tracked.has(absolute) || !isInsideFolder(root, absolute) || absolute === root) return
      tracked.add(absolute)
      let folder = path.dirname(absolute)
      while (folder !== root && !fs.existsSync(folder)) folder = path.dirname(folder)
      watcher.add(folder)
      if (fs.existsSync(absolute)) return // its changes and deletion are reported as they come
      unreported.add(absolute)
      for (const delay of MISSING_RECHECK_MS) {
        const look = setTimeout(() => {
          looks.delete(look)
          if (!closed && unreported.has(absolute) && fs.existsSync(absolute)) {
            unreported.delete(absolute)
            onFound(absolute)
          }
        }, delay)
        look.unref()
        looks.add(look)
      }
    },
    onTheWay(absolute) {
      if (tracked.size === 0) return false
      for (const file of tracked) if (file === absolute || file.startsWith(absolute + path.sep)) return true
      return false
    },
    reported(absolute) {
      unreported.delete(absolute)
    },
    close() {
      closed = true
      for (const look of looks) clearTimeout(look)
      looks.clear()
    },
  }
}
