/**
 * Where a cold `vite build`'s time goes between the bundler's hooks, with the plugin and without
 * it. Not a benchmark row (prints only; docs/internals/benchmarks.md quotes it under "Where the
 * time goes", "Cold builds at nested 1,000").
 * `npm run bench:build-phases [-- --sizes=1000 --layouts=nested --runs=7]`.
 *
 * Contract:
 * - Per layout and size: `prepareProjects` (bench/bench-projects.ts), then `--runs` rounds
 *   (default 7), each a cold build with the plugin on `plugin/` and a build of `plain/` without
 *   it, in fresh processes (bench/build-phases-child.ts), which goes first alternating.
 * - Prints, per phase (from one hook mark to the next: Vite's config to the first `buildStart`,
 *   the plugins' `buildStart`s, the imports' resolution and loads, the rest of the module phase,
 *   Rolldown's render of the chunk), the median with min–max of each side, and the CPU time per
 *   thread name over the build (Linux): the main thread's is the JavaScript both sides run;
 *   `rolldown-worker` is the bundler's native threads.
 */
import path from 'node:path'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { measureInChild } from './child-measurement.js'
import { benchArgs, cell, formatSize, inAlternateOrder, machineLine } from './measurements.js'

interface PhaseRun {
  marks: Record<string, number>
  threads: Record<string, number>
}

/** Consecutive marks of bench/build-phases-child.ts: each phase runs from one to the next. */
const PHASES: readonly [from: string | null, to: string, label: string][] = [
  [null, 'buildStart', "Vite's config and setup, to the first `buildStart`"],
  ['buildStart', 'after buildStart', "the plugins' `buildStart` (insitu's: its engine's start, the index)"],
  ['after buildStart', '1000th resolveId', 'resolving the imports (to the 1,000th `resolveId`)'],
  ['1000th resolveId', '1000th load', 'loading them (to the 1,000th `load`)'],
  ['1000th load', 'buildEnd', 'the rest of the module phase (to `buildEnd`)'],
  ['buildEnd', 'generateBundle', "Rolldown's render of the chunk (to `generateBundle`)"],
  ['generateBundle', 'done', 'writing the output (to the end of `build()`)'],
  [null, 'done', '`build()` in all'],
]

function phaseTimes(runs: readonly PhaseRun[], from: string | null, to: string): number[] {
  return runs.map((run) => (run.marks[to] ?? Number.NaN) - (from === null ? 0 : (run.marks[from] ?? Number.NaN))).filter(Number.isFinite)
}

async function measure(layout: ProjectLayout, documents: number, runs: number, keep: boolean): Promise<void> {
  const projects = await prepareProjects(documents, layout)
  try {
    const results: Record<'plugin' | 'plain', PhaseRun[]> = { plugin: [], plain: [] }
    const buildOf = (side: 'plugin' | 'plain') => async () => {
      const root = side === 'plugin' ? projects.plugin : projects.plain
      results[side].push(await measureInChild<PhaseRun>('./build-phases-child.ts', { root, outDir: path.join(projects.tmp, `dist-${side}`), plugin: side === 'plugin' }))
    }
    for (let round = 0; round < runs; round++) await inAlternateOrder(round, buildOf('plain'), buildOf('plugin'))
    console.log(`\n### ${formatSize(documents)} documents, ${layout} layout: a cold build, with the plugin / without it\n`)
    console.log(`Machine: ${machineLine()}. Median of ${runs} runs (min–max), each build in a fresh process.\n`)
    console.log('| phase | with the plugin | Vite alone |')
    console.log('| --- | --- | --- |')
    for (const [from, to, label] of PHASES) console.log(`| ${label} | ${cell(phaseTimes(results.plugin, from, to), 'ms')} | ${cell(phaseTimes(results.plain, from, to), 'ms')} |`)
    const names = [...new Set([...results.plugin, ...results.plain].flatMap((run) => Object.keys(run.threads)))].sort()
    for (const name of names) {
      const of = (side: 'plugin' | 'plain') => results[side].map((run) => run.threads[name] ?? 0)
      console.log(`| CPU of the ${name === 'main' ? 'main thread' : `\`${name}\` threads`} | ${cell(of('plugin'), 'ms')} | ${cell(of('plain'), 'ms')} |`)
    }
  } finally {
    if (keep) console.log(`kept ${projects.tmp}`)
    else projects.remove()
  }
}

const args = benchArgs(process.argv.slice(2), 7)
for (const layout of args.layouts) for (const documents of args.sizes) await measure(layout, documents, args.runs, args.keep)
