/**
 * The built command line (`npm run build`, then `node dist/cli/bin.js`, as a user runs it):
 * `init` (its files render on a fresh project: sync, check and a real `vite build`), and the
 * machine-readable reports of `check` and `sync` (`--format json`, `--format github`, escaping
 * included) on copies of the plugin fixture.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { build } from 'vite'
import { afterEach, describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { STARTER_CONFIG, STARTER_MODEL, STARTER_TEMPLATE } from '../../src/cli/starter-files.js'
import { escapeData, escapeProperty } from '../../src/cli/report-formats.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { copyProject, removeProjects } from './plugin-project.js'

const REPO = path.resolve(import.meta.dirname, '../..')
/** Built once per run by test/clients/setup.ts (a build here would rewrite dist/ under the other test files). */
const BIN = path.join(REPO, 'dist/cli/bin.js')

afterEach(() => {
  removeTempDirs()
  removeProjects()
})

function bin(args: readonly string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, GITHUB_WORKSPACE: '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

const OPEN_REGION = '<!-- insitu:begin sql\nid = "open"\nmodel = "open_items"\ntemplate = "table.md.j2"\n-->\n<!-- insitu:end -->\n'

describe('init', () => {
  it('creates the starter files, .insitu and .gitignore; refuses an existing insitu.toml without --force', async () => {
    const root = tempDir()
    expect(await bin(['init'], root)).toEqual({
      code: 0,
      stdout: 'create insitu.toml\ncreate insitu/models/open_items.sql\ncreate insitu/templates/table.md.j2\ncreate .insitu/\ncreate .gitignore\n',
      stderr: '',
    })
    expect(fs.readFileSync(path.join(root, 'insitu.toml'), 'utf8')).toBe(STARTER_CONFIG)
    expect(fs.readFileSync(path.join(root, 'insitu/models/open_items.sql'), 'utf8')).toBe(STARTER_MODEL)
    expect(fs.readFileSync(path.join(root, 'insitu/templates/table.md.j2'), 'utf8')).toBe(STARTER_TEMPLATE)
    expect(fs.statSync(path.join(root, '.insitu')).isDirectory()).toBe(true)
    expect(fs.readFileSync(path.join(root, '.gitignore'), 'utf8')).toBe('.insitu/\n')
    expect(STARTER_CONFIG).toMatch(/"node_modules\/\*\*",\n {2}"dist\/\*\*",\n {2}"\.vite\/\*\*",/)

    fs.writeFileSync(path.join(root, 'insitu/models/open_items.sql'), '-- mine\nselect 1\n')
    expect(await bin(['init'], root)).toEqual({ code: 2, stdout: '', stderr: 'error insitu.toml already exists\n' })
    expect(fs.readFileSync(path.join(root, 'insitu/models/open_items.sql'), 'utf8')).toBe('-- mine\nselect 1\n')
    expect(await bin(['init', '--force'], root)).toEqual({
      code: 0,
      stdout: 'create insitu.toml\ncreate insitu/models/open_items.sql\ncreate insitu/templates/table.md.j2\n',
      stderr: '',
    })
    expect(fs.readFileSync(path.join(root, 'insitu/models/open_items.sql'), 'utf8')).toBe(STARTER_MODEL)

    const parent = tempDir()
    fs.mkdirSync(path.join(parent, 'site'))
    fs.writeFileSync(path.join(parent, 'site/.gitignore'), 'node_modules')
    expect(await bin(['init', 'site'], parent)).toEqual({
      code: 0,
      stdout: 'create site/insitu.toml\ncreate site/insitu/models/open_items.sql\ncreate site/insitu/templates/table.md.j2\ncreate site/.insitu/\nupdate site/.gitignore\n',
      stderr: '',
    })
    expect(fs.readFileSync(path.join(parent, 'site/.gitignore'), 'utf8')).toBe('node_modules\n.insitu/\n')
    expect(await bin(['init', 'site'], parent)).toEqual({ code: 2, stdout: '', stderr: 'error site/insitu.toml already exists\n' })
  })

  it('renders on a fresh project: sync, check and a real vite build', async () => {
    const root = tempDir()
    expect((await bin(['init'], root)).code).toBe(0)
    fs.writeFileSync(path.join(root, 'README.md'), `# Project\n\n${OPEN_REGION}`)
    // No document has a status yet: the model still runs (json_extract), the template says _None_.
    expect(await bin(['check'], root)).toMatchObject({ code: 1, stderr: '' })
    expect(await bin(['sync'], root)).toEqual({ code: 0, stdout: 'wrote README.md\nwrote 1 of 1 document\n', stderr: '' })
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toBe(`# Project\n\n${OPEN_REGION.replace('-->\n', '-->\n\n_None_\n\n')}`)

    fs.mkdirSync(path.join(root, 'docs/tasks'), { recursive: true })
    fs.writeFileSync(path.join(root, 'docs/tasks/alpha.md'), '---\ntitle: Alpha\nstatus: open\n---\n# Alpha\n')
    fs.writeFileSync(path.join(root, 'docs/tasks/beta.md'), '---\nstatus: done\n---\n# Beta\n')
    fs.writeFileSync(path.join(root, 'docs/tasks/gamma.md'), '---\nstatus: open\n---\n# Gamma\n')
    fs.writeFileSync(path.join(root, 'docs/index.md'), `# Docs\n\n${OPEN_REGION}`)
    expect(await bin(['sync'], root)).toEqual({ code: 0, stdout: 'wrote README.md\nwrote docs/index.md\nwrote 2 of 5 documents\n', stderr: '' })
    const table = (prefix: string) =>
      `| Item | Status |\n| --- | --- |\n| [Alpha](${prefix}tasks/alpha.md) | open |\n| [gamma.md](${prefix}tasks/gamma.md) | open |`
    expect(fs.readFileSync(path.join(root, 'docs/index.md'), 'utf8')).toBe(`# Docs\n\n${OPEN_REGION.replace('-->\n', `-->\n\n${table('')}\n\n`)}`)
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain(table('docs/'))
    expect(await bin(['check'], root)).toEqual({ code: 0, stdout: '5 documents current\n', stderr: '' })

    fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>\n')
    fs.writeFileSync(path.join(root, 'main.js'), "import docs from './docs/index.md?raw'\nglobalThis.docs = docs\n")
    const outDir = path.join(root, 'dist')
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu()], build: { outDir, modulePreload: { polyfill: false } } })
    const chunk = fs.readdirSync(path.join(outDir, 'assets')).find((name) => name.endsWith('.js'))!
    const sandbox: { docs?: string } = {}
    new Function('globalThis', fs.readFileSync(path.join(outDir, 'assets', chunk), 'utf8'))(sandbox)
    expect(sandbox.docs).toContain(table(''))
  })
})

