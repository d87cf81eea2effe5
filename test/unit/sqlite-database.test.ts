/**
 * Opening SQLite databases (src/documents/sqlite-database.ts) with the real better-sqlite3: a
 * native part that Node cannot load (a file that is no addon; a real addon built for another
 * Node.js, compiled from test/fixtures/native/) becomes one clear `SqliteBindingError` naming the
 * commands of the package manager in use; every other error passes unchanged. The case of no
 * native part at all (a blocked build) needs an install without it: test/integration/native-build.test.ts.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PackageManager } from '../../src/documents/package-manager.js'
import { openDatabase, SqliteBindingError, sqliteBindingMessage } from '../../src/documents/sqlite-database.js'
import { removeTempDirs, tempDir } from './temp-folders.js'
import { errorOf } from './thrown-error.js'
import { buildWrongAbiAddon, HAS_C_COMPILER } from './wrong-abi-addon.js'

const PACKAGE_FOLDER = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'))
/** Where this repository's dependencies are installed (node_modules may be a link): where a rebuild runs. */
const INSTALL_ROOT = path.dirname(fs.realpathSync(path.resolve(import.meta.dirname, '../../node_modules')))
const PNPM_AGENT = 'pnpm/10.12.1 npm/? node/v22.12.0 linux x64'
const SUBJECT = 'better-sqlite3 (the SQLite driver vite-plugin-insitu uses)'

let savedAgent: string | undefined
beforeEach(() => {
  savedAgent = process.env.npm_config_user_agent
})
afterEach(() => {
  if (savedAgent === undefined) delete process.env.npm_config_user_agent
  else process.env.npm_config_user_agent = savedAgent
  removeTempDirs()
})

describe('openDatabase', () => {
  it('opens what new Database opens, and passes its other errors on unchanged', () => {
    const db = openDatabase(':memory:')
    expect(db).toBeInstanceOf(Database)
    expect(db.prepare('select 1 + 1 as two').get()).toEqual({ two: 2 })
    const image = db.serialize()
    db.close()
    const copy = openDatabase(image)
    expect(copy.memory).toBe(true)
    copy.close()
    const folder = tempDir()
    const file = openDatabase(path.join(folder, 'x.db'), { timeout: 100 })
    expect(file.name).toBe(path.join(folder, 'x.db'))
    file.close()

    const noFolder = errorOf(TypeError, () => openDatabase(path.join(folder, 'nope', 'x.db')))
    expect(noFolder).toBeInstanceOf(TypeError)
    expect(noFolder.message).toBe('Cannot open database because the directory does not exist')
    const missing = errorOf(Database.SqliteError, () => openDatabase(path.join(folder, 'missing.db'), { fileMustExist: true }))
    expect(missing).toBeInstanceOf(Database.SqliteError)
    expect(missing).not.toBeInstanceOf(SqliteBindingError)
    // A native binding path that does not exist is a plain require error, not a failed build.
    expect(errorOf(Error, () => openDatabase(':memory:', { nativeBinding: path.join(folder, 'none.node') }))).not.toBeInstanceOf(SqliteBindingError)
  })

  it('a native part Node cannot load is a SqliteBindingError: what is wrong and what to run, without a stack', () => {
    process.env.npm_config_user_agent = PNPM_AGENT
    const addon = path.join(tempDir(), 'better_sqlite3.node')
    fs.writeFileSync(addon, 'not an addon')
    const error = errorOf(SqliteBindingError, () => openDatabase(':memory:', { nativeBinding: addon }))
    expect(error).toBeInstanceOf(SqliteBindingError)
    expect(error.problem).toBe('unloadable')
    expect(error.stack).toBe('')
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ERR_DLOPEN_FAILED')
    const reason = (error.cause as Error).message.split('\n')[0]
    expect(reason).toContain(addon)
    expect(error.message).toBe(
      [`${SUBJECT} has a native part this Node.js cannot load: ${reason}`, `To rebuild it, run in ${INSTALL_ROOT}:`, '  pnpm rebuild better-sqlite3'].join('\n'),
    )
  })

  it.skipIf(!HAS_C_COMPILER)('a native part built for another Node.js says which versions, and to rebuild it', () => {
    delete process.env.npm_config_user_agent
    const addon = path.join(tempDir(), 'better_sqlite3.node')
    expect(buildWrongAbiAddon(addon)).toBe(true)
    const error = errorOf(SqliteBindingError, () => openDatabase(':memory:', { nativeBinding: addon }))
    expect(error).toBeInstanceOf(SqliteBindingError)
    expect(error.problem).toBe('incompatible')
    expect((error.cause as Error).message).toContain('was compiled against a different Node.js version')
    // No user agent: the lockfile beside this repository's node_modules says npm.
    expect(error.message).toBe(
      [
        `${SUBJECT} has a native part built for another Node.js version: ${addon} was compiled for NODE_MODULE_VERSION 1, and Node.js ${process.version} needs ${process.versions.modules}.`,
        `To rebuild it for this Node.js, run in ${INSTALL_ROOT}:`,
        '  npm rebuild better-sqlite3',
      ].join('\n'),
    )
  })
})

