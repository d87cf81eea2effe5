/**
 * The committed lockfile is current (issue #18: `npm install` on a fresh clone rewrote
 * package-lock.json), and `.ci/check-lockfile` (run by `.ci/run`) fails when it is not. The
 * check runs the real npm, in a temporary folder: nothing in the checkout or node_modules changes.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'

const REPOSITORY = path.resolve(import.meta.dirname, '../..')
const CHECK = path.join(REPOSITORY, '.ci/check-lockfile')
const folders: string[] = []

afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

function check(folder?: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(CHECK, folder === undefined ? [] : [folder], { timeout: 120_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr }),
    )
  })
}

describe('package-lock.json', () => {
  it('is what npm makes of package.json', async () => {
    const before = fs.readFileSync(path.join(REPOSITORY, 'package-lock.json'), 'utf8')
    expect(await check()).toEqual({ code: 0, stderr: '' })
    expect(fs.readFileSync(path.join(REPOSITORY, 'package-lock.json'), 'utf8')).toBe(before)
  }, 120_000)

  it('.ci/check-lockfile fails with the difference when package.json changed without the lockfile', async () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-lock-'))
    folders.push(folder)
    const manifest = JSON.parse(fs.readFileSync(path.join(REPOSITORY, 'package.json'), 'utf8')) as { peerDependencies: Record<string, string> }
    manifest.peerDependencies.vite = '^8'
    fs.writeFileSync(path.join(folder, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    const lock = fs.readFileSync(path.join(REPOSITORY, 'package-lock.json'), 'utf8')
    fs.writeFileSync(path.join(folder, 'package-lock.json'), lock)
    const run = await check(folder)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('-        "vite": "^5 || ^6 || ^7 || ^8"\n+        "vite": "^8"\n')
    expect(run.stderr).toContain("package-lock.json does not match package.json: run 'npm install --package-lock-only' and commit package-lock.json\n")
    // The folder checked is left as it was.
    expect(fs.readFileSync(path.join(folder, 'package-lock.json'), 'utf8')).toBe(lock)
  }, 120_000)
})
