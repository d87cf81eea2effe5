/**
 * The command line: `vite-plugin-insitu <command>`, the engine and the extension toolchain
 * without Vite.
 *
 * Contract: `runCli(argv, io)` runs one command and resolves to its exit code; it never calls
 * `process.exit` and always closes the engine it started (extension processes end with it).
 * - `check` / `sync` (project-command.ts): regenerate every managed document; `check` writes
 *   nothing and fails on stale regions, `sync` writes. Both run the validators. `--root <dir>`,
 *   `--no-cache`, `--format text|json|github` (report-formats.ts).
 * - `extension add SOURCE [--version SPEC]`, `extension list` (extension-commands.ts).
 * - `lsp --stdio [--no-cache] [--poll <ms>]` (src/lsp/stdio.ts): the language server, until the
 *   client's `exit` (0 after `shutdown`, 1 without) or stdin closing (1).
 * - `init [DIR] [--force]` (init-command.ts).
 * - `watch [--root <dir>] [--no-cache] [--poll <ms>]` (watch-command.ts): sync, then keep the
 *   documents current until stopped (exit 0 when stopped; a config error at the start is 2).
 * - `--help`/`-h` prints `USAGE`, `--version`/`-v` the version (outside `extension add`,
 *   where `--version` is the range).
 * - Exit codes: 0 clean; 1 stale documents (check), failed jobs, writes, validators or installs;
 *   2 usage errors (stderr: the problem, with "did you mean" for a misspelt command, option or
 *   value (arguments.ts), and a hint to `--help`) and config errors (a bad
 *   `insitu.toml`, extension manifest or `insitu.lock`: its message, which starts
 *   `file:line:col:` when the position is known), and a better-sqlite3 whose native part
 *   cannot load (not built, or built for another Node.js: what to run, documents/sqlite-database.ts).
 * Reports go to stdout; usage, config and extension-log messages to stderr.
 * One more command is one more entry in `COMMANDS` (its spec, usage lines and `run`).
 */
import { pluginVersion } from '../engine/dependency-fingerprints.js'
import { type CommandSpec, type ParsedCommand, parseArguments } from './arguments.js'
import { type CliIo, CLI_NAME, EXIT_CLEAN, EXIT_USAGE } from './cli-io.js'
import { runExtensionAdd, runExtensionList } from './extension-commands.js'
import { runInit } from './init-command.js'
import { runProjectCommand } from './project-command.js'
import { REPORT_FORMATS, type ReportFormat } from './report-formats.js'
import { runWatch } from './watch-command.js'

export { type CliIo, type CliOutput, CLI_NAME, EXIT_CLEAN, EXIT_STALE_OR_FAILED, EXIT_USAGE } from './cli-io.js'

export interface CliCommand extends CommandSpec {
  /** The command's line in `--help`: its synopsis and what it does. */
  usage: { synopsis: string; summary: string[] }
  run(parsed: ParsedCommand<CliCommand>, io: CliIo): Promise<number> | number
}

const ROOT = { '--root': { value: 'dir' } } as const
const PROJECT_OPTIONS = {
  ...ROOT,
  '--no-cache': { value: null },
  '--format': { value: 'format', choices: REPORT_FORMATS },
} as const

function projectOptions(parsed: ParsedCommand<CliCommand>) {
  return {
    root: parsed.options.root ?? null,
    cache: parsed.options['no-cache'] === undefined,
    format: (parsed.options.format ?? 'text') as ReportFormat,
  }
}

