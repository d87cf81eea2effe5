/**
 * The bounded stress test of issue #14.1 (the soak is bench/write-race.ts): a real Vite dev server
 * in write mode, an editor process saving prose edits of README.md 0–30 ms after each change of
 * the file its region includes, in both writing styles. After each cycle settles, the file holds
 * the editor's latest text and the current region: no lost save, no stale region, and nothing is
 * written while idle.
 */
import { describe, expect, it } from 'vitest'
import { runWriteRace } from './write-race-harness.js'

describe.each(['in-place', 'rename'] as const)('an editor saving %s while a dependency changes', (style) => {
  it('loses no save and leaves no stale region, and nothing is written while idle', { timeout: 60_000 }, async () => {
    const report = await runWriteRace({ cycles: 40, style, idleMs: 1000 })
    expect(report, JSON.stringify(report.failures, null, 2)).toMatchObject({ cycles: 40, lostSaves: 0, staleRegions: 0, idleWrites: 0 })
  })
})
