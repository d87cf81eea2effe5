/**
 * Benchmark: engine start on generated projects (bench/project-generator.ts) of 1,000 and
 * 10,000 task documents, cold and warm. Run with `npx tsx bench/engine-start.ts [sizes…]`;
 * prints a Markdown table to stdout; not part of `npm test`.
 *
 * Contract:
 * - Each measurement is a fresh child process (`node --import tsx`, this file with `--child`)
 *   timing `InsituEngine.create` (config, document index, host) and then `renderDocument` of
 *   the README (its sql, tree and include regions and the front-matter materialization);
 *   start = both, in wall time and in CPU time (user + system, which a busy machine inflates
 *   less). Module loading is not counted. Peak RSS is the child's `maxRSS`.
 * - cold: no `.insitu/` (removed before the run; the project's files are in the OS page cache,
 *   as after a checkout); warm: the snapshot the previous run left; no cache: `cache: false`.
 * - The project is generated once per size (its files dated in the past, as real files are);
 *   each row is the median of RUNS runs (min–max), the three modes interleaved.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateProject } from './project-generator.js'

const RUNS = 7
const SELF = fileURLToPath(import.meta.url)

interface Sample {
  create: number
  render: number
  start: number
  /** CPU time (user + system) of the start: steadier than wall time on a shared machine. */
  cpu: number
  rssMb: number
}

type Mode = 'cold' | 'warm' | 'no cache'

async function child(root: string, cache: boolean): Promise<void> {
  const { InsituEngine } = await import('../src/engine/engine.js')
  const readme = path.join(root, 'README.md')
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const engine = await InsituEngine.create({ root, cache })
  const t1 = performance.now()
  const result = await engine.renderDocument(readme, fs.readFileSync(readme, 'utf8'))
  const t2 = performance.now()
  const cpu = process.cpuUsage(cpu0)
  await engine.close()
  if (result.jobs.some((job) => job.error !== null)) throw new Error('a README job failed')
  const sample: Sample = { create: t1 - t0, render: t2 - t1, start: t2 - t0, cpu: (cpu.user + cpu.system) / 1000, rssMb: process.resourceUsage().maxRSS / 1024 }
  process.stdout.write(JSON.stringify(sample))
}

function measure(root: string, mode: Mode): Sample {
  if (mode === 'cold') fs.rmSync(path.join(root, '.insitu'), { recursive: true, force: true })
  const output = execFileSync(process.execPath, ['--import', 'tsx', SELF, '--child', root, mode === 'no cache' ? 'false' : 'true'], {
    encoding: 'utf8',
    cwd: path.dirname(SELF),
  })
  return JSON.parse(output) as Sample
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

function cell(values: number[], digits = 0): string {
  const f = (n: number) => n.toFixed(digits)
  return `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  const rows: string[] = []
  for (const documents of sizes.length > 0 ? sizes : [1000, 10_000]) {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-bench-start-')))
    try {
      generateProject(root, { documents }) // files dated 2026-01-01: past the index's racy window
      measure(root, 'warm') // warm-up: disk cache, tsx cache
      const samples: Record<Mode, Sample[]> = { cold: [], warm: [], 'no cache': [] }
      for (let run = 0; run < RUNS; run++) {
        samples['no cache'].push(measure(root, 'no cache'))
        samples.cold.push(measure(root, 'cold'))
        samples.warm.push(measure(root, 'warm'))
      }
      for (const mode of ['cold', 'warm', 'no cache'] as const) {
        const list = samples[mode]
        rows.push(
          `| ${documents.toLocaleString('en-US')} | ${mode} | ${cell(list.map((s) => s.start))} | ${cell(list.map((s) => s.cpu))} | ${cell(list.map((s) => s.create))} | ${cell(
            list.map((s) => s.render),
          )} | ${cell(list.map((s) => s.rssMb))} |`,
        )
      }
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
  const cpus = os.cpus()
  process.stdout.write(
    [
      `Engine start, ${RUNS} runs each, median (min–max); Node ${process.version}, ${cpus[0]?.model ?? 'cpu'} (${cpus.length} logical CPUs)`,
      '',
      '| documents | cache | start ms | start CPU ms | create ms (index, host) | README render ms | peak RSS MB |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...rows,
      '',
    ].join('\n'),
  )
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, process.argv[4] === 'true')
} else {
  await main()
}