describe('sqliteBindingMessage', () => {
  const folder = '/work/site'
  const packageFolder = '/work/site/node_modules/better-sqlite3'
  const manager = (name: PackageManager['name'], version: [number, number] | null, yarnClassic = false): PackageManager => ({ name, version, yarnClassic, folder })
  const missing = (m: PackageManager, where = packageFolder) => sqliteBindingMessage({ problem: 'missing' }, m, where).split('\n')
  const incompatible = (m: PackageManager) =>
    sqliteBindingMessage({ problem: 'incompatible', file: `${packageFolder}/build/Release/better_sqlite3.node`, builtFor: 115, needs: 127 }, m, packageFolder).split('\n')

  it('says what is missing and why, then the commands of each package manager, each one that version has', () => {
    expect(missing(manager('npm', null))).toEqual([
      `${SUBJECT} is installed without its native part: there is no better_sqlite3.node in ${packageFolder}/build/Release.`,
      'Its install script, which builds it, did not run: pnpm 10, bun and npm 12 run no build script of a dependency until it is approved, and no package manager runs one with --ignore-scripts.',
      'To build it, run in /work/site:',
      '  npm approve-scripts better-sqlite3  (npm 11.16 and later: allows its install script)',
      '  npm rebuild better-sqlite3',
    ])
    const commands = (m: PackageManager) => missing(m).slice(3)
    expect(commands(manager('npm', [11, 19]))).toEqual(['  npm approve-scripts better-sqlite3  (allows its install script)', '  npm rebuild better-sqlite3'])
    expect(commands(manager('npm', [12, 0]))).toEqual(['  npm approve-scripts better-sqlite3  (allows its install script)', '  npm rebuild better-sqlite3'])
    // npm before 11.16 has no approve-scripts.
    expect(commands(manager('npm', [11, 15]))).toEqual(['  npm rebuild better-sqlite3'])
    expect(commands(manager('npm', [10, 9]))).toEqual(['  npm rebuild better-sqlite3'])
    expect(commands(manager('pnpm', null))).toEqual([
      '  pnpm approve-builds          (pnpm 10.1 and later: select better-sqlite3, and pnpm builds it)',
      '  pnpm rebuild better-sqlite3  (if nothing awaits approval: installed with --ignore-scripts)',
    ])
    expect(commands(manager('pnpm', [10, 12]))).toEqual([
      '  pnpm approve-builds          (select better-sqlite3, and pnpm builds it)',
      '  pnpm rebuild better-sqlite3  (if nothing awaits approval: installed with --ignore-scripts)',
    ])
    // pnpm 9 has no approve-builds (and runs every build script).
    expect(commands(manager('pnpm', [9, 15]))).toEqual(['  pnpm rebuild better-sqlite3'])
    expect(commands(manager('yarn', [4, 9]))).toEqual([
      '  yarn rebuild better-sqlite3',
      'If .yarnrc.yml sets enableScripts: false, first add "dependenciesMeta": { "better-sqlite3": { "built": true } } to package.json.',
    ])
    expect(commands(manager('yarn', [1, 22], true))).toEqual(['  npm rebuild better-sqlite3  (Yarn 1 has no rebuild command)'])
    expect(commands(manager('bun', [1, 2]))).toEqual(['  bun pm trust better-sqlite3  (adds it to trustedDependencies and runs its install script)'])
  })

  it('a native part built for another Node.js: the versions, and the rebuild command alone', () => {
    expect(incompatible(manager('npm', [11, 19]))).toEqual([
      `${SUBJECT} has a native part built for another Node.js version: ${packageFolder}/build/Release/better_sqlite3.node was compiled for NODE_MODULE_VERSION 115, and Node.js ${process.version} needs 127.`,
      'To rebuild it for this Node.js, run in /work/site:',
      '  npm rebuild better-sqlite3',
    ])
    expect(incompatible(manager('pnpm', [10, 12])).slice(2)).toEqual(['  pnpm rebuild better-sqlite3'])
    expect(incompatible(manager('yarn', [4, 9])).slice(2)).toEqual(['  yarn rebuild better-sqlite3'])
    expect(incompatible(manager('yarn', null, true)).slice(2)).toEqual(['  npm rebuild better-sqlite3  (Yarn 1 has no rebuild command)'])
    expect(incompatible(manager('bun', [1, 2])).slice(2)).toEqual(['  npm rebuild better-sqlite3'])
  })

  it('without a lockfile it runs in the folder holding the outermost node_modules, else says no folder', () => {
    const none: PackageManager = { name: 'npm', version: null, yarnClassic: false, folder: null }
    const pnpmLayout = '/home/me/site/node_modules/.pnpm/better-sqlite3@12.9.0/node_modules/better-sqlite3'
    expect(missing(none, pnpmLayout)[2]).toBe('To build it, run in /home/me/site:')
    expect(missing(none, '/opt/tools/better-sqlite3')[2]).toBe('To build it, run:')
    const unknown = missing(none, null as unknown as string)
    expect(unknown[0]).toBe(`${SUBJECT} is installed without its native part.`)
    expect(unknown[2]).toBe('To build it, run:')
  })
})
