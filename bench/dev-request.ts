/**
 * Benchmark: what one request of a managed document costs a dev server, against Vite serving
 * the same text without the plugin. `npm run bench:dev-request [-- --runs=N]`.
 *
 * Contract:
 * - For each count K of included files (1, 10, 50): a project whose README.md has K `include`
 *   regions (each a one-line file of snippets/), and a copy of it, without insitu, whose
 *   README.md already holds the regenerated text. One dev server each (`createServer`, no
 *   browser), in this process; each imports `README.md?raw` once.
 * - A measured request: the README's `?raw` module invalidated (as an update does), then
 *   `transformRequest('/README.md?raw')` until its code is back (load, every plugin's
 *   transform, import analysis). The two servers alternate, request by request; median of
 *   `--runs` (default 60) after 20 unmeasured ones, with min–max. The plugin's render is a cache
 *   hit (nothing changed), so what differs is the plugin's own hooks and what it adds to the
 *   module graph (each node a module imports is resolved through every plugin's `resolveId` by
 *   Vite's import analysis, on each request).
 * - Rewrites the section `dev-request` of bench/RESULTS.md.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createServer, type ViteDevServer } from 'vite'
import insitu from '../src/index.js'
import { InsituEngine } from '../src/engine/engine.js'
import { benchArgs, cell, machineLine, ratioCell } from './measurements.js'
import { writeSection } from './results-file.js'

const INCLUDED_FILES = [1, 10, 50]
const WARM_UP = 20

async function makeProjects(included: number): Promise<{ plugin: string; plain: string; remove: () => void }> {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-bench-request-'))
  const plugin = path.join(base, 'plugin')
  const plain = path.join(base, 'plain')
  fs.mkdirSync(path.join(plugin, 'snippets'), { recursive: true })
  fs.writeFileSync(path.join(plugin, 'insitu.toml'), 'version = 1\n')
  let readme = '# Included files\n\n'
  for (let i = 0; i < included; i++) {
    fs.writeFileSync(path.join(plugin, `snippets/s${i}.txt`), `snippet ${i}\n`)
    readme += `<!-- insitu:begin include\nid = "s${i}"\npath = "snippets/s${i}.txt"\nraw = true\n-->\n<!-- insitu:end -->\n\n`
  }
  fs.writeFileSync(path.join(plugin, 'README.md'), readme)
  fs.writeFileSync(path.join(plugin, 'main.js'), "import readme from './README.md?raw'\nconsole.log(readme)\n")
  fs.cpSync(plugin, plain, { recursive: true })
  const engine = await InsituEngine.create({ root: plugin, cache: false })
  try {
    const rendered = await engine.renderDocument(path.join(plugin, 'README.md'), readme)
    fs.writeFileSync(path.join(plain, 'README.md'), rendered.text)
  } finally {
    await engine.close()
  }
  fs.rmSync(path.join(plain, 'insitu.toml'))
  return { plugin, plain, remove: () => fs.rmSync(base, { recursive: true, force: true }) }
}

/** One measured request: the README's `?raw` module invalidated, then transformed again. */
function requester(server: ViteDevServer, root: string): () => Promise<number> {
  const environment = server.environments.client
  const file = path.join(root, 'README.md').split(path.sep).join('/')
  return async () => {
    const module = [...(environment.moduleGraph.getModulesByFile(file) ?? [])].find((m) => m.url.includes('raw'))
    if (!module) throw new Error(`README.md?raw is not in the module graph of ${root}`)
    environment.moduleGraph.invalidateModule(module)
    const started = performance.now()
    const result = await environment.transformRequest('/README.md?raw')
    const elapsed = performance.now() - started
    if (!result?.code.includes('snippet 0')) throw new Error(`unexpected README.md?raw of ${root}`)
    return elapsed
  }
}

async function startServer(root: string, withPlugin: boolean): Promise<ViteDevServer> {
  const server = await createServer({ root, configFile: false, logLevel: 'silent', plugins: withPlugin ? [insitu()] : [], server: { port: 0 } })
  await server.environments.client.transformRequest('/main.js')
  await server.environments.client.transformRequest('/README.md?raw')
  return server
}

async function main(): Promise<void> {
  const { runs } = benchArgs(process.argv.slice(2), 60)
  const rows: string[] = []
  for (const included of INCLUDED_FILES) {
    const projects = await makeProjects(included)
    const withPlugin = await startServer(projects.plugin, true)
    const alone = await startServer(projects.plain, false)
    try {
      const ours = requester(withPlugin, projects.plugin)
      const theirs = requester(alone, projects.plain)
      const oursMs: number[] = []
      const theirsMs: number[] = []
      for (let i = 0; i < WARM_UP + runs; i++) {
        // Alternating which goes first, so neither always runs on a loop the other just left busy.
        let a: number, b: number
        if (i % 2 === 0) {
          a = await ours()
          b = await theirs()
        } else {
          b = await theirs()
          a = await ours()
        }
        if (i >= WARM_UP) {
          oursMs.push(a)
          theirsMs.push(b)
        }
      }
      const graphNodes = [...(withPlugin.environments.client.moduleGraph.getModulesByFile(path.join(projects.plugin, 'README.md').split(path.sep).join('/')) ?? [])]
        .find((m) => m.url.includes('raw'))?.importedModules.size
      rows.push(`| ${included} | ${cell(oursMs, 'ms')} | ${cell(theirsMs, 'ms')} | ${ratioCell(oursMs, theirsMs)} | ${graphNodes ?? '?'} |`)
      console.log(rows.at(-1))
    } finally {
      await withPlugin.close()
      await alone.close()
      projects.remove()
    }
  }
  const markdown = [
    `Machine: ${machineLine()}. Median of ${runs} requests per cell (min–max), the two servers alternating in one process.`,
    '',
    '| included files | with the plugin | Vite alone (regenerated copy) | plugin / Vite | modules README.md?raw imports in the graph |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n')
  writeSection('dev-request', markdown)
  console.log(markdown)
}

await main()
