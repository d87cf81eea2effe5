/**
 * `extension add` and `extension list` (SPEC §12): installing extensions into
 * `.insitu/extensions/<slug>`, recording them in `insitu.lock` and `insitu.toml`, as the Python
 * insitu tool does (the same folders, the same lock and config bytes), with a full rollback.
 *
 * Contract:
 * - `ExtensionInstaller.open(root)` runs the start check first (lock-check.ts): an installed
 *   extension that does not match the lock, or a locked one that is missing, throws its
 *   `LockError`, before anything is installed or listed.
 * - `list()` → the installed extensions in dependency order (an extension after the extensions it
 *   depends on; otherwise by name).
 * - `add(source, { version, cwd })` installs SOURCE (sources.ts) and, depth first, every
 *   non-capability dependency that is not installed already and not a builtin package
 *   (`dependency <name> needs a source` when it names none), plus capability dependencies that
 *   name a `source`. Each is checked against its range (`--version` for SOURCE, the manifest's
 *   `version` for a dependency; `<name> <version> does not satisfy <spec>`, see
 *   version-spec.ts); an extension reached again while its dependencies install is
 *   `extension dependency cycle includes <name>`; an extension already installed is kept as it
 *   is (its version checked). Each new extension is copied to `.<slug>.tmp` (an old one
 *   replaced), `IGNORED_NAMES` left out at every depth, then renamed to `<slug>`. Then every
 *   capability dependency must be provided (`missing capability dependency: <ext> -> <dep>`),
 *   `insitu.lock` is rewritten (lock-file.ts) and `insitu.toml` gets
 *   `\n\n[[extensions]]\npath = "<.insitu/extensions/slug>"\n` after its text (trailing
 *   whitespace cut) for each installed extension whose `path = "…"` line it does not contain (a
 *   missing `insitu.toml` starts as `version = 1`). Resolves to SOURCE's extension and the
 *   extensions it installed (dependencies first; empty when SOURCE was installed already).
 * - On any failure: every folder it created under `.insitu/extensions/` (and `.insitu/extensions/`
 *   and `.insitu/` themselves, when it created them) is removed, `insitu.lock` and `insitu.toml`
 *   are restored byte for byte (or deleted when they did not exist), and the error is rethrown.
 */
import fs from 'node:fs'
import path from 'node:path'
import { loadManifest, type Manifest } from '../host/manifest.js'
import { PROJECT_CONFIG_FILE } from '../host/config.js'
import { compareCodePoints } from '../values/code-point-order.js'
import { extensionContentHash, IGNORED_NAMES } from '../host/content-hash.js'
import { inspectInstalledExtensions, LockError, lockMissingMessage } from '../host/lock-check.js'
import { extensionSlug, formatLockFile, installedExtensionsDir, type LockedExtension, lockFilePath } from '../host/lock-file.js'
import { type Checkout, checkoutSource, dependencySource, gitRevision } from './sources.js'
import { versionSatisfies } from '../host/version-spec.js'

export interface InstalledRecord {
  manifest: Manifest
  /** Absolute folder `.insitu/extensions/<slug>`. */
  dir: string
  lock: LockedExtension
}

/** Dependencies the host provides itself: never installed (the Python tool's `_BUILTIN_PACKAGES`). */
const BUILTIN_PACKAGES = new Set(['include', 'insitu/include', 'insitu/jinja', 'insitu/sql', 'insitu/tree', 'jinja', 'sql', 'tree'])
const BUILTIN_CAPABILITIES = [
  'renderer:jinja',
  'resource:sql',
  'transform:include',
  'transform:materialize',
  'transform:sql',
  'transform:tree',
]
const CAPABILITY_KINDS = ['resource', 'transform', 'renderer', 'validator'] as const

export interface AddOptions {
  /** A version range SOURCE must satisfy (`--version`). @default no check */
  version?: string | null
  /** The folder a relative SOURCE path is resolved against. @default process.cwd() */
  cwd?: string
  /** Told of each extension as it is installed (dependencies first). */
  onInstalled?: (record: InstalledRecord) => void
}

export class ExtensionInstaller {
  private readonly installed = new Map<string, InstalledRecord>()
  /** name → names it depends on (non-capability dependencies that are installed, and sources followed). */
  private readonly edges = new Map<string, Set<string>>()
  private readonly visiting = new Set<string>()

  private constructor(readonly root: string) {}

