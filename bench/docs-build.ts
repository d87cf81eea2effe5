/**
 * Benchmark: the builds people run (issue #38, "Builds"): `vitepress build` (VitePress 2) and
 * `astro build` (Astro 5; with @astrojs/starlight when the fixture has it installed) of a
 * generated 1,000-page documentation site, with and without the plugin.
 * `npm run bench:docs-build [-- --runs=5 --tools=vitepress,astro]`.
 *
 * Contract:
 * - Needs the fixture installs test/clients/vitepress2 and test/clients/astro5 (their
 *   `node_modules`, which the client tests' global setup installs from their lockfiles); first
 *   runs `npm run build`, so the sites import this checkout's `dist/` as `vite-plugin-insitu`.
 * - Size: the sites have as many content pages as the smallest `--sizes` entry (default 1,000,
 *   also in `npm run bench:all`), plus one index per 50 pages and the home page
 *   (bench/docs-site.ts); each tool runs once, whatever the other sizes. `--layouts` does not
 *   apply. `--tools=vitepress,astro` picks the tools (default both).
 * - Per tool, in a temp folder: `plugin/` (region bodies empty on disk; the config has
 *   `insitu()`, for Astro `insitu({ write: true })`, as Astro renders pages from disk) and
 *   `plain/` (the same site after `vite-plugin-insitu sync`, its state folder removed, no
 *   plugin in its config). Each site's `node_modules` holds symlinks to the fixture's packages
 *   and `vite-plugin-insitu` as npm installs it (this checkout's package.json and `dist/`, its
 *   dependencies nested). Before every build: its output and caches removed
 *   (`.vitepress/dist` and `.vitepress/cache`; `dist`, `.astro`, `node_modules/.vite`), and on
 *   `plugin/` the state folder `.insitu/` too and the documents with regions rewritten stale (a
 *   cold build, as in CI). Each build is a fresh process (`node <bin> build`), timed from spawn
 *   to exit; sides alternate which goes first; one unmeasured round first, after which the
 *   home page's HTML of both sides must be identical (a sanity check; otherwise it throws).
 * - CPU time (user + system of the whole tree) when `/usr/bin/time` exists: steadier than wall
 *   time on a shared machine.
 * - Memory: the peak of the summed RSS of the build's process group, sampled from /proc every
 *   20 ms (bench/process-tree-run.ts), with the part insitu's sandbox processes held at that
 *   moment, and, when `/usr/bin/time` exists, its `%M` (exact peak of the largest single process).
 * - Rewrites the sections `docs-build-<tool>@<pages>` of bench/RESULTS.md: median (min–max)
 *   of `--runs` (default 5) per side, the ratios with / without (targets ≤ 1.05× for wall
 *   time and peak memory) and the 1-minute load average before and after.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type DocsTool, generateDocsSite, sections } from './docs-site.js'
import { benchArgs, cell, formatSize, inAlternateOrder, machineLine, median, ratioCell } from './measurements.js'
import { type MeasuredRun, hasGnuTime, runMeasured, SAMPLE_MS } from './process-tree-run.js'
import { GENERATED_MTIME } from './project-generator.js'
import { writeSection } from './results-file.js'

const REPO = fileURLToPath(new URL('..', import.meta.url))

interface ToolSetup {
  label: string
  fixture: string
  /** The CLI under node_modules. */
  bin: string
  /** The package whose version the table names. */
  packageName: string
  /** The plugin's options in the config (JavaScript source). */
  pluginOptions: string
  /** Build output and caches, removed before every build. */
  outputs: string[]
  /** The home page's HTML in the output. */
  home: string
}

const TOOLS: Record<'vitepress' | 'astro', ToolSetup> = {
  vitepress: {
    label: 'VitePress',
    fixture: 'vitepress2',
    bin: 'vitepress/bin/vitepress.js',
    packageName: 'vitepress',
    pluginOptions: '',
    outputs: ['.vitepress/dist', '.vitepress/cache'],
    home: '.vitepress/dist/index.html',
  },
  astro: {
    label: 'Astro',
    fixture: 'astro5',
    bin: 'astro/astro.js',
    packageName: 'astro',
    pluginOptions: '{ write: true }',
    outputs: ['dist', '.astro', 'node_modules/.vite', 'node_modules/.astro'],
    home: 'dist/index.html',
  },
}

