/**
 * A blocked native build, as a user meets it: the packed plugin (`npm pack` of the `dist/` the
 * global setup builds, test/clients/setup.ts) installed with `npm install --ignore-scripts` into
 * a fresh project, once for the file, so better-sqlite3 has no compiled native part (as after
 * pnpm 10, bun or npm 12 skipped its unapproved build). The installed command line, `vite build`
 * and the Vite dev server each print one clear message (what is missing, the commands of the
 * package manager in use, the folder to run them in) once, without a stack trace, and the
 * command line exits 2. Caches left by an earlier run (or by older plugin versions) are neither
 * reported on nor touched. A
 * native part built for another Node.js (a real addon compiled from test/fixtures/native/) says
 * so. Needs the npm registry (or npm's cache) for the install.
 */
import { execFile, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { buildWrongAbiAddon, HAS_C_COMPILER } from '../unit/wrong-abi-addon.js'
import type { ChildRun } from './plugin-project.js'

const REPO = path.resolve(import.meta.dirname, '../..')
const VITE_VERSION = (JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules/vite/package.json'), 'utf8')) as { version: string }).version
const PNPM_AGENT = 'pnpm/10.12.1 npm/? node/v22.12.0 linux x64'
const SUBJECT = 'better-sqlite3 (the SQLite driver vite-plugin-insitu uses)'
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g

/** The project: the plugin and Vite installed without build scripts, and a tiny insitu project. */
let project: string
/** npm's version (`npm approve-scripts` exists from 11.16). */
let npmVersion: [number, number]
/** Caches an earlier run left, with their bytes: never reported on, never changed. */
const CACHES: Record<string, string> = {
  '.insitu/vite-plugin-insitu/index.db': 'a snapshot of an earlier run',
  '.insitu/vite-plugin-insitu/jobs.db': 'a job store of an earlier run',
}
/** Where older plugin versions kept their caches (and the Python index): looked at first, from the second test on. */
const OLD_CACHES: Record<string, string> = {
  '.insitu/index.db': 'an old plugin cache, or the Python index',
  '.insitu/jobs.db': 'an old job store',
}

/** The environment without the npm_* variables of the test run (npm reads npm_config_* as its config), plus `env`. */
function environment(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
  return { ...clean, FORCE_COLOR: '0', NO_COLOR: '1', ...env }
}

function run(command: string, args: readonly string[], env: Record<string, string> = {}): Promise<ChildRun> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: project, env: environment(env) }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr: stderr.replace(ANSI, '') }),
    )
  })
}

const installedCli = (args: readonly string[], env: Record<string, string> = {}) =>
  run(process.execPath, [path.join(project, 'node_modules/vite-plugin-insitu/dist/cli/bin.js'), ...args], env)
const vite = (args: readonly string[]) => run(process.execPath, [path.join(project, 'node_modules/vite/bin/vite.js'), ...args])

/** The message's lines for a blocked build, given the command lines. */
function missingMessage(commands: readonly string[]): string {
  return [
    `${SUBJECT} is installed without its native part: there is no better_sqlite3.node in ${project}/node_modules/better-sqlite3/build/Release.`,
    'Its install script, which builds it, did not run: pnpm 10, bun and npm 12 run no build script of a dependency until it is approved, and no package manager runs one with --ignore-scripts.',
    `To build it, run in ${project}:`,
    ...commands,
  ].join('\n')
}

beforeAll(() => {
  const work = tempDir()
  npmVersion = execFileSync('npm', ['--version'], { encoding: 'utf8', env: environment() }).trim().split('.').map(Number) as [number, number]
  // dist/ is built: pack it as it is (the prepack script would build it again).
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: REPO, encoding: 'utf8', env: environment() }),
  ) as { filename: string }[]
  project = path.join(work, 'site')
  fs.mkdirSync(project)
  fs.writeFileSync(path.join(project, 'package.json'), `${JSON.stringify({ name: 'site', private: true, type: 'module' }, null, 2)}\n`)
  execFileSync(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', path.join(work, packed!.filename), `vite@${VITE_VERSION}`],
    { cwd: project, stdio: ['ignore', 'pipe', 'pipe'], env: environment() },
  )
  const files: Record<string, string> = {
    'insitu.toml': 'version = 1\n',
    'snippets/x.txt': 'hello\n',
    'docs/a.md': '# A\n\n<!-- insitu:begin include\npath = "../snippets/x.txt"\nraw = true\n-->\n<!-- insitu:end -->\n',
    'main.js': "import a from './docs/a.md?raw'\nconsole.log(a)\n",
    'index.html': '<script type="module" src="/main.js"></script>\n',
    'vite.config.js': "import insitu from 'vite-plugin-insitu'\nexport default { plugins: [insitu()] }\n",
    ...CACHES,
  }
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true })
    fs.writeFileSync(path.join(project, file), text)
  }
}, 180_000)

afterAll(removeTempDirs)

function expectCachesUntouched(caches: Record<string, string> = CACHES): void {
  for (const [file, text] of Object.entries(caches)) expect(fs.readFileSync(path.join(project, file), 'utf8')).toBe(text)
}

