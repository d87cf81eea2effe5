/**
 * Hostile document inputs (issue #34, "Every input is bounded"): an alias bomb, nesting far too
 * deep, a 1 MiB front matter, a 100 MiB document, 10,000 regions, a 1 MiB region header, invalid UTF-8, a NUL byte and
 * a symlink loop, each in a real project in a temporary folder, through (a) the document index
 * (`DocumentIndex` rebuild and refresh), (b) the engine (`renderDocument`, and `syncDocument`
 * in write mode, which must leave the file's bytes as they are) and (c) the built command
 * line's `check` (spawned, with its peak RSS read at exit): each ends in a clear error naming
 * the file and line, in at most 2 s, the process alive and the other documents checked. A dev
 * server holding all of them at once answers each request in at most 2 s and keeps serving the
 * other pages.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createServer } from 'vite'
import { afterEach, describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { loadRaw, recordingLogger } from './dev-server-harness.js'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { InsituEngine } from '../../src/engine/engine.js'
import { locationOf } from '../../src/engine/render-document.js'
import { syncDocument } from '../../src/sync/sync-document.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

/** The built command line (test/clients/setup.ts builds it before a run that selects this file). */
const BIN = path.resolve(import.meta.dirname, '../../dist/cli/bin.js')
/** What no input may take, wall clock (issue #34: ≤ 2 s where no time budget applies). */
const BUDGET_MS = 2000
/** Peak resident memory no input may take (issue #34: ≤ 1 GiB). */
const MAX_RSS_KIB = 1024 * 1024

const engines: InsituEngine[] = []

afterEach(async () => {
  await Promise.all(engines.splice(0).map((engine) => engine.close()))
  removeTempDirs()
})

const REGION = '<!-- insitu:begin include\npath = "../snippets/a.txt"\nraw = true\n-->\n\none\ntwo\n\n<!-- insitu:end -->\n'
const STALE_REGION = '<!-- insitu:begin include\npath = "../snippets/a.txt"\nraw = true\n-->\nold\n<!-- insitu:end -->\n'

/** Nine levels of nine aliases ("billion laughs"): 387,420,489 strings when expanded. */
function laughs(): string {
  const lines = [`a0: &a0 [${Array(9).fill('lol').join(', ')}]`]
  for (let level = 1; level < 9; level++) lines.push(`a${level}: &a${level} [${Array(9).fill(`*a${level - 1}`).join(', ')}]`)
  return `${lines.join('\n')}\n`
}

interface Hostile {
  name: string
  /** Its path in the project. */
  file: string
  write(absolute: string): void
  /** The error a render and `check` report: its line and message (`check` adds `; not rendered, not written` where `sync` says so). */
  line: number
  message: string
  /** What `check` prints after `<file>:<line>: error: ` (default: `message`). */
  checkMessage?: string
  /** How the index keeps it: by its path alone (not text within the limits), or read as far as it can be. */
  indexed: 'path only' | 'text'
}

const MANY = 10_000