/** What a user's CLI sees: no telemetry, colourless, and none of a test runner's variables. */
function buildEnv(): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !/^(NODE_ENV|TEST|VITEST(_.*)?)$/.test(name))
  return { ...Object.fromEntries(inherited), ASTRO_TELEMETRY_DISABLED: '1', NO_COLOR: '1', FORCE_COLOR: '0', CI: '1' }
}

function fixtureModules(setup: ToolSetup): string {
  const modules = path.join(REPO, 'test', 'clients', setup.fixture, 'node_modules')
  if (!fs.existsSync(path.join(modules, setup.packageName, 'package.json'))) {
    throw new Error(
      `docs-build: ${modules} is not installed; run the client tests once (npx vitest run test/clients/${setup.fixture}.test.ts) to install it from its lockfile`,
    )
  }
  return modules
}

function versionOf(modules: string, name: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(path.join(modules, name, 'package.json'), 'utf8')) as { version: string }).version
  } catch {
    return undefined
  }
}

/**
 * `site/node_modules`: a symlink to each package of the fixture, and `vite-plugin-insitu` as npm
 * installs it: a folder holding this checkout's package.json and `dist/`, its dependencies in its
 * own `node_modules` (symlinks to this checkout's; the fixture may hold other versions, Astro's
 * zod 3). Not a symlink to the checkout: Vite bundles or transforms a linked package whose real
 * path is outside `node_modules` (configs, SSR), which a user's install never sees.
 */
function linkModules(site: string, modules: string): void {
  const target = path.join(site, 'node_modules')
  fs.mkdirSync(target)
  for (const name of fs.readdirSync(modules)) {
    if (name === 'vite-plugin-insitu' || name === '.vite' || name === '.astro' || name === '.cache') continue
    fs.symlinkSync(path.join(modules, name), path.join(target, name))
  }
  const plugin = path.join(target, 'vite-plugin-insitu')
  fs.mkdirSync(path.join(plugin, 'node_modules'), { recursive: true })
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(plugin, 'package.json'))
  fs.cpSync(path.join(REPO, 'dist'), path.join(plugin, 'dist'), { recursive: true })
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of Object.keys(manifest.dependencies)) {
    const link = path.join(plugin, 'node_modules', name)
    fs.mkdirSync(path.dirname(link), { recursive: true })
    fs.symlinkSync(fs.realpathSync(path.join(REPO, 'node_modules', name)), link, 'dir')
  }
}

interface Sides {
  tmp: string
  plugin: string
  plain: string
  /** The stale text of each document with regions of `plugin/`, to restore before a build. */
  stale: Map<string, string>
}

function prepareSites(tool: DocsTool, setup: ToolSetup, pages: number, modules: string): Sides {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `insitu-bench-docs-${tool}-`)))
  // Both sites are folders named `docs` (the tree region's first line is the folder's name).
  const plugin = path.join(tmp, 'with-plugin', 'docs')
  const plain = path.join(tmp, 'without', 'docs')
  const withRegions = generateDocsSite(plugin, { tool, pages, withPlugin: true, pluginOptions: setup.pluginOptions })
  generateDocsSite(plain, { tool, pages, withPlugin: false })
  execFileSync(process.execPath, [path.join(REPO, 'dist', 'cli', 'bin.js'), 'sync', '--root', plain], { stdio: ['ignore', 'ignore', 'inherit'] })
  fs.rmSync(path.join(plain, '.insitu'), { recursive: true, force: true })
  for (const site of [plugin, plain]) linkModules(site, modules)
  const stale = new Map(withRegions.map((file) => [file, fs.readFileSync(path.join(plugin, file), 'utf8')]))
  return { tmp, plugin, plain, stale }
}