describe('better-sqlite3 installed without its native part', () => {
  it('npx vite-plugin-insitu check exits 2 with the npm commands to run, once, and touches no cache', async () => {
    const result = await run('npx', ['vite-plugin-insitu', 'check'])
    const approve = npmVersion[0] > 11 || (npmVersion[0] === 11 && npmVersion[1] >= 16)
    const commands = [...(approve ? ['  npm approve-scripts better-sqlite3  (allows its install script)'] : []), '  npm rebuild better-sqlite3']
    expect(result).toEqual({ code: 2, stdout: '', stderr: `vite-plugin-insitu: ${missingMessage(commands)}\n` })
    expectCachesUntouched()
  })

  it('names the commands of pnpm when pnpm runs it, and of the lockfile’s manager when none says', async () => {
    for (const [file, text] of Object.entries(OLD_CACHES)) fs.writeFileSync(path.join(project, file), text)
    const pnpm = await run('npx', ['vite-plugin-insitu', 'check'], { npm_config_user_agent: PNPM_AGENT })
    expect(pnpm).toEqual({
      code: 2,
      stdout: '',
      stderr: `vite-plugin-insitu: ${missingMessage([
        '  pnpm approve-builds          (select better-sqlite3, and pnpm builds it)',
        '  pnpm rebuild better-sqlite3  (if nothing awaits approval: installed with --ignore-scripts)',
      ])}\n`,
    })
    // No user agent (the bin run by node itself): package-lock.json says npm, of no known version.
    const message = missingMessage(['  npm approve-scripts better-sqlite3  (npm 11.16 and later: allows its install script)', '  npm rebuild better-sqlite3'])
    expect(await installedCli(['check'])).toEqual({ code: 2, stdout: '', stderr: `vite-plugin-insitu: ${message}\n` })
    const json = await installedCli(['sync', '--format', 'json'])
    expect(json.code).toBe(2)
    expect((JSON.parse(json.stdout) as { ok: boolean; error: { message: string } }).error.message).toBe(message)
    expectCachesUntouched({ ...CACHES, ...OLD_CACHES })
  })

  it('vite build fails with the message alone', async () => {
    const result = await vite(['build'])
    expect(result.code).toBe(1)
    const message = missingMessage(['  npm approve-scripts better-sqlite3  (npm 11.16 and later: allows its install script)', '  npm rebuild better-sqlite3'])
    expect(result.stderr.slice(result.stderr.indexOf('error during build:'))).toBe(`error during build:\n[vite-plugin-insitu]\n${message}\n`)
    expectCachesUntouched()
  })

  it('the dev server prints it once and keeps serving, the managed documents as they are on disk', async () => {
    const port = await freePort()
    const server = spawn(process.execPath, [path.join(project, 'node_modules/vite/bin/vite.js'), '--port', String(port), '--strictPort'], {
      cwd: project,
      env: environment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    server.stdout.on('data', (chunk: Buffer) => (output += String(chunk).replace(ANSI, '')))
    server.stderr.on('data', (chunk: Buffer) => (output += String(chunk).replace(ANSI, '')))
    const exited = new Promise((resolve) => server.once('exit', resolve))
    try {
      const firstLine = missingMessage([]).split('\n')[0]!
      await expect.poll(() => output.includes('ready in') && output.includes(firstLine), { timeout: 20_000 }).toBe(true)
      const base = `http://localhost:${port}`
      for (let i = 0; i < 2; i++) {
        expect((await fetch(`${base}/main.js`)).status).toBe(200)
        const doc = await fetch(`${base}/docs/a.md?import&raw`)
        // Served as it is (issue #34: a page never goes blank); the overlay says why.
        expect(doc.status).toBe(200)
        expect(await doc.text()).toContain('"# A\\n\\n<!-- insitu:begin include')
      }
      const message = missingMessage(['  npm approve-scripts better-sqlite3  (npm 11.16 and later: allows its install script)', '  npm rebuild better-sqlite3'])
      expect(output).toContain(`[vite] vite-plugin-insitu: ${message}\n`)
      expect(output.split(firstLine).length - 1).toBe(1)
      expect(output).not.toMatch(/^\s+at |Could not locate the bindings file/m)
    } finally {
      server.kill('SIGTERM')
      await exited
    }
    expectCachesUntouched()
  })

  it.skipIf(!HAS_C_COMPILER)('a native part built for another Node.js says which, and to rebuild it', async () => {
    const addon = path.join(project, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')
    fs.mkdirSync(path.dirname(addon), { recursive: true })
    try {
      expect(buildWrongAbiAddon(addon)).toBe(true)
      expect(await installedCli(['check'])).toEqual({
        code: 2,
        stdout: '',
        stderr: [
          `vite-plugin-insitu: ${SUBJECT} has a native part built for another Node.js version: ${addon} was compiled for NODE_MODULE_VERSION 1, and Node.js ${process.version} needs ${process.versions.modules}.`,
          `To rebuild it for this Node.js, run in ${project}:`,
          '  npm rebuild better-sqlite3',
          '',
        ].join('\n'),
      })
    } finally {
      fs.rmSync(path.join(project, 'node_modules/better-sqlite3/build'), { recursive: true, force: true })
    }
    expectCachesUntouched()
  })
})

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
