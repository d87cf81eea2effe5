/**
 * Benchmark: edit → DOM updated in Chromium, with the plugin against the floor Vite alone sets
 * for the same change (issues #9, #17, #38). `npm run bench:hmr [-- --sizes=1000 --layouts=flat --runs=5]`.
 *
 * Contract:
 * - Per layout and size: `prepareProjects` (bench/bench-projects.ts), two Vite dev servers in
 *   this process (the plugin's on `plugin/`, a plain one on `plain/`), one headless Chromium
 *   (playwright-core, /usr/bin/chromium or $INSITU_CHROMIUM) with one page per server. Before
 *   any edit, the plugin's page must show the same README text as the plain page (the plain
 *   copy holds what the plugin renders), else the run fails.
 * - Edit kinds (bench/hmr-edits.ts, shared with bench/edit-timeline.ts): prose (a README line
 *   no region reads), front matter (an open task's `title`, its row of the README's sql table),
 *   include (a line of the included snippet), each introducing a fresh marker text. The FLOOR of
 *   a kind is the larger of two medians of Vite alone, measured side by side in the same run:
 *   (a) the same edit of the same file, shown by the page as itself (Vite's watcher pays for
 *   that file's folder as the plugin's does), and (b) the regenerated README edited the same
 *   way (the same table row, the same include line): Vite updating the page that shows the
 *   change. For prose (a) and (b) are one edit, measured once.
 * - Before each edit, `waitForQuiet()` (bench/quiet.ts): at least SETTLE_MS, then until a
 *   150 ms window in which this process's timers fired on time and it used almost no CPU (both
 *   servers run here), capped at 10 s; so one edit does not run into the previous one's tail.
 *   A measurement is the wall-clock time from just before `writeFileSync` to the page's
 *   MutationObserver first seeing the marker in the kind's `<pre>` (Node's and Chromium's
 *   `performance.timeOrigin + now()`). After one unmeasured warm-up round, each run measures
 *   every kind on the plugin's server and both Vite edits on the plain one, the server going
 *   first alternating between runs.
 * - Rewrites the section `hmr@<size>` (flat layout) or `hmr-<layout>@<size>` of
 *   bench/RESULTS.md: per kind the median (min–max) of the plugin and of both Vite edits, the
 *   floor and the plugin's median over it; then the worst ratio against the target (≤ 1.3×).
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Browser } from 'playwright-core'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { closePages, type Edit, type EditKind, editKinds, measureEdit, pageText, serve, type Served } from './hmr-edits.js'
import { cell, formatNumber, formatSize, inAlternateOrder, machineLine, median } from './measurements.js'
import { runSizes } from './results-file.js'
import { launchChromium } from '../test/e2e/chromium.js'

/** The plugin's median over the floor: at most this is the target (issue #38). */
const TARGET = 1.3

type Measured = 'plugin' | 'sameFile' | 'page'

/** The floor of a kind: the larger of Vite's two medians, and which one it is. */
function floorOf(t: Record<Measured, number[]>): { ms: number; which: string } {
  const sameFile = median(t.sameFile)
  if (t.page.length === 0) return { ms: sameFile, which: 'one edit' }
  const page = median(t.page)
  return page > sameFile ? { ms: page, which: 'page' } : { ms: sameFile, which: 'same file' }
}

/** The first line at which two texts differ, for the message of a failed check. */
function firstDifference(a: string, b: string): string {
  const left = a.split('\n')
  const right = b.split('\n')
  const line = left.findIndex((text, i) => text !== right[i])
  const at = line < 0 ? left.length : line
  return `line ${at + 1}: ${JSON.stringify(left[at] ?? '')} / ${JSON.stringify(right[at] ?? '')}`
}

