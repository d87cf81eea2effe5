/**
 * sandbox/code-cache.ts: a CommonJS bundle run with V8's code cache, on real files. Each case
 * loads a copy of the bundle at a path of its own (a path loads once per process), all copies
 * under one `node_modules`, so that they share its cache folder as the installations of one
 * package would.
 */
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { codeCacheFolder, requireWithCodeCache } from '../../src/sandbox/code-cache.js'
import { removeTempDirs, tempDir } from './temp-folders.js'

afterEach(() => {
  delete process.env['NODE_DISABLE_COMPILE_CACHE']
  removeTempDirs()
})

const BUNDLE = [
  "const helper = require('./helper.cjs')",
  'exports.value = helper.twice(21)',
  'exports.file = __filename',
  'exports.folder = __dirname',
  'exports.area = function area(w, h) { return w * h }',
  '',
].join('\n')

interface Loaded {
  value: number
  file: string
  folder: string
  area(w: number, h: number): number
}

/** A package folder under `<root>/node_modules`, whose cache folder is `<root>/node_modules/.cache/vite-plugin-insitu`. */
function installation(): { root: string; cacheFolder: string; copy(source?: string): string } {
  const root = tempDir()
  let copies = 0
  return {
    root,
    cacheFolder: path.join(root, 'node_modules', '.cache', 'vite-plugin-insitu'),
    copy(source = BUNDLE) {
      const folder = path.join(root, 'node_modules', 'pkg', `dist${++copies}`)
      fs.mkdirSync(folder, { recursive: true })
      fs.writeFileSync(path.join(folder, 'helper.cjs'), 'exports.twice = (n) => n * 2\n')
      fs.writeFileSync(path.join(folder, 'bundle.cjs'), source)
      return path.join(folder, 'bundle.cjs')
    },
  }
}

const cacheFiles = (folder: string): string[] => (fs.existsSync(folder) ? fs.readdirSync(folder).sort() : [])
const crc = (text: string): string => zlib.crc32(text).toString(16).padStart(8, '0')
/** Node's flags in this process (vitest's workers may have some): part of the name when there are any. */
const flags = [...process.execArgv, process.env['NODE_OPTIONS'] ?? ''].join('\u0000')
/** The stored cache's name as the contract gives it: `<name>-<CRC-32 of the source>-<Node version>-<arch>[-<CRC-32 of the flags>].cache`. */
const nameFor = (source: string, node = process.version): string =>
  `bundle.cjs-${crc(source)}-${node}-${process.arch}${flags === '' ? '' : `-${crc(flags)}`}.cache`

