/**
 * `npm run docs:dev` / `npm run docs:build` / `node scripts/docs.mjs <dev|build|preview|install> [args]`:
 * the docs site (docs/, VitePress) from a fresh clone's `npm ci`.
 *
 * Contract: builds the plugin (`npm run build`: the site's config and its extension import the
 * built `dist/`, as a user's site does; `install` skips this), then installs docs/ with `npm ci`
 * only when docs/node_modules is missing or was installed from another docs/package-lock.json,
 * and links this repository in as its `vite-plugin-insitu` (scripts/install-site.mjs, shared with
 * the test setup), then runs `vitepress <command> docs [args]`. Exits with the first failing step's code.
 */
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { installSite } from './install-site.mjs'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DOCS = path.join(REPO, 'docs')

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

/** Install docs/ from its lockfile when needed and link the plugin into it (install-site.mjs). */
function installDocs() {
  try {
    installSite(DOCS, { stdio: 'inherit' })
  } catch (error) {
    process.exit(error.status ?? 1)
  }
}

const [command = 'build', ...args] = process.argv.slice(2)
if (command !== 'install') run('npm', ['run', 'build'], REPO)
installDocs()
if (command !== 'install') run(path.join(DOCS, 'node_modules', '.bin', 'vitepress'), [command, DOCS, ...args], REPO)
