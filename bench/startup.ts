/**
 * Benchmark: what a user's command pays before and around the build: loading the published
 * plugin, and the whole `vite build` command line. `npm run bench:startup [-- --sizes=1000 --runs=7]`.
 *
 * Contract:
 * - First runs `npm run build`, so that dist/ is this checkout's published JavaScript (the
 *   bundles of scripts/bundle.mjs), which users' configs import.
 * - Section `startup`: milliseconds for `await import(...)` in a fresh `node` process (no tsx),
 *   for Vite itself, the plugin (`dist/index.js`) and the extension SDK (`dist/sdk/index.js`,
 *   which every Node extension process loads); median (min–max) of `--runs`, each in turn.
 * - Per layout and size (`startup@<size>`, `startup-nested@<size>`): the `vite build` command
 *   line as a user runs it, the whole process from spawn to exit (Node's start, Vite's, the
 *   config file, the plugin's import and the build; `bench:build` times `build()` alone); and a
 *   dev server's start, from its process's start to the first response of `README.md?raw`
 *   (bench/dev-start-child.mjs). Vite alone on `plain/` (documents already regenerated), the
 *   plugin cold (state folder and `node_modules/.vite` removed) and warm (the next start) on
 *   `plugin/`; which side goes first alternates; one unmeasured round first.
 */
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { type ProjectLayout, prepareProjects, removePluginState } from './bench-projects.js'
import { measureInChild } from './child-measurement.js'
import { benchArgs, cell, formatSize, inAlternateOrder, machineLine, median, ratioCell } from './measurements.js'
import { runSizes, writeSection } from './results-file.js'

const REPO = fileURLToPath(new URL('..', import.meta.url))
const VITE_BIN = path.join(REPO, 'node_modules', 'vite', 'bin', 'vite.js')
const CONFIG_FILE = 'vite.config.startup-bench.mjs'

/** Wall-clock milliseconds of one `node <args>` process, from spawn to exit; rejects on a non-zero exit. */
function timeProcess(args: readonly string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      const ms = performance.now() - started
      if (code === 0) resolve(ms)
      else reject(new Error(`node ${args.join(' ')} failed in ${cwd} (${code ?? signal}): ${stderr.trim()}`))
    })
  })
}

/** Milliseconds from a dev server process's start to its first response of README.md?raw (bench/dev-start-child.mjs). */
async function timeDevStart(root: string): Promise<number> {
  const result = await measureInChild<{ ms: number }>('./dev-start-child.mjs', { root, configFile: path.join(root, CONFIG_FILE) })
  return result.ms
}

/** Milliseconds `await import(specifier)` takes in a fresh process (printed by the child itself). */
function timeImport(specifier: string): number {
  const code = `const started = performance.now(); await import(${JSON.stringify(specifier)}); console.log(performance.now() - started)`
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO, encoding: 'utf8' })
  return Number(out.trim().split('\n').at(-1))
}

function benchImports(runs: number): string {
  const targets = [
    { label: 'Vite (`import("vite")`)', specifier: 'vite' },
    { label: 'the plugin (`dist/index.js`)', specifier: pathToFileURL(path.join(REPO, 'dist', 'index.js')).href },
    { label: 'the extension SDK (`dist/sdk/index.js`)', specifier: pathToFileURL(path.join(REPO, 'dist', 'sdk', 'index.js')).href },
  ]
  const times = targets.map(() => [] as number[])
  for (let run = -1; run < runs; run++) {
    targets.forEach((target, i) => {
      const ms = timeImport(target.specifier)
      if (run >= 0) times[i]!.push(ms)
    })
  }
  return [
    '### Loading the modules',
    '',
    `Machine: ${machineLine()}. Milliseconds for \`await import(…)\` in a fresh \`node\` process; median of ${runs} runs (min–max).`,
    '',
    '| module | import | / Vite |',
    '| --- | --- | --- |',
    ...targets.map((target, i) => `| ${target.label} | ${cell(times[i]!, 'ms')} | ${i === 0 ? '—' : ratioCell(times[i]!, times[0]!)} |`),
  ].join('\n')
}

function writeConfig(root: string, withPlugin: boolean): void {
  const plugin = pathToFileURL(path.join(REPO, 'dist', 'index.js')).href
  const lines = [
    withPlugin ? `import insitu from ${JSON.stringify(plugin)}` : '',
    'export default {',
    "  logLevel: 'silent',",
    `  plugins: [${withPlugin ? 'insitu()' : ''}],`,
    "  build: { outDir: 'dist-startup-bench', emptyOutDir: true, minify: false, rollupOptions: { input: 'all-documents.js' } },",
    '}',
  ]
  fs.writeFileSync(path.join(root, CONFIG_FILE), `${lines.join('\n')}\n`)
}

