/**
 * Every project benchmark of issue #9 in turn, each in its own process with the same flags:
 * `npm run bench:all [-- --sizes=1000 --runs=3]`. Order: re-runs, engine start, build, startup
 * (loading the published bundle, the whole `vite build` command line), the docs tools' builds
 * (`vitepress build`, `astro build` of one 1,000-page site: the smallest size), hot reload (the
 * Chromium one last). Stops at the first failure with its exit code. The RPC benchmark
 * (`npm run bench`) is separate.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SCRIPTS = ['reruns.ts', 'engine.ts', 'build.ts', 'startup.ts', 'docs-build.ts', 'hmr.ts']

for (const script of SCRIPTS) {
  const file = fileURLToPath(new URL(script, import.meta.url))
  console.error(`\n== bench/${script} ${process.argv.slice(2).join(' ')}`)
  const result = spawnSync(process.execPath, ['--import', 'tsx', file, ...process.argv.slice(2)], { stdio: 'inherit' })
  if (result.status !== 0) {
    console.error(`bench/${script} failed (${result.status ?? result.signal})`)
    process.exit(result.status ?? 1)
  }
}
