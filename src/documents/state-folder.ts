/**
 * The project's state folder (the folder of `paths.state`, `.insitu/` by default), shared with
 * the Python implementation (SPEC §11 State), and the plugin's own caches inside it.
 *
 * Contract:
 * - `pluginStateFiles(root, statePath)`: where the plugin keeps its caches, given `paths.state`
 *   (project-relative): the folder `<state folder>/vite-plugin-insitu/` holding `index.db` (the
 *   document index snapshot) and `jobs.db` (the job store). `paths.state` itself
 *   (`.insitu/index.db`) is the Python implementation's index, with a schema of its own: the
 *   plugin never creates, writes or deletes it, nor any other file the Python tool keeps there
 *   (issue #15: the plugin's schema in that file made `insitu sync` fail with
 *   `NOT NULL constraint failed: _documents.read_ns`).
 * - `ensureStateFolder(folder, root)`: creates `folder` and its missing parents, each folder it
 *   creates (but the project root) with a `.gitignore` holding `*`, so git ignores the caches
 *   without the user asking (as pytest's cache does): `.insitu/` as before, and
 *   `.insitu/vite-plugin-insitu/` too (a state folder the Python tool made has no `.gitignore`).
 *   Existing folders are left exactly as they are. Errors (a file in the way, no permission) are thrown.
 * - `removeOldPluginCaches(files)`: the migration from plugin versions that kept their caches
 *   at `paths.state` and `<state folder>/jobs.db`. A user who upgrades expects `insitu sync` to
 *   work again, so those two files are removed (with SQLite's `-wal`/`-shm`/`-journal` files
 *   beside them) when, and only when, they are recognisably the plugin's own: the index snapshot
 *   holds the `_insitu_meta` table with a `cache_key` starting `vite-plugin-insitu `, the job
 *   store a `meta` table whose `format` is `insitu-jobs/1`. Anything else there (the Python
 *   implementation's index, an unreadable file) is left alone. Returns the project-relative
 *   POSIX paths removed; failures to read or remove are ignored (the file stays), but not a
 *   `SqliteBindingError` (sqlite-database.ts: better-sqlite3's native part cannot load), which
 *   is thrown.
 */
import fs from 'node:fs'
import path from 'node:path'
import type Database from 'better-sqlite3'
import { openDatabase, SqliteBindingError } from './sqlite-database.js'

export const STATE_FOLDER_GITIGNORE = '# created by insitu\n*\n'

/** The plugin's own folder inside the state folder. */
export const PLUGIN_CACHE_FOLDER = 'vite-plugin-insitu'

export interface PluginStateFiles {
  /** Absolute project root. */
  root: string
  /** Absolute state folder (the folder of `paths.state`). */
  stateFolder: string
  /** Absolute folder of the plugin's caches. */
  cacheFolder: string
  /** Absolute path of the document index snapshot. */
  index: string
  /** Absolute path of the job store. */
  jobs: string
  /** Absolute path of `paths.state`: the Python implementation's index (read by the migration only). */
  pythonIndex: string
}

export function pluginStateFiles(root: string, statePath: string): PluginStateFiles {
  const absoluteRoot = path.resolve(root)
  const pythonIndex = path.join(absoluteRoot, statePath)
  const stateFolder = path.dirname(pythonIndex)
  const cacheFolder = path.join(stateFolder, PLUGIN_CACHE_FOLDER)
  return {
    root: absoluteRoot,
    stateFolder,
    cacheFolder,
    index: path.join(cacheFolder, 'index.db'),
    jobs: path.join(cacheFolder, 'jobs.db'),
    pythonIndex,
  }
}

export function ensureStateFolder(folder: string, root: string): void {
  if (fs.existsSync(folder)) return
  const parent = path.dirname(folder)
  if (parent !== folder) ensureStateFolder(parent, root)
  fs.mkdirSync(folder)
  if (path.resolve(folder) !== path.resolve(root)) fs.writeFileSync(path.join(folder, '.gitignore'), STATE_FOLDER_GITIGNORE)
}

const SQLITE_COMPANIONS = ['', '-wal', '-shm', '-journal']

export function removeOldPluginCaches(files: PluginStateFiles): string[] {
  const removed: string[] = []
  const candidates: [string, (db: Database.Database) => boolean][] = [
    [files.pythonIndex, isOldIndexSnapshot],
    [path.join(files.stateFolder, 'jobs.db'), isOldJobStore],
  ]
  for (const [file, isOurs] of candidates) {
    if (!holds(file, isOurs)) continue
    try {
      for (const suffix of SQLITE_COMPANIONS) fs.rmSync(file + suffix, { force: true })
      removed.push(path.relative(files.root, file).split(path.sep).join('/'))
    } catch {
      // left in place: the next start tries again
    }
  }
  return removed
}

/** Whether `file` is an SQLite database `isOurs` recognises (read from a copy in memory: the file is never opened). */
function holds(file: string, isOurs: (db: Database.Database) => boolean): boolean {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(file)
  } catch {
    return false
  }
  // A file another process opened in WAL mode says so in its header (bytes 18 and 19 are 2); an
  // image in memory cannot be in WAL mode, so the copy says rollback journal (1) instead.
  if (bytes.length > 19 && bytes[18] === 2 && bytes[19] === 2) bytes[18] = bytes[19] = 1
  let db: Database.Database | undefined
  try {
    db = openDatabase(bytes)
    return isOurs(db)
  } catch (error) {
    if (error instanceof SqliteBindingError) throw error
    return false
  } finally {
    db?.close()
  }
}

function tableNames(db: Database.Database): Set<string> {
  return new Set((db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name))
}

function isOldIndexSnapshot(db: Database.Database): boolean {
  if (!tableNames(db).has('_insitu_meta')) return false
  const row = db.prepare("select value from _insitu_meta where key = 'cache_key'").get() as { value?: unknown } | undefined
  return typeof row?.value === 'string' && row.value.startsWith('vite-plugin-insitu ')
}

function isOldJobStore(db: Database.Database): boolean {
  if (!tableNames(db).has('meta')) return false
  const row = db.prepare("select value from meta where key = 'format'").get() as { value?: unknown } | undefined
  return row?.value === 'insitu-jobs/1'
}
