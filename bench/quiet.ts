/**
 * Waiting until this Node process is quiet before the next timed edit of a hot-reload
 * benchmark (bench/hmr-edits.ts), so that one edit does not overlap the tail of the previous
 * one (at 10,000 documents Vite's watcher re-reads the edited file's folder, about 550 ms of
 * main-thread time, and the plugin's follow-up work and the page's fetch run after the DOM
 * already shows the edit). Both dev servers of a benchmark run in this process, so its quiet
 * covers both.
 *
 * Contract: `waitForQuiet(options)` resolves once
 * - at least `minMs` have passed (Vite's watcher drops a change that follows the previous event
 *   on the same file within a few tens of milliseconds), and then
 * - a window of `windowMs` has passed in which every `tickMs` timer fired at most `maxLagMs`
 *   late (the event loop was free) and the process's CPU time (`process.cpuUsage()`, user +
 *   system, every thread of the process) grew by at most `maxCpuShare` of the window's wall
 *   time; a late timer or more CPU restarts the window;
 * - or `capMs` after the call, whichever comes first (then `capped` is true: the caller
 *   proceeds and counts it).
 * It reports how long it waited. Nothing is asserted: the machine is shared, and its other load
 * shows up as late timers (a longer wait), never as a wrong measurement.
 */
import { setTimeout } from 'node:timers/promises'

export interface QuietOptions {
  /** Milliseconds to wait in any case. @default 200 */
  minMs?: number
  /** Milliseconds the process must stay quiet. @default 150 */
  windowMs?: number
  /** Interval of the probing timer, in milliseconds. @default 10 */
  tickMs?: number
  /** How late (ms) a probing timer may fire in a quiet window. @default 8 */
  maxLagMs?: number
  /** CPU time of the process over a quiet window, as a share of its wall time. @default 0.1 */
  maxCpuShare?: number
  /** Milliseconds after which to stop waiting. @default 10_000 */
  capMs?: number
}

export interface QuietWait {
  /** Milliseconds from the call to the end of the wait. */
  waitedMs: number
  /** True when `capMs` ran out before a quiet window. */
  capped: boolean
}

/** The time Vite's watcher needs between two changes of one file (see the header). */
export const SETTLE_MS = 200

export async function waitForQuiet(options: QuietOptions = {}): Promise<QuietWait> {
  const { minMs = SETTLE_MS, windowMs = 150, tickMs = 10, maxLagMs = 8, maxCpuShare = 0.1, capMs = 10_000 } = options
  const started = performance.now()
  await setTimeout(minMs)
  let windowStart = performance.now()
  let cpuAtStart = process.cpuUsage()
  for (;;) {
    const before = performance.now()
    await setTimeout(tickMs)
    const now = performance.now()
    if (now - started >= capMs) return { waitedMs: now - started, capped: true }
    const cpu = process.cpuUsage(cpuAtStart)
    const cpuMs = (cpu.user + cpu.system) / 1000
    if (now - before - tickMs > maxLagMs || cpuMs > maxCpuShare * windowMs) {
      windowStart = now
      cpuAtStart = process.cpuUsage()
      continue
    }
    if (now - windowStart >= windowMs) return { waitedMs: now - started, capped: false }
  }
}
