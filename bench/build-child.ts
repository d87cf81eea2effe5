/**
 * One `vite build` in a fresh process, for bench/build.ts: `node --import tsx
 * bench/build-child.ts '<json>'` with `{ root, outDir, plugin }`.
 *
 * Contract: builds `<root>/all-documents.js` (see bench/bench-projects.ts) into `outDir`, with
 * `insitu()` when `plugin` is true and no plugin otherwise, Vite's config file ignored. Prints
 * one JSON line `{ "ms": <build() wall time>, "cpuMs": … }` on stdout; the time excludes loading Vite and
 * the plugin's modules, and `cpuMs`, the process's CPU time (user + system, every thread) over
 * the same span: steadier than wall time on a busy machine.
 */
import path from 'node:path'
import { build } from 'vite'
import insitu from '../src/index.js'

interface Request {
  root: string
  outDir: string
  plugin: boolean
}

const request = JSON.parse(process.argv[2] ?? '') as Request
const cpu = process.cpuUsage()
const started = performance.now()
await build({
  root: request.root,
  configFile: false,
  logLevel: 'silent',
  plugins: request.plugin ? [insitu()] : [],
  build: {
    outDir: request.outDir,
    emptyOutDir: true,
    minify: false,
    rollupOptions: { input: path.join(request.root, 'all-documents.js') },
  },
})
const ms = performance.now() - started
const used = process.cpuUsage(cpu)
console.log(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000 }))
