/**
 * `extension add SOURCE [--version SPEC]` and `extension list` (SPEC §12; extensions/install.ts).
 *
 * Contract:
 * - The project: `--root` exactly, else the folder of the nearest `insitu.toml` above the current
 *   folder, else the current folder. SOURCE paths are resolved against the current folder.
 * - `add` prints `installed <name> <version> (<source>)` per extension it installed
 *   (dependencies first), or `<name> <version> is already installed`; exit 0. An install
 *   failure prints `vite-plugin-insitu: extension add <SOURCE>: <reason>` on stderr, everything
 *   rolled back, exit 1; a lock or config problem (the start check) prints its
 *   `<file>: <message>`, exit 2.
 * - `list` prints `<name> <version> <source>` per installed extension in dependency order, or
 *   `No installed extensions.`; it writes nothing (never creates `.insitu/`).
 */
import path from 'node:path'
import { ExtensionInstaller } from '../extensions/install.js'
import { ConfigError, findProjectConfig } from '../host/config.js'
import { type CliIo, CLI_NAME, EXIT_CLEAN, EXIT_STALE_OR_FAILED, EXIT_USAGE, messageOf } from './cli-io.js'
import { resolveProjectRoot } from './project-command.js'

function projectRoot(rootOption: string | null, io: CliIo): string | { problem: string } {
  const resolved = resolveProjectRoot(rootOption, io)
  if ('problem' in resolved) return resolved
  if (!resolved.searchParents) return resolved.root
  const config = findProjectConfig(resolved.root)
  return config === null ? resolved.root : path.dirname(config)
}

function openInstaller(rootOption: string | null, io: CliIo): ExtensionInstaller | number {
  const root = projectRoot(rootOption, io)
  if (typeof root !== 'string') {
    io.stderr.write(`${CLI_NAME}: ${root.problem}\n`)
    return EXIT_USAGE
  }
  try {
    return ExtensionInstaller.open(root)
  } catch (error) {
    io.stderr.write(`${error instanceof ConfigError ? error.message : `${CLI_NAME}: ${messageOf(error)}`}\n`)
    return error instanceof ConfigError ? EXIT_USAGE : EXIT_STALE_OR_FAILED
  }
}

export async function runExtensionAdd(source: string, options: { root: string | null; version: string | null }, io: CliIo): Promise<number> {
  const installer = openInstaller(options.root, io)
  if (typeof installer === 'number') return installer
  try {
    const { extension, added } = await installer.add(source, { version: options.version, cwd: io.cwd })
    // Printed once everything is written: a failed install prints nothing but its error.
    for (const record of added) io.stdout.write(`installed ${record.manifest.name} ${record.manifest.version} (${record.lock.source})\n`)
    if (added.length === 0) io.stdout.write(`${extension.manifest.name} ${extension.manifest.version} is already installed\n`)
    return EXIT_CLEAN
  } catch (error) {
    io.stderr.write(`${CLI_NAME}: extension add ${source}: ${messageOf(error)}\n`)
    return EXIT_STALE_OR_FAILED
  }
}

export function runExtensionList(options: { root: string | null }, io: CliIo): number {
  const installer = openInstaller(options.root, io)
  if (typeof installer === 'number') return installer
  const installed = installer.list()
  if (installed.length === 0) io.stdout.write('No installed extensions.\n')
  for (const record of installed) io.stdout.write(`${record.manifest.name} ${record.manifest.version} ${record.lock.source}\n`)
  return EXIT_CLEAN
}
