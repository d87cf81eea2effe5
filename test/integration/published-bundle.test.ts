/**
 * The published JavaScript (scripts/bundle.mjs, run by `npm run build`; the client tests'
 * global setup builds it before this file runs): what Node loads when a user's config imports
 * the plugin, the SDK's `z`, the license notice of the inlined packages, and maps that name
 * only files the package ships (or whose text they embed).
 */
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { writeExtension } from './extension-projects.js'
import { copyProject, removeProjects } from './plugin-project.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const REPO = path.resolve(import.meta.dirname, '../..')
const DIST = path.join(REPO, 'dist')
const VITE = path.join(REPO, 'node_modules', 'vite', 'bin', 'vite.js')

/** Every module file a fresh Node process loads running `code` (an ES module), ES and CommonJS alike. */
function filesLoadedBy(code: string): { files: string[]; stdout: string } {
  const hook = [
    'const seen = new Set()',
    'export async function load(url, context, next) {',
    "  if (!seen.has(url)) { seen.add(url); process.stderr.write('LOADED ' + url + '\\n') }",
    '  return next(url, context)',
    '}',
  ].join('\n')
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)})`
  // CommonJS files required by CommonJS files bypass the hook: the require cache lists them.
  const child = spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      '--input-type=module',
      '-e',
      `${code}\nconst { createRequire } = await import('node:module')\nfor (const file of Object.keys(createRequire(import.meta.url).cache)) process.stderr.write('LOADED ' + file + '\\n')`,
    ],
    { cwd: REPO, encoding: 'utf8' },
  )
  if (child.status !== 0) throw new Error(`node exited with ${child.status}: ${child.stderr}`)
  const files = child.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length))
    .filter((file) => !file.startsWith('node:') && !file.startsWith('data:'))
    .map((file) => (file.startsWith('file:') ? new URL(file).pathname : file))
  return { files: [...new Set(files)], stdout: child.stdout }
}

/** The package a loaded file belongs to (`zod`, `@scope/name`), or undefined outside node_modules. */
function packageOf(file: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)
  return match?.[1]
}

afterEach(() => {
  removeTempDirs()
  removeProjects()
})

/** The package installed as a user's project has it: `<folder>/node_modules/vite-plugin-insitu`, its dependencies beside it. */
function installPackage(): { entry: string; cacheFolder: string } {
  const modules = path.join(tempDir(), 'node_modules')
  const pkg = path.join(modules, 'vite-plugin-insitu')
  fs.cpSync(DIST, path.join(pkg, 'dist'), { recursive: true })
  fs.copyFileSync(path.join(REPO, 'package.json'), path.join(pkg, 'package.json'))
  for (const dependency of ['better-sqlite3', 'semver']) fs.symlinkSync(path.join(REPO, 'node_modules', dependency), path.join(modules, dependency))
  return { entry: path.join(pkg, 'dist', 'index.js'), cacheFolder: path.join(modules, '.cache', 'vite-plugin-insitu') }
}

describe('the published bundle', () => {
  it('loads the plugin\'s entry only: a few small files of its own and no dependency (issue #38)', () => {
    const { files } = filesLoadedBy(`const plugin = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'index.js')).href)})\nif (typeof plugin.default !== 'function') throw new Error('no default export')`)
    const ours = files.filter((file) => file.startsWith(`${DIST}/`))
    expect(ours).toContain(path.join(DIST, 'index.js'))
    expect(ours.length).toBeLessThanOrEqual(5)
    // The engine (1.2 MB of chunks: yaml, zod, the template engine, SQLite) is not among them.
    const bytes = ours.reduce((sum, file) => sum + fs.statSync(file).size, 0)
    expect(bytes).toBeLessThan(120_000)
    expect(files.filter((file) => packageOf(file) !== undefined)).toEqual([])
  })

  it('loads the engine, with better-sqlite3 and no other dependency (the rest is inlined), from its own entry', () => {
    const { files } = filesLoadedBy(`const api = await import(${JSON.stringify(pathToFileURL(path.join(DIST, 'engine', 'index.js')).href)})\nif (typeof api.InsituEngine !== 'function') throw new Error('no InsituEngine')`)
    const packages = new Set(files.map(packageOf).filter((name) => name !== undefined))
    // better-sqlite3 is a native addon; `bindings` and `file-uri-to-path` are how it finds it.
    expect([...packages].sort()).toEqual([...packages].filter((name) => ['better-sqlite3', 'bindings', 'file-uri-to-path'].includes(name)).sort())
    expect(packages.has('better-sqlite3')).toBe(true)
  })

  it("the SDK's z is the zod package installed beside it", () => {
    const sdk = JSON.stringify(pathToFileURL(path.join(DIST, 'sdk', 'index.js')).href)
    const { stdout, files } = filesLoadedBy(`const { z } = await import(${sdk})\nconst zod = await import('zod')\nconsole.log(String(z === zod.z))`)
    expect(stdout.trim()).toBe('true')
    expect(files.some((file) => packageOf(file) === 'zod')).toBe(true)
  })

  it("runs its runtime (dist/runtime.cjs) with V8's code cache: the first run stores it, the next compile from it, in a build's process and a dev server's (issue #38)", () => {
    const { entry, cacheFolder } = installPackage()
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'vite.config.mjs'), `import insitu from ${JSON.stringify(pathToFileURL(entry).href)}\nexport default { plugins: [insitu()], logLevel: 'silent' }\n`)
    const run = (args: string[]) => {
      const child = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 60_000 })
      expect(child.stderr).toBe('')
      expect(child.status).toBe(0)
    }
    const viteBuild = () => run([VITE, 'build'])
    // A script file, not `node -e`: Node's flags name the cache (`--input-type` would be one).
    const devScript = path.join(root, 'dev-start.mjs')
    fs.writeFileSync(
      devScript,
      [
        `const { createServer } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href)})`,
        "const server = await createServer({ logLevel: 'silent', server: { port: 0 } })",
        'await server.listen()',
        "const response = await fetch(server.resolvedUrls.local[0] + 'docs/tasks.md?import&raw')",
        "if (!(await response.text()).includes('[Beta](../tasks/beta.md)')) throw new Error('the table is not rendered')",
        'await server.close()',
      ].join('\n'),
    )
    const devStart = () => run([devScript])
    const stored = () => fs.readdirSync(cacheFolder).map((name) => ({ name, bytes: fs.readFileSync(path.join(cacheFolder, name)), mtimeMs: fs.statSync(path.join(cacheFolder, name)).mtimeMs }))

    // A build that does not watch: its engine's process stores the cache as it ends.
    expect(fs.existsSync(cacheFolder)).toBe(false)
    viteBuild()
    const [first, ...others] = stored()
    expect(others).toEqual([])
    expect(first!.name).toMatch(/^runtime\.cjs-[0-9a-f]{8}-v\d+\.\d+\.\d+-\w+\.cache$/)
    const [script] = fs.readdirSync(path.join(root, 'dist', 'assets')).filter((file) => file.endsWith('.js'))
    expect(fs.readFileSync(path.join(root, 'dist', 'assets', script!), 'utf8')).toContain('- [Beta](../tasks/beta.md) \u2014 done')

    // The next build compiles from it: nothing is written again.
    viteBuild()
    expect(stored()).toEqual([first])

    // A damaged cache is not used; the dev server (the runtime in its own process) stores a good one at its close.
    const damaged = Buffer.from(first!.bytes)
    damaged[damaged.length >> 1] = damaged[damaged.length >> 1]! ^ 0xff
    fs.writeFileSync(path.join(cacheFolder, first!.name), damaged)
    devStart()
    const [rewritten] = stored()
    expect(rewritten!.name).toBe(first!.name)
    expect(rewritten!.bytes.equals(damaged)).toBe(false)
    devStart()
    expect(stored()).toEqual([rewritten])
  })

  it('says so when its runtime is not beside its entry (the entry copied or bundled away from its package)', () => {
    const { entry } = installPackage()
    fs.rmSync(path.join(path.dirname(entry), 'runtime.cjs'))
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'vite.config.mjs'), `import insitu from ${JSON.stringify(pathToFileURL(entry).href)}\nexport default { plugins: [insitu()], logLevel: 'silent' }\n`)
    const script = path.join(root, 'dev-start.mjs')
    fs.writeFileSync(
      script,
      `const { createServer } = await import(${JSON.stringify(pathToFileURL(path.join(REPO, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href)})\n` +
        "await createServer({ logLevel: 'silent', server: { port: 0 } }).then((server) => server.close(), (error) => { console.error(error.message); process.exitCode = 3 })\n",
    )
    const child = spawnSync(process.execPath, [script], { cwd: root, encoding: 'utf8', timeout: 60_000 })
    expect(child.status).toBe(3)
    expect(child.stderr.trim()).toBe(
      `vite-plugin-insitu: its runtime ${path.join(path.dirname(entry), 'runtime.cjs')} is missing: load the plugin from its installed package (its dist/ folder whole), not from a copy or a bundle of its entry`,
    )
  })

  it('runs its CommonJS runtime in strict mode, as the ES modules it is made of', () => {
    const runtime = fs.readFileSync(path.join(DIST, 'runtime.cjs'), 'utf8')
    // The first statement, so that it is the directive of the function Node wraps the file in.
    expect(runtime.startsWith('"use strict";\n')).toBe(true)
  })

  it('is ASCII: V8 keeps a module source in the heap, two bytes a character if one is not Latin-1', () => {
    const scripts = fs.readdirSync(DIST, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.js') || file.endsWith('.cjs'))
    expect(scripts).toContain('index.js')
    expect(scripts).toContain('runtime.cjs')
    const notAscii = scripts.filter((file) => /[^\x00-\x7f]/.test(fs.readFileSync(path.join(DIST, file), 'utf8')))
    expect(notAscii).toEqual([])
  })

  it('ships the license of every package it inlines', () => {
    const notice = fs.readFileSync(path.join(DIST, 'THIRD-PARTY-LICENSES.md'), 'utf8')
    for (const name of ['zod', 'yaml', 'smol-toml', 'ignore', 'chokidar', 'magic-string', 'signal-exit']) {
      const manifest = JSON.parse(fs.readFileSync(path.join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string; license: string }
      expect(notice).toContain(`## ${name} ${manifest.version} (${manifest.license})`)
    }
    const bundles = ['index.js', 'cli/bin.js'].map((file) => fs.readFileSync(path.join(DIST, file), 'utf8'))
    expect(bundles[1]!.startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it('loads semver from node_modules only to check an npm range (it is not inlined)', () => {
    const notice = fs.readFileSync(path.join(DIST, 'THIRD-PARTY-LICENSES.md'), 'utf8')
    expect(notice).not.toMatch(/^## semver /m)
    const source = path.join(tempDir(), 'ext')
    writeExtension(source, { name: 'acme/ranged', version: '1.4.2', capabilities: ['transform:ranged'] })
    const root = tempDir()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
    const bin = path.join(DIST, 'cli', 'bin.js')
    const add = (range: string) => spawnSync(process.execPath, [bin, 'extension', 'add', source, '--version', range], { cwd: root, encoding: 'utf8' })
    const unmet = add('^2.0.0')
    expect(unmet.stderr).toContain('acme/ranged 1.4.2 does not satisfy ^2.0.0')
    expect(unmet.status).toBe(1)
    expect(add('>=1.4 <2')).toMatchObject({ status: 0, stderr: '' })
    expect(fs.readFileSync(path.join(root, 'insitu.lock'), 'utf8')).toContain('name = "acme/ranged"')
  })

  it('ships no source or declaration map that points at a file the package does not contain', () => {
    // package.json `files`: what `npm pack` puts in the tarball (src/ is not in it).
    const shipped = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { files: string[] }).files.map((entry) => path.join(REPO, entry))
    const inPackage = (file: string) => shipped.some((entry) => file === entry || file.startsWith(`${entry}${path.sep}`))
    const maps = fs.readdirSync(DIST, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.map'))
    expect(maps.length).toBeGreaterThan(0)
    const outside = maps.flatMap((map) => {
      const parsed = JSON.parse(fs.readFileSync(path.join(DIST, map), 'utf8')) as { sources?: string[]; sourceRoot?: string; sourcesContent?: (string | null)[] }
      const { sources = [], sourceRoot = '', sourcesContent = [] } = parsed
      // A source whose text the map embeds needs no file (the bundles' maps embed every source).
      return sources
        .filter((_source, i) => typeof sourcesContent[i] !== 'string')
        .map((source) => path.resolve(path.dirname(path.join(DIST, map)), sourceRoot, source))
        .filter((source) => !inPackage(source) || !fs.existsSync(source))
    })
    expect(outside.map((file) => path.relative(REPO, file))).toEqual([])
  })
})