async function benchSize(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`hmr: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const projects = await prepareProjects(documents, layout)
  const readmeBytes = fs.statSync(path.join(projects.plain, projects.generated.readme)).size
  let browser: Browser | undefined
  const servers: Served[] = []
  try {
    browser = await launchChromium()
    servers.push(await serve('plugin', projects.plugin, browser), await serve('plain', projects.plain, browser))
    const [plugin, plain] = servers as [Served, Served]
    const [rendered, regenerated] = [await pageText(plugin, 'out'), await pageText(plain, 'out')]
    if (rendered !== regenerated) {
      throw new Error(`the plugin's README differs from the plain copy's (${firstDifference(rendered, regenerated)})`)
    }
    const kinds = editKinds(projects)
    const times = new Map<EditKind, Record<Measured, number[]>>(kinds.map((kind) => [kind, { plugin: [], sameFile: [], page: [] }]))
    const quietWaits: number[] = []
    let capped = 0
    let edits = 0
    for (let run = -1; run < runs; run++) {
      for (const kind of kinds) {
        const measure = async (served: Served, edit: Edit, into: Measured) => {
          const { ms, quiet } = await measureEdit(served, edit, `mark${++edits}x`)
          if (run < 0) return
          times.get(kind)![into].push(ms)
          quietWaits.push(quiet.waitedMs)
          if (quiet.capped) capped++
        }
        await inAlternateOrder(
          run,
          () => measure(plugin, kind.plugin, 'plugin'),
          async () => {
            await measure(plain, kind.sameFile, 'sameFile')
            if (kind.page) await measure(plain, kind.page, 'page')
          },
        )
      }
      if (run >= 0) {
        const last = (values: number[]) => (values.length > 0 ? values.at(-1)!.toFixed(0) : '–')
        console.error(
          `  run ${run + 1}/${runs}: ${kinds.map((k, i) => `${i + 1}: ${last(times.get(k)!.plugin)}/${last(times.get(k)!.sameFile)}/${last(times.get(k)!.page)} ms`).join(', ')}`,
        )
      }
    }
    const quietText =
      `Before each edit the process was let go quiet (bench/quiet.ts): median ${formatNumber(median(quietWaits))} ms, max ${formatNumber(Math.max(...quietWaits))} ms` +
      (capped > 0 ? `, ${capped} of ${quietWaits.length} waits capped at 10 s` : '')
    const lines = [
      `### ${formatSize(documents)} documents, ${layout} layout`,
      '',
      `Machine: ${machineLine()}. README.md regenerated: ${formatSize(Math.round(readmeBytes / 1024))} KiB; ${projects.regionDocuments.length} document(s) with regions. Median of ${runs} runs (min–max). ${quietText}.`,
      '',
      "Floor: the larger of the two Vite medians (Vite editing the same file, shown by the page as itself; Vite updating the page that shows the change, the regenerated README edited the same way; for prose they are one edit).",
      '',
      '| edit | with the plugin | Vite: same file | Vite: the page showing the change | floor | plugin / floor |',
      '| --- | --- | --- | --- | --- | --- |',
      ...kinds.map((kind) => {
        const t = times.get(kind)!
        const floor = floorOf(t)
        const page = t.page.length > 0 ? cell(t.page, 'ms') : 'the same edit'
        return `| ${kind.label} | ${cell(t.plugin, 'ms')} | ${cell(t.sameFile, 'ms')} | ${page} | ${formatNumber(floor.ms)} ms (${floor.which}) | ${(median(t.plugin) / floor.ms).toFixed(2)}× |`
      }),
    ]
    const worst = Math.max(...kinds.map((kind) => median(times.get(kind)!.plugin) / floorOf(times.get(kind)!).ms))
    lines.push('', `Worst ratio against the floor ${worst.toFixed(2)}× (target ≤ ${TARGET}×: ${worst <= TARGET ? 'met' : 'not met'}).`)
    return lines.join('\n')
  } finally {
    for (const served of servers) {
      await closePages(served)
      await served.server.close()
    }
    await browser?.close()
    if (keep) console.error(`  kept ${projects.tmp}`)
    else projects.remove()
  }
}

await runSizes('hmr', 7, benchSize)
