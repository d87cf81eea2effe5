/**
 * The VS Code client (editors/vscode/, issue #37's editor part), built as a user builds it:
 * its own lockfile installed once (scripts/install-site.mjs: `npm ci` when the lockfile's hash
 * changed), then `npm run build` (esbuild) in it. VS Code itself cannot run here, so:
 * - the bundle, dist/extension.js (package.json `main`), `require`s nothing but `vscode` and
 *   Node's builtins (vscode-languageclient is inside it), and the sources typecheck with the
 *   repository's TypeScript against @types/vscode;
 * - package.json: `engines.vscode` is one vscode-languageclient supports and @types/vscode is
 *   its lowest version (the API the code compiles against is one every allowed VS Code has);
 *   the activation events; the contributed command and settings are exactly the command
 *   extension.ts registers and the settings it reads (from the sources, and as the running
 *   bundle does below);
 * - server-command.ts (pure): settings and the workspace folder → the process to spawn (the
 *   project's `node_modules/.bin`, found up the folders; `npx`; the setting, relative paths,
 *   `${workspaceFolder}`; extra arguments; Windows' `.cmd` through the shell) and whether the
 *   folder is an insitu project (an insitu.toml here or above, the project's bin, a set command);
 * - the built bundle run by a stand-in extension host (vscode-host.cjs: a fake `vscode` module,
 *   the real vscode-languageclient) against the built server (dist/, built by the global setup,
 *   test/clients/setup.ts) on a real project: it spawns `<bin> lsp --stdio` once (a second
 *   `--stdio` would make the server exit 2), the server's diagnostics reach VS Code's collection,
 *   `insitu.restartServer` and a change of `insitu.server.extraArgs` start a new server with the
 *   settings as they are then, deactivating ends every server (by itself, exit code 0); a configured
 *   relative command and `--no-cache` reach the server (no cache folder is written); a folder
 *   that is not an insitu project starts no server until its insitu.toml is created (then
 *   `npx vite-plugin-insitu`); a command that does not exist is reported, and activation still
 *   succeeds.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import semver from 'semver'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installSite } from '../../scripts/install-site.mjs'
import { BIN, commandLine, LSP_ARGS, projectFileOf, resolveServerCommand, SETTINGS, SETTINGS_SECTION, shouldStart } from '../../editors/vscode/src/server-command.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const REPO = path.resolve(import.meta.dirname, '../..')
const CLIENT = path.join(REPO, 'editors/vscode')
const HOST = path.join(import.meta.dirname, 'vscode-host.cjs')
/** The built command line (test/clients/setup.ts builds it before the run). */
const SERVER_BIN = path.join(REPO, 'dist/cli/bin.js')
const TSC = path.join(REPO, 'node_modules/typescript/bin/tsc')

interface Manifest {
  name: string
  private: boolean
  main: string
  engines: { vscode: string }
  activationEvents: string[]
  contributes: { commands: { command: string }[]; configuration: { properties: Record<string, { type: string; default: unknown }> } }
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
  scripts: Record<string, string>
}

const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T
const manifest = () => readJson<Manifest>(path.join(CLIENT, 'package.json'))

function failure(error: unknown): string {
  const failed = error as { stdout?: string; stderr?: string; message?: string }
  return [failed.stderr, failed.stdout].filter(Boolean).join('\n').split('\n').slice(0, 30).join('\n') || String(failed.message)
}

