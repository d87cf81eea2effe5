/**
 * A change a file watcher dropped, reported anyway (issue #14.1).
 *
 * chokidar (Vite's watcher, and the command line's) drops a `change` of a path that comes within
 * 50 ms of the last one it reported (its `_throttle`), for good: no trailing event follows. The
 * throttle is a timer in this process's event loop, so under load its window lasts longer than
 * 50 ms: a save 80 ms after the last can be dropped too. A save right after a write-back's echo,
 * or a second quick save of a task file, was never seen.
 *
 * Contract: `guardDroppedChanges(onDropped, { pollIntervalMs })` returns a guard whose
 * `reported(file, stats?)` is called from the watcher's own `change` listener, synchronously.
 * It notes the file's stamp then (modification and change times, size, inode: the stats the
 * watcher reported, else its own) and starts a 50 ms timer of its own: scheduled just after
 * chokidar's throttle timer, it fires just after that window closes (timers of one event loop
 * fire in the order they are due, however late a busy loop makes them), and the time it fires
 * is when the window closed. A little later (a polling watcher's interval more: it reports a
 * change only at its next poll) the stamp is compared again: when it differs, no report of the
 * file came in between, and the file was modified before the window closed, the change was
 * dropped and `onDropped(file)` is called (the caller reports it, e.g. by emitting `change` on
 * the watcher, which calls `reported` again). A change made after the window closed is the
 * watcher's to report, and is left to it (so it is never reported twice). A file gone meanwhile
 * is left to the watcher's `unlink`. `close()` cancels the pending checks.
 */
import fs from 'node:fs'

export interface DroppedChangeGuard {
  reported(file: string, stats?: fs.Stats): void
  close(): void
}

export interface DroppedChangeOptions {
  /**
   * A polling watcher's interval: it reports a change at its next poll, up to this long after
   * the change, so the check waits that long more. Polls more than 50 ms apart never fall inside
   * chokidar's window (libuv runs the throttle's earlier-due timer first), so they drop nothing and
   * the guard does nothing.
   * @default 0 (file system events)
   */
  pollIntervalMs?: number
}

/** chokidar's change throttle. */
const CHANGE_THROTTLE_MS = 50
/** After the window closed, how long a watcher with file system events may take to report a change. */
const REPORT_GRACE_MS = 10
/** File times come from a coarse kernel clock, which may lag this process's by a tick. */
const CLOCK_TICK_MS = 5

export function guardDroppedChanges(onDropped: (file: string) => void, options: DroppedChangeOptions = {}): DroppedChangeGuard {
  // Polls further apart than the window never detect a change inside it: nothing is dropped.
  if ((options.pollIntervalMs ?? 0) > CHANGE_THROTTLE_MS) return { reported: () => {}, close: () => {} }
  const checks = new Map<string, NodeJS.Timeout>()
  const lateBy = REPORT_GRACE_MS + (options.pollIntervalMs ?? 0)
  let closed = false
  return {
    reported(file, stats) {
      if (closed) return
      const reported = stats?.ino !== undefined ? stampOf(stats) : stampAt(file)
      clearTimeout(checks.get(file))
      const window = setTimeout(() => {
        const windowClosedAt = Date.now()
        const check = setTimeout(() => {
          checks.delete(file)
          if (closed) return
          const now = statAt(file)
          if (now === null || stampOf(now) === reported) return
          if (now.mtimeMs <= windowClosedAt + CLOCK_TICK_MS) onDropped(file)
        }, lateBy)
        check.unref()
        checks.set(file, check)
      }, CHANGE_THROTTLE_MS)
      window.unref()
      checks.set(file, window)
    },
    close() {
      closed = true
      for (const timer of checks.values()) clearTimeout(timer)
      checks.clear()
    },
  }
}

function stampOf(stats: fs.Stats): string {
  return `${stats.mtimeMs}:${stats.ctimeMs}:${stats.size}:${stats.ino}`
}

/** A file's stamp now, or null when it is gone. */
function stampAt(file: string): string | null {
  const stats = statAt(file)
  return stats === null ? null : stampOf(stats)
}

function statAt(file: string): fs.Stats | null {
  try {
    return fs.statSync(file)
  } catch {
    return null
  }
}
