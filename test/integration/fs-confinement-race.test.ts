/**
 * The fs resolvers against a real symlink swap race (src/documents/confined-files.ts): a child
 * process swaps a symlink inside the project between an inside and an outside target as fast as
 * it can while the test reads through it thousands of times. Every read must return the inside
 * content or fail with the escape error; none may return (or list) what lies outside.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { listConfinedFolder, readConfinedFile } from '../../src/documents/confined-files.js'
import { readFileState } from '../../src/documents/document-record.js'
import { resolveFsDir, resolveFsFile, type FsResolveContext } from '../../src/resources/fs.js'
import { createJinjaRenderer } from '../../src/builtins/jinja.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

/** Replaces `<dir>/<name>` atomically (rename over it) by a symlink to argv targets in turn, forever. */
const SWAPPER = `
const fs = require('node:fs')
const [dir, name, ...targets] = process.argv.slice(1)
const temporary = dir + '/.swap-' + name
for (let i = 0; ; i++) {
  try { fs.unlinkSync(temporary) } catch {}
  fs.symlinkSync(targets[i % targets.length], temporary)
  fs.renameSync(temporary, dir + '/' + name)
}
`

const swappers: ChildProcess[] = []

afterEach(async () => {
  for (const child of swappers.splice(0)) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill()
    await exited
  }
  removeTempDirs()
})

/** Starts the swapper and waits until it has pointed the link at each target at least once. */
async function startSwapping(dir: string, name: string, targets: readonly string[]): Promise<void> {
  const child = spawn(process.execPath, ['-e', SWAPPER, dir, name, ...targets], { stdio: 'ignore' })
  swappers.push(child)
  const seen = new Set<string>()
  await expect
    .poll(() => {
      try {
        seen.add(fs.readlinkSync(path.join(dir, name)))
      } catch {
        // not created yet
      }
      return seen.size
    })
    .toBe(targets.length)
}

function context(root: string): FsResolveContext {
  return { root, exclude: [], respectGitignore: false, isManagedDocument: () => false }
}

function outcome(run: () => unknown): string {
  try {
    return JSON.stringify(run())
  } catch (error) {
    return (error as Error).message
  }
}

describe('fs resolvers under a symlink swap race', () => {
  it('fs:file never returns the outside file (20,000 racing reads)', async () => {
    const root = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(root, 'inside.txt'), 'inside\n')
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET\n')
    await startSwapping(root, 'link', ['inside.txt', path.join(outside, 'secret.txt')])
    const counts = new Map<string, number>()
    for (let i = 0; i < 20_000; i++) {
      const result = outcome(() => resolveFsFile('fs:file:link', context(root)).value)
      counts.set(result, (counts.get(result) ?? 0) + 1)
    }
    const leaked = [...counts.keys()].filter((result) => result.includes('SECRET'))
    expect(leaked).toEqual([])
    // The race really ran: both targets were met.
    expect(counts.get(JSON.stringify('inside\n'))).toBeGreaterThan(0)
    expect(counts.get('resource escapes project root: fs:file:link')).toBeGreaterThan(0)
    const others = [...counts.keys()].filter(
      (result) => result !== JSON.stringify('inside\n') && result !== 'resource escapes project root: fs:file:link',
    )
    expect(others).toEqual([])
  })

  it('fs:dir never lists the outside folder (2,000 racing listings)', async () => {
    const root = tempDir()
    const outside = tempDir()
    fs.mkdirSync(path.join(root, 'real'))
    fs.writeFileSync(path.join(root, 'real', 'inside.txt'), 'inside\n')
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET\n')
    await startSwapping(root, 'sub', ['real', outside])
    const listings = new Set<string>()
    for (let i = 0; i < 2_000; i++) {
      listings.add(outcome(() => resolveFsDir('fs:dir:sub', context(root)).value))
    }
    const leaked = [...listings].filter((listing) => listing.includes('secret.txt'))
    expect(leaked).toEqual([])
    expect(listings).toContain(JSON.stringify([{ path: 'sub/inside.txt', kind: 'file' }]))
  })
})

