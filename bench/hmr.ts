/**
 * Benchmark: edit → DOM updated in Chromium, with the plugin against Vite's own hot update of
 * the same edit without it (issues #9, #17). `npm run bench:hmr [-- --sizes=1000 --layouts=flat --runs=5]`.
 *
 * Contract:
 * - Per layout and size: `prepareProjects` (bench/bench-projects.ts), two Vite dev servers in
 *   this process (the plugin's on `plugin/`, a plain one on `plain/`), one headless Chromium
 *   (playwright-core, /usr/bin/chromium or $INSITU_CHROMIUM) with one page per server.
 * - Edit kinds (bench/hmr-edits.ts, shared with bench/edit-timeline.ts), each introducing a
 *   fresh marker text; the first three are issue #17's rows,
 *   each against Vite's own edit of the SAME file (its watcher pays for that file's folder as
 *   the plugin's does):
 *   - prose: the last prose line of README.md (both projects; the page shows README.md);
 *   - front matter: the `title` of an open task; with the plugin the README's sql region row
 *     changes (the page shows README.md), Vite alone gets the same edit of that task file (the
 *     page shows the task);
 *   - include: a line of snippets/example.ts; with the plugin the README's include region
 *     changes, Vite alone shows the snippet itself;
 *   - and two rows against Vite editing the regenerated README instead (issue #9's first
 *     comparison): the task's row of the sql region, the line of the include region.
 * - Before each edit, a quiet SETTLE_MS (Vite's watcher drops a change that follows another on
 *   the same file too closely). A measurement is the wall-clock time from just before
 *   `writeFileSync` to the page's MutationObserver first seeing the marker in the kind's
 *   `<pre>` (Node's and Chromium's `performance.timeOrigin + now()`). After one unmeasured warm-up round, each run measures
 *   every kind on both servers, the server going first alternating between runs.
 * - Rewrites the section `hmr@<size>` (flat layout) or `hmr-nested@<size>` of bench/RESULTS.md:
 *   per kind the median (min–max) of both and the ratio of the medians.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Browser } from 'playwright-core'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { type EditKind, editKinds, measureEdit, serve, type Served, type Side } from './hmr-edits.js'
import { cell, formatSize, machineLine, median, ratioCell } from './measurements.js'
import { runSizes } from './results-file.js'
import { launchChromium } from '../test/e2e/chromium.js'

async function benchSize(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`hmr: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const projects = await prepareProjects(documents, layout)
  const readmeBytes = fs.statSync(path.join(projects.plain, projects.generated.readme)).size
  let browser: Browser | undefined
  const servers: Served[] = []
  try {
    browser = await launchChromium()
    servers.push(await serve('plugin', projects.plugin, browser), await serve('plain', projects.plain, browser))
    const kinds = editKinds(projects)
    const times = new Map<EditKind, Record<Side, number[]>>(kinds.map((kind) => [kind, { plugin: [], plain: [] }]))
    let edits = 0
    for (let run = -1; run < runs; run++) {
      const order = run % 2 === 0 ? servers : [...servers].reverse()
      for (const kind of kinds) {
        for (const served of order) {
          const ms = await measureEdit(served, kind, `mark${++edits}x`)
          if (run >= 0) times.get(kind)![served.side].push(ms)
        }
      }
      if (run >= 0) {
        console.error(
          `  run ${run + 1}/${runs}: ${kinds.map((k, i) => `${i + 1}: ${times.get(k)!.plugin.at(-1)!.toFixed(0)}/${times.get(k)!.plain.at(-1)!.toFixed(0)} ms`).join(', ')}`,
        )
      }
    }
    const lines = [
      `### ${formatSize(documents)} documents, ${layout} layout`,
      '',
      `Machine: ${machineLine()}. README.md regenerated: ${formatSize(Math.round(readmeBytes / 1024))} KiB; ${projects.regionDocuments.length} document(s) with regions. Median of ${runs} runs (min–max).`,
      '',
      '| edit (with the plugin) | Vite alone gets | with the plugin | Vite alone | plugin / Vite |',
      '| --- | --- | --- | --- | --- |',
      ...kinds.map((kind) => {
        const t = times.get(kind)!
        return `| ${kind.label} | ${kind.baseline} | ${cell(t.plugin, 'ms')} | ${cell(t.plain, 'ms')} | ${ratioCell(t.plugin, t.plain)} |`
      }),
    ]
    // Issue #17's target compares each edit with Vite's own edit of the same file (the first three rows).
    const worst = Math.max(...kinds.slice(0, 3).map((kind) => median(times.get(kind)!.plugin) / median(times.get(kind)!.plain)))
    lines.push('', `Worst ratio against Vite's own edit of the same file ${worst.toFixed(2)}× (target ≤ 1.5×: ${worst <= 1.5 ? 'met' : 'not met'}).`)
    return lines.join('\n')
  } finally {
    for (const served of servers) {
      await served.page.context().close()
      await served.server.close()
    }
    await browser?.close()
    if (keep) console.error(`  kept ${projects.tmp}`)
    else projects.remove()
  }
}

await runSizes('hmr', 7, benchSize)