beforeAll(() => {
  try {
    installSite(CLIENT, { link: false })
  } catch (error) {
    const output = failure(error)
    const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH/.test(output)
    throw new Error(`npm ci failed in editors/vscode${offline ? ' (the npm registry is unreachable: needed once, to install its lockfile)' : ''}:\n${output}`)
  }
  try {
    execFileSync('npm', ['run', 'build'], { cwd: CLIENT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  } catch (error) {
    throw new Error(`npm run build failed in editors/vscode:\n${failure(error)}`)
  }
}, 300_000)

afterAll(() => removeTempDirs())

describe('the built extension', () => {
  it("is package.json's main, one CommonJS file that requires only vscode and Node builtins", () => {
    const bundle = path.resolve(CLIENT, manifest().main)
    expect(bundle).toBe(path.join(CLIENT, 'dist/extension.js'))
    const code = fs.readFileSync(bundle, 'utf8')
    const calls = [...code.matchAll(/\brequire\s*\(/g)].length
    const literal = [...code.matchAll(/\brequire\s*\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!)
    // Every require is of a literal name (no dynamic require that could reach node_modules).
    expect(literal.length).toBe(calls)
    const builtins = new Set(builtinModules)
    const others = [...new Set(literal)].filter((name) => name !== 'vscode' && !builtins.has(name.replace(/^node:/, '')))
    expect(others).toEqual([])
    expect(literal).toContain('vscode')
    expect(literal).toContain('child_process')
    // vscode-languageclient is inside (the client that spawns the server), not required.
    expect(code).toContain('Launching server using command')
    expect(code).toMatch(/^"use strict";/)
    expect(code).toContain('module.exports = __toCommonJS(')
  })

  it('typechecks against @types/vscode with the repository TypeScript', () => {
    const run = spawnSync(process.execPath, [TSC, '-p', path.join(CLIENT, 'tsconfig.json')], { encoding: 'utf8' })
    expect(`${run.stdout}${run.stderr}`).toBe('')
    expect(run.status).toBe(0)
  })
})

describe('package.json', () => {
  it('engines.vscode is one vscode-languageclient supports; @types/vscode is its lowest version; esbuild is the repository one', () => {
    const pkg = manifest()
    expect(pkg.name).toBe('insitu-vscode')
    expect(pkg.private).toBe(true)
    const lowest = semver.minVersion(pkg.engines.vscode)!.version
    const languageClient = readJson<{ version: string; engines: { vscode: string } }>(path.join(CLIENT, 'node_modules/vscode-languageclient/package.json'))
    expect(semver.satisfies(languageClient.version, pkg.dependencies['vscode-languageclient']!)).toBe(true)
    expect(semver.satisfies(lowest, languageClient.engines.vscode)).toBe(true)
    expect(pkg.devDependencies['@types/vscode']).toBe(lowest)
    expect(readJson<{ version: string }>(path.join(CLIENT, 'node_modules/@types/vscode/package.json')).version).toBe(lowest)
    expect(pkg.devDependencies.esbuild).toBe(readJson<Manifest>(path.join(REPO, 'package.json')).devDependencies.esbuild)
    expect(pkg.activationEvents.sort()).toEqual(['onLanguage:markdown', 'workspaceContains:**/insitu.toml'])
    expect(pkg.scripts.build).toBeDefined()
  })

  it('contributes exactly the command extension.ts registers and the settings it reads', () => {
    const pkg = manifest()
    const commands = pkg.contributes.commands.map((c) => c.command)
    const settings = Object.keys(pkg.contributes.configuration.properties)
    expect(commands).toEqual(['insitu.restartServer'])
    expect(settings.sort()).toEqual(Object.values(SETTINGS).sort())
    for (const key of settings) expect(key.startsWith(`${SETTINGS_SECTION}.`)).toBe(true)
    expect(pkg.contributes.configuration.properties[SETTINGS.command]).toMatchObject({ type: 'string', default: '' })
    expect(pkg.contributes.configuration.properties[SETTINGS.extraArgs]).toMatchObject({ type: 'array', default: [] })
    // Every `insitu.*` name in the sources (the file insitu.toml aside) is a contributed
    // command, a setting or their section.
    const sources = ['extension.ts', 'server-command.ts']
      .map((file) => fs.readFileSync(path.join(CLIENT, 'src', file), 'utf8'))
      .join('\n')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '')
    const named = new Set([...sources.matchAll(/['"`](insitu\.(?!toml['"`])[\w.]+)['"`]/g)].map((m) => m[1]!))
    expect([...named].sort()).toEqual([...commands, ...settings, SETTINGS_SECTION].sort())
    const extension = fs.readFileSync(path.join(CLIENT, 'src/extension.ts'), 'utf8')
    expect(extension).toContain("RESTART_COMMAND = 'insitu.restartServer'")
    expect(extension).toContain('registerCommand(RESTART_COMMAND')
    expect(extension).toContain('configuration.get<unknown>(SETTINGS.command)')
    expect(extension).toContain('configuration.get<unknown>(SETTINGS.extraArgs)')
  })
})

describe('resolveServerCommand', () => {
  /** A project folder with `node_modules/.bin/vite-plugin-insitu` (an executable file) under `root`. */
  function withLocalBin(root: string): string {
    const bin = path.join(root, 'node_modules/.bin', BIN)
    fs.mkdirSync(path.dirname(bin), { recursive: true })
    fs.writeFileSync(bin, '#!/bin/sh\n', { mode: 0o755 })
    return bin
  }

  it("runs the workspace's node_modules/.bin/vite-plugin-insitu, found in the folder or above it", () => {
    const root = tempDir()
    const bin = withLocalBin(root)
    expect(resolveServerCommand({}, { folder: root, platform: 'linux' })).toEqual({ command: bin, args: ['lsp', '--stdio'], cwd: root, shell: false, source: 'local' })
    const nested = path.join(root, 'packages/docs')
    fs.mkdirSync(nested, { recursive: true })
    expect(resolveServerCommand({}, { folder: nested, platform: 'linux' })).toEqual({ command: bin, args: ['lsp', '--stdio'], cwd: nested, shell: false, source: 'local' })
    // The nearest one wins.
    const nearer = withLocalBin(nested)
    expect(resolveServerCommand({}, { folder: nested, platform: 'linux' }).command).toBe(nearer)
  })

  it('falls back to npx vite-plugin-insitu (no local bin, a dangling link, or no folder)', () => {
    const root = tempDir()
    const npx = { command: 'npx', args: [BIN, ...LSP_ARGS], cwd: root, shell: false, source: 'npx' }
    expect(resolveServerCommand({}, { folder: root, platform: 'linux' })).toEqual(npx)
    fs.mkdirSync(path.join(root, 'node_modules/.bin'), { recursive: true })
    fs.symlinkSync(path.join(root, 'gone.js'), path.join(root, 'node_modules/.bin', BIN))
    expect(resolveServerCommand({}, { folder: root, platform: 'linux' })).toEqual(npx)
    expect(resolveServerCommand({}, { platform: 'linux' })).toEqual({ ...npx, cwd: undefined })
    // A blank or wrongly typed setting is the default.
    expect(resolveServerCommand({ command: '  ', extraArgs: 'x' }, { folder: root, platform: 'linux' })).toEqual(npx)
    expect(resolveServerCommand({ command: 42, extraArgs: null }, { folder: root, platform: 'linux' })).toEqual(npx)
  })

  it('appends insitu.server.extraArgs after lsp --stdio (strings only)', () => {
    const root = tempDir()
    const bin = withLocalBin(root)
    expect(resolveServerCommand({ extraArgs: ['--poll', '500', 7, '--no-cache'] }, { folder: root, platform: 'linux' })).toMatchObject({
      command: bin,
      args: ['lsp', '--stdio', '--poll', '500', '--no-cache'],
    })
    expect(resolveServerCommand({ extraArgs: ['--no-cache'] }, { platform: 'linux' }).args).toEqual([BIN, 'lsp', '--stdio', '--no-cache'])
  })

  it('runs insitu.server.command as set: a name from PATH, a path against the folder, ${workspaceFolder}', () => {
    const root = tempDir()
    withLocalBin(root) // the setting wins over the local bin
    const resolve = (command: string) => resolveServerCommand({ command }, { folder: root, platform: 'linux' })
    expect(resolve('vite-plugin-insitu')).toEqual({ command: 'vite-plugin-insitu', args: ['lsp', '--stdio'], cwd: root, shell: false, source: 'setting' })
    expect(resolve('./tools/insitu').command).toBe(path.join(root, 'tools/insitu'))
    expect(resolve('node_modules/.bin/other').command).toBe(path.join(root, 'node_modules/.bin/other'))
    expect(resolve(' /opt/insitu/bin/vite-plugin-insitu ').command).toBe('/opt/insitu/bin/vite-plugin-insitu')
    expect(resolve('${workspaceFolder}/../shared/bin/vite-plugin-insitu').command).toBe(path.join(path.dirname(root), 'shared/bin/vite-plugin-insitu'))
    // Without a folder a relative path is left to the system.
    expect(resolveServerCommand({ command: './tools/insitu' }, { platform: 'linux' }).command).toBe('./tools/insitu')
  })

  it('on Windows: the .cmd shim, and anything but an .exe through the shell, quoted', () => {
    const folder = 'C:\\work\\site'
    const present = new Set(['C:\\work\\node_modules\\.bin\\vite-plugin-insitu.cmd'])
    const exists = (file: string) => present.has(file)
    expect(resolveServerCommand({}, { folder, platform: 'win32', exists })).toEqual({
      command: 'C:\\work\\node_modules\\.bin\\vite-plugin-insitu.cmd',
      args: ['lsp', '--stdio'],
      cwd: folder,
      shell: true,
      source: 'local',
    })
    expect(resolveServerCommand({}, { folder, platform: 'win32', exists: () => false })).toMatchObject({ command: 'npx', args: [BIN, 'lsp', '--stdio'], shell: true })
    expect(resolveServerCommand({ command: 'C:\\Program Files\\insitu\\insitu.exe' }, { folder, platform: 'win32', exists })).toMatchObject({
      command: 'C:\\Program Files\\insitu\\insitu.exe',
      shell: false,
    })
    expect(resolveServerCommand({ command: 'tools\\insitu server.cmd' }, { folder, platform: 'win32', exists })).toMatchObject({
      command: '"C:\\work\\site\\tools\\insitu server.cmd"',
      shell: true,
    })
  })

  it("starts only for an insitu project: an insitu.toml here or above, the project's own bin, or a set command", () => {
    const root = tempDir()
    const nested = path.join(root, 'docs/guide')
    fs.mkdirSync(nested, { recursive: true })
    expect(projectFileOf(nested)).toBeNull()
    const npx = resolveServerCommand({}, { folder: nested, platform: 'linux' })
    expect(shouldStart(npx, projectFileOf(nested))).toBe(false)
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
    expect(projectFileOf(nested)).toBe(path.join(root, 'insitu.toml'))
    expect(shouldStart(npx, projectFileOf(nested))).toBe(true)
    // A project configured by the plugin's options only: its bin says it is one.
    const other = tempDir()
    withLocalBin(other)
    expect(shouldStart(resolveServerCommand({}, { folder: other, platform: 'linux' }), projectFileOf(other))).toBe(true)
    expect(shouldStart(resolveServerCommand({ command: 'vite-plugin-insitu' }, { folder: tempDir(), platform: 'linux' }), null)).toBe(true)
  })

  it('commandLine shows the command as a shell would take it', () => {
    expect(commandLine({ command: 'npx', args: [BIN, 'lsp', '--stdio'] })).toBe('npx vite-plugin-insitu lsp --stdio')
    expect(commandLine({ command: '/a b/insitu', args: ['lsp', '--stdio', ''] })).toBe('"/a b/insitu" lsp --stdio ""')
  })
})

interface HostRun {
  commands: string[]
  configurationKeys: string[]
  spawns: { command: string; args: string[]; cwd: string; shell: boolean; exitCode: number | string | null | undefined }[]
  phases: { name: string; timedOut: boolean; diagnostics: Record<string, { line: number; message: string; severity: number; code?: string }[]> }[]
  output: string[]
  shown: string[]
  error?: string
}

/** A project: insitu.toml, a document with a misspelt region kind, and the file it includes. */
function project(): { root: string; doc: string } {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), '[sources]\ninclude = ["**/*.md"]\n')
  fs.writeFileSync(path.join(root, 'snippet.txt'), 'one\n')
  const doc = path.join(root, 'README.md')
  fs.writeFileSync(doc, '# Hi\n\n<!-- insitu:begin includ\npath = "snippet.txt"\n-->\n<!-- insitu:end -->\n')
  return { root, doc }
}

/** An executable that runs the built command line, as npm's `node_modules/.bin` link does. */
function serverScript(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(SERVER_BIN)} "$@"\n`, { mode: 0o755 })
}

interface Scenario {
  folder: string
  settings?: Record<string, unknown>
  documents: { path: string; languageId: string }[]
  waitFor: string[]
  restartWith?: Record<string, unknown>
  createProjectFile?: string
  noServer?: string[]
}

function runHost(scenario: Scenario, env: NodeJS.ProcessEnv = process.env): HostRun {
  const file = path.join(tempDir(), 'scenario.json')
  fs.writeFileSync(file, JSON.stringify(scenario))
  const run = spawnSync(process.execPath, [HOST, path.join(CLIENT, 'dist/extension.js'), file], { encoding: 'utf8', timeout: 60_000, env })
  const last = run.stdout.trim().split('\n').at(-1) ?? ''
  if (!last.startsWith('{')) throw new Error(`vscode-host.cjs exited with ${run.status}:\n${run.stdout}\n${run.stderr}`)
  return JSON.parse(last) as HostRun
}

/** What the extension logged and showed, and what it spawned: a failure's explanation. */
function hostLog(run: HostRun): string {
  return JSON.stringify({ output: run.output, shown: run.shown, spawns: run.spawns }, null, 2)
}

const DID_YOU_MEAN = 'unknown transform: includ; did you mean include?'

/**
 * A server the client stopped (`shutdown`, `exit`, then its stdin closed at once) exited by
 * itself with 0, whether it read `exit` or saw its stdin close first (src/lsp/stdio.ts).
 */
const STOPPED = 0

/** Each run waits up to 15 s per phase for diagnostics (they take well under one here). */
const HOST_TIMEOUT = 60_000

describe('the built extension in a stand-in extension host, against the built server', () => {
  it('starts <project bin> lsp --stdio, shows its diagnostics, restarts on the command and on a settings change, stops it on deactivate', () => {
    const { root, doc } = project()
    const bin = path.join(root, 'node_modules/.bin', BIN)
    serverScript(bin)
    const run = runHost({
      folder: root,
      documents: [{ path: doc, languageId: 'markdown' }],
      waitFor: [DID_YOU_MEAN],
      restartWith: { [SETTINGS.extraArgs]: ['--poll', '200'] },
    })
    expect(run.error).toBeUndefined()
    expect(run.commands).toEqual(manifest().contributes.commands.map((c) => c.command))
    expect([...new Set(run.configurationKeys)].sort()).toEqual(Object.keys(manifest().contributes.configuration.properties).sort())
    expect(run.spawns, hostLog(run)).toEqual([
      { command: bin, args: ['lsp', '--stdio'], cwd: root, shell: false, exitCode: STOPPED },
      { command: bin, args: ['lsp', '--stdio'], cwd: root, shell: false, exitCode: STOPPED },
      { command: bin, args: ['lsp', '--stdio', '--poll', '200'], cwd: root, shell: false, exitCode: STOPPED },
    ])
    expect(run.phases.map((phase) => [phase.name, phase.timedOut]), hostLog(run)).toEqual([
      ['activate', false],
      ['restart command', false],
      ['settings change', false],
    ])
    // Converted by the client: vscode.DiagnosticSeverity.Error is 0 (LSP's is 1).
    for (const phase of run.phases) {
      expect(phase.diagnostics).toEqual({ [pathToFileURL(doc).href]: [{ line: 2, message: expect.stringContaining(DID_YOU_MEAN), severity: 0, code: 'insitu/job' }] })
    }
    expect(run.shown).toEqual([])
    expect(run.output).toContain(`starting ${bin} lsp --stdio --poll 200 in ${root}`)
    expect(fs.existsSync(path.join(root, '.insitu/vite-plugin-insitu'))).toBe(true)
  }, HOST_TIMEOUT)

  it('runs a configured relative command with extra arguments (--no-cache: no cache written)', () => {
    const { root, doc } = project()
    const script = path.join(root, 'tools/insitu-server')
    serverScript(script)
    const run = runHost({
      folder: root,
      settings: { [SETTINGS.command]: './tools/insitu-server', [SETTINGS.extraArgs]: ['--no-cache'] },
      documents: [{ path: doc, languageId: 'markdown' }],
      waitFor: [DID_YOU_MEAN],
    })
    expect(run.error).toBeUndefined()
    expect(run.spawns.map(({ command, args, exitCode }) => ({ command, args, exitCode }))).toEqual([
      { command: script, args: ['lsp', '--stdio', '--no-cache'], exitCode: STOPPED },
      { command: script, args: ['lsp', '--stdio', '--no-cache'], exitCode: STOPPED },
    ])
    expect(run.phases.every((phase) => !phase.timedOut), hostLog(run)).toBe(true)
    expect(fs.existsSync(path.join(root, '.insitu/vite-plugin-insitu'))).toBe(false)
    expect(run.shown).toEqual([])
  }, HOST_TIMEOUT)

  it('starts nothing in a folder that is not an insitu project, then npx vite-plugin-insitu once insitu.toml is created', () => {
    const { root, doc } = project()
    fs.rmSync(path.join(root, 'insitu.toml'))
    // `npx` on PATH stands for npm's: it runs the package's bin (the built command line).
    const bin = path.join(tempDir(), 'bin')
    fs.mkdirSync(bin)
    fs.writeFileSync(path.join(bin, 'npx'), `#!/bin/sh\n[ "$1" = ${BIN} ] || exit 9\nshift\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(SERVER_BIN)} "$@"\n`, { mode: 0o755 })
    const run = runHost(
      {
        folder: root,
        documents: [{ path: doc, languageId: 'markdown' }],
        waitFor: [DID_YOU_MEAN],
        createProjectFile: '[sources]\ninclude = ["**/*.md"]\n',
        noServer: ['activate'],
      },
      { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
    )
    expect(run.error).toBeUndefined()
    expect(run.output[0]).toBe(
      `no insitu.toml in ${root} or a folder above it, and no node_modules/.bin/vite-plugin-insitu: the language server is not started (open the project's folder, or set ${SETTINGS.command})`,
    )
    expect(run.phases.map((phase) => [phase.name, phase.timedOut, Object.keys(phase.diagnostics)]), hostLog(run)).toEqual([
      ['activate', false, []],
      ['project created', false, [pathToFileURL(doc).href]],
      ['restart command', false, [pathToFileURL(doc).href]],
    ])
    expect(run.spawns).toEqual([
      { command: 'npx', args: [BIN, 'lsp', '--stdio'], cwd: root, shell: false, exitCode: STOPPED },
      { command: 'npx', args: [BIN, 'lsp', '--stdio'], cwd: root, shell: false, exitCode: STOPPED },
    ])
    expect(run.shown).toEqual([])
  }, HOST_TIMEOUT)

  it('reports a command that does not exist, and activation still succeeds', () => {
    const { root, doc } = project()
    const run = runHost({ folder: root, settings: { [SETTINGS.command]: './missing/insitu' }, documents: [{ path: doc, languageId: 'markdown' }], waitFor: [] })
    expect(run.error).toBeUndefined()
    expect(run.commands).toEqual(['insitu.restartServer'])
    expect(run.spawns.map((spawn) => [spawn.command, spawn.exitCode])).toEqual([
      [path.join(root, 'missing/insitu'), 'ENOENT'],
      [path.join(root, 'missing/insitu'), 'ENOENT'],
    ])
    expect(run.shown.length).toBeGreaterThan(0)
    for (const message of run.shown) expect(message).toContain(`spawn ${path.join(root, 'missing/insitu')} ENOENT`)
    expect(run.output).toContain(`starting ${path.join(root, 'missing/insitu')} lsp --stdio in ${root}`)
    expect(run.output.some((line) => line.includes('did not start') && line.includes(SETTINGS.command))).toBe(true)
  }, HOST_TIMEOUT)
})
