/**
 * Extension manifests `insitu-extension.toml` (SPEC §5, §3.1) and extension discovery.
 *
 * Contract:
 * - `parseManifest(text, file)` / `loadManifest(dir)` return a `Manifest`: TOML keys as written
 *   (snake_case), SPEC defaults filled (`protocol` 1, `permissions` [], `cwd` ".", `mode` "provide",
 *   `before`/`after` [], absent `target`/schemas → null, dependency `version` "*", `capability` false,
 *   `source` null),
 *   plus `dir` (absolute POSIX manifest folder, not symlink-resolved) and `file`.
 *   Failures are `ConfigError`s `<file>:<line>:<column>: <message>`, placed at the key they are
 *   about (see config.ts for the message shapes); the SPEC rule messages (`extension command
 *   cannot be empty`, `<mode> capability requires target`, ...) follow the position directly. Dependencies are duplicates when `(name, capability)` repeat.
 * - `resolveExtensionCwd(manifest)` → absolute POSIX cwd; after resolving `..` and symlinks (with
 *   `physicalPath`: missing parts kept, dangling links followed) it must stay inside the
 *   (symlink-resolved) manifest folder, else `<file>: extension cwd escapes package: <cwd>`.
 * - `resolveCommand(manifest, { python, root })` substitutes `{python}` (default `python3`; a relative
 *   path from `root`) and `{node}`
 *   (`process.execPath`) anywhere inside each argument.
 * - `discoverExtensions(config)` returns configured extensions (config order), then extensions found
 *   under `<root>/.insitu/extensions/*` (folder-name order) that no entry claimed. Disabled entries load
 *   nothing, need not exist, and also suppress the discovered extension they name. Errors are
 *   `ConfigError`s prefixed with the path of `insitu.toml` and, for an `[[extensions]]` entry,
 *   the line and column of its `path`/`source` key (`extension path not found: tools/x`) or of
 *   the entry (`extension configured twice: acme/x`).
 */
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { isInsideFolder, toPosixPath } from '../documents/project-paths.js'
import { CapabilityKind } from '../protocol/schemas.js'
import { physicalPath } from '../resources/confine.js'
import {
  ConfigError,
  isJsonObject,
  parseTomlFile,
  readTomlText,
  ruleIssue,
  type ProjectConfig,
} from './config.js'
import { tomlKeyPosition, type TomlPosition } from './toml-positions.js'
import { extensionSlug, type LockedExtension, readLockFile } from './lock-file.js'
import { realPathSync } from '../documents/real-path.js'

export const MANIFEST_FILE = 'insitu-extension.toml'

export const CapabilityMode = z.enum(['provide', 'contribute', 'decorate', 'replace'])
export type CapabilityMode = z.output<typeof CapabilityMode>

const ManifestCapabilitySchema = z
  .strictObject({
    kind: CapabilityKind,
    name: z.string().min(1),
    mode: CapabilityMode.default('provide'),
    target: z.string().min(1).optional(),
    before: z.array(z.string()).default([]),
    after: z.array(z.string()).default([]),
    params_schema: isJsonObject.optional(),
    value_schema: isJsonObject.optional(),
    result_schema: isJsonObject.optional(),
  })
  .superRefine((cap, ctx) => {
    const needsTarget = cap.mode === 'decorate' || cap.mode === 'replace'
    if (needsTarget && cap.target === undefined) ctx.addIssue(ruleIssue(`${cap.mode} capability requires target`))
    if (!needsTarget && cap.target !== undefined) ctx.addIssue(ruleIssue(`${cap.mode} capability cannot define target`))
    if (cap.before.some((name) => cap.after.includes(name))) {
      ctx.addIssue(ruleIssue('a decorator cannot be both before and after the same item'))
    }
  })
  .transform((cap) => ({
    kind: cap.kind,
    name: cap.name,
    mode: cap.mode,
    target: cap.target ?? null,
    before: cap.before,
    after: cap.after,
    params_schema: cap.params_schema ?? null,
    value_schema: cap.value_schema ?? null,
    result_schema: cap.result_schema ?? null,
  }))

const ManifestDependencySchema = z
  .strictObject({
    name: z.string().min(1),
    version: z.string().min(1).default('*'),
    capability: z.boolean().default(false),
    /** Where `extension add` gets the dependency (SPEC §12): a path relative to this extension, or a git source. */
    source: z.string().min(1).optional(),
  })
  .transform((dependency) => ({ ...dependency, source: dependency.source ?? null }))