const HOSTILE: Hostile[] = [
  {
    name: 'billion laughs',
    file: 'docs/bomb.md',
    write: (file) => fs.writeFileSync(file, `---\ntitle: Bomb\n${laughs()}---\n# Bomb\n\n${REGION}`),
    // a5 (document line 8) is the first anchor whose aliases pass 100,000 values
    line: 8,
    message: 'front matter expands YAML aliases to more than 100,000 values (line 8): an alias bomb?',
    indexed: 'text',
  },
  {
    name: '60,000 nested brackets (front matter within its size limit)',
    file: 'docs/deep.md',
    write: (file) => fs.writeFileSync(file, `---\ntitle: Deep\na: ${'['.repeat(60_000)}${']'.repeat(60_000)}\n---\n# Deep\n\n${REGION}`),
    line: 3,
    message: 'front matter nests collections deeper than 128 levels (line 3)',
    indexed: 'text',
  },
  {
    name: 'a 1.1 MiB front matter',
    file: 'docs/long.md',
    // 131,072 list items of 9 bytes, after `title: Long\nitems:\n` (19 bytes)
    write: (file) => fs.writeFileSync(file, `---\ntitle: Long\nitems:\n${'  - item\n'.repeat(128 * 1024)}---\n# Long\n\n${REGION}`),
    line: 1,
    message: 'front matter is 1.1 MiB (1,179,667 bytes), over the limit of 128 KiB',
    indexed: 'text',
  },
  {
    name: 'a 100 MiB document',
    file: 'docs/big.md',
    write: (file) => {
      // Sparse: its size is 100 MiB, its blocks almost none (the index and check never read it).
      const fd = fs.openSync(file, 'w')
      fs.writeSync(fd, `# Big\n\n${REGION}`)
      fs.ftruncateSync(fd, 100 * 1024 * 1024)
      fs.closeSync(fd)
    },
    line: 1,
    message: 'document is 100 MiB (104,857,600 bytes), over the limit of 16 MiB',
    checkMessage: 'document is 100 MiB (104,857,600 bytes), over the limit of 16 MiB; not rendered, not written',
    indexed: 'path only',
  },
  {
    name: '10,000 regions',
    file: 'docs/regions.md',
    write: (file) => fs.writeFileSync(file, `# Many\n${REGION.repeat(MANY)}`),
    // each region is 9 lines after the title: region 1,001 begins at line 2 + 1,000 × 9
    line: 9002,
    message: 'document has more than 1,000 Insitu regions (region 1,001 begins at line 9002)',
    indexed: 'text',
  },
  {
    name: 'a 1 MiB region header',
    file: 'docs/header.md',
    write: (file) => fs.writeFileSync(file, `# Header\n\n<!-- insitu:begin include\npath = "${'x'.repeat(1024 * 1024)}"\n-->\n<!-- insitu:end -->\n\n${REGION}`),
    line: 3,
    message: 'Insitu region header at line 3 is 1 MiB (1,048,586 bytes), over the limit of 64 KiB',
    indexed: 'text',
  },
  {
    name: 'invalid UTF-8',
    file: 'docs/latin.md',
    // `é` in Latin-1: the byte 0xe9 at offset 12, on line 3
    write: (file) => fs.writeFileSync(file, Buffer.concat([Buffer.from('# Latin\n\ncaf\xe9\n', 'latin1'), Buffer.from(REGION)])),
    line: 3,
    message: 'not valid UTF-8 at line 3 (the byte at offset 12 is 0xe9); not rendered, not written',
    indexed: 'path only',
  },
  {
    name: 'a NUL byte',
    file: 'docs/nul.md',
    write: (file) => fs.writeFileSync(file, `# Nul\n\nA\0B\n${REGION}`),
    line: 3,
    message: 'holds a NUL byte at line 3 (offset 8): not a text document; not rendered, not written',
    indexed: 'path only',
  },
]

/** A project with a current document, a stale one and `hostile`. */
function project(hostile?: Hostile): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
  fs.mkdirSync(path.join(root, 'docs'))
  fs.mkdirSync(path.join(root, 'snippets'))
  fs.writeFileSync(path.join(root, 'snippets/a.txt'), 'one\ntwo\n')
  fs.writeFileSync(path.join(root, 'docs/ok.md'), `# OK\n\n${REGION}`)
  fs.writeFileSync(path.join(root, 'docs/stale.md'), `# Stale\n\n${STALE_REGION}`)
  hostile?.write(path.join(root, hostile.file))
  return root
}

async function timed<T>(run: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await run()
  return { value, ms: performance.now() - started }
}

async function startEngine(root: string): Promise<InsituEngine> {
  const engine = await InsituEngine.create({ root })
  engines.push(engine)
  return engine
}

interface CliRun {
  code: number
  stdout: string
  stderr: string
  ms: number
  /** Peak resident set size of the command line's process, KiB (`process.resourceUsage().maxRSS` at exit). */
  maxRssKiB: number
}

/** Runs the built command line as a user does, its peak RSS written at exit by a preloaded module. */
function cli(root: string, args: readonly string[]): Promise<CliRun> {
  const probe = path.join(tempDir(), 'peak-rss.mjs')
  const report = `${probe}.kib`
  fs.writeFileSync(
    probe,
    `import fs from 'node:fs'\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(report)}, String(process.resourceUsage().maxRSS)))\n`,
  )
  const started = performance.now()
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', probe, BIN, ...args], { cwd: root, env: { ...process.env, FORCE_COLOR: '0' }, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      resolve({ code, stdout, stderr, ms: performance.now() - started, maxRssKiB: Number(fs.readFileSync(report, 'utf8')) })
    })
  })
}

