/**
 * Wiring of the job memo into one engine: the recording views jobs read through, and the
 * memo with its persistent store.
 *
 * Contract:
 * - `recordReads(resolve, onRead)` / `recordQueries(index, onQuery, checkedRows)` return a
 *   resolver / an index view that behave exactly like the originals and report every read
 *   (value or failure) and every query (with its rows) first. `checkedRows(sql, params)` may
 *   supply a query's current rows and their fingerprint (the job memo's `takeCheckedRows`: a
 *   check that just ran the same query) instead of running it again.
 * - `createJobMemo(setup)` fingerprints each extension's program once, opens the job store
 *   `jobStoreFile` (`<state folder>/vite-plugin-insitu/jobs.db`) when given (header: plugin version, config
 *   fingerprint with paths relative to the root, so a copy of the project keeps its cache,
 *   V8 version), and returns the memo; with `generations`, the memo records region bodies'
 *   generations (generations.ts) beside its entries. An extension's identity is its program
 *   fingerprint plus the PID of its running process.
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import type { DocumentIndex } from '../documents/document-index.js'
import { toPosixPath } from '../documents/project-paths.js'
import type { ProjectConfig } from '../host/config.js'
import type { InsituHost } from '../host/host.js'
import { resolveCommand } from '../host/manifest.js'
import type { HostLogger } from '../host/process.js'
import type { Location } from '../protocol/schemas.js'
import type { ResolveResource } from '../resources/resolver.js'
import { configFingerprint, extensionFingerprint, pluginVersion } from './dependency-fingerprints.js'
import { Generations } from './generations.js'
import { JobMemo } from './job-memo.js'
import { JobStore } from './job-store.js'

export function recordReads(
  resolve: ResolveResource,
  onRead: (identifier: string, location: Location, read: { value: unknown } | { error: unknown }) => void,
): ResolveResource {
  return async (identifier, location, trace) => {
    try {
      const read = await resolve(identifier, location, trace)
      onRead(identifier, location, { value: read.value })
      return read
    } catch (error) {
      onRead(identifier, location, { error })
      throw error
    }
  }
}

export function recordQueries(
  index: DocumentIndex,
  onQuery: (sql: string, params: Record<string, unknown>, rows: unknown, hash: string | undefined) => void,
  checkedRows: (sql: string, params: Record<string, unknown>) => { rows: unknown[]; hash: string } | undefined = () => undefined,
): DocumentIndex {
  const view = Object.create(index) as DocumentIndex
  view.runQuery = async (sql, params = {}) => {
    const checked = checkedRows(sql, params)
    const rows = (checked?.rows as Record<string, unknown>[] | undefined) ?? (await index.runQuery(sql, params))
    onQuery(sql, params, rows, checked?.hash)
    return rows
  }
  view.prepareError = (sql) => index.prepareError(sql)
  view.isDocument = (relPath) => index.isDocument(relPath)
  return view
}

export interface JobMemoSetup {
  config: ProjectConfig
  host: InsituHost
  python: string | undefined
  /** A resolver and a query function that record nothing (for fingerprints). */
  resolve: ResolveResource
  query: (sql: string, params: Record<string, unknown>) => Promise<unknown[]>
  /** The engine's own questions to the index's SQLite (the row rule's). */
  evaluate: (sql: string, params: Record<string, unknown>) => unknown[]
  /** The document index's `stateId` (equal ids, equal rows). */
  indexState: () => string
  /** The document index's `documentsState` (equal ids, equal documents' rows). */
  documentsState: () => string
  /** Absolute path of the persistent job store; null: in memory only. */
  jobStoreFile: string | null
  logger: HostLogger | undefined
  /** Record region bodies' generations (generations.ts), in the job store when there is one. */
  generations: boolean
}

export function createJobMemo(setup: JobMemoSetup): JobMemo {
  const { config, host } = setup
  const programs = new Map(
    host.extensions.map((e) => [e.manifest.name, extensionFingerprint(e, resolveCommand(e.manifest, { python: setup.python, root: config.root }), config.root)]),
  )
  let store: JobStore | null = null
  if (setup.jobStoreFile !== null) {
    const file = setup.jobStoreFile
    const configText = readIfPresent(config.file)
    // Paths relative to the root: a cache restored in another checkout (CI) still applies.
    const relative = (file: string) => toPosixPath(path.relative(config.root, file))
    const fingerprint = configFingerprint({
      configText,
      effective: { ...config, root: '.', file: relative(config.file) },
      options: { python: setup.python ?? null, extensions: host.extensions.map((e) => [e.manifest.name, relative(e.manifest.file)]) },
    })
    const logger = setup.logger ?? { info() {}, warn() {}, error() {} }
    store = JobStore.open(file, { plugin: pluginVersion(), config: fingerprint, v8: process.versions.v8 ?? v8.cachedDataVersionTag().toString() }, logger)
  }
  return new JobMemo({
    resolve: setup.resolve,
    query: setup.query,
    evaluate: setup.evaluate,
    indexState: setup.indexState,
    documentsState: setup.documentsState,
    root: config.root,
    store,
    ...(setup.generations ? { generations: new Generations(store) } : {}),
    extension: (name) => {
      const program = programs.get(name)
      return program === undefined ? undefined : { program, runtime: host.pids().get(name) }
    },
  })
}

function readIfPresent(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return null
  }
}
