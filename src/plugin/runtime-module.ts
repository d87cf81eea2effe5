/**
 * Where the plugin's runtime (in-process.ts and everything under it) comes from: the entry
 * (plugin.ts) loads it when a dev server or a watching build needs it, a build's engine process
 * (src/build-child.ts) when it starts.
 *
 * Contract: `loadRuntimeModule()` resolves to in-process.ts's exports, loaded once per process.
 * In the published package (scripts/bundle.mjs defines `__INSITU_PUBLISHED__`) that is
 * `dist/runtime.cjs`, a CommonJS bundle run with V8's code cache (sandbox/code-cache.ts, issue
 * #38); from the sources it is `import('./in-process.js')`. A published entry without its
 * `runtime.cjs` beside it (copied, or bundled into another file) fails with a message saying so.
 * `saveRuntimeCodeCache()` stores
 * what V8 compiled of the bundle so far, when it was not compiled from the cache (a no-op from
 * the sources): callers call it once the runtime has done a run's usual work.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type CachedModule, requireWithCodeCache } from '../sandbox/code-cache.js'

export type RuntimeModule = typeof import('./in-process.js')

/** Defined (true) by scripts/bundle.mjs in the published bundle; undefined from the sources. */
declare const __INSITU_PUBLISHED__: boolean | undefined

/** The file of the runtime's bundle, found beside the published entry's folder (`dist/`). */
const RUNTIME_BUNDLE = 'runtime.cjs'

let published: CachedModule | undefined

export async function loadRuntimeModule(): Promise<RuntimeModule> {
  if (typeof __INSITU_PUBLISHED__ !== 'undefined') {
    if (!published) {
      const file = runtimeBundleFile()
      // The entry was copied or bundled away from its package (the runtime is read as a file, not imported).
      if (!fs.existsSync(file)) throw new Error(`vite-plugin-insitu: its runtime ${file} is missing: load the plugin from its installed package (its dist/ folder whole), not from a copy or a bundle of its entry`)
      published = requireWithCodeCache(file)
    }
    return published.exports as RuntimeModule
  }
  return import('./in-process.js')
}

export function saveRuntimeCodeCache(): void {
  published?.save()
}

/** `dist/runtime.cjs`: this module is bundled into `dist/` or `dist/chunks/`. */
function runtimeBundleFile(): string {
  const here = path.dirname(fileURLToPath(import.meta.url))
  return path.join(path.basename(here) === 'chunks' ? path.dirname(here) : here, RUNTIME_BUNDLE)
}
