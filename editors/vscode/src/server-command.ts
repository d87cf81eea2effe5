/**
 * The command line that starts the insitu language server, from the extension's settings and
 * the workspace folder. Pure (no `vscode`): test/integration/vscode-client.test.ts runs it as is.
 *
 * Contract: `resolveServerCommand(settings, { folder, platform, exists })` returns the process
 * to spawn, `<command> [vite-plugin-insitu] lsp --stdio <extraArgs…>` in `cwd` (the folder):
 * - `insitu.server.command` set (not blank): that executable. `${workspaceFolder}` in it is the
 *   folder; a path (`./bin/x`, `node_modules/.bin/x`: it has a slash) is resolved against the
 *   folder (an absolute one is only normalized); a bare name (`vite-plugin-insitu`) is looked
 *   up on PATH by the system.
 * - otherwise `node_modules/.bin/vite-plugin-insitu` of the folder or of the nearest folder above
 *   it that has one (as `npx` finds a local package), as an absolute path;
 * - otherwise `npx vite-plugin-insitu` (npx installs it when the project does not have it).
 * `insitu.server.extraArgs` follow `lsp --stdio` as given (non-strings dropped). On Windows
 * (`platform` `win32`) the local bin is `vite-plugin-insitu.cmd`, and anything but an `.exe` runs
 * through the shell (Node spawns `.cmd` files only so), quoted when it holds spaces.
 * `transport` is not the client's business here: the caller spawns exactly this (a client that
 * adds its own `--stdio` would pass it twice, which the command line rejects).
 *
 * `projectFileOf(folder, { platform, exists })` is the `insitu.toml` of the folder or of the
 * nearest folder above it (the project the server finds from that folder), or null.
 * `shouldStart(resolved, projectFile)`: whether the folder is an insitu project as far as the
 * client can tell: it has an `insitu.toml` (here or above), or the command is the project's own
 * `node_modules/.bin/vite-plugin-insitu` (a project that uses the plugin without an
 * `insitu.toml`: the server takes the default configuration, as the command line does), or the
 * command was set. Otherwise the server, which takes any folder as a project with the default
 * configuration, would index every Markdown file of an unrelated workspace and write its cache
 * (`.insitu/`) there.
 */
import fs from 'node:fs'
import path from 'node:path'

/** The settings the extension reads (package.json `contributes.configuration`). */
export const SETTINGS = {
  command: 'insitu.server.command',
  extraArgs: 'insitu.server.extraArgs',
} as const

/** The section whose change restarts the server. */
export const SETTINGS_SECTION = 'insitu.server'

/** The package's executable (its `bin`). */
export const BIN = 'vite-plugin-insitu'

/** The arguments that select the language server on stdin/stdout. */
export const LSP_ARGS = ['lsp', '--stdio'] as const

export interface ServerSettings {
  /** `insitu.server.command`: blank or missing for the default. */
  command?: unknown
  /** `insitu.server.extraArgs`. */
  extraArgs?: unknown
}

export interface ResolveOptions {
  /** The workspace folder (absolute), if any. */
  folder?: string | undefined
  /** @default process.platform */
  platform?: NodeJS.Platform
  /** Whether a file exists. @default a `fs.statSync` check */
  exists?: (file: string) => boolean
}

export interface ServerCommand {
  command: string
  args: string[]
  /** The folder the server starts in (the workspace folder), if any. */
  cwd: string | undefined
  /** Spawn through the shell (Windows scripts). */
  shell: boolean
  /** Where the command came from: the setting, the project's `node_modules/.bin`, or `npx`. */
  source: 'setting' | 'local' | 'npx'
}

export function resolveServerCommand(settings: ServerSettings, options: ResolveOptions = {}): ServerCommand {
  const platform = options.platform ?? process.platform
  const exists = options.exists ?? isFile
  const paths = platform === 'win32' ? path.win32 : path.posix
  const folder = options.folder
  const extraArgs = Array.isArray(settings.extraArgs) ? settings.extraArgs.filter((arg): arg is string => typeof arg === 'string') : []
  const args = [...LSP_ARGS, ...extraArgs]
  const windows = platform === 'win32'
  const make = (command: string, prefix: string[], source: ServerCommand['source']): ServerCommand => {
    const shell = windows && !/\.exe$/i.test(command)
    return { command: shell ? quoted(command) : command, args: [...prefix, ...args], cwd: folder, shell, source }
  }

  const configured = typeof settings.command === 'string' ? settings.command.trim() : ''
  if (configured !== '') {
    let command = folder === undefined ? configured : configured.split('${workspaceFolder}').join(folder)
    const hasSlash = command.includes('/') || (windows && command.includes('\\'))
    if (folder !== undefined && hasSlash) command = paths.resolve(folder, command)
    return make(command, [], 'setting')
  }

  if (folder !== undefined) {
    const name = windows ? `${BIN}.cmd` : BIN
    for (let dir = paths.resolve(folder); ; dir = paths.dirname(dir)) {
      const candidate = paths.join(dir, 'node_modules', '.bin', name)
      if (exists(candidate)) return make(candidate, [], 'local')
      if (paths.dirname(dir) === dir) break
    }
  }
  return make('npx', [BIN], 'npx')
}

/** The project's configuration file. */
export const PROJECT_FILE = 'insitu.toml'

export function projectFileOf(folder: string, options: Pick<ResolveOptions, 'platform' | 'exists'> = {}): string | null {
  const paths = (options.platform ?? process.platform) === 'win32' ? path.win32 : path.posix
  const exists = options.exists ?? isFile
  for (let dir = paths.resolve(folder); ; dir = paths.dirname(dir)) {
    const candidate = paths.join(dir, PROJECT_FILE)
    if (exists(candidate)) return candidate
    if (paths.dirname(dir) === dir) return null
  }
}

export function shouldStart(resolved: Pick<ServerCommand, 'source'>, projectFile: string | null): boolean {
  return projectFile !== null || resolved.source !== 'npx'
}

/** The whole command line, as the docs and the output channel show it. */
export function commandLine({ command, args }: Pick<ServerCommand, 'command' | 'args'>): string {
  return [command, ...args].map((part) => (part === '' || /[\s"']/.test(part) ? JSON.stringify(part) : part)).join(' ')
}

function quoted(command: string): string {
  return /\s/.test(command) && !command.startsWith('"') ? `"${command}"` : command
}

function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}