describe.each(HOSTILE.map((hostile) => [hostile.name, hostile] as const))('%s', (_name, hostile) => {
  it('the document index keeps the document (by its path alone when it is not text) and warns once, rebuild and refresh in ≤ 2 s', async () => {
    const root = project(hostile)
    const before = hostile.file === 'docs/big.md' ? null : fs.readFileSync(path.join(root, hostile.file))
    const warnings: string[] = []
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false, warn: (message) => warnings.push(message) })
    try {
      expect((await timed(() => index.rebuild())).ms).toBeLessThan(BUDGET_MS)
      // a file event always reads its file again
      expect((await timed(() => index.refresh([{ type: 'update', path: hostile.file }]))).ms).toBeLessThan(BUDGET_MS)
      expect(index.documentPaths()).toEqual([hostile.file, 'docs/ok.md', 'docs/stale.md'].sort())
      const [row] = index.query('select title, length(body) as body, frontmatter from documents where path = :path', { path: hostile.file })
      if (hostile.indexed === 'path only') {
        expect(row).toEqual({ title: null, body: 0, frontmatter: '{}' })
        // a document over the size limit is told by its stat: its bytes are never read (nor hashed)
        const [stored] = index.query('select content_hash from _documents where path = :path', { path: hostile.file })
        if (hostile.file === 'docs/big.md') expect(stored).toEqual({ content_hash: `too-large:${100 * 1024 * 1024}` })
        else expect(stored!.content_hash).toMatch(/^[0-9a-f]{64}$/)
        const problem = hostile.checkMessage ?? hostile.message
        expect(warnings).toEqual([`insitu: ${hostile.file}: ${problem.replace('; not rendered, not written', '')}; indexed by its path alone (no title, body or front matter)`])
      } else {
        expect(row!.body).toBeGreaterThan(0)
        expect(warnings).toEqual([])
      }
      expect(index.query("select title from documents where path = 'docs/ok.md'")).toEqual([{ title: null }])
    } finally {
      index.close()
    }
    if (before) expect(fs.readFileSync(path.join(root, hostile.file)).equals(before)).toBe(true)
  })

  it('the engine reports it at its line in ≤ 2 s, renders the others, and never writes it', async () => {
    const root = project(hostile)
    const absolute = path.join(root, hostile.file)
    const before = hostile.file === 'docs/big.md' ? null : fs.readFileSync(absolute)
    const { value: engine, ms: startMs } = await timed(() => startEngine(root))
    expect(startMs).toBeLessThan(BUDGET_MS)
    // Write mode, as `sync` and a dev server with `write: true` run it: the error, and the file as it was.
    const { value: sync, ms: syncMs } = await timed(() => syncDocument(engine, hostile.file, { write: true }))
    expect(syncMs).toBeLessThan(BUDGET_MS)
    const errors = sync!.diagnostics.filter((d) => d.severity === 'error').map((d) => ({ line: d.line, message: d.message }))
    expect(errors).toEqual([{ line: hostile.line, message: hostile.checkMessage ?? hostile.message }])
    expect(sync).toMatchObject({ written: false, failed: true })
    if (before) expect(fs.readFileSync(absolute).equals(before)).toBe(true)
    else expect(fs.statSync(absolute).size).toBe(100 * 1024 * 1024)
    // A render of its text, as the dev server asks for it (a text: bytes no decoder took are not its to see).
    if (hostile.indexed === 'text' || hostile.file === 'docs/nul.md' || hostile.file === 'docs/big.md') {
      const text = fs.readFileSync(absolute, 'utf8')
      const { value: result, ms } = await timed(() => engine.renderDocument(hostile.file, text))
      expect(ms).toBeLessThan(BUDGET_MS)
      expect(result.text).toBe(text)
      expect(result.diagnostics.filter((d) => d.severity === 'error').map((d) => ({ line: d.line, message: d.message }))).toEqual([
        { line: hostile.line, message: hostile.message.replace('; not rendered, not written', '').replace('NUL byte at line 3 (offset 8)', 'NUL character at line 3') },
      ])
    }
    // The others render as before.
    const ok = await syncDocument(engine, 'docs/ok.md', { write: false })
    expect(ok).toMatchObject({ failed: false, stale: [] })
  })

  it('check reports it at its file and line, checks the others and exits 1, in ≤ 2 s and ≤ 1 GiB', async () => {
    const root = project(hostile)
    const run = await cli(root, ['check'])
    expect({ code: run.code, stderr: run.stderr.split('\n').filter((line) => !line.includes('indexed by its path alone')).join('\n') }).toEqual({ code: 1, stderr: '' })
    expect(run.stdout).toContain(`\n${hostile.file}:${hostile.line}: error: ${hostile.checkMessage ?? hostile.message}\n`)
    expect(run.stdout).toMatch(/^docs\/stale\.md:3 region include-\S+ is stale$/m)
    expect(run.stdout).toMatch(/\n1 of 3 documents stale \(1 stale job\), 1 failed\n$/)
    expect(run.ms).toBeLessThan(BUDGET_MS)
    expect(run.maxRssKiB).toBeLessThan(MAX_RSS_KIB)
  })
})

