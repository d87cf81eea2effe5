/**
 * Benchmark: engine start (index + rendering every document with regions) cold and warm, and
 * peak RSS (issue #9). `npm run bench:engine [-- --sizes=10000 --runs=5]`.
 *
 * Contract:
 * - Per size: `generateProject` in a temp folder; every measurement in a fresh Node process
 *   (bench/engine-child.ts). A run is: the floor (the same process loading the same modules,
 *   no engine: what tsx and Node take before insitu does anything), cold (the state folder
 *   `.insitu/` and `node_modules/.vite` removed first), warm (a second start on the same folder,
 *   with what the cold start persisted), and no cache
 *   (`cache: false`). The generated files age past the index's racy window (2 s) first; one
 *   unmeasured round. Wall time and CPU time (user + system, steadier on a busy machine).
 * - Rewrites the section `engine@<size>` of bench/RESULTS.md: time (create + render), the
 *   split, peak RSS in MiB (`process.resourceUsage().maxRSS`), jobs run when the engine counts them.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { findRegionDocuments } from './bench-projects.js'
import { measureInChild } from './child-measurement.js'
import { cell, formatSize, machineLine, median } from './measurements.js'
import { generateProject } from './project-generator.js'
import { runSizes } from './results-file.js'

interface ChildResult {
  createMs: number
  renderMs: number
  cpuMs: number
  maxRssKiB: number
  jobsRun: number | null
}

/** The document index's racy window (files changed this close to its snapshot are re-read), plus a margin. */
const RACY_WINDOW_MS = 2500

type Kind = 'floor' | 'cold' | 'warm' | 'noCache'

async function benchSize(documents: number, runs: number, keep: boolean): Promise<string> {
  console.error(`engine: ${formatSize(documents)} documents: generating…`)
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `insitu-bench-engine-${documents}-`)))
  const root = path.join(tmp, 'project')
  generateProject(root, { documents })
  const regionDocuments = findRegionDocuments(root)
  const results: Record<Kind, ChildResult[]> = { floor: [], cold: [], warm: [], noCache: [] }
  // The index re-reads files changed within its racy window (2 s) of its snapshot: let the
  // generated files age first, as the files of a real project have.
  await setTimeout(RACY_WINDOW_MS)
  try {
    for (let run = -1; run < runs; run++) {
      const measure = (start: boolean, withCache = true) =>
        measureInChild<ChildResult>('./engine-child.ts', { root, documents: regionDocuments, start, cache: withCache })
      const floor = await measure(false)
      for (const state of ['.insitu', 'node_modules/.vite']) fs.rmSync(path.join(root, state), { recursive: true, force: true })
      const cold = await measure(true)
      const warm = await measure(true)
      const noCache = await measure(true, false)
      if (run < 0) continue
      results.floor.push(floor)
      results.cold.push(cold)
      results.warm.push(warm)
      results.noCache.push(noCache)
      const ms = (r: ChildResult) => (r.createMs + r.renderMs).toFixed(0)
      console.error(`  run ${run + 1}/${runs}: cold ${ms(cold)} ms ${(cold.maxRssKiB / 1024).toFixed(0)} MiB, warm ${ms(warm)} ms ${(warm.maxRssKiB / 1024).toFixed(0)} MiB, floor ${(floor.maxRssKiB / 1024).toFixed(0)} MiB`)
    }
  } finally {
    if (keep) console.error(`  kept ${tmp}`)
    else fs.rmSync(tmp, { recursive: true, force: true })
  }
  const total = (kind: Kind) => results[kind].map((r) => r.createMs + r.renderMs)
  const cpu = (kind: Kind) => results[kind].map((r) => r.cpuMs)
  const create = (kind: Kind) => results[kind].map((r) => r.createMs)
  const render = (kind: Kind) => results[kind].map((r) => r.renderMs)
  const rss = (kind: Kind) => results[kind].map((r) => r.maxRssKiB / 1024)
  const jobs = (kind: Kind) => {
    const counts = results[kind].map((r) => r.jobsRun)
    return counts.every((c) => c !== null) ? String(median(counts as number[])) : 'n/a'
  }
  const row = (kind: 'cold' | 'warm' | 'noCache', label: string) =>
    `| ${label} | ${cell(total(kind), 'ms')} | ${cell(cpu(kind), 'ms')} | ${cell(create(kind), 'ms')} | ${cell(render(kind), 'ms')} | ${cell(rss(kind), 'MiB')} | ${jobs(kind)} |`
  const coldMs = median(total('cold'))
  const warmMs = median(total('warm'))
  const peak = Math.max(median(rss('cold')), median(rss('warm')))
  const lines = [
    `### ${formatSize(documents)} documents`,
    '',
    `Machine: ${machineLine()}. Median of ${runs} runs (min–max), each start in a fresh process; rendered: ${regionDocuments.join(', ')}.`,
    '',
    '| start | create + render | CPU time | `InsituEngine.create` | render | peak RSS | jobs run |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    row('cold', 'cold'),
    row('warm', 'warm (persistent cache)'),
    row('noCache', 'no cache (`cache: false`)'),
    `| floor: the same process without the engine | — | — | — | — | ${cell(rss('floor'), 'MiB')} | — |`,
  ]
  if (documents >= 10_000) {
    lines.push(
      '',
      `Targets at 10,000: cold ≤ 1 s (${coldMs <= 1000 ? 'met' : 'not met'}), warm ≤ 0.3 s (${warmMs <= 300 ? 'met' : 'not met'}), peak RSS ≤ 300 MB (${peak * 1.048576 <= 300 ? 'met' : 'not met'}).`,
    )
  }
  return lines.join('\n')
}

await runSizes('engine', 5, benchSize, ['flat'])
