/**
 * Benchmark: `vite build` with the plugin against the same build without it (issue #9).
 * `npm run bench:build [-- --sizes=1000 --runs=5]`.
 *
 * Contract:
 * - First runs `npm run build`: the plugin built is `dist/index.js`, as users load it.
 * - Per layout and size: `prepareProjects` (bench/bench-projects.ts); the entry
 *   `all-documents.js` imports every `*.md?raw`. Each build runs in a fresh Node process
 *   (bench/build-child.ts), timed around `build()` only: wall time, and CPU time of the process
 *   and of its children that ended in it (the plugin's query processes).
 * - A run is: Vite alone on `plain/` (documents already regenerated); the plugin cold on
 *   `plugin/` (its state folder `.insitu/` and `node_modules/.vite` removed first); the plugin
 *   warm (a second build on the same folder, keeping what the cold build persisted). Which of
 *   Vite alone and the plugin goes first alternates. One unmeasured round first; its outputs
 *   with and without the plugin must be byte-identical (the plugin ships the regenerated text).
 * - Rewrites the section `build@<size>` (flat layout) or `build-nested@<size>` of bench/RESULTS.md.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type BenchProjects, type ProjectLayout, prepareProjects, removePluginState } from './bench-projects.js'
import { measureInChild } from './child-measurement.js'
import { cell, formatSize, inAlternateOrder, machineLine, median, ratioCell } from './measurements.js'
import { runSizes } from './results-file.js'

const REPO = fileURLToPath(new URL('..', import.meta.url))

interface BuildTimes {
  plain: number[]
  cold: number[]
  warm: number[]
}

interface BuildTime {
  ms: number
  cpuMs: number
}

function timeBuild(root: string, outDir: string, plugin: boolean): Promise<BuildTime> {
  return measureInChild<BuildTime>('./build-child.ts', { root, outDir, plugin })
}

/** Every output file's text, by path relative to `dir`. */
function outputs(dir: string): Map<string, string> {
  const files = new Map<string, string>()
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) {
      const file = path.join(entry.parentPath, entry.name)
      files.set(path.relative(dir, file), fs.readFileSync(file, 'utf8'))
    }
  }
  return files
}

function checkSameOutput(plainOut: string, pluginOut: string): void {
  const plain = outputs(plainOut)
  const plugin = outputs(pluginOut)
  const same = plain.size === plugin.size && [...plain].every(([file, text]) => plugin.get(file) === text)
  if (!same) throw new Error(`the build with the plugin (${pluginOut}) differs from the build of the regenerated copy (${plainOut})`)
}

async function benchSize(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`build: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const projects: BenchProjects = await prepareProjects(documents, layout)
  const plainOut = path.join(projects.tmp, 'dist-plain')
  const pluginOut = path.join(projects.tmp, 'dist-plugin')
  const times: BuildTimes = { plain: [], cold: [], warm: [] }
  const cpu: BuildTimes = { plain: [], cold: [], warm: [] }
  try {
    for (let run = -1; run < runs; run++) {
      const round: Partial<Record<keyof BuildTimes, BuildTime>> = {}
      const plain = async () => (round.plain = await timeBuild(projects.plain, plainOut, false))
      const withPlugin = async () => {
        removePluginState(projects.plugin)
        round.cold = await timeBuild(projects.plugin, pluginOut, true)
        round.warm = await timeBuild(projects.plugin, pluginOut, true)
      }
      await inAlternateOrder(run, plain, withPlugin)
      if (run < 0) {
        checkSameOutput(plainOut, pluginOut)
        continue
      }
      for (const key of ['plain', 'cold', 'warm'] as const) {
        times[key].push(round[key]!.ms)
        cpu[key].push(round[key]!.cpuMs)
      }
      console.error(
        `  run ${run + 1}/${runs}: Vite alone ${round.plain!.ms.toFixed(0)} ms, plugin cold ${round.cold!.ms.toFixed(0)} ms, warm ${round.warm!.ms.toFixed(0)} ms`,
      )
    }
  } finally {
    if (keep) console.error(`  kept ${projects.tmp}`)
    else projects.remove()
  }
  const cold = median(times.cold) / median(times.plain)
  const warm = median(times.warm) / median(times.plain)
  const warmLabel = 'warm (second build, persistent cache)'
  return [
    `### ${formatSize(documents)} documents, ${layout} layout`,
    '',
    `Machine: ${machineLine()}. ${projects.regionDocuments.length} document(s) with regions. Median of ${runs} runs (min–max), each build in a fresh process; CPU time is the build process's (user + system, every thread) and its query processes'.`,
    '',
    '| build | with the plugin | Vite alone (regenerated copy) | plugin / Vite | CPU time with the plugin | CPU time Vite alone | CPU plugin / Vite |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    `| cold | ${cell(times.cold, 'ms')} | ${cell(times.plain, 'ms')} | ${ratioCell(times.cold, times.plain)} | ${cell(cpu.cold, 'ms')} | ${cell(cpu.plain, 'ms')} | ${ratioCell(cpu.cold, cpu.plain)} |`,
    `| ${warmLabel} | ${cell(times.warm, 'ms')} | ${cell(times.plain, 'ms')} | ${ratioCell(times.warm, times.plain)} | ${cell(cpu.warm, 'ms')} | ${cell(cpu.plain, 'ms')} | ${ratioCell(cpu.warm, cpu.plain)} |`,
    '',
    `Targets (wall time): cold ≤ 1.3× (${cold <= 1.3 ? 'met' : 'not met'}), warm ≤ 1.1× (${warm <= 1.1 ? 'met' : 'not met'}; issue #17 asks ≤ 1.3× for every build: ${warm <= 1.3 ? 'met' : 'not met'}).`,
  ].join('\n')
}

console.error('build: npm run build…')
execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] })
await runSizes('build', 5, benchSize)
