/**
 * Front matter kept byte for byte when materializations write it (issue #14 point 4): the real
 * command line's `sync` and a real Vite dev server with `write: true` (public plugin API, files on
 * disk) on a temp project whose front matter uses flow lists and maps, comments with extra spaces,
 * `1e3`, `017`, quoted and unquoted dates and a block scalar. The generated subtree is the only
 * change; it is written as the Python implementation's ruamel.yaml writes it.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createServer, type ViteDevServer } from 'vite'
import { afterEach, describe, expect, test } from 'vitest'
import insitu from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { loadRaw } from './dev-server-harness.js'
import { editFile, runTypeScript } from './plugin-project.js'

const BIN = path.resolve(import.meta.dirname, '../../src/cli/bin.ts')
const WAIT = { timeout: 15_000 }

/** The user's own front-matter lines: none of them may change. */
const USER_LINES = [
  'title: "Board"   # the  title,  spaced',
  'tags: [docs, tasks]',
  'meta: {owner: ana, level: 2}',
  'ratio: 1e3',
  'lead: 017',
  'when: 2024-03-01',
  "quoted_when: '2024-03-01'",
  'summary: |',
  '  A block scalar',
  '     keeps its indentation',
  '#   a   comment   with   extra   spaces',
  'insitu:',
  '  materializations:',
  '    open:',
  '      model: open_tasks',
  '      target: frontmatter:/generated/open',
  '    stats:',
  '      model: task_count',
  '      target: {kind: frontmatter,   pointer: /generated/stats}',
]

const BODY = ['', '# Board', '', 'Prose the plugin never touches.', ''].join('\n')

function board(eol = '\n'): string {
  return ['---', ...USER_LINES, '---', BODY].join('\n').replaceAll('\n', eol)
}

/** The generated subtree as ruamel writes it (indent(mapping=2, sequence=4, offset=2)). */
function generated(open: Array<[string, string]>, total: number): string[] {
  return ['generated:', '  open:', ...open.flatMap(([title, rel]) => [`    - title: ${title}`, `      path: ${rel}`]), '  stats:', `    total: ${total}`]
}

function written(open: Array<[string, string]>, total: number, eol = '\n'): string {
  return ['---', ...USER_LINES, ...generated(open, total), '---', BODY].join('\n').replaceAll('\n', eol)
}

const roots: string[] = []
let server: ViteDevServer | undefined

function makeProject(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-frontmatter-')))
  roots.push(root)
  const files: Record<string, string> = {
    'insitu.toml': 'version = 1\n',
    'insitu/models/open_tasks.sql': "select title, path from documents where path like 'tasks/%' and status = 'open' order by title\n",
    'insitu/models/task_count.sql': "select count(*) as total from documents where path like 'tasks/%'\n",
    'tasks/alpha.md': '---\ntitle: Alpha\nstatus: open\n---\n# Alpha\n',
    'tasks/beta.md': '---\ntitle: Beta\nstatus: open\n---\n# Beta\n',
    'tasks/delta.md': '---\ntitle: Delta\nstatus: open\n---\n# Delta\n',
    'tasks/gamma.md': '---\ntitle: Gamma\nstatus: done\n---\n# Gamma\n',
    'board.md': board(),
    'crlf.md': '\uFEFF' + board('\r\n'),
    'index.html': '<script type="module" src="./main.js"></script>\n',
    'main.js': "import board from './board.md?raw'\nimport crlf from './crlf.md?raw'\nexport default [board, crlf]\n",
  }
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  return root
}

const read = (root: string, rel: string) => fs.readFileSync(path.join(root, rel), 'utf8')

const OPEN: Array<[string, string]> = [
  ['Alpha', 'tasks/alpha.md'],
  ['Beta', 'tasks/beta.md'],
  ['Delta', 'tasks/delta.md'],
]

afterEach(async () => {
  await server?.close()
  server = undefined
  await expect.poll(() => liveExtensionPids().length).toBe(0)
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true })
})

describe('front matter kept byte for byte', () => {
  test('sync (the real command line) writes only the generated subtree; check then passes', async () => {
    const root = makeProject()
    const check = await runTypeScript(BIN, ['check'], { cwd: root })
    expect(check.code).toBe(1)
    // the stale report shows the generated lines as they will be written
    expect(check.stdout).toContain('board.md:15 frontmatter open is stale\n')
    expect(check.stdout).toContain('    +generated:\n    +  open:\n    +    - title: Alpha\n    +      path: tasks/alpha.md\n')
    const sync = await runTypeScript(BIN, ['sync'], { cwd: root })
    expect(sync).toMatchObject({ code: 0, stderr: '' })
    expect(read(root, 'board.md')).toBe(written(OPEN, 4))
    // CRLF stays CRLF and the BOM stays
    expect(read(root, 'crlf.md')).toBe('\uFEFF' + written(OPEN, 4, '\r\n'))
    expect(await runTypeScript(BIN, ['check'], { cwd: root })).toMatchObject({ code: 0 })

    // a dependency change rewrites the generated values, nothing else
    editFile(root, 'tasks/beta.md', 'status: open', 'status: done!')
    expect(await runTypeScript(BIN, ['sync'], { cwd: root })).toMatchObject({ code: 0, stderr: '' })
    expect(read(root, 'board.md')).toBe(written([OPEN[0]!, OPEN[2]!], 4))
  })

  test('a dev server with write: true writes only the generated subtree, at start and after a dependency edit', async () => {
    const root = makeProject()
    server = await createServer({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu({ write: true })],
      server: { port: 0, watch: { usePolling: true, interval: 50 } },
    })
    const client = server.environments.client
    await client.transformRequest('/main.js')
    await expect.poll(() => read(root, 'board.md'), WAIT).toBe(written(OPEN, 4))
    await expect.poll(() => read(root, 'crlf.md'), WAIT).toBe('\uFEFF' + written(OPEN, 4, '\r\n'))
    expect(await loadRaw(client, '/board.md?raw')).toBe(written(OPEN, 4))

    editFile(root, 'tasks/alpha.md', 'status: open', 'status: closed')
    const stillOpen: Array<[string, string]> = [OPEN[1]!, OPEN[2]!]
    await expect.poll(() => read(root, 'board.md'), WAIT).toBe(written(stillOpen, 4))
    await expect.poll(() => read(root, 'crlf.md'), WAIT).toBe('\uFEFF' + written(stillOpen, 4, '\r\n'))

    // the user's own lines and the body are still byte for byte what they wrote
    const text = read(root, 'board.md')
    expect(text.split('\n').slice(1, 1 + USER_LINES.length)).toEqual(USER_LINES)
    expect(text.endsWith(`---\n${BODY}`)).toBe(true)
  })
})
