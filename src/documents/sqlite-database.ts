/**
 * Opening an SQLite database: the one place the plugin calls better-sqlite3's `new Database`.
 *
 * Contract:
 * - `openDatabase(filename?, options?)` is `new Database(filename, options)` (same arguments,
 *   same database, same errors), except when better-sqlite3's native part cannot be loaded
 *   (better-sqlite3 loads it at its first open): then it throws a `SqliteBindingError`
 *   instead. Every database the plugin opens (the document index and its snapshot, the job
 *   store, the old-cache migration) is opened here, and so is any a child process opens.
 * - The native part fails to load when its build did not run (pnpm 10 and bun run no build
 *   script of a dependency that is not approved, npm 12 will not either, and `--ignore-scripts`
 *   never does: better-sqlite3 says `Could not locate the bindings file. Tried: …`), when it was
 *   built for another Node.js (`… was compiled against a different Node.js version using
 *   NODE_MODULE_VERSION …`), or when Node cannot load it at all (another platform, a broken
 *   file: Node's `ERR_DLOPEN_FAILED`).
 * - `SqliteBindingError`: `message` says, in plain words, what is missing or wrong and, one per
 *   line, the commands that build it for the package manager in use (package-manager.ts:
 *   `npm_config_user_agent`, else the lockfile nearest above better-sqlite3's folder, else
 *   npm) and the folder to run them in; `cause` is better-sqlite3's or Node's own error;
 *   `problem` is `missing`, `incompatible` or `unloadable`. Its stack is empty: the message is
 *   for the user, and every printer shows a non-empty stack.
 *   `sqliteBindingMessage(failure, manager, packageFolder)` builds that message (for tests).
 * - Callers that turn a failed open into a warning (an unreadable cache is rebuilt) rethrow a
 *   `SqliteBindingError`: nothing works without the native part.
 * Each failing call looks again (the native part may have been built meanwhile); a successful
 * open costs one `try` more than `new Database`.
 *
 * Commands printed (each checked against the manager's own help or documentation): npm
 * `approve-scripts` (npm 11.16 and later) and `rebuild`; pnpm `approve-builds` (pnpm 10.1 and
 * later: builds what is selected) and `rebuild`; Yarn 2+ `rebuild` and package.json
 * `dependenciesMeta.<name>.built` (overrides `enableScripts: false`); bun `pm trust` (adds it
 * to `trustedDependencies` and runs its scripts). Yarn 1 has no rebuild command: `npm rebuild`
 * rebuilds its node_modules, as it does for a rebuild under bun.
 */
import { createRequire } from 'node:module'
import path from 'node:path'
import Database from 'better-sqlite3'
import { detectPackageManager, type PackageManager } from './package-manager.js'

const PACKAGE = 'better-sqlite3'

export type SqliteBindingProblem = 'missing' | 'incompatible' | 'unloadable'

/** Why the native part did not load: parsed from better-sqlite3's or Node's error. */
export type SqliteBindingFailure =
  | { problem: 'missing' }
  | { problem: 'incompatible'; file: string | null; builtFor: number; needs: number }
  | { problem: 'unloadable'; reason: string }

export class SqliteBindingError extends Error {
  override readonly name = 'SqliteBindingError'
  readonly problem: SqliteBindingProblem

  constructor(message: string, problem: SqliteBindingProblem, cause: unknown) {
    super(message, { cause })
    this.problem = problem
    this.stack = ''
  }
}

export function openDatabase(filename?: string | Buffer, options?: Database.Options): Database.Database {
  try {
    return new Database(filename, options)
  } catch (error) {
    const failure = bindingFailure(error)
    if (failure === null) throw error
    const packageFolder = installedPackageFolder()
    const manager = detectPackageManager(process.env.npm_config_user_agent, packageFolder ?? process.cwd())
    throw new SqliteBindingError(sqliteBindingMessage(failure, manager, packageFolder), failure.problem, error)
  }
}

/** The failure to load the native part that `error` reports, or null for any other error. */
function bindingFailure(error: unknown): SqliteBindingFailure | null {
  if (!(error instanceof Error)) return null
  if (error.message.startsWith('Could not locate the bindings file')) return { problem: 'missing' }
  if ((error as NodeJS.ErrnoException).code !== 'ERR_DLOPEN_FAILED') return null
  const versions = /NODE_MODULE_VERSION (\d+)\.\s+This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(error.message)
  if (versions) {
    const file = /^The module '(.+?)'/.exec(error.message)?.[1] ?? null
    return { problem: 'incompatible', file, builtFor: Number(versions[1]), needs: Number(versions[2]) }
  }
  return { problem: 'unloadable', reason: error.message.split('\n')[0]!.trim() }
}