describe('requireWithCodeCache', () => {
  it('runs the bundle as CommonJS, once per path, and stores its cache when asked', () => {
    const { cacheFolder, copy } = installation()
    const file = copy()
    const first = requireWithCodeCache(file)
    const loaded = first.exports as Loaded
    expect(first.cache).toBe('missing')
    expect(loaded.value).toBe(42)
    expect(loaded.file).toBe(file)
    expect(loaded.folder).toBe(path.dirname(file))
    expect(loaded.area(3, 4)).toBe(12)
    expect(requireWithCodeCache(file)).toBe(first)
    expect(cacheFiles(cacheFolder)).toEqual([])
    expect(first.save()).toBe(true)
    expect(cacheFiles(cacheFolder)).toEqual([nameFor(BUNDLE)])
    expect(first.save()).toBe(false)
  })

  it('compiles from the stored cache in the next load, and writes nothing then', () => {
    const { cacheFolder, copy } = installation()
    requireWithCodeCache(copy()).save()
    const stored = path.join(cacheFolder, nameFor(BUNDLE))
    const before = fs.statSync(stored).mtimeMs
    const next = requireWithCodeCache(copy())
    expect(next.cache).toBe('used')
    expect((next.exports as Loaded).value).toBe(42)
    expect(next.save()).toBe(false)
    expect(fs.statSync(stored).mtimeMs).toBe(before)
  })

  it('ignores a cache whose checksum is wrong, and one V8 refuses, and replaces them', () => {
    const { cacheFolder, copy } = installation()
    requireWithCodeCache(copy()).save()
    const stored = path.join(cacheFolder, nameFor(BUNDLE))
    const bytes = fs.readFileSync(stored)
    bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff
    fs.writeFileSync(stored, bytes)
    const corrupt = requireWithCodeCache(copy())
    expect(corrupt.cache).toBe('corrupt')
    expect((corrupt.exports as Loaded).value).toBe(42)
    expect(corrupt.save()).toBe(true)
    expect(requireWithCodeCache(copy()).cache).toBe('used')

    // A checksum that holds over data that is no V8 cache: V8 rejects it.
    const garbage = Buffer.from('not a code cache at all, but long enough to look like one')
    const sum = Buffer.alloc(4)
    sum.writeUInt32LE(zlib.crc32(garbage))
    fs.writeFileSync(stored, Buffer.concat([garbage, sum]))
    const rejected = requireWithCodeCache(copy())
    expect(rejected.cache).toBe('rejected')
    expect((rejected.exports as Loaded).area(2, 5)).toBe(10)
    expect(rejected.save()).toBe(true)
    expect(requireWithCodeCache(copy()).cache).toBe('used')
  })

  it('never runs a cache of another version of the bundle, even of the same length, and deletes it once replaced', () => {
    const { cacheFolder, copy } = installation()
    requireWithCodeCache(copy()).save()
    // V8 itself checks only the source's length: the name must tell the versions apart.
    const changed = BUNDLE.replace('helper.twice(21)', 'helper.twice(12)')
    expect(changed.length).toBe(BUNDLE.length)
    const next = requireWithCodeCache(copy(changed))
    expect(next.cache).toBe('missing')
    expect((next.exports as Loaded).value).toBe(24)
    // Another Node's cache of the new version stays (a project run by two Nodes uses both).
    const otherNode = nameFor(changed, 'v0.0.0')
    fs.writeFileSync(path.join(cacheFolder, otherNode), 'x')
    expect(next.save()).toBe(true)
    expect(cacheFiles(cacheFolder)).toEqual([nameFor(changed), otherNode].sort())
  })

  it('never fails for a file it cannot delete, and deletes the temporary files of writers that died', () => {
    const { cacheFolder, copy } = installation()
    requireWithCodeCache(copy()).save()
    // An earlier version's "cache" that rmSync refuses (a folder), a writer's temporary file
    // abandoned an hour ago, and one being written now.
    const refused = path.join(cacheFolder, 'bundle.cjs-00000000-v0.0.0-x64.cache')
    fs.mkdirSync(path.join(refused, 'inside'), { recursive: true })
    const abandoned = path.join(cacheFolder, `${nameFor(BUNDLE)}.123-abc.tmp`)
    const writing = path.join(cacheFolder, `${nameFor(BUNDLE)}.456-def.tmp`)
    fs.writeFileSync(abandoned, 'x')
    fs.writeFileSync(writing, 'x')
    const hourAgo = new Date(Date.now() - 60 * 60_000)
    fs.utimesSync(abandoned, hourAgo, hourAgo)
    const next = requireWithCodeCache(copy(BUNDLE.replace('21', '12')))
    expect(next.save()).toBe(true)
    expect(fs.existsSync(refused)).toBe(true)
    expect(fs.existsSync(abandoned)).toBe(false)
    expect(fs.existsSync(writing)).toBe(true)
    expect(fs.existsSync(path.join(cacheFolder, nameFor(BUNDLE)))).toBe(false)
  })

  it('is off with NODE_DISABLE_COMPILE_CACHE, and never fails for a folder it cannot write', () => {
    const { root, cacheFolder, copy } = installation()
    process.env['NODE_DISABLE_COMPILE_CACHE'] = '1'
    const off = requireWithCodeCache(copy())
    expect(off.cache).toBe('off')
    expect(off.save()).toBe(false)
    expect(fs.existsSync(cacheFolder)).toBe(false)
    delete process.env['NODE_DISABLE_COMPILE_CACHE']

    // A file where the cache folder would be.
    fs.mkdirSync(path.join(root, 'node_modules', '.cache'), { recursive: true })
    fs.writeFileSync(cacheFolder, 'not a folder')
    const blocked = requireWithCodeCache(copy())
    expect(blocked.cache).toBe('missing')
    expect((blocked.exports as Loaded).value).toBe(42)
    expect(blocked.save()).toBe(false)
    expect(fs.readFileSync(cacheFolder, 'utf8')).toBe('not a folder')
    expect(fs.readdirSync(path.join(root, 'node_modules', '.cache'))).toEqual(['vite-plugin-insitu'])
  })

  it('throws what the bundle throws, and runs it again at the next call', () => {
    const { copy } = installation()
    const file = copy(
      "const runs = (globalThis.__insituCodeCacheRuns = (globalThis.__insituCodeCacheRuns ?? 0) + 1)\n" +
        "if (require('node:fs').existsSync(__dirname + '/fail')) throw new Error('bundle failed')\n" +
        'exports.runs = runs\n',
    )
    const marker = path.join(path.dirname(file), 'fail')
    fs.writeFileSync(marker, '')
    expect(() => requireWithCodeCache(file)).toThrow('bundle failed')
    fs.rmSync(marker)
    expect((requireWithCodeCache(file).exports as { runs: number }).runs).toBe(2)
    expect((requireWithCodeCache(file).exports as { runs: number }).runs).toBe(2)
  })
})

describe('codeCacheFolder', () => {
  it('is the cache folder of the nearest node_modules holding the file, or, in a checkout, beside a folder above it', () => {
    const root = tempDir()
    const installed = path.join(root, 'app', 'node_modules', 'vite-plugin-insitu', 'dist', 'runtime.cjs')
    // The package's own node_modules (npm nests a dependency there when versions differ) is not it.
    fs.mkdirSync(path.join(root, 'app', 'node_modules', 'vite-plugin-insitu', 'node_modules'), { recursive: true })
    expect(codeCacheFolder(installed)).toBe(path.join(root, 'app', 'node_modules', '.cache', 'vite-plugin-insitu'))
    // A checkout (the package's own repository): node_modules beside dist/.
    fs.mkdirSync(path.join(root, 'checkout', 'node_modules'), { recursive: true })
    const checkout = path.join(root, 'checkout', 'dist', 'runtime.cjs')
    expect(codeCacheFolder(checkout)).toBe(path.join(root, 'checkout', 'node_modules', '.cache', 'vite-plugin-insitu'))
    process.env['NODE_DISABLE_COMPILE_CACHE'] = '1'
    expect(codeCacheFolder(installed)).toBeUndefined()
  })
})
