/**
 * May this process write documents, and must it check them? The one place that decides it.
 *
 * Contract: `diskMode({ check, write })` is 'check' whenever `check` is on (whatever `write`
 * says), else 'write' when `write` is on, else 'none'. It is the same rule for every process
 * that renders documents: a Vite dev server (middleware mode and Astro's content sync
 * included), `vite build`, build watch, plain Rollup and the command line. In 'check' nothing
 * is ever written (a dev server still serves current text; a build fails when a document is
 * stale); in 'write' documents are kept current on disk; in 'none' they are only served. The
 * plugin calls it once per resolved config and the command line once per run; nothing
 * downstream reads the `check` and `write` options again (issue #14.3: a check that can pass
 * by fixing the files it checks is worse than none).
 */

export type DiskMode = 'none' | 'check' | 'write'

export function diskMode(options: { check: boolean; write: boolean }): DiskMode {
  if (options.check) return 'check'
  return options.write ? 'write' : 'none'
}
