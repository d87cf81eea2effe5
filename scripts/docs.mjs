/**
 * `npm run docs:dev` / `npm run docs:build` / `node scripts/docs.mjs <dev|build|preview|install> [args]`:
 * the docs site (docs/, VitePress) from a fresh clone's `npm ci`.
 *
 * Contract: builds the plugin (`npm run build`: the site's config and its extension import the
 * built `dist/`, as a user's site does; `install` skips this), then installs docs/ with `npm ci`
 * only when docs/node_modules is missing or was installed from another docs/package-lock.json
 * (a stamp file holds the lockfile's hash, as test/clients/setup.ts does for the client
 * fixtures), links docs/node_modules/vite-plugin-insitu to this repository (a symlink, not a
 * `file:..` dependency, which would copy the plugin's own dependencies into docs/package-lock.json),
 * then runs `vitepress <command> docs [args]`. Exits with the first failing step's code.
 */
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DOCS = path.join(REPO, 'docs')
const STAMP = path.join(DOCS, 'node_modules', '.insitu-installed')

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

/** Install docs/ from its lockfile when needed and link the plugin into it. */
function installDocs() {
  const hash = createHash('sha256').update(fs.readFileSync(path.join(DOCS, 'package-lock.json'))).digest('hex')
  const installed = fs.existsSync(STAMP) && fs.readFileSync(STAMP, 'utf8') === hash
  if (!installed) {
    run('npm', ['ci', '--no-audit', '--no-fund'], DOCS)
    fs.writeFileSync(STAMP, hash)
  }
  const link = path.join(DOCS, 'node_modules', 'vite-plugin-insitu')
  let target
  try {
    target = fs.readlinkSync(link)
  } catch {
    // no link yet
  }
  if (target !== REPO) {
    fs.rmSync(link, { recursive: true, force: true })
    fs.symlinkSync(REPO, link, 'dir')
  }
}

const [command = 'build', ...args] = process.argv.slice(2)
if (command !== 'install') run('npm', ['run', 'build'], REPO)
installDocs()
if (command !== 'install') run(path.join(DOCS, 'node_modules', '.bin', 'vitepress'), [command, DOCS, ...args], REPO)