function resetSite(site: string, setup: ToolSetup, stale?: Map<string, string>): void {
  for (const output of setup.outputs) fs.rmSync(path.join(site, output), { recursive: true, force: true })
  if (!stale) return
  fs.rmSync(path.join(site, '.insitu'), { recursive: true, force: true })
  for (const [file, text] of stale) {
    const target = path.join(site, file)
    if (fs.readFileSync(target, 'utf8') === text) continue
    fs.writeFileSync(target, text)
    fs.utimesSync(target, GENERATED_MTIME, GENERATED_MTIME)
  }
}

/** Asset file names carry content hashes; the same page may name other chunks when the bundles differ. */
function withoutAssetHashes(html: string): string {
  return html.replace(/([.-])[A-Za-z0-9_-]{8}(\.lean)?\.(js|css|mjs)\b/g, '$1#$2.$3')
}

/** The sanity check: the home page's HTML of both sides; returns how they compared, throws when they differ. */
function compareHomes(sides: Sides, setup: ToolSetup): string {
  const withPlugin = fs.readFileSync(path.join(sides.plugin, setup.home), 'utf8')
  const plain = fs.readFileSync(path.join(sides.plain, setup.home), 'utf8')
  if (!plain.includes('Page 2')) throw new Error(`docs-build: the plain site's ${setup.home} does not list the pages: ${plain.slice(0, 400)}`)
  if (withPlugin === plain) return `the home page's HTML is byte-identical on both sides (${formatSize(plain.length)} bytes)`
  if (withoutAssetHashes(withPlugin) === withoutAssetHashes(plain)) {
    return `the home page's HTML is identical on both sides but for asset hashes (${formatSize(plain.length)} bytes)`
  }
  const at = [...withPlugin].findIndex((char, i) => char !== plain[i])
  throw new Error(
    `docs-build: ${setup.home} differs at ${at}:\nwith the plugin: ${withPlugin.slice(Math.max(0, at - 200), at + 200)}\nwithout: ${plain.slice(Math.max(0, at - 200), at + 200)}`,
  )
}

const mib = (kib: number) => kib / 1024

