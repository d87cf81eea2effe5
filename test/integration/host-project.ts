/**
 * Shared harness of the extension-host integration tests (host*.test.ts): real temp projects,
 * real `insitu.toml` / `insitu-extension.toml` files, real child processes.
 *
 * Contract:
 * - `makeProject(files)` writes files into a fresh temp folder; `writeConfig(project, entries)`
 *   writes its `insitu.toml` with one `[[extensions]]` entry per fixture folder (absolute paths).
 * - `fileResolver(root)` serves `fs:file:<rel>` (UTF-8 text) and `fs:glob:<gitignore pattern>`
 *   (sorted matching paths) over the project's real files, each with dependencies `[identifier]`.
 * - `startHost(project, options)` loads the config and starts an `InsituHost`; the host is
 *   tracked, its stderr log lines are collected in `logs`.
 * - `finishTest()` (call in afterEach) collects every extension PID (`host.pids()`,
 *   `liveExtensionPids()`, and any PID a test `rememberPid`s), closes every host twice (close is
 *   idempotent), asserts each PID is gone (ESRCH) and that no extension child is left, and
 *   removes the temp folders.
 * - `writeComposable(dir, spec)` writes a manifest and a `runtime.json` for
 *   test/fixtures/python/composable.py (capabilities as the manifest declares them, by default).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ignore from 'ignore'
import { expect } from 'vitest'
import { loadProjectConfig } from '../../src/host/config.js'
import { type HostOptions, InsituHost, type ResourceResolver } from '../../src/host/host.js'
import { liveExtensionPids } from '../../src/host/process.js'
import type { Location } from '../../src/protocol/schemas.js'

export const PYTHON_FIXTURES = fileURLToPath(new URL('../fixtures/python/', import.meta.url))
export const NODE_FIXTURES = fileURLToPath(new URL('../fixtures/node/', import.meta.url))
export const COMPOSABLE = path.join(PYTHON_FIXTURES, 'composable.py')

/** Location of a document `docs/index.md`. */
export const DOC: Location = { path: 'docs/index.md', directory: 'docs', root: '.', depth: 1 }

export interface Project {
  root: string
  configFile: string
}

export interface ExtensionEntry {
  path: string
  allow_replace?: string[]
  enabled?: boolean
}

const folders: string[] = []
const hosts: InsituHost[] = []
const remembered = new Set<number>()
/** stderr lines of every extension, as the host logged them (`[<name>] <line>`). */
export const logs: string[] = []

export function makeProject(files: Record<string, string> = {}): Project {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-host-')))
  folders.push(root)
  for (const [rel, text] of Object.entries(files)) writeFile(root, rel, text)
  return { root, configFile: path.join(root, 'insitu.toml') }
}

