/**
 * Where a build's time goes: a CPU profile of one `vite build` (bench/build-child.ts's build,
 * in this process) of a generated project, with or without the plugin. Not a benchmark row.
 * `npm run bench:profile-build -- --sizes=1000 [--layout=nested] [--state=cold|warm|plain] [--keep]`.
 *
 * Contract:
 * - Generates the projects (bench/bench-projects.ts) of `--layout` (default `flat`), then for
 *   `--state=warm` runs one unprofiled build first (the persistent state then exists); `cold`
 *   removes `.insitu/` and `node_modules/.vite` first; `plain` builds the regenerated copy
 *   without the plugin.
 * - Profiles only `build()` (node:inspector, 100 µs sampling): writes
 *   `<tmp>/build-<state>-<layout>-<size>.cpuprofile` (open it in Chrome DevTools) and prints the
 *   build's wall and CPU time, self time by package (the plugin's `src/`, Vite, Rolldown, GC,
 *   idle…) and the plugin functions with the most inclusive time.
 */
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import { build } from 'vite'
import insitu from '../src/index.js'
import { type ProjectLayout, prepareProjects } from './bench-projects.js'
import { type CpuProfile, inclusiveTimes, selfTimesBy } from './cpu-profile.js'

function flag(name: string, fallback: string): string {
  const arg = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))
  return arg ? arg.slice(name.length + 3) : fallback
}

async function runBuild(root: string, outDir: string, plugin: boolean): Promise<void> {
  await build({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: plugin ? [insitu()] : [],
    build: { outDir, emptyOutDir: true, minify: false, rollupOptions: { input: path.join(root, 'all-documents.js') } },
  })
}

async function main(): Promise<void> {
  const documents = Number(flag('sizes', '1000'))
  const layout = flag('layout', 'flat') as ProjectLayout
  const state = flag('state', 'cold')
  if (!['cold', 'warm', 'plain'].includes(state)) throw new Error(`--state: cold, warm or plain (got ${state})`)
  const keep = process.argv.includes('--keep')
  const projects = await prepareProjects(documents, layout)
  const root = state === 'plain' ? projects.plain : projects.plugin
  const outDir = path.join(projects.tmp, `dist-${state}`)
  const session = new Session()
  try {
    for (const dir of ['.insitu', 'node_modules/.vite']) fs.rmSync(path.join(root, dir), { recursive: true, force: true })
    // Warm the module cache of this process either way (the child builds time build() only too).
    await runBuild(projects.plain, path.join(projects.tmp, 'dist-warmup'), false)
    if (state === 'warm') await runBuild(root, outDir, true)
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 100 })
    await session.post('Profiler.start')
    const cpu = process.cpuUsage()
    const started = performance.now()
    await runBuild(root, outDir, state !== 'plain')
    const wall = performance.now() - started
    const used = process.cpuUsage(cpu)
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile }
    const out = path.join(os.tmpdir(), `build-${state}-${layout}-${documents}.cpuprofile`)
    fs.writeFileSync(out, JSON.stringify(profile))
    console.log(`${state} build, ${layout} layout, ${documents} documents: ${wall.toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU (all threads)`)
    console.log(`profile: ${out}`)
    console.log('self ms by package:')
    for (const [name, us] of [...selfTimesBy(profile)].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`${(us / 1000).toFixed(1).padStart(8)}  ${name}`)
    console.log('inclusive ms (src/):')
    const { inclusive } = inclusiveTimes(profile)
    const top = [...inclusive].filter(([name]) => / src\//.test(name)).sort((a, b) => b[1] - a[1]).slice(0, 30)
    for (const [name, us] of top) console.log(`${(us / 1000).toFixed(1).padStart(8)}  ${name}`)
  } finally {
    session.disconnect()
    if (keep) console.log(`kept ${projects.tmp}`)
    else projects.remove()
  }
}

await main()