async function benchCommandLine(documents: number, runs: number, keep: boolean, layout: ProjectLayout): Promise<string> {
  console.error(`startup: ${layout} layout, ${formatSize(documents)} documents: generating…`)
  const projects = await prepareProjects(documents, layout)
  const times = { plain: [] as number[], cold: [] as number[], warm: [] as number[] }
  const dev = { plain: [] as number[], cold: [] as number[], warm: [] as number[] }
  const devStart = (root: string) => timeDevStart(root)
  // `--configLoader native`: Node imports the config as is. The default loader bundles a config
  // with its imports that are not in a node_modules folder, which would inline dist/ here,
  // while a user's `import insitu from 'vite-plugin-insitu'` stays external.
  const viteBuild = (root: string) => timeProcess([VITE_BIN, 'build', '--configLoader', 'native', '--config', CONFIG_FILE], root)
  try {
    writeConfig(projects.plain, false)
    writeConfig(projects.plugin, true)
    for (let run = -1; run < runs; run++) {
      const plain = async () => {
        const ms = await viteBuild(projects.plain)
        const devMs = await devStart(projects.plain)
        if (run >= 0) {
          times.plain.push(ms)
          dev.plain.push(devMs)
        }
      }
      const withPlugin = async () => {
        removePluginState(projects.plugin)
        const cold = await viteBuild(projects.plugin)
        const warm = await viteBuild(projects.plugin)
        removePluginState(projects.plugin)
        const devCold = await devStart(projects.plugin)
        const devWarm = await devStart(projects.plugin)
        if (run >= 0) {
          times.cold.push(cold)
          times.warm.push(warm)
          dev.cold.push(devCold)
          dev.warm.push(devWarm)
        }
      }
      await inAlternateOrder(run, plain, withPlugin)
    }
    return [
      `### ${formatSize(documents)} documents, ${layout} layout`,
      '',
      `Machine: ${machineLine()}. \`node node_modules/vite/bin/vite.js build --configLoader native\` with a config file importing dist/index.js, timed from spawn to exit; median of ${runs} runs (min–max).`,
      '',
      '| build | with the plugin | Vite alone | plugin / Vite |',
      '| --- | --- | --- | --- |',
      `| cold (no state folder) | ${cell(times.cold, 'ms')} | ${cell(times.plain, 'ms')} | ${ratioCell(times.cold, times.plain)} |`,
      `| warm (the next build) | ${cell(times.warm, 'ms')} | ${cell(times.plain, 'ms')} | ${ratioCell(times.warm, times.plain)} |`,
      '',
      `A dev server with the same config (bench/dev-start-child.mjs): from its process's start to the first response of \`README.md?raw\`; median of ${runs} runs (min–max).`,
      '',
      '| dev server start | with the plugin | Vite alone | plugin / Vite |',
      '| --- | --- | --- | --- |',
      `| cold (no state folder) | ${cell(dev.cold, 'ms')} | ${cell(dev.plain, 'ms')} | ${ratioCell(dev.cold, dev.plain)} |`,
      `| warm (the next start) | ${cell(dev.warm, 'ms')} | ${cell(dev.plain, 'ms')} | ${ratioCell(dev.warm, dev.plain)} |`,
      '',
      `Target (issue #38): a dev server's start to its first document ≤ 1.2× Vite alone, cold and warm: ${devStartVerdict(dev)}.`,
    ].join('\n')
  } finally {
    if (keep) console.error(`  kept ${projects.tmp}`)
    else projects.remove()
  }
}

/** Whether both dev-start ratios of medians are within 1.2×. */
function devStartVerdict(dev: { cold: number[]; warm: number[]; plain: number[] }): string {
  const worst = Math.max(median(dev.cold), median(dev.warm)) / median(dev.plain)
  return `${worst <= 1.2 ? 'met' : 'not met'} (worst ${worst.toFixed(2)}×)`
}

console.error('startup: npm run build…')
execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] })
const imports = benchImports(benchArgs(process.argv.slice(2), 9).runs)
writeSection('startup', imports)
console.log(imports)
await runSizes('startup', 7, benchCommandLine)