describe('--format json', () => {
  it('prints one object: documents, stale jobs with path, line, id and diff, errors, validator diagnostics', async () => {
    const root = copyProject()
    fs.writeFileSync(path.join(root, 'notes/three.md'), 'no title here\n')
    const check = await bin(['check', '--format', 'json'], root)
    expect(check.code).toBe(1)
    const report = JSON.parse(check.stdout) as Record<string, unknown>
    expect(check.stdout.endsWith('}\n')).toBe(true)
    expect(report).toMatchObject({
      command: 'check',
      root,
      ok: false,
      exitCode: 1,
      summary: { documents: 10, stale: 4, staleJobs: 4, written: 0, failed: 1, validatorErrors: 0 },
      written: [],
      warnings: [],
      errors: [{ path: 'docs/broken.md', line: 5, message: 'transform explode (extension plugin/notes) failed in boom: the fuse was lit', code: 'insitu/job' }],
      validation: [{ severity: 'warning', path: 'notes/three.md', line: 1, message: 'note has no title: notes/three.md', code: null }],
    })
    const stale = report.stale as { path: string; line: number; target: string; id: string; kind: string; state: string; why: string; diff: string }[]
    expect(stale.find((job) => job.path === 'docs/tasks.md')).toEqual({
      path: 'docs/tasks.md',
      line: 3,
      target: 'region',
      id: 'all',
      kind: 'sql',
      state: 'stale',
      why: 'region all is stale: it was never generated',
      diff: '@@ -0,0 +1,2 @@\n+- [Alpha](../tasks/alpha.md) — open\n+- [Beta](../tasks/beta.md) — done',
    })
    expect((report.documents as { path: string; state: string }[]).map((d) => `${d.path} ${d.state}`)).toContain('docs/broken.md failed')
    expect((report.documents as { path: string; state: string }[]).map((d) => `${d.path} ${d.state}`)).toContain('docs/tasks.md stale')

    fs.rmSync(path.join(root, 'docs/broken.md'))
    const sync = JSON.parse((await bin(['sync', '--format=json'], root)).stdout) as Record<string, unknown>
    expect(sync).toMatchObject({ command: 'sync', ok: true, exitCode: 0, stale: [], errors: [] })
    expect(sync.written).toEqual(['docs/git.md', 'docs/notes.md', 'docs/snippet.md', 'docs/tasks.md'])

    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n[watch]\ndebounce_ms = 99999\n')
    const failed = await bin(['check', '--format', 'json'], root)
    expect(failed.code).toBe(2)
    expect(JSON.parse(failed.stdout)).toEqual({
      command: 'check',
      root,
      ok: false,
      exitCode: 2,
      error: { message: `${root}/insitu.toml:3:1: watch.debounce_ms: must be <= 10000`, file: `${root}/insitu.toml`, line: 3, column: 1 },
    })
    expect(failed.stderr).toBe(`${root}/insitu.toml:3:1: watch.debounce_ms: must be <= 10000\n`)
  })

  it('is a usage error for an unknown format', async () => {
    const root = tempDir()
    expect(await bin(['check', '--format', 'xml'], root)).toEqual({
      code: 2,
      stdout: '',
      stderr: "vite-plugin-insitu: --format must be one of text, json, github (got xml)\nRun 'vite-plugin-insitu --help' for usage.\n",
    })
  })
})

