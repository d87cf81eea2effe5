/**
 * Temporary folders for unit tests that need real files.
 *
 * Contract: `tempDir()` creates a fresh empty folder under the OS temp folder and returns its real
 * path (symlinks resolved); it records the folder until `removeTempDirs()` deletes every recorded
 * folder (call it from `afterEach`).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

const temps: string[] = []

export function tempDir(): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-')))
  temps.push(dir)
  return dir
}

export function removeTempDirs(): void {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}