  static open(root: string): ExtensionInstaller {
    const installer = new ExtensionInstaller(path.resolve(root))
    const state = inspectInstalledExtensions(installer.root)
    for (const extension of state.installed) {
      if (extension.problem) throw new LockError(state.lockFile, extension.problem, extension.manifest.name)
      installer.installed.set(extension.manifest.name, { manifest: extension.manifest, dir: extension.dir, lock: extension.lock! })
    }
    if (state.missing.length > 0) throw new LockError(state.lockFile, lockMissingMessage(state.missing), state.missing.join(', '))
    installer.rebuildEdges()
    return installer
  }

  list(): InstalledRecord[] {
    const order: InstalledRecord[] = []
    const placed = new Set<string>()
    const visit = (name: string, ancestors: Set<string>) => {
      const record = this.installed.get(name)
      if (!record || placed.has(name) || ancestors.has(name)) return
      ancestors.add(name)
      for (const dependency of [...(this.edges.get(name) ?? [])].sort(compareCodePoints)) visit(dependency, ancestors)
      ancestors.delete(name)
      placed.add(name)
      order.push(record)
    }
    for (const name of [...this.installed.keys()].sort(compareCodePoints)) visit(name, new Set())
    return order
  }

  async add(source: string, options: AddOptions = {}): Promise<{ extension: InstalledRecord; added: InstalledRecord[] }> {
    const destination = installedExtensionsDir(this.root)
    const createdFolders = [path.dirname(destination), destination].filter((folder) => !fs.existsSync(folder))
    fs.mkdirSync(destination, { recursive: true })
    const baselineNames = new Set(this.installed.keys())
    const baselineEntries = new Set(fs.readdirSync(destination))
    const files = [lockFilePath(this.root), path.join(this.root, PROJECT_CONFIG_FILE)]
    const snapshots = files.map((file) => ({ file, bytes: readBytes(file) }))
    const added: InstalledRecord[] = []
    try {
      const extension = await this.install(source, options.version ?? null, null, options.cwd ?? process.cwd(), (record) => {
        added.push(record)
        options.onInstalled?.(record)
      })
      this.checkCapabilityDependencies()
      fs.writeFileSync(lockFilePath(this.root), formatLockFile([...this.installed.values()].map((record) => record.lock)))
      for (const record of this.list()) this.ensureConfigPath(record.dir)
      return { extension, added }
    } catch (error) {
      for (const entry of fs.readdirSync(destination)) {
        if (!baselineEntries.has(entry)) fs.rmSync(path.join(destination, entry), { recursive: true, force: true })
      }
      for (const folder of [...createdFolders].reverse()) {
        try {
          fs.rmdirSync(folder)
        } catch {
          // not empty: something else lives there now
        }
      }
      for (const name of [...this.installed.keys()]) if (!baselineNames.has(name)) this.installed.delete(name)
      this.rebuildEdges()
      for (const { file, bytes } of snapshots) {
        if (bytes === null) fs.rmSync(file, { force: true })
        else fs.writeFileSync(file, bytes)
      }
      throw error
    }
  }

  private async install(
    source: string,
    version: string | null,
    parent: string | null,
    cwd: string,
    onInstalled: (record: InstalledRecord) => void,
  ): Promise<InstalledRecord> {
    const checkout: Checkout = await checkoutSource(source, cwd)
    try {
      const manifest = loadManifest(checkout.dir)
      if (parent) this.depend(parent, manifest.name)
      else this.depend(null, manifest.name)
      const existing = this.installed.get(manifest.name)
      if (existing) {
        checkVersion(existing.manifest, version)
        return existing
      }
      if (this.visiting.has(manifest.name)) throw new Error(`extension dependency cycle includes ${manifest.name}`)
      checkVersion(manifest, version)
      this.visiting.add(manifest.name)
      try {
        for (const dependency of manifest.dependencies) {
          const constraint = dependency.version === '*' ? null : dependency.version
          if (dependency.capability) {
            if (dependency.source) await this.install(dependencySource(checkout.dir, dependency.source), constraint, manifest.name, cwd, onInstalled)
            continue
          }
          this.depend(manifest.name, dependency.name)
          const current = this.installed.get(dependency.name)
          if (current) {
            checkVersion(current.manifest, constraint)
            continue
          }
          if (BUILTIN_PACKAGES.has(dependency.name)) continue
          if (dependency.source === null) throw new Error(`dependency ${dependency.name} needs a source`)
          await this.install(dependencySource(checkout.dir, dependency.source), constraint, manifest.name, cwd, onInstalled)
        }
        const target = path.join(installedExtensionsDir(this.root), extensionSlug(manifest.name))
        const staging = path.join(path.dirname(target), `.${path.basename(target)}.tmp`)
        fs.rmSync(staging, { recursive: true, force: true })
        copyTree(checkout.dir, staging)
        fs.rmSync(target, { recursive: true, force: true })
        fs.renameSync(staging, target)
        const record: InstalledRecord = {
          manifest: loadManifest(target),
          dir: target,
          lock: {
            name: manifest.name,
            version: manifest.version,
            source,
            revision: await gitRevision(checkout.dir),
            sha256: extensionContentHash(target),
            protocol: manifest.protocol,
            dependencies: manifest.dependencies.filter((d) => !d.capability).map((d) => d.name),
            permissions: [...manifest.permissions],
          },
        }
        this.installed.set(manifest.name, record)
        onInstalled(record)
        return record
      } finally {
        this.visiting.delete(manifest.name)
      }
    } finally {
      checkout.release()
    }
  }

