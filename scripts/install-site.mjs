/**
 * Install a site folder of this repository (docs/, a client fixture under test/clients/) from its
 * own lockfile, once per lockfile, with this repository as its `vite-plugin-insitu`.
 *
 * Contract: `installSite(folder, { stdio, link })` runs `npm ci` in `folder` only when its `node_modules`
 * is missing or was installed from another `package-lock.json` (a stamp file in `node_modules`
 * holds the lockfile's hash), then (unless `link` is false: a folder that does not import the
 * plugin, such as editors/vscode/) makes `node_modules/vite-plugin-insitu` a symlink to this
 * repository, so the site imports the built package as a user's site does (a `file:..`
 * dependency would copy the plugin's own dependencies into the site's lockfile). `stdio` is
 * `npm ci`'s (default `pipe`); its failure is thrown as `execFileSync` throws it (`stdout` and
 * `stderr` on the error, `status` its exit code).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const STAMP = '.insitu-installed'

export function installSite(folder, { stdio = 'pipe', link: linked = true } = {}) {
  const hash = createHash('sha256').update(fs.readFileSync(path.join(folder, 'package-lock.json'))).digest('hex')
  const stamp = path.join(folder, 'node_modules', STAMP)
  if (!(fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash)) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: folder,
      stdio: stdio === 'pipe' ? ['ignore', 'pipe', 'pipe'] : stdio,
      encoding: 'utf8',
      shell: process.platform === 'win32',
    })
    fs.writeFileSync(stamp, hash)
  }
  if (!linked) return
  const link = path.join(folder, 'node_modules', 'vite-plugin-insitu')
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
