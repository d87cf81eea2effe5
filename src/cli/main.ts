/**
 * The command line: `vite-plugin-insitu sync|check [--root <dir>]`, the engine without Vite.
 *
 * Contract: `runCli(argv, io)` runs one command and resolves to its exit code; it never calls
 * `process.exit` and always closes the engine it started (extension processes end with it).
 * - `check` renders every managed document and writes nothing; it prints one
 *   `<path>:<line> region <id> is stale` line per stale job with a short diff, then a summary.
 * - `sync` writes every document whose regenerated text differs (see sync/write-back.ts for
 *   the guarantees) and prints `wrote <path>` per document, then a summary.
 * - Both then run the project's validators (as `vite build` does): their errors and warnings
 *   are listed, and an error fails the command.
 * - `--root <dir>`: exactly that folder is the project (its `insitu.toml`, if any, else the
 *   defaults), like the plugin's `root` option. Default: the nearest `insitu.toml` walking up
 *   from `io.cwd`, else `io.cwd`.
 * - `--no-cache`: keep everything in memory and write nothing to the state folder (the
 *   plugin's `cache: false`); by default the document index persists in `paths.state`.
 * - `--help`/`-h` prints the usage (both commands and the options), `--version`/`-v` the version.
 * - Exit codes: 0 clean (check: nothing stale; sync: everything written or current); 1 stale
 *   documents (check) or failed jobs, writes or validators (both); 2 usage errors (stderr: the problem and
 *   a hint to `--help`) and config errors (a bad `insitu.toml` or extension manifest: its
 *   message, which starts `file:line:col:` when the position is known).
 * Reports go to stdout; usage, config and extension-log messages to stderr.
 */
import fs from 'node:fs'
import path from 'node:path'
import { InsituEngine, readProjectConfig } from '../engine/engine.js'
import { pluginVersion } from '../engine/dependency-fingerprints.js'
import { ConfigError } from '../host/config.js'
import { formatSyncReport, syncProject } from '../sync/sync-project.js'

export interface CliOutput {
  write(text: string): unknown
}

export interface CliIo {
  stdout: CliOutput
  stderr: CliOutput
  /** The folder the command runs in (where the project is looked for). */
  cwd: string
}

export const CLI_NAME = 'vite-plugin-insitu'

export const EXIT_CLEAN = 0
export const EXIT_STALE_OR_FAILED = 1
export const EXIT_USAGE = 2

export const USAGE = `Usage: ${CLI_NAME} <command> [options]

Commands:
  check   Regenerate every managed document in memory and fail when any region or
          front-matter materialization on disk is stale (writes nothing)
  sync    Write every managed document whose regenerated text differs back to disk

Options:
  --root <dir>   Use exactly this folder as the project (default: the folder of the
                 nearest insitu.toml above the current folder, else the current folder)
  --no-cache     Do not read or write the persistent cache (.insitu/ by default)
  -h, --help     Show this help
  -v, --version  Show the version

Both commands then run the project's validators; a validator error fails them.

Exit codes: 0 clean, 1 stale documents (check), failed jobs or validator errors,
2 usage or config error
`

type Command = 'check' | 'sync'

type Parsed =
  | { kind: 'help' }
  | { kind: 'version' }
  | { kind: 'run'; command: Command; root: string | null; cache: boolean }
  | { kind: 'usage'; problem: string }

export function parseArguments(argv: readonly string[]): Parsed {
  let command: Command | null = null
  let root: string | null = null
  let cache = true
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!
    if (argument === '-h' || argument === '--help') return { kind: 'help' }
    if (argument === '-v' || argument === '--version') return { kind: 'version' }
    if (argument === '--no-cache') {
      cache = false
    } else if (argument === '--root' || argument.startsWith('--root=')) {
      const value = argument === '--root' ? argv[++i] : argument.slice('--root='.length)
      if (value === undefined || value === '') return { kind: 'usage', problem: '--root needs a folder' }
      if (root !== null) return { kind: 'usage', problem: '--root given twice' }
      root = value
    } else if (argument.startsWith('-')) {
      return { kind: 'usage', problem: `unknown option ${argument}` }
    } else if (command !== null) {
      return { kind: 'usage', problem: `unexpected argument ${argument}` }
    } else if (argument === 'check' || argument === 'sync') {
      command = argument
    } else {
      return { kind: 'usage', problem: `unknown command ${argument}` }
    }
  }
  if (command === null) return { kind: 'usage', problem: 'no command given' }
  return { kind: 'run', command, root, cache }
}

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArguments(argv)
  switch (parsed.kind) {
    case 'help':
      io.stdout.write(USAGE)
      return EXIT_CLEAN
    case 'version':
      io.stdout.write(`${pluginVersion()}\n`)
      return EXIT_CLEAN
    case 'usage':
      io.stderr.write(`${CLI_NAME}: ${parsed.problem}\nRun '${CLI_NAME} --help' for usage.\n`)
      return EXIT_USAGE
  }
  let root: string
  let searchParents: boolean
  if (parsed.root !== null) {
    root = path.resolve(io.cwd, parsed.root)
    if (!isFolder(root)) {
      io.stderr.write(`${CLI_NAME}: --root ${parsed.root}: not a folder\n`)
      return EXIT_USAGE
    }
    searchParents = false
  } else {
    root = io.cwd
    searchParents = true
  }
  let engine: InsituEngine
  try {
    const logger = {
      info: () => {},
      warn: (message: string) => io.stderr.write(`${message}\n`),
      error: (message: string) => io.stderr.write(`${message}\n`),
    }
    engine = await InsituEngine.create({ root, config: readProjectConfig(root, searchParents), logger, cache: parsed.cache })
  } catch (error) {
    io.stderr.write(`${error instanceof ConfigError ? error.message : `${CLI_NAME}: ${messageOf(error)}`}\n`)
    return error instanceof ConfigError ? EXIT_USAGE : EXIT_STALE_OR_FAILED
  }
  try {
    const report = await syncProject(engine, { write: parsed.command === 'sync', validate: true })
    io.stdout.write(formatSyncReport(report, parsed.command))
    return report.stale > 0 || report.failed > 0 || report.validationErrors > 0 ? EXIT_STALE_OR_FAILED : EXIT_CLEAN
  } catch (error) {
    io.stderr.write(`${CLI_NAME}: ${messageOf(error)}\n`)
    return EXIT_STALE_OR_FAILED
  } finally {
    await engine.close()
  }
}

function isFolder(folder: string): boolean {
  try {
    return fs.statSync(folder).isDirectory()
  } catch {
    return false
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
