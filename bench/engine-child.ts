/**
 * One engine start in a fresh process, for bench/engine-start.ts: `node --import tsx
 * bench/engine-child.ts '<json>'` with `{ root, documents: string[], start, cache }`.
 *
 * Contract: with `start`, runs `InsituEngine.create({ root })` (plus `cache: true` when `cache`,
 * the option of the persistent cache) and renders each of `documents` (project-relative) from
 * its text on disk, then closes the engine; without `start`, only loads the same modules (the
 * floor of the process's memory). Prints one JSON line: `createMs`, `renderMs` (0 without
 * `start`), `maxRssKiB` (`process.resourceUsage().maxRSS` at the end), and `jobsRun`
 * (`engine.stats.jobsRun` when the engine has it, else null). Module loading is not timed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type EngineOptions, InsituEngine } from '../src/engine/engine.js'

interface Request {
  root: string
  documents: string[]
  start: boolean
  cache: boolean
}

const request = JSON.parse(process.argv[2] ?? '') as Request
let createMs = 0
let renderMs = 0
let jobsRun: number | null = null
if (request.start) {
  const options = { root: request.root, ...(request.cache ? { cache: true } : {}) } as EngineOptions
  const started = performance.now()
  const engine = await InsituEngine.create(options)
  const created = performance.now()
  for (const document of request.documents) {
    const result = await engine.renderDocument(document, fs.readFileSync(path.join(request.root, document), 'utf8'))
    const errors = result.diagnostics.filter((d) => d.severity === 'error')
    if (errors.length > 0) throw new Error(`${document}: ${errors.map((d) => d.message).join('; ')}`)
  }
  renderMs = performance.now() - created
  createMs = created - started
  const stats = (engine as unknown as { stats?: { jobsRun: number } }).stats
  jobsRun = stats ? stats.jobsRun : null
  await engine.close()
}
console.log(JSON.stringify({ createMs, renderMs, maxRssKiB: process.resourceUsage().maxRSS, jobsRun }))
