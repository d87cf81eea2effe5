/**
 * Where the time of one kind of edit goes: a CPU profile of the plugin's dev server (alone in
 * this process, with one Chromium page) over repeated edits. Not a benchmark row.
 * `npm run bench:profile -- --sizes=10000 --kind=front-matter [--edits=10] [--layout=nested]`.
 *
 * Contract:
 * - Kinds: `prose` (README.md), `front-matter` (the title of the first open task), `include`
 *   (snippets/example.ts), as in bench/hmr.ts. Two unprofiled edits first, then `--edits`
 *   profiled ones (node:inspector, 200 µs sampling), each after 200 ms of quiet.
 * - Writes the profile to `<tmp>/plugin-<kind>-<size>.cpuprofile` (open it in Chrome DevTools)
 *   and prints the edit times, the busy time per edit, and the functions with the most
 *   inclusive time (project files and Vite's bundle) per edit.
 */
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { createServer } from 'vite'
import insitu from '../src/index.js'
import { prepareProjects, type ProjectLayout } from './bench-projects.js'
import { LAYOUTS } from './project-generator.js'
import { launchChromium } from '../test/e2e/chromium.js'
import { type CpuProfile as Profile, inclusiveTimes } from './cpu-profile.js'

const KINDS = ['prose', 'front-matter', 'include'] as const
type Kind = (typeof KINDS)[number]

function flag(name: string, fallback: string): string {
  const arg = process.argv.slice(2).find((a) => a.startsWith(`--${name}=`))
  return arg ? arg.slice(name.length + 3) : fallback
}

async function main(): Promise<void> {
  const documents = Number(flag('sizes', '10000'))
  const kind = flag('kind', 'front-matter') as Kind
  const edits = Number(flag('edits', '10'))
  if (!KINDS.includes(kind)) throw new Error(`--kind: one of ${KINDS.join(', ')} (got ${kind})`)
  const layout = flag('layout', 'flat') as ProjectLayout
  if (!LAYOUTS.includes(layout)) throw new Error(`--layout: one of ${LAYOUTS.join(', ')} (got ${layout})`)
  const projects = await prepareProjects(documents, layout)
  // Vite's cache beside the project, not in it (it would appear in the tree region), as bench/hmr-edits.ts does.
  const server = await createServer({ root: projects.plugin, configFile: false, logLevel: 'silent', cacheDir: path.join(projects.tmp, 'vite-cache-plugin'), plugins: [insitu()], server: { port: 0 } })
  const browser = await launchChromium()
  const session = new Session()
  try {
    await server.listen()
    const page = await browser.newPage()
    await page.goto(server.resolvedUrls!.local[0]!)
    await page.waitForFunction(() => (globalThis as unknown as { __ready?: boolean }).__ready === true)
    const file = path.join(projects.plugin, kind === 'prose' ? projects.generated.readme : kind === 'include' ? projects.generated.snippet : projects.openTask)
    const rewrite = (text: string, marker: string) =>
      kind === 'prose'
        ? text.replace(/^That is all for now.*$/m, `That is all for now (${marker}).`)
        : kind === 'include'
          ? text.replace(/hello[^,]*,/, `hello ${marker},`)
          : text.replace(/^title: (Task \d+).*$/m, `title: $1 ${marker}`)
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: 200 })
    const times: number[] = []
    for (let i = 0; i < edits + 2; i++) {
      if (i === 2) await session.post('Profiler.start')
      await setTimeout(200)
      const marker = `prof${i}x`
      const started = performance.now()
      fs.writeFileSync(file, rewrite(fs.readFileSync(file, 'utf8'), marker))
      await page.waitForFunction(
        (m) => (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }).document.getElementById('out').textContent.includes(m),
        marker,
        { polling: 5, timeout: 60_000 },
      )
      if (i >= 2) times.push(performance.now() - started)
    }
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile }
    const out = path.join(os.tmpdir(), `plugin-${kind}-${layout}-${documents}.cpuprofile`)
    fs.writeFileSync(out, JSON.stringify(profile))
    const { inclusive, busy } = inclusiveTimes(profile)
    console.log(`${kind} edit, ${layout}, ${documents} documents: ${times.map((t) => t.toFixed(0)).join(' ')} ms; busy ${(busy / 1000 / edits).toFixed(1)} ms per edit`)
    console.log(`profile: ${out}`)
    console.log('inclusive ms per edit (src/ and Vite):')
    const top = [...inclusive]
      .filter(([name]) => / (src|node_modules\/vite|node_modules\/better-sqlite3)\//.test(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 40)
    for (const [name, us] of top) console.log(`${(us / 1000 / edits).toFixed(1).padStart(8)}  ${name}`)
  } finally {
    session.disconnect()
    await browser.close()
    await server.close()
    projects.remove()
  }
}

await main()