describe('a dev server with every hostile document at once', () => {
  it('answers each request in ≤ 2 s (with the error, or the text unchanged) and serves the other pages before and after', async () => {
    const root = project()
    for (const hostile of HOSTILE) hostile.write(path.join(root, hostile.file))
    const dev = await createServer({
      root,
      configFile: false,
      customLogger: recordingLogger(() => {}),
      plugins: [insitu()],
      server: { port: 0, watch: null },
    })
    try {
      const client = dev.environments.client
      const ok = `# OK\n\n${REGION}`
      expect(await loadRaw(client, '/docs/ok.md?raw')).toBe(ok)
      for (const hostile of HOSTILE) {
        const started = performance.now()
        const outcome = await loadRaw(client, `/${hostile.file}?raw`).then(
          (text) => ({ text }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        )
        expect({ file: hostile.file, fast: performance.now() - started < BUDGET_MS }).toEqual({ file: hostile.file, fast: true })
        // The plugin serves what it decoded (bytes that are not UTF-8 as Vite reads any file);
        // the others fail with the limit's message, or are served as they are on disk.
        if (hostile.file === 'docs/latin.md') continue
        if ('error' in outcome) {
          const message = hostile.message.replace('; not rendered, not written', '').replace('NUL byte at line 3 (offset 8)', 'NUL character at line 3')
          expect(outcome.error).toContain(message)
        } else {
          expect(outcome.text === fs.readFileSync(path.join(root, hostile.file), 'utf8')).toBe(true)
        }
        expect(await loadRaw(client, '/docs/ok.md?raw')).toBe(ok)
      }
      expect(process.resourceUsage().maxRSS).toBeLessThan(MAX_RSS_KIB)
    } finally {
      await dev.close()
    }
  })
})

describe('the two sizes at the document limit', () => {
  it('reads a document of exactly 16 MiB and refuses one byte more, by its size', async () => {
    const root = project()
    const line = `${'x'.repeat(1023)}\n`
    fs.writeFileSync(path.join(root, 'docs/limit.md'), line.repeat(16 * 1024))
    fs.writeFileSync(path.join(root, 'docs/over.md'), `${line.repeat(16 * 1024)}x`)
    const warnings: string[] = []
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false, warn: (message) => warnings.push(message) })
    try {
      index.rebuild()
      expect(index.query("select path, length(body) as body from documents where path in ('docs/limit.md', 'docs/over.md') order by path")).toEqual([
        { path: 'docs/limit.md', body: 16 * 1024 * 1024 },
        { path: 'docs/over.md', body: 0 },
      ])
      expect(warnings).toEqual([
        'insitu: docs/over.md: document is 16 MiB (16,777,217 bytes), over the limit of 16 MiB; indexed by its path alone (no title, body or front matter)',
      ])
    } finally {
      index.close()
    }
  })
})

