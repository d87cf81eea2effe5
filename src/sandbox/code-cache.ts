/**
 * Running a CommonJS bundle of ours with V8's code cache (issue #38): compiling the plugin's
 * runtime (1.3 MB) took about 30 ms of a dev server's start, and the functions its start runs
 * for the first time more; compiled from a stored cache they take a few. Node 22.1+ has a cache
 * of its own (`module.enableCompileCache`, which Vite's command line turns on), Node 20 has
 * none for a program that does not control its process, so the plugin keeps one for its own
 * bundles, as `v8-compile-cache` did for CommonJS.
 *
 * Contract:
 * - `requireWithCodeCache(file)` runs `file` (CommonJS: `require`, `module`, `exports`,
 *   `__filename`, `__dirname` as Node's loader gives them; no dynamic `import()`) once per
 *   process and path, and returns its exports with how the cache went (`cache`):
 *   `'used'` (compiled from it), `'missing'`, `'rejected'` (V8 refused it: another Node or
 *   other flags), `'corrupt'` (its checksum is wrong) or `'off'`.
 * - `save()` stores, once, what V8 has compiled of the file so far (the functions run, not only
 *   the top level), when the cache was not used; it never throws (a folder that cannot be
 *   written leaves the next start as this one). Callers save after the code has done its usual
 *   work (a dev server's first requests, a build's end); `requireWithCodeCache` also saves
 *   `SAVE_AFTER_MS` after loading, on a timer that keeps no process alive.
 * - The stored cache: `<folder>/<name>-<CRC-32 of the source>-<Node version>-<arch>[-<CRC-32 of
 *   Node's flags>].cache` (the flags: `process.execArgv` and `NODE_OPTIONS`, when there are any),
 *   the cache's own CRC-32 after it, written to a temporary file and renamed (a reader never
 *   sees a half-written one); a changed bundle gets a new name (V8 itself compares only the
 *   source's length), and the files of the bundle's earlier versions are deleted then, with
 *   temporary files older than `ABANDONED_MS`. Nothing here throws for a file it cannot delete. The folder is
 *   `node_modules/.cache/vite-plugin-insitu` of the installation holding `file` (the nearest
 *   folder above it named `node_modules`, not the package's own `node_modules` of nested
 *   dependencies; in a checkout of the package, the `node_modules` beside a folder above it):
 *   per installation and per user, as Babel's and ESLint's caches; none, and `'off'`, when there is none or
 *   `NODE_DISABLE_COMPILE_CACHE` is set to anything but an empty string (the variable Node's own
 *   cache and Vite honour).
 */
import fs from 'node:fs'
import Module, { createRequire } from 'node:module'
import path from 'node:path'
import vm from 'node:vm'
import zlib from 'node:zlib'

export type CodeCacheOutcome = 'used' | 'missing' | 'rejected' | 'corrupt' | 'off'

export interface CachedModule {
  readonly exports: unknown
  readonly cache: CodeCacheOutcome
  /** Stores what V8 compiled so far, once, unless the cache was used; returns whether it wrote. */
  save(): boolean
}

/** A dev server that stays open past its first requests saves without being asked. */
export const SAVE_AFTER_MS = 5_000

const CACHE_FOLDER = path.join('.cache', 'vite-plugin-insitu')
const loaded = new Map<string, CachedModule>()

export function requireWithCodeCache(file: string): CachedModule {
  const known = loaded.get(file)
  if (known) return known
  const folder = codeCacheFolder(file)
  const source = fs.readFileSync(file, 'utf8')
  const cacheFile = folder === undefined ? undefined : path.join(folder, cacheName(file, source))
  const stored = cacheFile === undefined ? undefined : readCache(cacheFile)
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData: stored instanceof Buffer ? stored : undefined,
  })
  const cache: CodeCacheOutcome =
    cacheFile === undefined ? 'off' : stored === 'corrupt' ? 'corrupt' : stored === undefined ? 'missing' : script.cachedDataRejected ? 'rejected' : 'used'
  const module = { exports: {} as unknown }
  const run = script.runInThisContext() as (...args: unknown[]) => void
  let saved = cache === 'used' || cacheFile === undefined
  const entry: CachedModule = {
    get exports() {
      return module.exports
    },
    cache,
    save() {
      if (saved || cacheFile === undefined) return false
      saved = true
      return writeCache(cacheFile, () => script.createCachedData(), `${bundleName(file)}-`)
    },
  }
  loaded.set(file, entry)
  try {
    run.call(module.exports, module.exports, createRequire(file), module, file, path.dirname(file))
  } catch (error) {
    loaded.delete(file)
    throw error
  }
  if (!saved) setTimeout(() => entry.save(), SAVE_AFTER_MS).unref()
  return entry
}

