/**
 * The write-mode soak of issue #14.1: `npm run bench:write-race [-- --cycles=5000 --hog --host=watch]`.
 *
 * Runs test/integration/write-race-harness.ts (a host in write mode; an editor process saving
 * prose edits of README.md 0–30 ms after each change of the file its region includes) for
 * `--cycles` cycles per writing style (in place, and temporary file + rename), quiet and then
 * next to a CPU hog (one busy-looping process per core), for each host: a real Vite dev server,
 * and the command line's `watch` (the built bin: this script runs `npm run build` first). It
 * writes the sections `write-race-quiet` / `write-race-loaded` (dev server) and
 * `write-race-watch-quiet` / `write-race-watch-loaded` (watch) of RESULTS.md, all in one format:
 * cycles, lost saves, stale regions, writes while idle (2 s after the last cycle) and the median
 * time from the dependency change to a settled document.
 * `--hog` runs only the loaded rows; `--quiet` only the quiet ones; `--host=dev-server|watch`
 * only that host.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { runWriteRace, type WriteRaceHost, type WriteRaceReport } from '../test/integration/write-race-harness.js'
import { machineLine } from './measurements.js'
import { writeSection } from './results-file.js'

let cycles = 5000
let loads: ('quiet' | 'loaded')[] = ['quiet', 'loaded']
let hosts: WriteRaceHost[] = ['dev-server', 'watch']
for (const arg of process.argv.slice(2)) {
  const [flag, value] = arg.split('=', 2)
  if (flag === '--cycles' && value && Number.isInteger(Number(value)) && Number(value) > 0) cycles = Number(value)
  else if (arg === '--hog') loads = ['loaded']
  else if (arg === '--quiet') loads = ['quiet']
  else if (flag === '--host' && (value === 'dev-server' || value === 'watch')) hosts = [value]
  else throw new Error(`unknown flag ${arg} (expected --cycles=N, --hog, --quiet, --host=dev-server|watch)`)
}

if (hosts.includes('watch')) {
  console.error('write-race: npm run build (the watch host runs the built bin)')
  execFileSync('npm', ['run', 'build'], { cwd: path.resolve(import.meta.dirname, '..'), stdio: ['ignore', 'ignore', 'inherit'] })
}

/** The RESULTS.md section of a host and load (the dev server's keep their first names). */
function sectionId(host: WriteRaceHost, load: 'quiet' | 'loaded'): string {
  return host === 'dev-server' ? `write-race-${load}` : `write-race-${host}-${load}`
}

function startHog(): ChildProcess[] {
  return Array.from({ length: os.availableParallelism() }, () =>
    spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }),
  )
}

let failed = false
for (const host of hosts) for (const load of loads) {
  const rows: string[] = []
  const total = { cycles: 0, lost: 0, stale: 0, idle: 0 }
  for (const style of ['in-place', 'rename'] as const) {
    const hog = load === 'loaded' ? startHog() : []
    let report: WriteRaceReport
    try {
      console.error(`write-race: ${host}, ${style}, ${load}, ${cycles} cycles`)
      report = await runWriteRace({ cycles, style, host, settleTimeoutMs: 10_000 })
    } finally {
      for (const child of hog) child.kill()
    }
    total.cycles += report.cycles
    total.lost += report.lostSaves
    total.stale += report.staleRegions
    total.idle += report.idleWrites
    const machine = load === 'loaded' ? `next to ${os.availableParallelism()} busy-looping processes` : 'quiet'
    rows.push(`| ${style} | ${machine} | ${report.cycles} | ${report.lostSaves} | ${report.staleRegions} | ${report.idleWrites} | ${report.medianSettleMs} ms |`)
    if (report.failures.length > 0) console.error(JSON.stringify(report.failures, null, 2))
  }
  const markdown = [
    machineLine(),
    '',
    '| editor saves | machine | cycles | lost saves | stale regions | writes while idle | median settle |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `In all: ${total.cycles} cycles, ${total.lost} lost saves, ${total.stale} stale regions, ${total.idle} writes while idle (target: 0, 0, 0).`,
  ].join('\n')
  writeSection(sectionId(host, load), markdown)
  console.log(markdown)
  failed ||= total.lost + total.stale + total.idle > 0
}
process.exit(failed ? 1 : 0)
