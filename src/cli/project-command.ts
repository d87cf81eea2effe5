/**
 * `check` and `sync`: the engine without Vite over every managed document.
 *
 * Contract: `runProjectCommand(command, { root, cache, format }, io)` resolves to the exit code.
 * - The project: `--root` exactly (a folder, else a usage error), else the nearest `insitu.toml`
 *   above `io.cwd`, else `io.cwd` (`resolveProjectRoot`).
 * - It starts the engine (extension stderr is printed on stderr, each line prefixed
 *   `[<extension name>]`; extension start failures and warnings too), syncs or checks every
 *   document and runs the validators (sync/sync-project.ts), prints the report in `format`
 *   (text: `formatSyncReport`; json/github: report-formats.ts) on stdout, and always closes
 *   the engine (no extension process outlives the command).
 * - Exit codes: 0 clean; 1 stale documents (check), failed jobs, writes or validators; 2 a config
 *   error (a bad `insitu.toml`, manifest or `insitu.lock`, a locked extension missing) or a
 *   better-sqlite3 whose native part cannot load (its message says what to run:
 *   documents/sqlite-database.ts), which json and github formats also report on stdout.
 */
import path from 'node:path'
import { InsituEngine, readProjectConfig } from '../engine/engine.js'
import { ConfigError } from '../host/config.js'
import { formatSyncReport, syncProject } from '../sync/sync-project.js'
import { type CliIo, CLI_NAME, EXIT_CLEAN, EXIT_STALE_OR_FAILED, EXIT_USAGE, messageOf, startErrorExitCode } from './cli-io.js'
import { githubFailure, githubReport, jsonFailure, jsonReport, type ReportFormat } from './report-formats.js'
import { isFolder } from '../documents/file-kinds.js'

export interface ProjectCommandOptions {
  /** `--root` as given, or null. */
  root: string | null
  cache: boolean
  format: ReportFormat
}

/** The project folder for `--root` (exactly that folder) or the current folder (search upwards). */
export function resolveProjectRoot(rootOption: string | null, io: CliIo): { root: string; searchParents: boolean } | { problem: string } {
  if (rootOption === null) return { root: io.cwd, searchParents: true }
  const root = path.resolve(io.cwd, rootOption)
  if (!isFolder(root)) return { problem: `--root ${rootOption}: not a folder` }
  return { root, searchParents: false }
}

export async function runProjectCommand(command: 'check' | 'sync', options: ProjectCommandOptions, io: CliIo): Promise<number> {
  const resolved = resolveProjectRoot(options.root, io)
  if ('problem' in resolved) {
    io.stderr.write(`${CLI_NAME}: ${resolved.problem}\n`)
    return EXIT_USAGE
  }
  const workspace = process.env.GITHUB_WORKSPACE || io.cwd
  let engine: InsituEngine
  let root = resolved.root
  try {
    const logger = {
      info: (message: string) => io.stderr.write(`${message}\n`),
      warn: (message: string) => io.stderr.write(`${message}\n`),
      error: (message: string) => io.stderr.write(`${message}\n`),
    }
    const config = readProjectConfig(resolved.root, resolved.searchParents)
    root = config.root
    engine = await InsituEngine.create({ root: resolved.root, config, logger, cache: options.cache, gitMetadata: false }) // hears no file events
  } catch (error) {
    const exitCode = startErrorExitCode(error)
    io.stderr.write(`${error instanceof ConfigError ? error.message : `${CLI_NAME}: ${messageOf(error)}`}\n`)
    if (options.format === 'json') io.stdout.write(jsonFailure({ command, root, exitCode }, error))
    if (options.format === 'github') io.stdout.write(githubFailure({ command, root, workspace }, error))
    return exitCode
  }
  try {
    const report = await syncProject(engine, { write: command === 'sync', validate: true, explain: command === 'check' })
    const exitCode = report.stale > 0 || report.failed > 0 || report.validationErrors > 0 ? EXIT_STALE_OR_FAILED : EXIT_CLEAN
    const context = { command, root: engine.config.root, workspace, exitCode }
    if (options.format === 'json') io.stdout.write(jsonReport(report, context))
    else if (options.format === 'github') io.stdout.write(githubReport(report, context))
    else io.stdout.write(formatSyncReport(report, command))
    return exitCode
  } catch (error) {
    io.stderr.write(`${CLI_NAME}: ${messageOf(error)}\n`)
    return EXIT_STALE_OR_FAILED
  } finally {
    await engine.close()
  }
}

