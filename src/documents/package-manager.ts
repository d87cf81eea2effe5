/**
 * Which package manager installed the project's dependencies, so that a message can say which
 * command to run (sqlite-database.ts: a blocked native build of better-sqlite3).
 *
 * Contract: `detectPackageManager(userAgent, from)`:
 * - `userAgent` (give it `process.env.npm_config_user_agent`, which npm, pnpm, yarn and bun set
 *   for the scripts and binaries they run: `pnpm/10.12.1 npm/? node/v22.12.0 linux x64`) names
 *   it, with its version, when it starts `npm/`, `pnpm/`, `yarn/` or `bun/`;
 * - else the first lockfile found walking up from the folder `from` names it: in each folder
 *   `pnpm-lock.yaml`, `yarn.lock`, `bun.lock`, `bun.lockb`, `package-lock.json`,
 *   `npm-shrinkwrap.json`, in that order (no version then);
 * - else npm.
 * `folder` is that nearest lockfile's folder in every case (where its commands are run), or
 * null. `yarnClassic`: Yarn 1, told by the user agent's version or, without one, by a
 * `yarn.lock` in Yarn 1's format (`# yarn lockfile v1` in its first lines). Reads at most a few
 * file names per folder and the first bytes of a `yarn.lock`; never throws.
 */
import fs from 'node:fs'
import path from 'node:path'
import { isFile } from './file-kinds.js'

export type PackageManagerName = 'npm' | 'pnpm' | 'yarn' | 'bun'

export interface PackageManager {
  name: PackageManagerName
  /** `[major, minor]` from the user agent; null when told by a lockfile or assumed. */
  version: readonly [number, number] | null
  /** Yarn 1 (which has no `yarn rebuild`). */
  yarnClassic: boolean
  /** The folder of the nearest lockfile (where to run the manager's commands), or null. */
  folder: string | null
}

const LOCKFILES: readonly (readonly [string, PackageManagerName])[] = [
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
]

export function detectPackageManager(userAgent: string | undefined, from: string): PackageManager {
  const lockfile = nearestLockfile(from)
  const folder = lockfile ? path.dirname(lockfile.file) : null
  const agent = /^(npm|pnpm|yarn|bun)\/(\d+)\.(\d+)/.exec(userAgent ?? '')
  if (agent) {
    const name = agent[1] as PackageManagerName
    const version = [Number(agent[2]), Number(agent[3])] as const
    return { name, version, yarnClassic: name === 'yarn' && version[0] === 1, folder }
  }
  if (lockfile) {
    return { name: lockfile.manager, version: null, yarnClassic: lockfile.manager === 'yarn' && isYarnClassicLockfile(lockfile.file), folder }
  }
  return { name: 'npm', version: null, yarnClassic: false, folder: null }
}

function nearestLockfile(from: string): { file: string; manager: PackageManagerName } | null {
  let folder = path.resolve(from)
  for (;;) {
    for (const [name, manager] of LOCKFILES) {
      const file = path.join(folder, name)
      if (isFile(file)) return { file, manager }
    }
    const parent = path.dirname(folder)
    if (parent === folder) return null
    folder = parent
  }
}

function isYarnClassicLockfile(file: string): boolean {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, 'r')
    const head = Buffer.alloc(256)
    const read = fs.readSync(fd, head, 0, head.length, 0)
    return head.subarray(0, read).toString('utf8').includes('# yarn lockfile v1')
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}