  private depend(parent: string | null, name: string): void {
    if (!this.edges.has(name)) this.edges.set(name, new Set())
    if (parent !== null) {
      if (!this.edges.has(parent)) this.edges.set(parent, new Set())
      this.edges.get(parent)!.add(name)
    }
  }

  private rebuildEdges(): void {
    this.edges.clear()
    for (const name of this.installed.keys()) this.depend(null, name)
    for (const record of this.installed.values()) {
      for (const dependency of record.manifest.dependencies) {
        if (!dependency.capability && this.installed.has(dependency.name)) this.depend(record.manifest.name, dependency.name)
      }
    }
  }

  private checkCapabilityDependencies(): void {
    const available = new Set(BUILTIN_CAPABILITIES)
    for (const record of this.installed.values()) {
      for (const capability of record.manifest.capabilities) {
        const name = capability.mode === 'replace' ? capability.target : capability.name
        available.add(`${capability.kind}:${name}`)
      }
    }
    for (const record of this.installed.values()) {
      for (const dependency of record.manifest.dependencies) {
        if (!dependency.capability) continue
        const found = dependency.name.includes(':')
          ? available.has(dependency.name)
          : CAPABILITY_KINDS.some((kind) => available.has(`${kind}:${dependency.name}`))
        if (!found) throw new Error(`missing capability dependency: ${record.manifest.name} -> ${dependency.name}`)
      }
    }
  }

  private ensureConfigPath(dir: string): void {
    const config = path.join(this.root, PROJECT_CONFIG_FILE)
    const relative = path.relative(this.root, dir).split(path.sep).join('/')
    const bytes = readBytes(config)
    const text = bytes === null ? 'version = 1' : decodeUtf8(bytes, config)
    const marker = `path = "${relative}"`
    // The Python tool looks for the line's text anywhere in the file (`marker not in text`).
    if (bytes !== null && text.includes(marker)) return
    fs.writeFileSync(config, `${pythonRstrip(text)}\n\n[[extensions]]\n${marker}\n`)
  }
}

function checkVersion(manifest: Manifest, constraint: string | null): void {
  if (constraint && !versionSatisfies(manifest.version, constraint)) {
    throw new Error(`${manifest.name} ${manifest.version} does not satisfy ${constraint}`)
  }
}

/** `shutil.copytree(src, dst, ignore=ignore_patterns(*IGNORED))`: links followed, modes kept. */
function copyTree(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true })
  for (const name of fs.readdirSync(from)) {
    if (IGNORED_NAMES.has(name)) continue
    const source = path.join(from, name)
    const target = path.join(to, name)
    const stat = fs.statSync(source)
    if (stat.isDirectory()) copyTree(source, target)
    else fs.copyFileSync(source, target)
  }
}

function readBytes(file: string): Buffer | null {
  try {
    return fs.readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

function decodeUtf8(bytes: Buffer, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes)
  } catch {
    throw new Error(`${file}: not valid UTF-8`)
  }
}

/** Python's `str.rstrip()`: its whitespace set (which has \x1c-\x1f and \x85 and not U+FEFF). */
function pythonRstrip(text: string): string {
  return text.replace(/[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u, '')
}
