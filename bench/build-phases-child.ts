/**
 * One `vite build` in a fresh process, for bench/build-phases.ts: `node --import tsx
 * bench/build-phases-child.ts '<json>'` with `{ root, outDir, plugin }`.
 *
 * Contract: builds `<root>/all-documents.js` as bench/build-child.ts does (insitu from src/ when
 * `plugin` is true; a cold build: `.insitu/` and `node_modules/.vite` removed first), with two
 * probe plugins around it (one `enforce: 'pre'`, one `'post'`) that note when the bundler's hooks
 * are reached. Prints one JSON line: `marks` (milliseconds since `build()` was called, by mark
 * name, see MARKS) and `threads` (CPU milliseconds each thread spent during the build, summed by
 * thread name, the main thread as `main`; Linux `/proc` only, else empty).
 */
import fs from 'node:fs'
import path from 'node:path'
import { build, type Plugin } from 'vite'
import insitu from '../src/index.js'

interface Request {
  root: string
  outDir: string
  plugin: boolean
}

/** CPU milliseconds per thread id, with the thread's name (`/proc/self/task/<tid>/stat`: utime + stime, 10 ms ticks). */
function threadTimes(): Map<string, { name: string; ms: number }> {
  const times = new Map<string, { name: string; ms: number }>()
  let tids: string[]
  try {
    tids = fs.readdirSync('/proc/self/task')
  } catch {
    return times
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const name = tid === String(process.pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      times.set(tid, { name, ms: (Number(fields[11]) + Number(fields[12])) * 10 })
    } catch {
      // the thread ended meanwhile
    }
  }
  return times
}

const request = JSON.parse(process.argv[2] ?? '') as Request
if (request.plugin) for (const dir of ['.insitu', 'node_modules/.vite']) fs.rmSync(path.join(request.root, dir), { recursive: true, force: true })

const marks: Record<string, number> = {}
let started = 0
const mark = (name: string) => {
  marks[name] ??= performance.now() - started
}
let resolved = 0
let loaded = 0
const pre: Plugin = {
  name: 'bench:phases-pre',
  enforce: 'pre',
  buildStart: () => mark('buildStart'),
  resolveId() {
    if (++resolved === 1000) mark('1000th resolveId')
    return null
  },
  load() {
    if (++loaded === 1000) mark('1000th load')
    return null
  },
  buildEnd: () => mark('buildEnd'),
  renderStart: () => mark('renderStart'),
  generateBundle: () => mark('generateBundle'),
}
const post: Plugin = { name: 'bench:phases-post', enforce: 'post', buildStart: () => mark('after buildStart') }

const before = threadTimes()
started = performance.now()
await build({
  root: request.root,
  configFile: false,
  logLevel: 'silent',
  plugins: [pre, ...(request.plugin ? [insitu()] : []), post],
  build: { outDir: request.outDir, emptyOutDir: true, minify: false, rollupOptions: { input: path.join(request.root, 'all-documents.js') } },
})
mark('done')
const threads: Record<string, number> = {}
for (const [tid, { name, ms }] of threadTimes()) {
  const spent = ms - (before.get(tid)?.ms ?? 0)
  if (spent > 0) threads[name] = (threads[name] ?? 0) + spent
}
console.log(JSON.stringify({ marks, threads }))
