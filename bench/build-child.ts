/**
 * One `vite build` in a fresh process, for bench/build.ts: `node --import tsx
 * bench/build-child.ts '<json>'` with `{ root, outDir, plugin }`.
 *
 * Contract: builds `<root>/all-documents.js` (see bench/bench-projects.ts) into `outDir`, with
 * `insitu()` of `dist/index.js` when `plugin` is true and no plugin otherwise, Vite's config file ignored. Prints
 * one JSON line `{ "ms": <build() wall time>, "cpuMs": … }` on stdout; the time excludes loading Vite and
 * the plugin's modules, and `cpuMs`, the process's CPU time (user + system, every thread) over
 * the same span, with its children's that ended in it (the plugin's query processes; Linux
 * `/proc`, 10 ms ticks): steadier than wall time on a busy machine.
 */
import fs from 'node:fs'
import path from 'node:path'
import { build } from 'vite'
// The published JavaScript (bench/build.ts runs `npm run build` first): what a user's build
// loads, its build process and code cache included (from src/ the build process would be a
// bundle of the sources, without either).
import insitu from '../dist/index.js'

interface Request {
  root: string
  outDir: string
  plugin: boolean
}

/** CPU milliseconds of the child processes this one waited for (`/proc/self/stat` cutime + cstime), or 0 without `/proc`. */
function childrenCpuMs(): number {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return 0
  }
}

const request = JSON.parse(process.argv[2] ?? '') as Request
const cpu = process.cpuUsage()
const childrenCpu = childrenCpuMs()
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
console.log(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000 + childrenCpuMs() - childrenCpu }))
