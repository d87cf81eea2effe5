/**
 * Issue #17, step 3: could the plugin learn of a task's front-matter edit sooner than from
 * Vite's own watcher? `npm run bench:watch-latency [-- --sizes=1000,10000 --layouts=flat --runs=7]`.
 *
 * Contract:
 * - Per layout and size: `prepareProjects`, one Vite dev server with the plugin on `plugin/`
 *   (no browser: this measures when each source reports the edit, not the update itself).
 * - Each run writes the `title` of the first open task (after SETTLE_MS of quiet) and records,
 *   from just before the write: when a native `fs.watch` of the task's folder (inotify on Linux:
 *   what a watcher of the plugin's own would use) reports it; when Vite's watcher (chokidar)
 *   emits `change`; and when the first `hotUpdate` hook is called (a probe before the plugin:
 *   Vite's event reaching the plugins, where the plugin's work starts today).
 * - Rewrites the section `watch-latency@<size>` (flat) or `watch-latency-nested@<size>` of
 *   bench/RESULTS.md.
 */
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { createServer, type Plugin } from 'vite'
import insitu from '../src/index.js'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { cell, formatSize, machineLine, median } from './measurements.js'
import { runSizes } from './results-file.js'

const SETTLE_MS = 300
const TIMEOUT_MS = 30_000

interface Seen {
  native?: number
  chokidar?: number
  hotUpdate?: number
}

async function benchSize(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`watch-latency: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const projects = await prepareProjects(documents, layout)
  const task = path.join(projects.plugin, projects.openTask)
  let seen: Seen = {}
  let writtenAt = 0
  const stamp = (key: keyof Seen) => {
    seen[key] ??= performance.now() - writtenAt
  }
  // First of all hooks (before the plugin's own `hotUpdate`, which awaits its plan).
  const probe: Plugin = {
    name: 'watch-latency-probe',
    enforce: 'pre',
    hotUpdate({ file }) {
      if (path.resolve(file) === task) stamp('hotUpdate')
    },
  }
  const server = await createServer({
    root: projects.plugin,
    configFile: false,
    logLevel: 'silent',
    plugins: [probe, insitu()],
    server: { port: 0 },
  })
  const native = fs.watch(path.dirname(task), (_event, name) => {
    if (name === path.basename(task)) stamp('native')
  })
  const times = { native: [] as number[], chokidar: [] as number[], hotUpdate: [] as number[] }
  try {
    await server.listen()
    server.watcher.on('change', (file) => {
      if (path.resolve(file) === task) stamp('chokidar')
    })
    // The engine starts on the first request: ask for the README once.
    await server.environments.client.transformRequest('/README.md?raw')
    const original = fs.readFileSync(task, 'utf8')
    for (let run = -1; run < runs; run++) {
      await setTimeout(SETTLE_MS)
      seen = {}
      writtenAt = performance.now()
      fs.writeFileSync(task, original.replace(/^title: (.*)$/m, `title: $1 edit${run + 2}`))
      const deadline = Date.now() + TIMEOUT_MS
      while (seen.native === undefined || seen.chokidar === undefined || seen.hotUpdate === undefined) {
        if (Date.now() > deadline) throw new Error(`not every source reported the edit of ${task}: ${JSON.stringify(seen)}`)
        await setTimeout(1)
      }
      if (run < 0) continue
      times.native.push(seen.native)
      times.chokidar.push(seen.chokidar)
      times.hotUpdate.push(seen.hotUpdate)
      console.error(`  run ${run + 1}/${runs}: fs.watch ${seen.native.toFixed(1)} ms, chokidar ${seen.chokidar.toFixed(1)} ms, hotUpdate ${seen.hotUpdate.toFixed(1)} ms`)
    }
  } finally {
    native.close()
    await server.close()
    if (keep) console.error(`  kept ${projects.tmp}`)
    else projects.remove()
  }
  const saved = median(times.hotUpdate) - median(times.native)
  return [
    `### ${formatSize(documents)} documents, ${layout} layout`,
    '',
    `Machine: ${machineLine()}. Milliseconds from writing ${projects.openTask} until each source reports it; median of ${runs} runs (min–max).`,
    '',
    '| source | reports the edit after |',
    '| --- | --- |',
    `| native \`fs.watch\` of the task's folder (inotify) | ${cell(times.native, 'ms')} |`,
    `| Vite's watcher (chokidar \`change\`) | ${cell(times.chokidar, 'ms')} |`,
    `| the plugin's \`hotUpdate\` (where its work starts today) | ${cell(times.hotUpdate, 'ms')} |`,
    '',
    `A watcher of the plugin's own would learn of the edit ${saved.toFixed(0)} ms (median) before \`hotUpdate\` does.`,
  ].join('\n')
}

await runSizes('watch-latency', 7, benchSize)