const ManifestSchema = z
  .strictObject({
    name: z.string().min(1),
    version: z.string().min(1),
    protocol: z.literal(1).default(1),
    permissions: z.array(z.string()).default([]),
    extension: z.strictObject({
      command: z.array(z.string()).superRefine((command, ctx) => {
        if (command.length === 0 || command[0]!.trim() === '') {
          ctx.addIssue(ruleIssue('extension command cannot be empty'))
        }
      }),
      cwd: z.string().min(1).default('.'),
    }),
    capabilities: z.array(ManifestCapabilitySchema).default([]),
    dependencies: z.array(ManifestDependencySchema).default([]),
  })
  .superRefine((manifest, ctx) => {
    const capabilities = manifest.capabilities.map((c) => `${c.kind}\u0000${c.name}`)
    if (new Set(capabilities).size !== capabilities.length) {
      ctx.addIssue(ruleIssue('extension capabilities must be unique'))
    }
    const dependencies = manifest.dependencies.map((d) => `${d.name}\u0000${String(d.capability)}`)
    if (new Set(dependencies).size !== dependencies.length) {
      ctx.addIssue(ruleIssue('extension dependencies must be unique'))
    }
  })

export type ManifestCapability = z.output<typeof ManifestCapabilitySchema>
export type ManifestDependency = z.output<typeof ManifestDependencySchema>
export type Manifest = z.output<typeof ManifestSchema> & {
  /** Absolute POSIX folder holding the manifest. */
  dir: string
  /** Absolute POSIX path of the manifest. */
  file: string
}

export interface DiscoveredExtension {
  manifest: Manifest
  /** Capability names the project approves for `mode = "replace"` (from its `[[extensions]]` entry). */
  allowReplace: string[]
  configuredBy: 'path' | 'source' | 'discovered'
}

export function parseManifest(text: string, file: string): Manifest {
  const { value, absolute } = parseTomlFile(ManifestSchema, text, file)
  return { ...value, dir: path.posix.dirname(absolute), file: absolute }
}

/** Load `<dir>/insitu-extension.toml`. */
export function loadManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST_FILE)
  return parseManifest(readTomlText(file, 'extension manifest'), file)
}

/** Absolute POSIX cwd for the extension process; must stay inside the manifest folder. */
export function resolveExtensionCwd(manifest: Manifest): string {
  const cwd = path.resolve(manifest.dir, manifest.extension.cwd)
  if (!isInsideFolder(manifest.dir, cwd) || !isInsideFolder(physicalPath(manifest.dir), physicalPath(cwd))) {
    throw new ConfigError(`${manifest.file}: extension cwd escapes package: ${manifest.extension.cwd}`, {
      file: manifest.file,
    })
  }
  return toPosixPath(cwd)
}

/**
 * `[extension].command` with `{python}` and `{node}` substituted in every argument. A `python`
 * that is a relative path (`.venv/bin/python`: it holds a slash) is taken from the project
 * `root`, not from the extension's folder the command runs in; a bare name is looked up on PATH.
 */
export function resolveCommand(manifest: Manifest, options: { python?: string; root?: string } = {}): string[] {
  let python = options.python ?? 'python3'
  if (options.root !== undefined && /[/\\]/.test(python) && !path.isAbsolute(python)) python = path.resolve(options.root, python)
  return manifest.extension.command.map((arg) =>
    arg.replaceAll('{python}', python).replaceAll('{node}', process.execPath),
  )
}

// ---------------------------------------------------------------------------------------------
// Discovery

interface Installed {
  folder: string
  realDir: string
  manifest: Manifest
}

/** Folders under `<root>/.insitu/extensions/` holding a manifest, by folder name. */
function installedExtensions(root: string): Installed[] {
  const base = path.join(root, '.insitu', 'extensions')
  let names: string[]
  try {
    names = fs.readdirSync(base).sort()
  } catch {
    return []
  }
  const found: Installed[] = []
  for (const folder of names) {
    const dir = path.join(base, folder)
    try {
      if (!fs.statSync(dir).isDirectory() || !fs.statSync(path.join(dir, MANIFEST_FILE)).isFile()) continue
    } catch {
      continue
    }
    found.push({ folder, realDir: realPathSync(dir), manifest: loadManifest(dir) })
  }
  return found
}

/** The names a `source` may be installed under: the source itself and its last path segment. */
function sourceNames(source: string): string[] {
  const segments = source.replace(/[/\\]+$/, '').split(/[/\\:]/)
  const last = (segments[segments.length - 1] ?? '').replace(/\.git$/, '')
  return last && last !== source ? [source, last] : [source]
}