export const COMMANDS: readonly CliCommand[] = [
  {
    name: 'check',
    positionals: [],
    options: PROJECT_OPTIONS,
    usage: {
      synopsis: 'check',
      summary: [
        'Regenerate every managed document in memory and fail when any region',
        'or front-matter materialization on disk is stale (writes nothing)',
      ],
    },
    run: (parsed, io) => runProjectCommand('check', projectOptions(parsed), io),
  },
  {
    name: 'sync',
    positionals: [],
    options: PROJECT_OPTIONS,
    usage: { synopsis: 'sync', summary: ['Write every managed document whose regenerated text differs', 'back to disk'] },
    run: (parsed, io) => runProjectCommand('sync', projectOptions(parsed), io),
  },
  {
    name: 'watch',
    positionals: [],
    options: { ...ROOT, '--no-cache': { value: null }, '--poll': { value: 'ms' } },
    usage: {
      synopsis: 'watch',
      summary: [
        'Sync once, then keep every managed document current on disk as its inputs',
        '(files, globs, the document index, git) change, until stopped (Ctrl-C)',
      ],
    },
    run: (parsed, io) => {
      const poll = parsed.options.poll
      if (poll !== undefined && !/^[1-9]\d{0,5}$/.test(poll)) return usageError(`--poll must be a number of milliseconds (got ${poll})`, io)
      return runWatch({ root: parsed.options.root ?? null, cache: parsed.options['no-cache'] === undefined, pollMs: poll === undefined ? null : Number(poll) }, io)
    },
  },
  {
    name: 'lsp',
    positionals: [],
    options: { '--stdio': { value: null }, '--no-cache': { value: null }, '--poll': { value: 'ms' } },
    usage: {
      synopsis: 'lsp --stdio',
      summary: [
        'Run the insitu language server on stdin/stdout for an editor: stale, broken',
        'and hand-edited regions as diagnostics, regenerate as code actions, hover,',
        'definitions, links and completion in region headers (docs: Editors)',
      ],
    },
    run: async (parsed, io) => {
      if (parsed.options.stdio === undefined) return usageError('lsp needs --stdio (the only transport)', io)
      const poll = parsed.options.poll
      if (poll !== undefined && !/^[1-9]\d{0,5}$/.test(poll)) return usageError(`--poll must be a number of milliseconds (got ${poll})`, io)
      // Loaded only for this command: the other commands never load the LSP libraries.
      const { runLanguageServer } = await import('../lsp/stdio.js')
      return runLanguageServer({ cache: parsed.options['no-cache'] === undefined, pollMs: poll === undefined ? undefined : Number(poll) })
    },
  },
  {
    name: 'init',
    positionals: [{ name: 'DIR', required: false }],
    options: { '--force': { value: null } },
    usage: {
      synopsis: 'init [DIR] [--force]',
      summary: ['Create a starter insitu.toml, SQL model and template in DIR (default: the', 'current folder); --force overwrites an existing insitu.toml'],
    },
    run: (parsed, io) => runInit({ dir: parsed.positionals.DIR ?? null, force: parsed.options.force !== undefined }, io),
  },
  {
    name: 'extension add',
    positionals: [{ name: 'SOURCE', required: true }],
    options: { ...ROOT, '--version': { value: 'spec' } },
    usage: {
      synopsis: 'extension add SOURCE [--version SPEC]',
      summary: [
        'Install an extension and its dependencies into .insitu/extensions/, recording',
        'them in insitu.lock and insitu.toml. SOURCE: a path, github:owner/repo[@rev],',
        'git:<url>[#rev] or a git URL. SPEC: a version range (PEP 440 such as >=1.2,<2,',
        'or npm such as ^1.2.0)',
      ],
    },
    run: (parsed, io) => runExtensionAdd(parsed.positionals.SOURCE!, { root: parsed.options.root ?? null, version: parsed.options.version ?? null }, io),
  },
  {
    name: 'extension list',
    positionals: [],
    options: ROOT,
    usage: { synopsis: 'extension list', summary: ['List installed extensions (name, version, source) in dependency order'] },
    run: (parsed, io) => runExtensionList({ root: parsed.options.root ?? null }, io),
  },
]

function usageText(commands: readonly CliCommand[]): string {
  // A long synopsis gets its own line; the summary is indented below it.
  const width = 10
  const lines = [`Usage: ${CLI_NAME} <command> [options]`, '', 'Commands:']
  for (const command of commands) {
    const summary = [...command.usage.summary]
    if (command.usage.synopsis.length < width) lines.push(`  ${command.usage.synopsis.padEnd(width)}${summary.shift()}`)
    else lines.push(`  ${command.usage.synopsis}`)
    for (const line of summary) lines.push(`  ${' '.repeat(width)}${line}`)
  }
  lines.push(
    '',
    'Options:',
    '  --root <dir>       Use exactly this folder as the project (default: the folder of the',
    '                     nearest insitu.toml above the current folder, else the current folder)',
    '  --no-cache         check, sync, watch, lsp: do not read or write the persistent cache',
    '                     (.insitu/vite-plugin-insitu/)',
    '  --format <format>  check, sync: text (default), json (one JSON object) or github',
    '                     (GitHub Actions annotations)',
    '  --poll <ms>        watch, lsp: poll the file system every <ms> milliseconds instead of',
    '                     using its events (network drives, some containers and VMs)',
    '  -h, --help         Show this help',
    '  -v, --version      Show the version',
    '',
    'check and sync then run the project\'s validators; a validator error fails them.',
    'watch prints "watching <root>" once it is current, "wrote <path>" per written file,',
    'and "stopped" after Ctrl-C (SIGINT, SIGTERM, or its stdin pipe closing).',
    '',
    'Exit codes: 0 clean (watch: stopped), 1 stale documents (check), failed jobs, validator',
    'errors or a failed install, 2 usage or config error, or better-sqlite3 not built',
    '',
  )
  return lines.join('\n')
}

export const USAGE = usageText(COMMANDS)

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseArguments(argv, COMMANDS)
  switch (parsed.kind) {
    case 'help':
      io.stdout.write(USAGE)
      return EXIT_CLEAN
    case 'version':
      io.stdout.write(`${pluginVersion()}\n`)
      return EXIT_CLEAN
    case 'usage':
      return usageError(parsed.problem, io)
    case 'run':
      return parsed.command.run(parsed, io)
  }
}

function usageError(problem: string, io: CliIo): number {
  io.stderr.write(`${CLI_NAME}: ${problem}\nRun '${CLI_NAME} --help' for usage.\n`)
  return EXIT_USAGE
}
