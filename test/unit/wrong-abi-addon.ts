/**
 * A real native addon built for another Node.js (test/fixtures/native/wrong-abi-addon.c), for
 * the tests of a better-sqlite3 whose native part cannot load.
 *
 * Contract: `buildWrongAbiAddon(file)` compiles the fixture with the system C compiler (`cc`)
 * into `file` and returns true, or returns false when there is no C compiler (the caller skips
 * its test). Loading `file` in Node then fails with Node's own ERR_DLOPEN_FAILED "was compiled
 * against a different Node.js version using NODE_MODULE_VERSION 1" error.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const SOURCE = fileURLToPath(new URL('../fixtures/native/wrong-abi-addon.c', import.meta.url))

export const HAS_C_COMPILER = process.platform !== 'win32' && spawnSync('cc', ['--version'], { stdio: 'ignore' }).status === 0

export function buildWrongAbiAddon(file: string): boolean {
  if (!HAS_C_COMPILER) return false
  // macOS links a shared object with undefined symbols only when told to (Node provides them).
  const flags = process.platform === 'darwin' ? ['-bundle', '-undefined', 'dynamic_lookup'] : ['-shared', '-fPIC']
  execFileSync('cc', [...flags, '-o', file, SOURCE], { stdio: ['ignore', 'ignore', 'pipe'] })
  return true
}