describe('a symlink loop under a glob', () => {
  /** docs/loop: a link to its parent, two folders linking to each other, a link to itself. */
  function loopProject(): string {
    const root = project()
    const loop = path.join(root, 'docs/loop')
    fs.mkdirSync(path.join(loop, 'a'), { recursive: true })
    fs.mkdirSync(path.join(loop, 'b'))
    fs.writeFileSync(path.join(loop, 'a/one.md'), '# One\n')
    fs.writeFileSync(path.join(loop, 'b/two.md'), '# Two\n')
    fs.symlinkSync('..', path.join(loop, 'up'))
    fs.symlinkSync('../b', path.join(loop, 'a/to-b'))
    fs.symlinkSync('../a', path.join(loop, 'b/to-a'))
    fs.symlinkSync('knot', path.join(loop, 'knot'))
    fs.writeFileSync(path.join(root, 'docs/tree.md'), '# Tree\n\n<!-- insitu:begin tree\ndepth = 32\n-->\n<!-- insitu:end -->\n')
    return root
  }

  /** Every file the walk lists once: each folder entered once on the way down, links back to a folder on the way listed, not entered. */
  const FILES = [
    'docs/loop/a/one.md',
    'docs/loop/a/to-b/two.md',
    'docs/loop/b/to-a/one.md',
    'docs/loop/b/two.md',
    'docs/ok.md',
    'docs/stale.md',
    'docs/tree.md',
    'insitu.toml',
    'snippets/a.txt',
  ]

  it('the index lists a finite, correct set of entries, rebuild and refresh alike, in ≤ 2 s', async () => {
    const root = loopProject()
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false })
    try {
      expect((await timed(() => index.rebuild())).ms).toBeLessThan(BUDGET_MS)
      const entries = () => index.query('select path, kind from entries order by path')
      const listed = entries()
      expect(listed.filter((e) => e.kind === 'file').map((e) => e.path)).toEqual(FILES)
      // the links that close a loop are listed as folders, not entered
      expect(listed.filter((e) => String(e.path).startsWith('docs/loop/')).map((e) => `${e.path} ${e.kind}`)).toEqual([
        'docs/loop/a directory',
        'docs/loop/a/one.md file',
        'docs/loop/a/to-b directory',
        'docs/loop/a/to-b/to-a directory',
        'docs/loop/a/to-b/two.md file',
        'docs/loop/b directory',
        'docs/loop/b/to-a directory',
        'docs/loop/b/to-a/one.md file',
        'docs/loop/b/to-a/to-b directory',
        'docs/loop/b/two.md file',
        'docs/loop/up directory',
      ])
      // A file event on a link of the loop changes nothing. (An event on the link to itself
      // makes the refresh throw ELOOP, which a dev server handles as a failed plan:
      // failed-plans.test.ts uses it as its real failure.)
      for (const link of ['docs/loop/up', 'docs/loop/a/to-b', 'docs/loop/a/to-b/to-a', 'docs/loop']) {
        const { value: change, ms } = await timed(() => index.refresh([{ type: 'update', path: link }]))
        expect(ms).toBeLessThan(BUDGET_MS)
        expect({ link, changed: change.projectionChanged }).toEqual({ link, changed: false })
      }
      expect(entries()).toEqual(listed)
    } finally {
      index.close()
    }
  })

  it('fs:glob:**/* and fs:dir: list it once, and a tree region renders it, in ≤ 2 s', async () => {
    const root = loopProject()
    const engine = await startEngine(root)
    const { value: glob, ms } = await timed(() => engine.host.readResource('fs:glob:**/*', locationOf('docs/tree.md'), []))
    expect(ms).toBeLessThan(BUDGET_MS)
    expect(glob.value).toEqual(FILES)
    // the static base of the pattern is walked alone: the same files as the walk from the root lists there
    expect((await engine.host.readResource('fs:glob:docs/loop/**/*.md', locationOf('docs/tree.md'), [])).value).toEqual(FILES.slice(0, 4))
    expect((await engine.host.readResource('fs:glob:docs/loop/up/**/*.md', locationOf('docs/tree.md'), [])).value).toEqual([])
    const dir = (await engine.host.readResource('fs:dir:docs/loop', locationOf('docs/tree.md'), [])).value as { path: string }[]
    expect(dir).toHaveLength(11)
    const text = fs.readFileSync(path.join(root, 'docs/tree.md'), 'utf8')
    const { value: result, ms: renderMs } = await timed(() => engine.renderDocument('docs/tree.md', text))
    expect(renderMs).toBeLessThan(BUDGET_MS)
    expect(result.diagnostics).toEqual([])
    expect(result.text).toContain('│   │   ├── to-b/\n')
  })

  it('check goes through it in ≤ 2 s and ≤ 1 GiB', async () => {
    const root = loopProject()
    expect((await cli(root, ['sync'])).code).toBe(0)
    const run = await cli(root, ['check'])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toBe('7 documents current\n')
    expect(run.ms).toBeLessThan(BUDGET_MS)
    expect(run.maxRssKiB).toBeLessThan(MAX_RSS_KIB)
  })
})