async function benchTool(tool: DocsTool, setup: ToolSetup, pages: number, runs: number, keep: boolean): Promise<string> {
  const modules = fixtureModules(setup)
  const version = versionOf(modules, setup.packageName)
  console.error(`docs-build: ${setup.label} ${version}, ${formatSize(pages)} pages: generating…`)
  const sides = prepareSites(tool, setup, pages, modules)
  const loadBefore = os.loadavg()[0]!
  const results = { plugin: [] as MeasuredRun[], plain: [] as MeasuredRun[] }
  let sanity = ''
  const bin = (site: string) => path.join(site, 'node_modules', setup.bin)
  try {
    for (let run = -1; run < runs; run++) {
      const build = async (side: 'plugin' | 'plain') => {
        const site = sides[side]
        resetSite(site, setup, side === 'plugin' ? sides.stale : undefined)
        const measured = await runMeasured(process.execPath, [bin(site), 'build'], { cwd: site, env: buildEnv() })
        console.error(
          `  ${run < 0 ? 'warm-up' : `run ${run + 1}`} ${side}: ${Math.round(measured.wallMs)} ms, tree ${Math.round(mib(measured.treePeakKiB))} MiB (sandbox ${Math.round(mib(measured.sandboxAtPeakKiB))})` +
            (measured.largestPeakKiB === null ? '' : `, largest ${Math.round(mib(measured.largestPeakKiB))} MiB`) +
            (measured.cpuMs === null ? '' : `, CPU ${Math.round(measured.cpuMs)} ms`),
        )
        if (run >= 0) results[side].push(measured)
      }
      await inAlternateOrder(run, () => build('plugin'), () => build('plain'))
      if (run < 0) sanity = compareHomes(sides, setup)
    }
  } finally {
    if (keep) console.error(`  kept ${sides.tmp}`)
    else fs.rmSync(sides.tmp, { recursive: true, force: true })
  }
  const loadAfter = os.loadavg()[0]!
  const wall = (side: MeasuredRun[]) => side.map((r) => r.wallMs)
  const tree = (side: MeasuredRun[]) => side.map((r) => mib(r.treePeakKiB))
  const largest = (side: MeasuredRun[]) => side.map((r) => mib(r.largestPeakKiB ?? Number.NaN))
  const within = (ours: number[], theirs: number[]) => (median(ours) / median(theirs) <= 1.05 ? 'met' : 'not met')
  const { plugin, plain } = results
  const cpu = (side: MeasuredRun[]) => side.map((r) => r.cpuMs ?? Number.NaN)
  const rows = [
    `| wall time (spawn → exit) | ${cell(wall(plugin), 'ms')} | ${cell(wall(plain), 'ms')} | ${ratioCell(wall(plugin), wall(plain))} |`,
    ...(hasGnuTime() ? [`| CPU time, user + system of the tree (\`/usr/bin/time\`) | ${cell(cpu(plugin), 'ms')} | ${cell(cpu(plain), 'ms')} | ${ratioCell(cpu(plugin), cpu(plain))} |`] : []),
    `| peak RSS, whole process tree (sampled) | ${cell(tree(plugin), 'MiB')} | ${cell(tree(plain), 'MiB')} | ${ratioCell(tree(plugin), tree(plain))} |`,
  ]
  const sandbox = (side: MeasuredRun[]) => side.map((r) => mib(r.sandboxAtPeakKiB))
  rows.push(`| … of which insitu's sandbox processes at that moment | ${cell(sandbox(plugin), 'MiB')} | — | — |`)
  if (hasGnuTime()) {
    rows.push(`| peak RSS, largest process (\`/usr/bin/time\` %M) | ${cell(largest(plugin), 'MiB')} | ${cell(largest(plain), 'MiB')} | ${ratioCell(largest(plugin), largest(plain))} |`)
  }
  const pluginConfig = `insitu(${setup.pluginOptions})`
  return [
    `### ${setup.label} ${version ?? ''}: ${formatSize(pages)} pages`,
    '',
    `Machine: ${machineLine()}; load average (1 min) ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after. ` +
      `\`node node_modules/${setup.bin} build\`, each build a fresh process, cold (no output, caches or state folder); ` +
      `${formatSize(pages)} pages + ${sections(pages) + 1} indexes (${sides.stale.size} documents with regions); ` +
      `with \`${pluginConfig}\` against the synced copy without the plugin; median of ${runs} runs (min–max), sides alternating. ` +
      `Peak RSS of the process tree: the summed RSS of the build's process group sampled from /proc every ${SAMPLE_MS} ms. Sanity: ${sanity}.`,
    '',
    '| build | with the plugin | without | with / without |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
    `Targets: ≤ 1.05× wall time (${within(wall(plugin), wall(plain))}), ≤ 1.05× peak memory of the tree (${within(tree(plugin), tree(plain))}).`,
  ].join('\n')
}

function toolsArg(argv: string[]): { tools: DocsTool[]; rest: string[] } {
  const flag = argv.find((arg) => arg.startsWith('--tools='))
  const names = flag ? flag.slice('--tools='.length).split(',') : ['vitepress', 'astro']
  for (const name of names) if (!(name in TOOLS)) throw new Error(`--tools: not a tool: ${name} (expected vitepress, astro)`)
  return { tools: names as DocsTool[], rest: argv.filter((arg) => arg !== flag) }
}

const { tools, rest } = toolsArg(process.argv.slice(2))
const args = benchArgs(rest, 5)
const pages = Math.min(...args.sizes)
console.error('docs-build: npm run build…')
execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] })
for (const name of tools) {
  const setup = TOOLS[name as 'vitepress' | 'astro']
  // Starlight when the Astro fixture has it (the pages then are its `docs` collection).
  const tool: DocsTool = name === 'astro' && versionOf(fixtureModules(setup), '@astrojs/starlight') ? 'starlight' : name
  const label = tool === 'starlight' ? { ...setup, label: `Astro + Starlight ${versionOf(fixtureModules(setup), '@astrojs/starlight')}, Astro` } : setup
  const markdown = await benchTool(tool, label, pages, args.runs, args.keep)
  writeSection(`docs-build-${name}@${pages}`, markdown)
  console.log(markdown)
}