describe('--format github', () => {
  it('annotates each stale region and each diagnostic at its file and line, escaped as GitHub requires', async () => {
    const root = copyProject()
    fs.mkdirSync(path.join(root, 'docs/odd'))
    // A file name with a comma and a colon, and a message with % and a line break (through the include's missing path).
    fs.writeFileSync(path.join(root, 'docs/odd/a,b:c.md'), '# Odd\n\n<!-- insitu:begin include\nid = "x"\npath = "100%.txt"\n-->\n<!-- insitu:end -->\n')
    const run = await bin(['check', '--format', 'github'], path.join(root, 'docs'), { GITHUB_WORKSPACE: root })
    expect(run.code).toBe(1)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines).toContain(
      '::error file=docs/tasks.md,line=3,title=insitu::region all is stale (run vite-plugin-insitu sync)%0A@@ -0,0 +1,2 @@%0A+- [Alpha](../tasks/alpha.md) — open%0A+- [Beta](../tasks/beta.md) — done',
    )
    expect(lines).toContain('::error file=docs/broken.md,line=5,title=insitu::transform explode (extension plugin/notes) failed in boom: the fuse was lit')
    const odd = lines.find((line) => line.startsWith('::error file=docs/odd/a%2Cb%3Ac.md,line=3,title=insitu::'))
    expect(odd).toBeDefined()
    expect(odd).toContain('100%25.txt')
    expect(lines.at(-1)).toBe('insitu check: 10 documents, 4 stale (4 stale jobs), 2 failed, 0 validator errors')
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^::(error|warning|notice) /)
  })

  it('counts in the singular where there is one: 1 document, 1 stale job', async () => {
    const root = tempDir()
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
    fs.writeFileSync(path.join(root, 'part.txt'), 'part\n')
    fs.writeFileSync(path.join(root, 'README.md'), '# One\n\n<!-- insitu:begin include\npath = "part.txt"\n-->\n<!-- insitu:end -->\n')
    const run = await bin(['check', '--format', 'github'], root, { GITHUB_WORKSPACE: root })
    expect(run.code).toBe(1)
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('insitu check: 1 document, 1 stale (1 stale job), 0 failed, 0 validator errors')
  })

  it('escapes data and properties', () => {
    expect(escapeData('100% done\r\nnext: a, b')).toBe('100%25 done%0D%0Anext: a, b')
    expect(escapeProperty('a,b:c%\n')).toBe('a%2Cb%3Ac%25%0A')
  })
})
