import { describe, expect, it } from 'vitest'
import { diskMode } from '../../src/sync/disk-mode.js'

/**
 * Every process that renders documents decides with the same call (issue #14.3): a dev server
 * (middleware mode and Astro's content sync included), a build, build watch, and the command line.
 */
describe('diskMode: check wins over write in every server, build and run', () => {
  const processes = ['dev server', 'middleware-mode server', 'build', 'build watch', 'command line'] as const
  const table = [
    { check: false, write: false, mode: 'none' },
    { check: false, write: true, mode: 'write' },
    { check: true, write: false, mode: 'check' },
    { check: true, write: true, mode: 'check' },
  ] as const
  for (const kind of processes) {
    for (const { check, write, mode } of table) {
      it(`${kind}: check ${check}, write ${write} → ${mode}`, () => {
        expect(diskMode({ check, write })).toBe(mode)
      })
    }
  }
})
