/**
 * The programs the plugin starts beside itself: the sandbox's process (src/sandbox-child.ts),
 * the index's worker thread (src/index-worker.ts) and a build's engine process
 * (src/build-child.ts).
 *
 * Contract: `childProgram(name)` is the file to run: `dist/<name>.js` in the published package
 * (found walking up from this module, which lives in `dist/` or `dist/chunks/`); from the
 * sources (`.ts`, through tsx or vitest), a bundle of `src/<name>.ts` (source-child.ts); from
 * such a bundle itself (a build process started from the sources starts a sandbox in turn), a
 * bundle of the same sources, which source-child.ts names to it as `__INSITU_SOURCES__`.
 * Throws when the file is missing.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sourceChild } from './source-child.js'

export type ChildProgramName = 'sandbox-child' | 'index-worker' | 'build-child'

/** The `src/` folder a bundle made by source-child.ts was made from (esbuild's `define`); undefined elsewhere. */
declare const __INSITU_SOURCES__: string | undefined

export function childProgram(name: ChildProgramName): string {
  const here = fileURLToPath(import.meta.url)
  const sources = here.endsWith('.ts') ? path.resolve(path.dirname(here), '..') : typeof __INSITU_SOURCES__ === 'string' ? __INSITU_SOURCES__ : undefined
  if (sources !== undefined) return sourceChild(path.join(sources, `${name}.ts`))
  for (let folder = path.dirname(here); ; folder = path.dirname(folder)) {
    const file = path.join(folder, `${name}.js`)
    if (fs.existsSync(file)) return file
    if (path.dirname(folder) === folder) throw new Error(`the program ${name}.js is missing (looked for it above ${here})`)
  }
}
