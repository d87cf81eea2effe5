/**
 * The lock check at every start (SPEC §12): a project set up by the Python tool (the lock and
 * config of test/fixtures/extension-lock, written by its generate.py) is accepted unchanged;
 * each of the four lock errors names the extension, at start, in the host (as the dev server,
 * builds and the command line start it) and in `extension list`.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { LockError } from '../../src/host/lock-check.js'
import { loadProjectConfig } from '../../src/host/config.js'
import { InsituHost } from '../../src/host/host.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { cli, writeExtension } from './extension-projects.js'

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/extension-lock')
const LOCATION = { path: 'README.md', directory: '', root: '.', depth: 0 }

afterEach(() => removeTempDirs())

/** The project as the Python tool leaves it after `insitu extension add vendor/app` (and a run that made __pycache__). */
function pythonProject(): string {
  const root = tempDir()
  fs.cpSync(path.join(FIXTURE, 'sources/app'), path.join(root, '.insitu/extensions/acme-app-docs'), { recursive: true })
  fs.cpSync(path.join(FIXTURE, 'sources/base'), path.join(root, '.insitu/extensions/acme-base'), { recursive: true })
  fs.mkdirSync(path.join(root, '.insitu/extensions/acme-base/__pycache__'))
  fs.writeFileSync(path.join(root, '.insitu/extensions/acme-base/__pycache__/base.cpython-311.pyc'), 'compiled\n')
  fs.writeFileSync(path.join(root, 'insitu.lock'), fs.readFileSync(path.join(FIXTURE, 'expected/insitu.lock'), 'utf8').replaceAll('@ROOT@', root))
  fs.copyFileSync(path.join(FIXTURE, 'expected/insitu.toml'), path.join(root, 'insitu.toml'))
  return root
}

async function start(root: string): Promise<{ host: InsituHost; errors: string[] }> {
  const errors: string[] = []
  const host = await InsituHost.start({
    config: loadProjectConfig(path.join(root, 'insitu.toml')),
    eager: false,
    logger: { info() {}, warn() {}, error: (message) => errors.push(message) },
  })
  return { host, errors }
}

describe('the lock check at start', () => {
  it('accepts a project set up by the Python tool unchanged', async () => {
    const root = pythonProject()
    const { host, errors } = await start(root)
    expect(host.extensions.map((e) => e.manifest.name)).toEqual(['acme/base', 'acme/app.docs'])
    expect(host.startFailures).toEqual([])
    expect(errors).toEqual([])
    await host.close()
    expect(await cli(['extension', 'list'], root)).toMatchObject({ code: 0, stdout: `acme/base 0.3.1 ${root}/vendor/app/../base\nacme/app.docs 1.2.0 vendor/app\n` })
  })

  it('refuses an extension whose files changed: extension content hash changed, logged once, its capabilities fail', async () => {
    const root = pythonProject()
    fs.appendFileSync(path.join(root, '.insitu/extensions/acme-base/base.py'), 'import os  # changed\n')
    const lock = `${root}/insitu.lock`
    const { host, errors } = await start(root)
    expect(host.startFailures.map((f) => [f.extension, f.error.message])).toEqual([['acme/base', `${lock}: extension content hash changed: acme/base`]])
    expect(host.startFailures[0]!.error).toBeInstanceOf(LockError)
    expect(errors).toEqual([`extension acme/base failed to start: ${lock}: extension content hash changed: acme/base`])
    await expect(host.transform('base_note', {}, LOCATION)).rejects.toThrow(`${lock}: extension content hash changed: acme/base`)
    expect(host.pids().size).toBe(0)
    await host.close()
    expect(await cli(['extension', 'list'], root)).toEqual({ code: 2, stdout: '', stderr: `${lock}: extension content hash changed: acme/base\n` })
  })

  it('refuses a changed version (extension lock metadata changed) and a folder that is not locked', async () => {
    const root = pythonProject()
    const manifest = path.join(root, '.insitu/extensions/acme-app-docs/insitu-extension.toml')
    fs.writeFileSync(manifest, fs.readFileSync(manifest, 'utf8').replace('version = "1.2.0"', 'version = "1.2.1"'))
    writeExtension(path.join(root, '.insitu/extensions/acme-extra'), { name: 'acme/extra', version: '1.0.0', capabilities: ['transform:extra'] })
    const lock = `${root}/insitu.lock`
    const { host, errors } = await start(root)
    expect(host.startFailures.map((f) => f.error.message)).toEqual([
      `${lock}: extension lock metadata changed: acme/app.docs`,
      `${lock}: installed extension is not locked: acme/extra`,
    ])
    expect(errors).toHaveLength(2)
    await expect(host.transform('extra', {}, LOCATION)).rejects.toThrow('installed extension is not locked: acme/extra')
    await host.close()
    // The installer checks folders in name order and stops at the first.
    expect((await cli(['extension', 'list'], root)).stderr).toBe(`${lock}: extension lock metadata changed: acme/app.docs\n`)
  })

  it('fails the start when a locked extension is missing, naming them sorted', async () => {
    const root = pythonProject()
    const lock = `${root}/insitu.lock`
    fs.rmSync(path.join(root, '.insitu/extensions/acme-base'), { recursive: true })
    await expect(start(root)).rejects.toThrow(new LockError(lock, 'locked extension is missing: acme/base', 'acme/base'))
    fs.rmSync(path.join(root, '.insitu/extensions/acme-app-docs'), { recursive: true })
    await expect(start(root)).rejects.toThrow(`${lock}: locked extension is missing: acme/app.docs, acme/base`)
    expect(await cli(['check'], root)).toMatchObject({ code: 2, stdout: '', stderr: `${lock}: locked extension is missing: acme/app.docs, acme/base\n` })
  })

  it('tells to run extension add for a configured source that is not installed', async () => {
    const root = tempDir()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n\n[[extensions]]\nsource = "github:acme/words@v1"\n')
    const run = await cli(['check'], root)
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe(
      `${root}/insitu.toml:4:1: extension source github:acme/words@v1 is not installed: run \`vite-plugin-insitu extension add github:acme/words@v1\` (or use path = "...")\n`,
    )
  })

  it('finds an installed source through insitu.lock', async () => {
    const root = pythonProject()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n\n[[extensions]]\nsource = "vendor/app"\nallow_replace = ["x"]\n')
    const { host } = await start(root)
    expect(host.extensions.map((e) => [e.manifest.name, e.configuredBy, e.allowReplace])).toEqual([
      ['acme/app.docs', 'source', ['x']],
      ['acme/base', 'discovered', []],
    ])
    await host.close()
  })
})
