/**
 * The sandbox's child program when the plugin runs from its sources (the repository's tests and
 * benchmarks, through tsx or vitest): Node 20 cannot run `src/sandbox-child.ts` itself, and a child
 * started through tsx takes five times as long to start.
 *
 * Contract: `sourceChild(entry)` is the path of a bundle of `entry` made with esbuild (tsx's own
 * compiler; the sandbox's process and the index's worker thread, src/index-worker.ts, each have one): better-sqlite3 imported by its absolute path, CommonJS dependencies given a
 * `require`, the modules it imports dynamically in files of their own (as in dist/). Bundles live
 * in folders of the OS's temporary folder, named by the entry and a hash of the sources (every `.ts` file's
 * path, size and mtime under the folder above `entry`), written atomically, and are
 * shared by every process of the same sources (a benchmark's build processes do not each bundle
 * it); bundles of other sources older than a day are removed. The published package never calls
 * it (dist/sandbox-child.js). A bundle knows the `src/` folder it was made from as
 * `__INSITU_SOURCES__` (child-programs.ts: the programs it starts come from the same sources).
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const PREFIX = 'insitu-sandbox-child-'
const DAY_MS = 24 * 60 * 60 * 1000

/** Entry → its bundle, once per process. */
const bundled = new Map<string, string>()

export function sourceChild(entry: string): string {
  const known = bundled.get(entry)
  if (known) return known
  // From the sources' folder: a bundle in the temporary folder (child-programs.ts) starts programs too.
  const require = createRequire(entry)
  const sqlite = pathToFileURL(require.resolve('better-sqlite3')).href
  const name = path.basename(entry, '.ts')
  const folder = path.join(os.tmpdir(), `${PREFIX}${name}-${sourcesHash(path.dirname(entry), sqlite)}`)
  const outfile = path.join(folder, `${name}.mjs`)
  if (!fs.existsSync(outfile)) {
    const esbuild = require('esbuild') as typeof import('esbuild')
    const { outputFiles } = esbuild.buildSync({
      entryPoints: [entry],
      bundle: true,
      // The modules it imports when a task needs them stay out of the entry's file (as in dist/).
      splitting: true,
      outdir: folder,
      outExtension: { '.js': '.mjs' },
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: ['better-sqlite3'],
      // The programs it starts in turn are bundled from the same sources (child-programs.ts).
      define: { __INSITU_SOURCES__: JSON.stringify(path.dirname(entry)) },
      // CommonJS dependencies (yaml) require Node's builtins.
      banner: { js: "import { createRequire as __insituCreateRequire } from 'node:module'; const require = __insituCreateRequire(import.meta.url);" },
      write: false,
      logLevel: 'silent',
    })
    const temporary = `${folder}.${process.pid}.tmp`
    fs.rmSync(temporary, { recursive: true, force: true })
    fs.mkdirSync(temporary)
    for (const output of outputFiles) {
      // Import statements only (lines of their own in esbuild's output): this module's own text,
      // bundled into the index's worker with the sandbox's pool, names the package too.
      const code = output.text.replace(/^(import [^\n]*) from "better-sqlite3";$/gm, (_, head: string) => `${head} from ${JSON.stringify(sqlite)};`)
      if (/^import [^\n]* from "better-sqlite3"|\b(?:require|import)\("better-sqlite3"\)/m.test(code)) throw new Error(`the bundle of ${name} imports better-sqlite3 in an unexpected way`)
      fs.writeFileSync(path.join(temporary, path.relative(folder, output.path)), code)
    }
    try {
      fs.renameSync(temporary, folder)
    } catch (error) {
      // Another process of the same sources put its bundle there first.
      fs.rmSync(temporary, { recursive: true, force: true })
      if (!fs.existsSync(outfile)) throw error
    }
    removeOldBundles(folder)
  }
  bundled.set(entry, outfile)
  return outfile
}

/** A hash of every `.ts` file under `folder` (path, size, mtime) and of better-sqlite3's place. */
function sourcesHash(folder: string, sqlite: string): string {
  const hash = createHash('sha1').update(sqlite)
  const walk = (dir: string): void => {
    for (const dirent of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const file = path.join(dir, dirent.name)
      if (dirent.isDirectory()) walk(file)
      else if (dirent.name.endsWith('.ts')) {
        const stat = fs.statSync(file)
        hash.update(`${file}\u0000${stat.size}\u0000${stat.mtimeMs}\n`)
      }
    }
  }
  walk(folder)
  return hash.digest('hex').slice(0, 16)
}

function removeOldBundles(keep: string): void {
  const folder = path.dirname(keep)
  for (const name of fs.readdirSync(folder)) {
    const file = path.join(folder, name)
    if (!name.startsWith(PREFIX) || file === keep) continue
    try {
      if (Date.now() - fs.statSync(file).mtimeMs > DAY_MS) fs.rmSync(file, { recursive: true, force: true })
    } catch {
      // another process removed it
    }
  }
}