/** Where the cache of `file` lives (see the contract), or undefined. */
export function codeCacheFolder(file: string): string | undefined {
  if (process.env['NODE_DISABLE_COMPILE_CACHE']) return undefined
  const folders: string[] = []
  for (let folder = path.dirname(path.resolve(file)); ; folder = path.dirname(folder)) {
    folders.push(folder)
    if (path.dirname(folder) === folder) break
  }
  // Installed: the node_modules holding the package (not its own node_modules of nested dependencies).
  const installation = folders.find((folder) => path.basename(folder) === 'node_modules')
  if (installation !== undefined) return path.join(installation, CACHE_FOLDER)
  // A checkout of the package: its node_modules beside dist/.
  const checkout = folders.find((folder) => isFolder(path.join(folder, 'node_modules')))
  return checkout === undefined ? undefined : path.join(checkout, 'node_modules', CACHE_FOLDER)
}

function cacheName(file: string, source: string): string {
  const sourceSum = crcText(source)
  // V8 refuses a cache made under other flags (a build's process runs without the parent's
  // `--max-old-space-size`, say): each set of flags keeps its own file instead of replacing the other's.
  const flags = [...process.execArgv, process.env['NODE_OPTIONS'] ?? ''].join('\u0000')
  const flagsSum = flags === '' ? '' : `-${crcText(flags)}`
  return `${bundleName(file)}-${sourceSum}-${process.version}-${process.arch}${flagsSum}.cache`
}

const crcText = (text: string): string => zlib.crc32(text).toString(16).padStart(8, '0')

const bundleName = (file: string): string => path.basename(file).replace(/[^\w.-]/g, '_')

/** The stored cache's data when its checksum holds, 'corrupt' when not, undefined when absent. */
function readCache(cacheFile: string): Buffer | 'corrupt' | undefined {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(cacheFile)
  } catch {
    return undefined
  }
  if (bytes.length <= 4) return 'corrupt'
  const data = bytes.subarray(0, bytes.length - 4)
  return zlib.crc32(data) === bytes.readUInt32LE(bytes.length - 4) ? data : 'corrupt'
}

function writeCache(cacheFile: string, data: () => Buffer, bundlePrefix: string): boolean {
  const folder = path.dirname(cacheFile)
  const temporary = `${cacheFile}.${process.pid}-${Math.random().toString(36).slice(2, 10)}.tmp`
  try {
    const bytes = data()
    fs.mkdirSync(folder, { recursive: true })
    const sum = Buffer.alloc(4)
    sum.writeUInt32LE(zlib.crc32(bytes))
    fs.writeFileSync(temporary, Buffer.concat([bytes, sum]))
    fs.renameSync(temporary, cacheFile)
  } catch {
    removeQuietly(temporary) // a folder that is no folder (a file in its place): nothing was written
    return false
  }
  // The caches of this bundle's earlier versions serve nothing any more (the same version's
  // caches for other Nodes or flags are kept: a project run by two Nodes uses both), nor do
  // the temporary files of writers killed before their rename.
  const name = path.basename(cacheFile)
  const current = name.slice(bundlePrefix.length).split('-')[0]
  const abandonedBefore = Date.now() - ABANDONED_MS
  for (const other of safeList(folder)) {
    if (!other.startsWith(bundlePrefix)) continue
    const earlier = other.endsWith('.cache') && other.slice(bundlePrefix.length).split('-')[0] !== current
    if (earlier || (other.endsWith('.tmp') && modifiedBefore(path.join(folder, other), abandonedBefore))) removeQuietly(path.join(folder, other))
  }
  return true
}

/** A temporary file this old was left by a writer that died before renaming it. */
const ABANDONED_MS = 10 * 60_000

function modifiedBefore(file: string, time: number): boolean {
  try {
    return fs.statSync(file).mtimeMs < time
  } catch {
    return false
  }
}

/** Deletes `file` if it can: a cache that stays (held open, not ours to delete) costs only disk. */
function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true })
  } catch {
    // kept
  }
}

function safeList(folder: string): string[] {
  try {
    return fs.readdirSync(folder)
  } catch {
    return []
  }
}

function isFolder(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory()
  } catch {
    return false
  }
}
