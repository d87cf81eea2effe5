/**
 * One engine start in a fresh process, for bench/engine.ts: `node --import tsx
 * bench/engine-child.ts '<json>'` with `{ root, documents: string[], start, cache? }`.
 *
 * Contract: with `start`, runs `InsituEngine.create({ root })` (plus the option `cache` of the
 * persistent cache when the request gives it) and renders each of `documents` (project-relative) from
 * its text on disk, then closes the engine; without `start`, only loads the same modules (the
 * floor of the process's memory). Prints one JSON line: `createMs`, `renderMs` (0 without
 * `start`), `cpuMs` (user + system CPU time of create + render: steadier than wall time on a
 * busy machine), `maxRssKiB` (`process.resourceUsage().maxRSS` at the end), and `jobsRun`
 * (`engine.stats.jobsRun` when the engine has it, else null). Module loading is not timed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type EngineOptions, InsituEngine } from '../src/engine/engine.js'

interface Request {
  root: string
  documents: string[]
  start: boolean
  cache?: boolean
}

const request = JSON.parse(process.argv[2] ?? '') as Request
let createMs = 0
let renderMs = 0
let cpuMs = 0
let jobsRun: number | null = null
if (request.start) {
  const options = { root: request.root, ...(request.cache === undefined ? {} : { cache: request.cache }) } as EngineOptions
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const engine = await InsituEngine.create(options)
  const created = performance.now()
  for (const document of request.documents) {
    const result = await engine.renderDocument(document, fs.readFileSync(path.join(request.root, document), 'utf8'))
    const errors = result.diagnostics.filter((d) => d.severity === 'error')
    if (errors.length > 0) throw new Error(`${document}: ${errors.map((d) => d.message).join('; ')}`)
  }
  renderMs = performance.now() - created
  const cpu = process.cpuUsage(cpuBefore)
  cpuMs = (cpu.user + cpu.system) / 1000
  createMs = created - started
  const stats = (engine as unknown as { stats?: { jobsRun: number } }).stats
  jobsRun = stats ? stats.jobsRun : null
  await engine.close()
}
console.log(JSON.stringify({ createMs, renderMs, cpuMs, maxRssKiB: process.resourceUsage().maxRSS, jobsRun }))
