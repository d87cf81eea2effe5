/**
 * A change a file watcher dropped, reported anyway (issue #14.1).
 *
 * chokidar (Vite's watcher, and the command line's) drops a `change` of a path that comes within
 * 50 ms of the last one it reported (its `_throttle`), for good: no trailing event follows. The
 * throttle is a timer in this process's event loop, so under load its window lasts longer than
 * 50 ms: a save 80 ms after the last can be dropped too. A save right after a write-back's echo,
 * or a second quick save of a task file, was never seen.
 *
 * Contract: `guardDroppedChanges(onDropped)` returns a guard whose `reported(file, stats?)` is called
 * from the watcher's own `change` listener, synchronously (so that the guard's timer is scheduled
 * after chokidar's throttle timer). It notes the file's modification time and size then, and
 * compares them again CHECK_AFTER_MS later: timers of one event loop fire in the order they are
 * due, so by then chokidar's window has closed, and a change after it the watcher reports itself.
 * When they differ and no report of the file came in between, `onDropped(file)` is called: a
 * change the watcher will never report (the caller reports it, e.g. by emitting `change` on the
 * watcher, which calls `reported` again). A file gone meanwhile is left to the watcher's `unlink`.
 * `close()` cancels the pending checks.
 */
import fs from 'node:fs'

export interface DroppedChangeGuard {
  reported(file: string, stats?: { mtimeMs: number; size: number }): void
  close(): void
}

/** chokidar's change throttle. */
const CHANGE_THROTTLE_MS = 50
/** When a reported change's file is checked again: after chokidar's throttle timer (scheduled first, shorter) has fired. */
export const CHECK_AFTER_MS = CHANGE_THROTTLE_MS + 10

export function guardDroppedChanges(onDropped: (file: string) => void): DroppedChangeGuard {
  const checks = new Map<string, NodeJS.Timeout>()
  let closed = false
  return {
    reported(file, stats) {
      if (closed) return
      const reported = stats ? stampOf(stats) : stampAt(file)
      clearTimeout(checks.get(file))
      const timer = setTimeout(() => {
        checks.delete(file)
        const now = stampAt(file)
        if (!closed && now !== null && now !== reported) onDropped(file)
      }, CHECK_AFTER_MS)
      timer.unref()
      checks.set(file, timer)
    },
    close() {
      closed = true
      for (const timer of checks.values()) clearTimeout(timer)
      checks.clear()
    },
  }
}

function stampOf(stats: { mtimeMs: number; size: number }): string {
  return `${stats.mtimeMs}:${stats.size}`
}

/** A file's modification time and size now, or null when it is gone. */
function stampAt(file: string): string | null {
  try {
    return stampOf(fs.statSync(file))
  } catch {
    return null
  }
}
