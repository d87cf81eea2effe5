/**
 * The sandbox's child program when the plugin runs from its sources (the repository's tests and
 * benchmarks, through tsx or vitest): Node 20 cannot run `src/sandbox-child.ts` itself, and a child
 * started through tsx takes five times as long to start.
 *
 * Contract: `sourceChild(entry)` bundles `entry` with esbuild (tsx's own compiler) once per
 * process, better-sqlite3 imported by its absolute path (the bundle lives in the OS's temporary
 * folder), CommonJS dependencies given a `require`, and returns the bundle's path; the bundle is
 * removed when this process ends. The published package never calls it (dist/sandbox-child.js).
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { onProcessEnd } from './process-end.js'

let bundled: string | undefined

export function sourceChild(entry: string): string {
  if (bundled) return bundled
  const require = createRequire(import.meta.url)
  const esbuild = require('esbuild') as typeof import('esbuild')
  const sqlite = pathToFileURL(require.resolve('better-sqlite3')).href
  const outfile = path.join(os.tmpdir(), `insitu-sandbox-child-${process.pid}.mjs`)
  const { outputFiles } = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: ['better-sqlite3'],
    // CommonJS dependencies (yaml) require Node's builtins.
    banner: { js: "import { createRequire as __insituCreateRequire } from 'node:module'; const require = __insituCreateRequire(import.meta.url);" },
    write: false,
    logLevel: 'silent',
  })
  const code = outputFiles[0]!.text.replaceAll('from "better-sqlite3"', `from ${JSON.stringify(sqlite)}`)
  if (/from "better-sqlite3"|\("better-sqlite3"\)/.test(code)) throw new Error('the sandbox bundle imports better-sqlite3 in an unexpected way')
  fs.writeFileSync(outfile, code)
  onProcessEnd(() => fs.rmSync(outfile, { force: true }))
  bundled = outfile
  return outfile
}
