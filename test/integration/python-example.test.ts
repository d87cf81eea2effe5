/**
 * The docs' standard-library Python extension (examples/python-extension, shown in
 * docs/guide/extensions-python.md): the page's code blocks are the shipped files, `extension add` installs it, `sync`/`check` run it (its stderr
 * printed with its name), a real `vite build` ships its output, and after a file of the
 * installed copy changes, `vite build` fails with `extension content hash changed` and the dev
 * server logs it once and fails the document that uses it.
 */
import fs from 'node:fs'
import path from 'node:path'
import { build, createServer } from 'vite'
import { afterEach, describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { type LogEntry, recordingLogger } from './dev-server-harness.js'
import { cli } from './extension-projects.js'

const REPO = path.resolve(import.meta.dirname, '../..')
const EXAMPLE = path.join(REPO, 'examples/python-extension')

afterEach(() => removeTempDirs())

const PAGE = 'docs/guide/extensions-python.md'

/** The fenced block right after the docs page's line that names `file`. */
function pageBlock(file: string): string {
  const lines = fs.readFileSync(path.join(REPO, PAGE), 'utf8').split('\n')
  const named = lines.findIndex((line) => line === `\`${file}\`:`)
  expect(named, `${PAGE} names ${file}`).toBeGreaterThan(-1)
  const open = lines.findIndex((line, index) => index > named && line.startsWith('```'))
  const close = lines.findIndex((line, index) => index > open && line === '```')
  return `${lines.slice(open + 1, close).join('\n')}\n`
}

const STATS = [
  '# Stats',
  '',
  '<!-- insitu:begin word_count',
  'id = "words"',
  'pattern = "docs/*.md"',
  '-->',
  '<!-- insitu:end -->',
  '',
  '<!-- insitu:begin materialize',
  'id = "list"',
  'source = "word_totals"',
  'renderer = "word_list"',
  'pattern = "docs/*.md"',
  '-->',
  '<!-- insitu:end -->',
  '',
].join('\n')

const STATS_SYNCED = STATS.replace('pattern = "docs/*.md"\n-->\n', 'pattern = "docs/*.md"\n-->\n\n| File | Words |\n| --- | --- |\n| docs/guide.md | 5 |\n\n').replace(
  'renderer = "word_list"\npattern = "docs/*.md"\n-->\n',
  'renderer = "word_list"\npattern = "docs/*.md"\n-->\n\n- docs/guide.md: 5 words\n\n',
)

function project(): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
  fs.mkdirSync(path.join(root, 'docs'))
  fs.writeFileSync(path.join(root, 'docs/guide.md'), '# Guide\n\nTODO: more words.\n')
  fs.writeFileSync(path.join(root, 'README.md'), STATS)
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>\n')
  fs.writeFileSync(path.join(root, 'main.js'), "import stats from './README.md?raw'\nglobalThis.stats = stats\n")
  return root
}

function builtStats(outDir: string): string {
  const assets = path.join(outDir, 'assets')
  const chunk = fs.readdirSync(assets).find((name) => name.endsWith('.js'))!
  const sandbox: { stats?: string } = {}
  new Function('globalThis', fs.readFileSync(path.join(assets, chunk), 'utf8'))(sandbox)
  return sandbox.stats!
}

describe('the docs\' Python extension', () => {
  it('is the file shipped in examples/ (the docs page\'s code blocks equal the files)', () => {
    for (const file of ['insitu-extension.toml', 'extension.py']) {
      expect(pageBlock(`examples/python-extension/${file}`)).toBe(fs.readFileSync(path.join(EXAMPLE, file), 'utf8'))
    }
    const files = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { files: string[] }).files
    expect(files).toContain('examples')
  })

  it('installs, syncs and checks, its stderr printed with its name; a vite build ships it; a changed file fails the build', async () => {
    const root = project()
    expect(await cli(['extension', 'add', EXAMPLE], root)).toMatchObject({ code: 0, stdout: `installed acme/words 1.0.0 (${EXAMPLE})\n` })

    const sync = await cli(['sync', '--no-cache'], root)
    expect(sync).toEqual({
      code: 0,
      stdout: 'wrote README.md\ndocs/guide.md:3: warning: still says TODO\nwrote 1 of 2 documents\n',
      stderr: `[acme/words] initialize for ${root}\n`,
    })
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toBe(STATS_SYNCED)
    expect(await cli(['check', '--no-cache'], root)).toMatchObject({ code: 0 })

    fs.writeFileSync(path.join(root, 'README.md'), STATS)
    const outDir = path.join(root, 'dist')
    await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ cache: false })], build: { outDir, modulePreload: { polyfill: false } } })
    expect(builtStats(outDir)).toBe(STATS_SYNCED)

    fs.appendFileSync(path.join(root, '.insitu/extensions/acme-words/extension.py'), '# changed after install\n')
    const failure = await build({ root, configFile: false, logLevel: 'silent', plugins: [insitu({ cache: false })], build: { outDir, modulePreload: { polyfill: false } } }).then(
      () => null,
      (error: Error) => error,
    )
    expect(failure?.message).toContain(`${root}/insitu.lock: extension content hash changed: acme/words`)
    await expect.poll(() => liveExtensionPids()).toEqual([])
  })

  it('in the dev server: a changed installed file is logged once; the documents that use it are served as they are, their failure told once', async () => {
    const root = project()
    fs.writeFileSync(path.join(root, 'docs/plain.md'), '# Plain\n')
    expect((await cli(['extension', 'add', EXAMPLE], root)).code).toBe(0)
    fs.appendFileSync(path.join(root, '.insitu/extensions/acme-words/extension.py'), '# changed after install\n')
    const logs: LogEntry[] = []
    const server = await createServer({
      root,
      configFile: false,
      customLogger: recordingLogger((entry) => logs.push(entry)),
      plugins: [insitu({ cache: false })],
      server: { port: 0, watch: { usePolling: true, interval: 50 } },
    })
    try {
      const environment = server.environments.client
      const message = `${root}/insitu.lock: extension content hash changed: acme/words`
      const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
      for (let i = 0; i < 2; i++) expect((await environment.transformRequest('/README.md?raw'))?.code).toBe(`export default ${JSON.stringify(readme)}`)
      // Each of its two regions' failures, once, however many requests.
      const told = logs.filter((entry) => entry.level === 'error' && entry.message.startsWith('insitu: README.md:') && entry.message.includes(message))
      expect(told.map((entry) => entry.message.split(':').slice(0, 3).join(':'))).toEqual(['insitu: README.md:3', 'insitu: README.md:9'])
      const plain = await environment.transformRequest('/docs/plain.md?raw')
      expect(plain?.code).toContain('# Plain')
      expect(logs.filter((entry) => entry.message.includes(`extension acme/words failed to start: ${message}`))).toHaveLength(1)
      expect(liveExtensionPids()).toEqual([])
    } finally {
      await server.close()
    }
  })
})