export function writeFile(root: string, rel: string, text: string): void {
  const file = path.join(root, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

export function writeConfig(project: Project, entries: readonly ExtensionEntry[]): void {
  const lines = ['version = 1', '']
  for (const entry of entries) {
    lines.push('[[extensions]]', `path = ${JSON.stringify(entry.path)}`)
    if (entry.allow_replace) lines.push(`allow_replace = ${JSON.stringify(entry.allow_replace)}`)
    if (entry.enabled !== undefined) lines.push(`enabled = ${String(entry.enabled)}`)
    lines.push('')
  }
  fs.writeFileSync(project.configFile, lines.join('\n'))
}

function listFiles(root: string, dir = ''): string[] {
  const out: string[] = []
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = dir ? `${dir}/${entry.name}` : entry.name
    if (entry.isDirectory()) out.push(...listFiles(root, rel))
    else if (entry.isFile()) out.push(rel)
  }
  return out
}

export function fileResolver(root: string): ResourceResolver {
  return async (identifier) => {
    if (identifier.startsWith('fs:file:')) {
      const value = fs.readFileSync(path.join(root, identifier.slice('fs:file:'.length)), 'utf8')
      return { value, dependencies: [identifier] }
    }
    if (identifier.startsWith('fs:glob:')) {
      const matcher = ignore().add(identifier.slice('fs:glob:'.length))
      const value = listFiles(root).filter((file) => matcher.ignores(file)).sort()
      return { value, dependencies: [identifier] }
    }
    throw new Error(`unsupported host resource: ${identifier}`)
  }
}

export async function startHost(project: Project, options: Partial<HostOptions> = {}): Promise<InsituHost> {
  const host = await InsituHost.start({
    config: loadProjectConfig(project.configFile),
    resolve: fileResolver(project.root),
    logger: { info: (line) => void logs.push(line), warn: (line) => void logs.push(line), error() {} },
    ...options,
  })
  hosts.push(host)
  for (const pid of host.pids().values()) remembered.add(pid)
  return host
}

/** Track a PID seen during a test (e.g. one replaced by a restart): it must be gone afterwards. */
export function rememberPid(pid: number | undefined): void {
  if (pid !== undefined) remembered.add(pid)
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

export async function finishTest(): Promise<void> {
  try {
    const pids = new Set(remembered)
    for (const host of hosts) for (const pid of host.pids().values()) pids.add(pid)
    for (const pid of liveExtensionPids()) pids.add(pid)
    for (const host of hosts) {
      const closing = host.close()
      expect(host.close()).toBe(closing)
      await closing
      await host.close()
    }
    for (const pid of pids) {
      await expect.poll(() => isAlive(pid), { message: `extension process ${pid} is still alive`, timeout: 5_000 }).toBe(false)
    }
    expect(liveExtensionPids()).toEqual([])
  } finally {
    hosts.length = 0
    remembered.clear()
    logs.length = 0
    for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
  }
}

export interface ComposableCapability {
  kind: 'resource' | 'transform' | 'renderer' | 'validator'
  name: string
  mode?: 'provide' | 'contribute' | 'decorate' | 'replace'
  target?: string
  before?: string[]
  after?: string[]
  /** What the runtime answers (see composable.py). @default name */
  output?: string
}

export interface ComposableSpec {
  name: string
  version?: string
  capabilities?: ComposableCapability[]
  dependencies?: { name: string; version?: string; capability?: boolean }[]
}

/** Write `<dir>/insitu-extension.toml` and `<dir>/runtime.json` for composable.py; returns `dir`. */
export function writeComposable(dir: string, spec: ComposableSpec): string {
  const version = spec.version ?? '1.0.0'
  const capabilities = spec.capabilities ?? []
  const toml = [
    `name = ${JSON.stringify(spec.name)}`,
    `version = ${JSON.stringify(version)}`,
    '',
    '[extension]',
    `command = ["{python}", ${JSON.stringify(COMPOSABLE)}]`,
    '',
  ]
  for (const capability of capabilities) {
    toml.push('[[capabilities]]', `kind = ${JSON.stringify(capability.kind)}`, `name = ${JSON.stringify(capability.name)}`)
    if (capability.mode) toml.push(`mode = ${JSON.stringify(capability.mode)}`)
    if (capability.target) toml.push(`target = ${JSON.stringify(capability.target)}`)
    if (capability.before) toml.push(`before = ${JSON.stringify(capability.before)}`)
    if (capability.after) toml.push(`after = ${JSON.stringify(capability.after)}`)
    toml.push('')
  }
  for (const dependency of spec.dependencies ?? []) {
    toml.push('[[dependencies]]', `name = ${JSON.stringify(dependency.name)}`)
    if (dependency.version) toml.push(`version = ${JSON.stringify(dependency.version)}`)
    if (dependency.capability !== undefined) toml.push(`capability = ${String(dependency.capability)}`)
    toml.push('')
  }
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'insitu-extension.toml'), toml.join('\n'))
  const runtime = {
    name: spec.name,
    version,
    capabilities: capabilities.map((c) => ({ kind: c.kind, name: c.name, output: c.output ?? c.name })),
  }
  fs.writeFileSync(path.join(dir, 'runtime.json'), JSON.stringify(runtime))
  return dir
}

/** The `<name> <pid>` lines composable.py extensions appended to `<root>/starts.log` at initialize. */
export function startsLog(root: string): { name: string; pid: number }[] {
  const file = path.join(root, 'starts.log')
  if (!fs.existsSync(file)) return []
  return fs
    .readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const [name, pid] = line.split(' ')
      return { name: name!, pid: Number(pid) }
    })
}