function findInstalledSource(installed: readonly Installed[], source: string, root: string): Installed | undefined {
  // `extension add <source>` recorded the source in insitu.lock and installed it at its name's slug.
  let locked: Map<string, LockedExtension> | null = null
  try {
    locked = readLockFile(root)
  } catch {
    // a broken lock is reported by the host's lock check
  }
  for (const entry of locked?.values() ?? []) {
    if (entry.source !== source) continue
    const match = installed.find((ext) => ext.folder === extensionSlug(entry.name))
    if (match) return match
  }
  const names = sourceNames(source)
  return installed.find((ext) => names.includes(ext.folder) || names.includes(ext.manifest.name))
}

/** Every extension the project uses: configured `[[extensions]]` first, then `.insitu/extensions/*`. */
export interface DiscoveryOptions {
  /**
   * Turn extensions on or off by manifest name, over `enabled` in insitu.toml; `undefined`
   * keeps what insitu.toml says. (A disabled entry's manifest is read only to learn its name.)
   */
  enabled?: (name: string) => boolean | undefined
}

export function discoverExtensions(config: ProjectConfig, options: DiscoveryOptions = {}): DiscoveredExtension[] {
  /** A `ConfigError` of insitu.toml, placed at `keyPath` when given (and the file is readable). */
  const fail = (message: string, keyPath?: (string | number)[]): never => {
    let at: TomlPosition | null = null
    try {
      if (keyPath) at = tomlKeyPosition(fs.readFileSync(config.file, 'utf8'), keyPath)
    } catch {
      // unreadable now: the message without a position
    }
    if (!at) throw new ConfigError(`${config.file}: ${message}`, { file: config.file })
    throw new ConfigError(`${config.file}:${at.line}:${at.column}: ${message}`, { file: config.file, ...at })
  }
  const installed = installedExtensions(config.root)
  const claimed = new Set<Installed>()
  const result: DiscoveredExtension[] = []
  const names = new Set<string>()

  const add = (
    manifest: Manifest,
    allowReplace: string[],
    configuredBy: DiscoveredExtension['configuredBy'],
    keyPath?: (string | number)[],
  ) => {
    if (names.has(manifest.name)) fail(`extension configured twice: ${manifest.name}`, keyPath)
    names.add(manifest.name)
    result.push({ manifest, allowReplace, configuredBy })
  }

  for (const [index, entry] of config.extensions.entries()) {
    if (entry.path !== null) {
      const dir = path.resolve(config.root, entry.path)
      let realDir: string
      try {
        if (!fs.statSync(dir).isDirectory()) throw new Error('not a folder')
        realDir = realPathSync(dir)
      } catch {
        if (!entry.enabled) continue
        return fail(`extension path not found: ${entry.path}`, ['extensions', index, 'path'])
      }
      const same = installed.find((ext) => ext.realDir === realDir)
      if (same) claimed.add(same)
      if (!entry.enabled) {
        // Off in insitu.toml: on only when an override names it (a broken one stays off).
        if (!options.enabled) continue
        let manifest: Manifest
        try {
          manifest = same?.manifest ?? loadManifest(dir)
        } catch {
          continue
        }
        if (options.enabled(manifest.name) === true) add(manifest, entry.allow_replace, 'path')
        continue
      }
      try {
        if (!fs.statSync(path.join(dir, MANIFEST_FILE)).isFile()) throw new Error('not a file')
      } catch {
        return fail(`extension path has no ${MANIFEST_FILE}: ${entry.path}`, ['extensions', index, 'path'])
      }
      const manifest = same?.manifest ?? loadManifest(dir)
      if (options.enabled?.(manifest.name) !== false) add(manifest, entry.allow_replace, 'path', ['extensions', index])
    } else if (entry.source !== null) {
      const match = findInstalledSource(installed, entry.source, config.root)
      if (match) claimed.add(match)
      const wanted = match ? (options.enabled?.(match.manifest.name) ?? entry.enabled) : entry.enabled
      if (!wanted) continue
      if (!match) {
        return fail(
          `extension source ${entry.source} is not installed: run \`vite-plugin-insitu extension add ${entry.source}\`` +
            ' (or use path = "...")',
          ['extensions', index, 'source'],
        )
      }
      add(match.manifest, entry.allow_replace, 'source', ['extensions', index])
    }
  }
  for (const ext of installed) {
    if (!claimed.has(ext) && options.enabled?.(ext.manifest.name) !== false) add(ext.manifest, [], 'discovered')
  }
  return result
}
