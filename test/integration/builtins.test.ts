/**
 * The builtin transforms `include` and `tree` (SPEC §8) on real files, through a real engine
 * (its host, resolver and document index): exact outputs, options, errors and dependencies.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { locationOf } from '../../src/engine/render-document.js'

let root: string
let engine: InsituEngine

const FILES: Record<string, string> = {
  'snippets/answer.py': 'def answer():\n    return 42\n',
  'snippets/lines.txt': 'one\ntwo\nthree\nfour\n',
  'snippets/crlf.txt': 'first\r\nsecond\r\n',
  'snippets/Makefile': 'all:\n\techo hi\n',
  'snippets/ticks.md': 'Use ```js fences``` here.\n',
  'snippets/many-ticks.txt': 'a ````` b\n',
  'snippets/fence-lines.md': '# Fences\n```js\nx\n```\n   `````\n    ``````` indented four: code, not a fence\n',
  'snippets/odd-breaks.txt': 'one\x0ctwo\x1cthree\x1dfour\x1efive\x85six\u2028seven\u2029eight\x0bnine\rten\r\neleven\n',
  'snippets/bom.txt': '\ufeffwith a BOM\n',
  'snippets/managed.md': '# Managed\n\n<!-- insitu:begin tree\n-->\n\ngenerated text\n\n<!-- insitu:end -->\n',
  'docs/guide/page.md': '# Page\n',
  'docs/guide/local.txt': 'local text\n',
  'docs/shared/note.txt': 'shared note\n',
  // tree fixture: the document docs/tree/index.md lists its own folder
  'docs/tree/index.md': '# Tree\n',
  'docs/tree/zeta.txt': 'z\n',
  'docs/tree/Apple.txt': 'A\n',
  'docs/tree/apple.txt': 'a\n',
  'docs/tree/banana.txt': 'b\n',
  'docs/tree/Beta/b.txt': 'b\n',
  'docs/tree/alpha/one.txt': '1\n',
  'docs/tree/alpha/nested/deep.txt': 'deep\n',
  'docs/tree/alpha/nested/deeper/deepest.txt': 'deepest\n',
  'node_modules/pkg/index.js': '// excluded by the default sources.exclude\n',
  'docs/tree/_build/out.txt': 'build output\n',
  // a document in docs/ whose tree excludes docs/drafts/
  'docs/readme.md': '# Docs\n',
  'docs/drafts/wip.md': '# Work in progress\n',
}

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'my-site-')))
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  fs.mkdirSync(path.join(root, 'docs/tree/empty'))
  engine = await InsituEngine.create({ root })
})

afterAll(async () => {
  await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

function transform(name: string, options: Record<string, unknown>, document = 'README.md') {
  return engine.host.transform(name, options, locationOf(document))
}

async function failure(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => {
      throw new Error('expected the transform to fail')
    },
    (error: Error) => error.message,
  )
}

describe('include', () => {
  it('renders the whole file as a fenced block in the file suffix, and depends on the file', async () => {
    const result = await transform('include', { path: 'snippets/answer.py' })
    expect(result.content).toBe('```py\ndef answer():\n    return 42\n```')
    // `?raw`: the file as it is on disk (a managed document's region bodies are not blanked)
    expect(result.dependencies).toEqual(['fs:file:snippets/answer.py?raw'])
    expect(result.diagnostics).toEqual([])
  })

  it('uses an explicit language, and an empty info string for a file without suffix', async () => {
    expect((await transform('include', { path: 'snippets/answer.py', language: 'python' })).content).toBe(
      '```python\ndef answer():\n    return 42\n```',
    )
    expect((await transform('include', { path: 'snippets/Makefile' })).content).toBe('```\nall:\n\techo hi\n```')
  })

  it('reads language = "" as the file suffix, as the Python implementation does', async () => {
    expect((await transform('include', { path: 'snippets/answer.py', language: '' })).content).toBe('```py\ndef answer():\n    return 42\n```')
  })

  it("splits lines as Python's str.splitlines() does (form feed, \\x1c-\\x1e, \\x85, U+2028/9, \\v, \\r)", async () => {
    // Expected as Python 3.11 gives it: "\n".join(open(f, encoding="utf-8").read().splitlines())
    expect((await transform('include', { path: 'snippets/odd-breaks.txt', raw: true })).content).toBe(
      'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven',
    )
    expect((await transform('include', { path: 'snippets/odd-breaks.txt', raw: true, start: 2, end: 3 })).content).toBe('two\nthree')
  })

  it('keeps a BOM of the included file', async () => {
    expect((await transform('include', { path: 'snippets/bom.txt', raw: true })).content).toBe('\ufeffwith a BOM')
  })

  it('selects lines start..end (1-based, inclusive)', async () => {
    expect((await transform('include', { path: 'snippets/lines.txt', start: 2, end: 3 })).content).toBe('```txt\ntwo\nthree\n```')
    expect((await transform('include', { path: 'snippets/lines.txt', start: 3 })).content).toBe('```txt\nthree\nfour\n```')
    expect((await transform('include', { path: 'snippets/lines.txt', end: 1 })).content).toBe('```txt\none\n```')
  })

  it('raw = true gives the lines as they are, without a fence', async () => {
    expect((await transform('include', { path: 'snippets/lines.txt', raw: true })).content).toBe('one\ntwo\nthree\nfour')
    expect((await transform('include', { path: 'snippets/lines.txt', raw: true, start: 4, end: 4 })).content).toBe('four')
  })

  it('normalizes CRLF line endings', async () => {
    expect((await transform('include', { path: 'snippets/crlf.txt', raw: true })).content).toBe('first\nsecond')
  })

  it('fences with three backticks: inline code spans are no reason for a longer fence', async () => {
    expect((await transform('include', { path: 'snippets/ticks.md' })).content).toBe('```md\nUse ```js fences``` here.\n```')
    expect((await transform('include', { path: 'snippets/many-ticks.txt' })).content).toBe('```txt\na ````` b\n```')
  })

  it('makes the fence longer only than the lines that could close it (CommonMark: up to 3 spaces, 3+ backticks)', async () => {
    const text = '```js\nx\n```\n   `````\n    ``````` indented four: code, not a fence'
    expect((await transform('include', { path: 'snippets/fence-lines.md', start: 2 })).content).toBe(`\`\`\`\`\`\`md\n${text}\n\`\`\`\`\`\``)
  })

  it('includes a managed Markdown file as it is on disk: region bodies are not blanked', async () => {
    expect((await transform('include', { path: 'snippets/managed.md', raw: true })).content).toBe(
      '# Managed\n\n<!-- insitu:begin tree\n-->\n\ngenerated text\n\n<!-- insitu:end -->',
    )
    // what extensions read through fs:file: stays blanked
    expect(await engine.host.readResource('fs:file:snippets/managed.md', locationOf('README.md'), [])).toMatchObject({
      value: '# Managed\n\n<!-- insitu:begin tree\n-->\n<!-- insitu:end -->\n',
    })
  })

  it('resolves path relative to the document\'s directory', async () => {
    const local = await transform('include', { path: 'local.txt', raw: true }, 'docs/guide/page.md')
    expect(local.content).toBe('local text')
    expect(local.dependencies).toEqual(['fs:file:docs/guide/local.txt?raw'])
    const shared = await transform('include', { path: '../shared/note.txt', raw: true }, 'docs/guide/page.md')
    expect(shared.content).toBe('shared note')
    expect(shared.dependencies).toEqual(['fs:file:docs/shared/note.txt?raw'])
  })

  it('fails with SPEC messages on a missing path option, a missing file and an escape', async () => {
    expect(await failure(transform('include', {}))).toBe('include transform requires path')
    expect(await failure(transform('include', { path: '' }))).toBe('include transform requires path')
    expect(await failure(transform('include', { path: 'nowhere.txt' }, 'docs/guide/page.md'))).toBe(
      'file not found: docs/guide/nowhere.txt',
    )
    expect(await failure(transform('include', { path: '../../../outside.txt' }, 'docs/guide/page.md'))).toBe(
      'resource escapes project root: fs:file:../outside.txt',
    )
  })

  it('rejects an absolute path, naming it, instead of reading it as project-relative', async () => {
    fs.mkdirSync(path.join(root, 'etc'), { recursive: true })
    fs.writeFileSync(path.join(root, 'etc', 'passwd'), 'project file, not /etc/passwd\n')
    try {
      expect(await failure(transform('include', { path: '/etc/passwd' }))).toBe(
        'include path must be relative to the document: /etc/passwd',
      )
      expect(await failure(transform('include', { path: '/etc/passwd', raw: true }, 'docs/guide/page.md'))).toBe(
        'include path must be relative to the document: /etc/passwd',
      )
      expect(await failure(transform('include', { path: 'C:\\etc\\passwd' }))).toBe(
        'include path must be relative to the document: C:\\etc\\passwd',
      )
    } finally {
      fs.rmSync(path.join(root, 'etc'), { recursive: true })
    }
  })

  it('rejects malformed options by name', async () => {
    expect(await failure(transform('include', { path: 'snippets/lines.txt', start: 0 }))).toBe(
      `include option start must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}`,
    )
    expect(await failure(transform('include', { path: 'snippets/lines.txt', raw: 'yes' }))).toBe('include option raw must be a boolean')
    expect(await failure(transform('include', { path: 'snippets/lines.txt', start: 3, end: 2 }))).toBe(
      'include end (2) is before start (3)',
    )
  })

  it('regenerates a region of a document, keeping the directives', async () => {
    const text = '# Doc\n\n<!-- insitu:begin include\npath = "local.txt"\nraw = true\n-->\nold\n<!-- insitu:end -->\n'
    const result = await engine.renderDocument('docs/guide/region.md', text)
    expect(result.diagnostics).toEqual([])
    expect(result.text).toBe('# Doc\n\n<!-- insitu:begin include\npath = "local.txt"\nraw = true\n-->\n\nlocal text\n\n<!-- insitu:end -->\n')
    expect(result.dependencies).toEqual(['fs:file:docs/guide/local.txt?raw'])
  })
})

describe('tree', () => {
  const DOC = 'docs/tree/index.md'

  it("orders names by Python's str.casefold(), ties by code point (expected from test/fixtures/casefold/generate.py)", async () => {
    const expected = JSON.parse(fs.readFileSync(new URL('../fixtures/casefold/expected.json', import.meta.url), 'utf8')) as { sorted: string[] }
    const folder = path.join(root, 'docs/fold')
    fs.mkdirSync(folder)
    try {
      for (const name of expected.sorted) fs.writeFileSync(path.join(folder, name), '')
      const result = await transform('tree', {}, 'docs/fold/page.md')
      const names = (result.content ?? '').split('\n').slice(2, -1).map((line) => line.slice(4))
      expect(names).toEqual(expected.sorted)
    } finally {
      fs.rmSync(folder, { recursive: true })
    }
  })

  it('lists the document\'s folder to depth 1: directories first, then names case-folded', async () => {
    const result = await transform('tree', {}, DOC)
    expect(result.content).toBe(
      [
        '```text',
        'tree/',
        '├── _build/',
        '├── alpha/',
        '├── Beta/',
        '├── empty/',
        '├── Apple.txt',
        '├── apple.txt',
        '├── banana.txt',
        '├── index.md',
        '└── zeta.txt',
        '```',
      ].join('\n'),
    )
    expect(result.dependencies).toEqual(['fs:dir:docs/tree'])
  })

  it('descends `depth` levels', async () => {
    const result = await transform('tree', { depth: 3, exclude: ['_build/', '*.txt'] }, DOC)
    expect(result.content).toBe(
      [
        '```text',
        'tree/',
        '├── alpha/',
        '│   └── nested/',
        '│       └── deeper/',
        '├── Beta/',
        '├── empty/',
        '└── index.md',
        '```',
      ].join('\n'),
    )
  })

  it('directories_only lists folders only', async () => {
    const result = await transform('tree', { depth: 2, directories_only: true }, DOC)
    expect(result.content).toBe(
      ['```text', 'tree/', '├── _build/', '├── alpha/', '│   └── nested/', '├── Beta/', '└── empty/', '```'].join('\n'),
    )
  })

  it('exclude takes gitignore patterns matched against project-root-relative paths', async () => {
    const result = await transform(
      'tree',
      { depth: 2, exclude: ['docs/tree/alpha/nested/', '[Aa]pple.txt', '_build', 'empty', 'alpha/one.txt'] },
      DOC,
    )
    expect(result.content).toBe(
      [
        '```text',
        'tree/',
        '├── alpha/',
        '│   └── one.txt',
        '├── Beta/',
        '│   └── b.txt',
        '├── banana.txt',
        '├── index.md',
        '└── zeta.txt',
        '```',
      ].join('\n'),
    )
  })

  it('exclude: a folder-relative pattern with a slash does not match (patterns are root-relative)', async () => {
    const result = await transform('tree', { depth: 2, exclude: ['alpha/nested/', '_build/', 'Beta/', 'empty/', '*.txt'] }, DOC)
    expect(result.content).toBe(
      ['```text', 'tree/', '├── alpha/', '│   └── nested/', '└── index.md', '```'].join('\n'),
    )
  })

  it('exclude: `a/**` hides the folder a/ itself too, and a document in docs/ can exclude docs/drafts/', async () => {
    const inside = await transform('tree', { depth: 2, exclude: ['docs/tree/alpha/**', 'docs/tree/Beta/**', '*.txt'] }, DOC)
    expect(inside.content).toBe(
      ['```text', 'tree/', '├── _build/', '├── empty/', '└── index.md', '```'].join('\n'),
    )
    const atRoot = await transform('tree', { directories_only: true, exclude: ['snippets/**'] }, 'README.md')
    expect(atRoot.content).toBe(['```text', `${path.basename(root)}/`, '└── docs/', '```'].join('\n'))
    const drafts = await transform('tree', { depth: 2, exclude: ['docs/drafts/'] }, 'docs/index.md')
    expect(drafts.content).toBe(
      [
        '```text',
        'docs/',
        '├── guide/',
        '│   ├── local.txt',
        '│   └── page.md',
        '├── shared/',
        '│   └── note.txt',
        '├── tree/',
        '│   ├── _build/',
        '│   ├── alpha/',
        '│   ├── Beta/',
        '│   ├── empty/',
        '│   ├── Apple.txt',
        '│   ├── apple.txt',
        '│   ├── banana.txt',
        '│   ├── index.md',
        '│   └── zeta.txt',
        '└── readme.md',
        '```',
      ].join('\n'),
    )
  })

  it('depth 0 prints only the root line', async () => {
    const result = await transform('tree', { depth: 0 }, DOC)
    expect(result.content).toBe(['```text', 'tree/', '```'].join('\n'))
    expect(result.dependencies).toEqual(['fs:dir:docs/tree'])
    const atRoot = await transform('tree', { depth: 0 }, 'README.md')
    expect(atRoot.content).toBe(['```text', `${path.basename(root)}/`, '```'].join('\n'))
  })

  it('at the project root the first line is the project folder\'s name and the dependency fs:dir:.', async () => {
    const result = await transform('tree', { directories_only: true }, 'README.md')
    expect(path.basename(root)).toMatch(/^my-site-/)
    expect(result.content).toBe(['```text', `${path.basename(root)}/`, '├── docs/', '└── snippets/', '```'].join('\n'))
    expect(result.dependencies).toEqual(['fs:dir:.'])
  })

  it('rejects a depth outside 0..32 and malformed options', async () => {
    expect(await failure(transform('tree', { depth: 33 }, DOC))).toBe('tree option depth must be an integer from 0 to 32')
    expect(await failure(transform('tree', { depth: -1 }, DOC))).toBe('tree option depth must be an integer from 0 to 32')
    expect(await failure(transform('tree', { exclude: 'x' }, DOC))).toBe('tree option exclude must be an array of strings')
    expect(await failure(transform('tree', { directories_only: 1 }, DOC))).toBe('tree option directories_only must be a boolean')
  })
})
