import { describe, expect, it } from 'vitest'
import { diskMode } from '../../src/sync/disk-mode.js'

/**
 * The one decision of issue #14.3. Every process takes it from this call (the plugin once per
 * `insitu()`, the command line once per run); that each host obeys it is tested on the hosts
 * themselves: dev servers in plugin-write.test.ts ("check wins over write in every dev server"),
 * builds in plugin-build.test.ts (check mode), Astro's content sync in test/clients/astro5.test.ts,
 * the command line in cli.test.ts.
 */
describe('diskMode: check wins over write', () => {
  it.each([
    { check: false, write: false, mode: 'none' },
    { check: false, write: true, mode: 'write' },
    { check: true, write: false, mode: 'check' },
    { check: true, write: true, mode: 'check' },
  ] as const)('check $check, write $write → $mode', ({ check, write, mode }) => {
    expect(diskMode({ check, write })).toBe(mode)
  })
})
