/**
 * Jinja's run-time eval context, reduced to what this environment can change: whether
 * `{% autoescape %}` is on where the template is running now.
 *
 * Contract: `autoescapeNow()` is true while the body of an `{% autoescape true %}` block (or of
 * a non-literal one whose value was true) runs, in the template that holds the block — and in
 * what that body calls: macros, `caller()`, blocks. `withAutoescape(enabled, run)` runs `run`
 * with that value and restores the previous one, also when `run` throws; `setAutoescape(enabled)`
 * sets it and returns the previous one (for callers that restore it themselves). An included or
 * imported template runs with its own (off, the environment's default). Jinja reads this at run
 * time for a macro's result (Markup when called inside such a block) and for the eval-context
 * filters (`join`, `replace`, `urlize`, `xmlattr`). Rendering is synchronous, so one value per
 * process is the current one.
 */
let active = false

export function autoescapeNow(): boolean {
  return active
}

export function withAutoescape<T>(enabled: boolean, run: () => T): T {
  const outer = active
  active = enabled
  try {
    return run()
  } finally {
    active = outer
  }
}

export function setAutoescape(enabled: boolean): boolean {
  const outer = active
  active = enabled
  return outer
}