describe('jinja templates under a symlink swap race', () => {
  it('a template never renders the outside file (5,000 racing renders)', async () => {
    const root = tempDir()
    const outside = tempDir()
    const templates = path.join(root, 'templates')
    fs.mkdirSync(templates)
    fs.writeFileSync(path.join(templates, 'inside.j2'), 'inside')
    fs.writeFileSync(path.join(outside, 'secret.j2'), 'SECRET')
    await startSwapping(templates, 'link.j2', ['inside.j2', path.join(outside, 'secret.j2')])
    const renderer = createJinjaRenderer({ templatesDir: templates, root })
    const location = { path: 'a.md', directory: '', root: '.', depth: 0 }
    const counts = new Map<string, number>()
    for (let i = 0; i < 5_000; i++) {
      const result = outcome(() => renderer.render({ template: 'link.j2', value: [], location }).content)
      counts.set(result, (counts.get(result) ?? 0) + 1)
    }
    expect([...counts.keys()].filter((result) => result.includes('SECRET'))).toEqual([])
    expect(counts.get(JSON.stringify('inside'))).toBeGreaterThan(0)
    // Only the inside text or the escape error (from the check or from the verified read).
    expect([...counts.keys()].filter((r) => r !== JSON.stringify('inside') && !r.includes('template escapes templates directory: link.j2'))).toEqual([])
  })
})

describe('readConfinedFile / listConfinedFolder', () => {
  it('tell files, folders, FIFOs, missing paths and outside targets apart without following them out', () => {
    const root = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(root, 'a.txt'), 'a\n')
    fs.mkdirSync(path.join(root, 'folder'))
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'SECRET\n')
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'out.txt'))
    fs.symlinkSync(outside, path.join(root, 'out'))
    fs.symlinkSync('a.txt', path.join(root, 'in.txt'))
    spawnSyncMkfifo(path.join(root, 'pipe'))
    const read = (rel: string) => {
      const result = readConfinedFile(root, path.join(root, rel))
      return result.kind === 'file' ? result.bytes.toString() : result.kind
    }
    expect(read('a.txt')).toBe('a\n')
    expect(read('in.txt')).toBe('a\n')
    expect(read('out.txt')).toBe('outside')
    expect(read('out/secret.txt')).toBe('outside')
    expect(read('folder')).toBe('directory')
    expect(read('pipe')).toBe('other') // opened without blocking
    expect(read('missing.txt')).toBe('missing')
    expect(read('a.txt/below')).toBe('missing')
    expect(listConfinedFolder(root, path.join(root, 'out'))).toBe('outside')
    expect(['missing', 'not-a-folder']).toContain(listConfinedFolder(root, path.join(root, 'a.txt')))
    expect(listConfinedFolder(root, path.join(root, 'nope'))).toBe('missing')
    expect((listConfinedFolder(root, root) as fs.Dirent[]).map((d) => d.name).sort()).toEqual(
      ['a.txt', 'folder', 'in.txt', 'out', 'out.txt', 'pipe'],
    )
    // The document index reads through it: an outside target is no document.
    expect(readFileState(root, path.join(root, 'out.txt'))).toBeNull()
    expect(readFileState(root, path.join(root, 'a.txt'))?.bytes.toString()).toBe('a\n')
  })
})

describe('a Unix domain socket', () => {
  it('is no file, no folder and no document, and one outside the root is outside (it cannot even be opened)', async () => {
    const root = tempDir()
    const outside = tempDir()
    fs.writeFileSync(path.join(root, 'a.md'), 'a\n')
    const servers = await Promise.all([path.join(root, 'inside.md'), path.join(outside, 'elsewhere.md')].map(listenOn))
    try {
      fs.symlinkSync(path.join(outside, 'elsewhere.md'), path.join(root, 'out.md'))
      // Opening a socket fails (Linux: ENXIO), which was thrown as is, naming no resource.
      expect(readConfinedFile(root, path.join(root, 'inside.md')).kind).toBe('other')
      expect(readConfinedFile(root, path.join(root, 'out.md')).kind).toBe('outside')
      // As for a file where a folder is expected (Linux: ENOTDIR): never listed.
      expect(['missing', 'not-a-folder']).toContain(listConfinedFolder(root, path.join(root, 'inside.md')))
      expect(['missing', 'outside']).toContain(listConfinedFolder(root, path.join(root, 'out.md')))
      expect(readFileState(root, path.join(root, 'inside.md'))).toBeNull()
      expect(() => resolveFsFile('fs:file:inside.md', context(root))).toThrow(/^not a file: inside\.md$/)
      expect(() => resolveFsFile('fs:file:out.md', context(root))).toThrow('resource escapes project root: fs:file:out.md')
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))))
    }
  })
})

/** A server listening on a Unix domain socket at `file` (which then exists as a socket). */
function listenOn(file: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(file, () => resolve(server))
  })
}

function spawnSyncMkfifo(file: string): void {
  const result = spawnSync('mkfifo', [file])
  expect(result.status).toBe(0)
}