/** better-sqlite3's folder as installed (symbolic links resolved), or null. */
function installedPackageFolder(): string | null {
  try {
    return path.dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`))
  } catch {
    return null
  }
}

export function sqliteBindingMessage(failure: SqliteBindingFailure, manager: PackageManager, packageFolder: string | null): string {
  const subject = `${PACKAGE} (the SQLite driver vite-plugin-insitu uses)`
  let what: string[]
  let todo: string
  if (failure.problem === 'missing') {
    const where = packageFolder === null ? '' : `: there is no better_sqlite3.node in ${path.join(packageFolder, 'build', 'Release')}`
    what = [
      `${subject} is installed without its native part${where}.`,
      'Its install script, which builds it, did not run: pnpm 10, bun and npm 12 run no build script of a dependency until it is approved, and no package manager runs one with --ignore-scripts.',
    ]
    todo = 'To build it'
  } else if (failure.problem === 'incompatible') {
    const file = failure.file ?? 'it'
    what = [`${subject} has a native part built for another Node.js version: ${file} was compiled for NODE_MODULE_VERSION ${failure.builtFor}, and Node.js ${process.version} needs ${failure.needs}.`]
    todo = 'To rebuild it for this Node.js'
  } else {
    what = [`${subject} has a native part this Node.js cannot load: ${failure.reason}`]
    todo = 'To rebuild it'
  }
  const folder = manager.folder ?? installRoot(packageFolder)
  const { steps, remark } = commands(failure.problem === 'missing', manager)
  const width = Math.max(...steps.map((step) => step.command.length))
  const lines = steps.map((step) => (step.note ? `  ${step.command.padEnd(width)}  (${step.note})` : `  ${step.command}`))
  return [...what, `${todo}, run${folder === null ? '' : ` in ${folder}`}:`, ...lines, ...(remark ? [remark] : [])].join('\n')
}

interface Step {
  command: string
  note?: string
}

/** The commands that build (`build`: it was never built) or rebuild better-sqlite3 with `manager`, and a remark after them. */
function commands(build: boolean, manager: PackageManager): { steps: Step[]; remark?: string } {
  const rebuild = { command: `${manager.name} rebuild ${PACKAGE}` }
  const atLeast = (major: number, minor: number) => manager.version === null || compare(manager.version, [major, minor]) >= 0
  switch (manager.name) {
    case 'npm': {
      if (!build || !atLeast(11, 16)) return { steps: [rebuild] }
      const note = manager.version === null ? 'npm 11.16 and later: allows its install script' : 'allows its install script'
      return { steps: [{ command: `npm approve-scripts ${PACKAGE}`, note }, rebuild] }
    }
    case 'pnpm': {
      if (!build || !atLeast(10, 1)) return { steps: [rebuild] }
      const note = `${manager.version === null ? 'pnpm 10.1 and later: ' : ''}select ${PACKAGE}, and pnpm builds it`
      return { steps: [{ command: 'pnpm approve-builds', note }, { ...rebuild, note: 'if nothing awaits approval: installed with --ignore-scripts' }] }
    }
    case 'yarn': {
      if (manager.yarnClassic) return { steps: [{ command: `npm rebuild ${PACKAGE}`, note: 'Yarn 1 has no rebuild command' }] }
      if (!build) return { steps: [rebuild] }
      return {
        steps: [rebuild],
        remark: `If .yarnrc.yml sets enableScripts: false, first add "dependenciesMeta": { "${PACKAGE}": { "built": true } } to package.json.`,
      }
    }
    case 'bun':
      if (!build) return { steps: [{ command: `npm rebuild ${PACKAGE}` }] }
      return { steps: [{ command: `bun pm trust ${PACKAGE}`, note: 'adds it to trustedDependencies and runs its install script' }] }
  }
}

function compare(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] - b[0] || a[1] - b[1]
}

/** The folder holding the outermost `node_modules` above `packageFolder`, or null. */
function installRoot(packageFolder: string | null): string | null {
  if (packageFolder === null) return null
  const parts = packageFolder.split(path.sep)
  const index = parts.indexOf('node_modules')
  return index > 0 ? parts.slice(0, index).join(path.sep) || path.sep : null
}
