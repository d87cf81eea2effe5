/**
 * The time budget of the render running now (engine.ts `RenderOptions.deadline`): cooperative
 * check points the engine passes as it works.
 *
 * Contract:
 * - `withDeadline(deadline, run)` runs a render with a deadline (a `performance.now()`
 *   timestamp, or undefined for none); a render inside another (a filter that renders) keeps the
 *   earlier of the two. The previous budget is restored afterwards, also when `run` throws.
 * - `tick()` is one unit of work, `ticks(n)` n units (n items handled by a filter, a method, an
 *   operator). Every `TICKS_PER_CLOCK_CHECK` units the clock is read; past the deadline a
 *   `TemplateTimeoutError` is thrown (and thrown again at every later check point, so nothing
 *   that catches it can keep the render going). Without a deadline a tick is a decrement and a
 *   comparison, and the clock is never read.
 * - Check points (each passes one): every iteration of a `for` loop, every macro and `caller()`
 *   call, every include, import and extends, and every item or few characters of any iteration
 *   inside filters, tests, globals, methods and operators (protocols.ts `iterate` consumers,
 *   sorting comparisons, string scans), so no work runs long between two of them.
 * - Rendering is synchronous, so one budget per process is the current one (as eval-context.ts).
 */
import { TemplateTimeoutError } from './errors.js'

/** Units of work between two readings of the clock: about a microsecond each, so ~1 ms apart. */
export const TICKS_PER_CLOCK_CHECK = 1024
/** The countdown without a deadline: a small integer (a double here would be boxed anew at every tick). */
const UNBOUNDED = 0x3fffffff

let countdown = UNBOUNDED
let deadline = Infinity
let startedAt = 0

/** One unit of work. */
export function tick(): void {
  if (--countdown <= 0) lookAtClock()
}

/** `n` units of work. */
export function ticks(n: number): void {
  if ((countdown -= n) <= 0) lookAtClock()
}

function lookAtClock(): void {
  if (deadline === Infinity) {
    countdown = UNBOUNDED
    return
  }
  const now = performance.now()
  if (now >= deadline) {
    countdown = 0
    throw new TemplateTimeoutError(Math.max(0, Math.round(deadline - startedAt)), Math.round(now - startedAt))
  }
  countdown = TICKS_PER_CLOCK_CHECK
}

/** Runs `run` with a deadline (the earlier of it and the current one), restoring the budget after. */
export function withDeadline<T>(until: number | undefined, run: () => T): T {
  if (until === undefined || until >= deadline) return run()
  const savedCountdown = countdown
  const savedDeadline = deadline
  const savedStart = startedAt
  deadline = until
  startedAt = performance.now()
  // The first check comes after one unit: a render whose deadline has passed stops at once.
  countdown = 1
  try {
    return run()
  } finally {
    countdown = savedCountdown
    deadline = savedDeadline
    startedAt = savedStart
  }
}
