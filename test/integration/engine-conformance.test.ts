/**
 * The engine against SPEC §6–§8 on a fixture project written from SPEC
 * (test/fixtures/conformance: tasks, SQL models, a template, a snippet, and a standard-library
 * Python extension providing `count_md` and `wrap_module`), copied to a temp folder per test:
 * documents, resources, builtins, error messages, and which documents a change affects.
 * Real extension processes, real SQLite, real git (in its own temp repository).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { locationOf } from '../../src/engine/render-document.js'
import { liveExtensionPids } from '../../src/host/process.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/conformance/', import.meta.url))
const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

let root: string
let engine: InsituEngine
let pids: number[] = []

function read(rel: string): string {
  return fs.readFileSync(path.join(root, rel), 'utf8')
}

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

/** Write the new file `rel` and check that a `create` event for it selects exactly the documents `selects`. */
function createFile(rel: string, text: string, { selects }: { selects: string[] }): void {
  write(rel, text)
  expect(engine.affected([{ type: 'create', path: rel }]).owners).toEqual(selects)
}

/** Render a document from its text on disk. */
function renderFile(rel: string) {
  return engine.renderDocument(rel, read(rel))
}

/** 1-based line of the first line of `text` containing `needle`. */
function lineOf(text: string, needle: string): number {
  const index = text.indexOf(needle)
  if (index < 0) throw new Error(`not found: ${needle}`)
  return text.slice(0, index).split('\n').length
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function failure(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => {
      throw new Error('expected a failure')
    },
    (error: Error) => error.message,
  )
}

async function openProject(files: Record<string, string> = {}, fixture = true): Promise<void> {
  // The project folder is named `conformance` (the tree's first line is the folder's name).
  root = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-conformance-'))), 'conformance')
  fs.mkdirSync(root)
  if (fixture) fs.cpSync(FIXTURE, root, { recursive: true })
  for (const [rel, text] of Object.entries(files)) write(rel, text)
}

async function startEngine(): Promise<void> {
  engine = await InsituEngine.create({ root })
  pids = [...engine.host.pids().values()]
}

afterEach(async () => {
  await engine?.close()
  await engine?.close() // idempotent
  expect(pids.filter(isAlive)).toEqual([])
  expect(liveExtensionPids()).toEqual([])
  fs.rmSync(path.dirname(root), { recursive: true, force: true })
})

const TREE = [
  '```text',
  'conformance/',
  '├── insitu/',
  '│   ├── models/',
  '│   └── templates/',
  '├── snippets/',
  '│   └── answer.py',
  '├── tasks/',
  '│   ├── alpha.md',
  '│   └── beta.md',
  '├── tools/',
  '│   └── counter/',
  '├── insitu.toml',
  '└── README.md',
  '```',
].join('\n')

const README = `---
title: Conformance
insitu:
  materializations:
    counts:
      model: counts
      target: frontmatter:/generated/counts
generated:
  counts:
    total: 2
---
# Conformance

<!-- insitu:begin sql
id = "open"
model = "open_tasks"
template = "tasks.md.j2"
-->

- [Alpha](tasks/alpha.md) — backlog

<!-- insitu:end -->

<!-- insitu:begin include
id = "snippet"
path = "snippets/answer.py"
language = "python"
-->

\`\`\`python
def answer():
    return 42
\`\`\`

<!-- insitu:end -->

<!-- insitu:begin tree
id = "layout"
depth = 2
-->

${TREE}

<!-- insitu:end -->

<!-- insitu:begin count_md
id = "count"
-->

3 files

<!-- insitu:end -->
`

describe('the conformance fixture', () => {
  beforeEach(async () => {
    await openProject()
    await startEngine()
  })

  it('renders README: sql region through the template, front matter, include, tree and an extension transform', async () => {
    const result = await renderFile('README.md')
    expect(result.diagnostics).toEqual([])
    expect(result.text).toBe(README)
    expect(result.changed).toBe(true)
    expect(result.text).toContain('- [Alpha](tasks/alpha.md) — backlog')
    expect(result.text).not.toContain('Beta')
    expect(result.text).toContain('---\ntitle: Conformance\n')
    expect(result.text).toContain('generated:\n  counts:\n    total: 2\n---\n')
    expect(result.text).toContain('```python\ndef answer():\n    return 42\n```')
    expect(result.text).toContain(`\n\n${TREE}\n\n`)
    const source = read('README.md')
    expect(result.jobs.map((j) => [j.id, j.kind, j.line, j.target, j.error])).toEqual([
      ['open', 'sql', lineOf(source, 'insitu:begin sql'), 'region', null],
      ['snippet', 'include', lineOf(source, 'insitu:begin include'), 'region', null],
      ['layout', 'tree', lineOf(source, 'insitu:begin tree'), 'region', null],
      ['count', 'count_md', lineOf(source, 'insitu:begin count_md'), 'region', null],
      ['counts', 'sql', lineOf(source, 'counts:'), 'frontmatter', null],
    ])
    expect(result.jobs[4]?.value).toEqual({ total: 2 })
    expect([...result.dependencies].sort()).toEqual([
      'fs:dir:.',
      'fs:file:insitu/models/all_tasks.sql',
      'fs:file:insitu/models/counts.sql',
      'fs:file:insitu/models/open_tasks.sql',
      'fs:file:insitu/templates/tasks.md.j2',
      'fs:file:snippets/answer.py?raw', // include reads the file as it is on disk (issue #15)
      'fs:glob:**/*.md',
      'index:documents',
    ])
    expect(engine.graph.dependenciesOf('README.md')).toEqual(result.dependencies)
  })

  it('is idempotent: rendering the output again changes nothing', async () => {
    const first = await renderFile('README.md')
    const second = await engine.renderDocument('README.md', first.text)
    expect(second.text).toBe(first.text)
    expect(second.changed).toBe(false)
    expect(second.diagnostics).toEqual([])
  })

  it('the count_md transform reads fs:glob:**/*.md: a created notes.md selects README and counts, a deletion uncounts', async () => {
    expect((await renderFile('README.md')).text).toContain('\n\n3 files\n\n')
    expect(await engine.host.readResource('fs:glob:**/*.md', locationOf('README.md'), [])).toEqual({
      value: ['README.md', 'tasks/alpha.md', 'tasks/beta.md'],
      dependencies: ['fs:glob:**/*.md'],
    })

    write('notes.md', '# Notes\n')
    expect(engine.affected([{ type: 'create', path: 'notes.md' }])).toEqual({
      owners: ['README.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    const withNotes = await renderFile('README.md')
    expect(withNotes.diagnostics).toEqual([])
    expect(withNotes.text).toContain('\n\n4 files\n\n')
    expect(withNotes.text).toContain('├── insitu.toml\n├── notes.md\n└── README.md\n```')

    fs.rmSync(path.join(root, 'notes.md'))
    expect(engine.affected([{ type: 'delete', path: path.join(root, 'notes.md') }])).toEqual({
      owners: ['README.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    const without = await renderFile('README.md')
    expect(without.text).toBe(README)
  })

  it('a created file the glob does not match selects only what lists the folder', async () => {
    await renderFile('README.md')
    write('snippets/other.py', 'x = 1\n')
    // fs:dir:. (the tree) and the entries table (index:documents) see it; the glob does not match it.
    expect(engine.affected([{ type: 'create', path: 'snippets/other.py' }])).toEqual({
      owners: ['README.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    expect((await renderFile('README.md')).text).toContain('\n\n3 files\n\n')
  })

  it('editing a task\'s status is a projection change: README is selected and the sql region lists it', async () => {
    await renderFile('README.md')
    write('tasks/beta.md', read('tasks/beta.md').replace('status: done', 'status: backlog'))
    expect(engine.affected([{ type: 'update', path: 'tasks/beta.md' }])).toEqual({
      owners: ['README.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    const result = await renderFile('README.md')
    expect(result.text).toContain('\n\n- [Alpha](tasks/alpha.md) — backlog\n- [Beta](tasks/beta.md) — backlog\n\n')
    expect(result.text).toContain('generated:\n  counts:\n    total: 2\n')
  })

  it('regenerated output never triggers its own re-run: generated bodies, generated front matter and mtimes are not projection changes', async () => {
    const rendered = await renderFile('README.md')
    const none = { owners: [], projectionChanged: false, gitChanged: false }
    write('README.md', rendered.text)
    expect(engine.affected([{ type: 'update', path: 'README.md' }])).toEqual(none)

    write('README.md', rendered.text.replace('\n\n3 files\n\n', '\n\n99 files, edited by hand inside the region\n\n'))
    expect(engine.affected([{ type: 'update', path: 'README.md' }])).toEqual(none)

    write('README.md', rendered.text.replace('    total: 2\n', '    total: 12345\n'))
    expect(engine.affected([{ type: 'update', path: 'README.md' }])).toEqual(none)

    const later = new Date(Date.now() + 60_000)
    fs.utimesSync(path.join(root, 'tasks/alpha.md'), later, later)
    expect(engine.affected([{ type: 'update', path: 'tasks/alpha.md' }])).toEqual(none)

    // The contrast: a real edit outside the regions is a projection change (README.md's own
    // row changed, so it is affected, though none of its queries names `body`).
    write('README.md', rendered.text.replace('# Conformance', '# Conformance, retitled'))
    expect(engine.affected([{ type: 'update', path: 'README.md' }])).toEqual({
      owners: ['README.md'],
      projectionChanged: true,
      gitChanged: false,
    })
    // A column its queries name (`status`, in a document they filter out) affects it.
    write('notes.md', '---\nstatus: open\n---\n# Notes\n')
    expect(engine.affected([{ type: 'create', path: 'notes.md' }]).owners).toContain('README.md')
    await renderFile('README.md') // its jobs checked again: none is suspect now
    write('notes.md', '---\nstatus: done\n---\n# Notes\n')
    expect(engine.affected([{ type: 'update', path: 'notes.md' }]).owners).toContain('README.md')
  })

  it('a failing job reports path, line, capability and region id, keeps its previous body, and other jobs still apply', async () => {
    const text = [
      '# Failing', // 1
      '', // 2
      '<!-- insitu:begin include', // 3
      'id = "missing"',
      'path = "nowhere.txt"',
      '-->',
      'previous include body',
      '<!-- insitu:end -->',
      '', // 9
      '<!-- insitu:begin nope', // 10
      'id = "odd"',
      '-->',
      'previous odd body',
      '<!-- insitu:end -->',
      '', // 15
      '<!-- insitu:begin include', // 16
      'id = "ok"',
      'path = "../snippets/answer.py"',
      'raw = true',
      '-->',
      'stale',
      '<!-- insitu:end -->',
      '',
    ].join('\n')
    const result = await engine.renderDocument('docs/failing.md', text)
    expect(result.diagnostics).toEqual([
      {
        severity: 'error',
        message: 'transform include failed in missing: file not found: docs/nowhere.txt',
        path: 'docs/failing.md',
        line: 3,
        code: 'insitu/job',
      },
      {
        severity: 'error',
        message: 'transform nope failed in odd: unknown transform: nope',
        path: 'docs/failing.md',
        line: 10,
        code: 'insitu/job',
      },
    ])
    expect(result.text).toBe(
      text.replace('-->\nstale\n<!-- insitu:end -->', '-->\n\ndef answer():\n    return 42\n\n<!-- insitu:end -->'),
    )
    expect(result.text).toContain('-->\nprevious include body\n<!-- insitu:end -->')
    expect(result.text).toContain('-->\nprevious odd body\n<!-- insitu:end -->')
    expect(result.dependencies).toEqual(['fs:file:docs/nowhere.txt?raw', 'fs:file:snippets/answer.py?raw'])
    expect(result.jobs.map((j) => j.error)).toEqual([
      'transform include failed in missing: file not found: docs/nowhere.txt',
      'transform nope failed in odd: unknown transform: nope',
      null,
    ])
  })

  it('warns about each stray insitu:end at its line and still renders the document', async () => {
    const text = [
      '# Stray', // 1
      '<!-- insitu:end -->', // 2: no begin before it
      '<!-- insitu:begin include', // 3
      'path = "../snippets/answer.py"',
      'raw = true',
      '-->',
      '<!-- insitu:end -->', // 7: closes the region
      '```',
      '<!-- insitu:end -->', // 9: in a fence, text
      '```',
      '<!-- insitu:end -->', // 11: after the region
      '',
    ].join('\n')
    const result = await engine.renderDocument('docs/stray.md', text)
    const warning = (line: number) => ({
      severity: 'warning',
      message: 'stray insitu:end without a matching begin',
      path: 'docs/stray.md',
      line,
      code: 'insitu/document',
    })
    expect(result.diagnostics).toEqual([warning(2), warning(11)])
    expect(result.text).toContain('-->\n\ndef answer():\n    return 42\n\n<!-- insitu:end -->')
  })

  it('a failed include still depends on its missing file: creating the file selects the document, which then renders it', async () => {
    const text = '# Later\n\n<!-- insitu:begin include\nid = "later"\npath = "later.txt"\nraw = true\n-->\n<!-- insitu:end -->\n'
    const failed = await engine.renderDocument('docs/later.md', text)
    expect(failed.diagnostics.map((d) => d.message)).toEqual(['transform include failed in later: file not found: docs/later.txt'])
    expect(failed.dependencies).toEqual(['fs:file:docs/later.txt?raw'])
    createFile('docs/later.txt', 'here now\n', { selects: ['docs/later.md'] })
    const rendered = await engine.renderDocument('docs/later.md', text)
    expect(rendered.diagnostics).toEqual([])
    expect(rendered.text).toContain('-->\n\nhere now\n\n<!-- insitu:end -->')
  })

  it('a failed materialize still depends on its missing fs:file source and on a missing template', async () => {
    const text = [
      '# Later',
      '',
      '<!-- insitu:begin materialize',
      'id = "later"',
      'source = "fs:file:docs/later.json"',
      'template = "later.j2"',
      '-->',
      '<!-- insitu:end -->',
      '',
    ].join('\n')
    const failed = await engine.renderDocument('docs/later.md', text)
    expect(failed.diagnostics.map((d) => d.message)).toEqual([
      'transform materialize failed in later: file not found: docs/later.json',
    ])
    expect(failed.dependencies).toEqual(['fs:file:docs/later.json'])
    createFile('docs/later.json', 'ready\n', { selects: ['docs/later.md'] })
    const noTemplate = await engine.renderDocument('docs/later.md', text)
    expect(noTemplate.diagnostics.map((d) => d.message)).toEqual([
      'transform materialize failed in later: template not found: later.j2',
    ])
    expect(noTemplate.dependencies).toEqual(['fs:file:docs/later.json', 'fs:file:insitu/templates/later.j2'])
    createFile('insitu/templates/later.j2', 'got {{ value }}', { selects: ['docs/later.md'] })
    const rendered = await engine.renderDocument('docs/later.md', text)
    expect(rendered.diagnostics).toEqual([])
    expect(rendered.text).toContain('-->\n\ngot ready\n\n<!-- insitu:end -->')
  })

  it('a failing front-matter job keeps its previous value while the other jobs apply', async () => {
    const text = [
      '---',
      'insitu:',
      '  materializations:',
      '    broken:',
      '      model: missing',
      '      target: frontmatter:/generated/broken',
      '    counts:',
      '      model: counts',
      '      target: frontmatter:/generated/counts',
      'generated:',
      '  broken: kept',
      '  counts: stale',
      '---',
      '# Doc',
      '',
      '<!-- insitu:begin include',
      'path = "snippets/answer.py"',
      'raw = true',
      '-->',
      '<!-- insitu:end -->',
      '',
    ].join('\n')
    const result = await engine.renderDocument('doc.md', text)
    expect(result.diagnostics).toEqual([
      { severity: 'error', message: 'transform sql failed in broken: unknown SQL model: missing (looked for insitu/models/missing.sql)', path: 'doc.md', line: 4, code: 'insitu/job' },
    ])
    expect(result.text).toBe(
      text
        .replace('  counts: stale\n', '  counts:\n    total: 2\n')
        .replace('-->\n<!-- insitu:end -->', '-->\n\ndef answer():\n    return 42\n\n<!-- insitu:end -->'),
    )
  })

  it('a failing extension job names the extension; a denied read names the extension and the resource', async () => {
    const text = '# Denied\n\n<!-- insitu:begin wrap_module\nid = "w"\nheader = "snippets/answer.py"\ncontent = ""\n-->\nkept\n<!-- insitu:end -->\n'
    const result = await engine.renderDocument('denied.md', text)
    expect(result.text).toBe(text)
    expect(result.diagnostics).toHaveLength(1)
    const [diagnostic] = result.diagnostics
    expect(diagnostic).toMatchObject({ severity: 'error', path: 'denied.md', line: 3, code: 'insitu/job' })
    expect(diagnostic?.message).toMatch(/^transform wrap_module \(extension conformance\/counter\) failed in w: /)
    expect(diagnostic?.message).toContain('conformance/counter may not read resource fs:file:snippets/answer.py')
  })

  it('stale edges: after re-rendering with another include path, the old file no longer selects the document', async () => {
    const region = (target: string) => `# Inc\n\n<!-- insitu:begin include\npath = "${target}"\n-->\n<!-- insitu:end -->\n`
    const first = await engine.renderDocument('docs/inc.md', region('../snippets/answer.py'))
    expect(first.dependencies).toEqual(['fs:file:snippets/answer.py?raw'])
    expect(engine.affected([{ type: 'update', path: 'snippets/answer.py' }]).owners).toEqual(['docs/inc.md'])

    const second = await engine.renderDocument('docs/inc.md', region('../insitu.toml'))
    expect(second.diagnostics).toEqual([])
    expect(second.text).toContain('```toml\n# Conformance fixture')
    expect(engine.affected([{ type: 'update', path: 'snippets/answer.py' }]).owners).toEqual([])
    expect(engine.affected([{ type: 'update', path: 'insitu.toml' }]).owners).toEqual(['docs/inc.md'])
  })

  it('transformModule runs an extension transform on a module: options + content and the module Location in, content out, dependencies recorded', async () => {
    const code = 'name,count\nalpha,1\n'
    const result = await engine.transformModule('data/x.csv', code, {
      transform: 'wrap_module',
      options: { header: 'tasks/alpha.md', label: 'tasks' },
    })
    const expected = {
      header: '# Alpha',
      location: { depth: 1, directory: 'data', path: 'data/x.csv', root: '.' },
      options: { header: 'tasks/alpha.md', label: 'tasks' },
      rows: [
        ['name', 'count'],
        ['alpha', '1'],
      ],
    }
    expect(result).toEqual({
      path: 'data/x.csv',
      code:
        'export default {"header": "# Alpha", "location": {"depth": 1, "directory": "data", "path": "data/x.csv", "root": "."}, ' +
        '"options": {"header": "tasks/alpha.md", "label": "tasks"}, "rows": [["name", "count"], ["alpha", "1"]]}',
      dependencies: ['fs:file:tasks/alpha.md'],
      diagnostics: [],
    })
    expect(JSON.parse(result.code.slice('export default '.length))).toEqual(expected)

    // Any event on a file dependency selects the module, even without a projection change.
    expect(engine.affected([{ type: 'update', path: 'tasks/alpha.md' }])).toEqual({
      owners: ['data/x.csv'],
      projectionChanged: false,
      gitChanged: false,
    })
    expect(engine.affected([{ type: 'update', path: 'tasks/beta.md' }]).owners).toEqual([])

    // A failing module transform throws with the capability, extension and module, and keeps
    // only what it tried to read (a failed read is still an input: fixing it re-runs the module).
    const message = await failure(
      engine.transformModule('data/x.csv', code, { transform: 'wrap_module', options: { header: 'snippets/answer.py' } }),
    )
    expect(message).toMatch(/^transform wrap_module \(extension conformance\/counter\) failed in data\/x\.csv: /)
    expect(message).toContain('conformance/counter may not read resource fs:file:snippets/answer.py')
    expect(engine.graph.dependenciesOf('data/x.csv')).toEqual(['fs:file:snippets/answer.py'])
    expect(engine.affected([{ type: 'update', path: 'tasks/alpha.md' }]).owners).toEqual([])
    expect(engine.affected([{ type: 'update', path: 'snippets/answer.py' }]).owners).toEqual(['data/x.csv'])
  })

  it('reads resources through the engine\'s resolver with SPEC §6 values and dependencies', async () => {
    const readme = locationOf('README.md')
    write('insitu/models/by_status.sql', 'select title from documents where status = :status order by title\n')
    write('insitu/models/here.sql', 'select :insitu_path as path, :insitu_dir as dir, :insitu_root as root, :insitu_depth as depth\n')

    expect(await engine.host.readResource('sql:model:open_tasks', readme, [])).toEqual({
      value: [{ title: 'Alpha', status: 'backlog', path: 'tasks/alpha.md' }],
      dependencies: [
        'sql:model:open_tasks',
        'index:documents',
        'fs:file:insitu/models/open_tasks.sql',
        'fs:file:insitu/models/all_tasks.sql',
      ],
    })
    expect((await engine.host.readResource('sql:model:by_status?status=done', readme, [])).value).toEqual([{ title: 'Beta' }])
    expect((await engine.host.readResource('sql:model:here', locationOf('docs/a/b.md'), [])).value).toEqual([
      { path: 'docs/a/b.md', dir: 'docs/a', root: '.', depth: 2 },
    ])
    expect((await engine.host.readResource('sql:model:here?insitu_dir=elsewhere', locationOf('docs/a/b.md'), [])).value).toEqual([
      { path: 'docs/a/b.md', dir: 'elsewhere', root: '.', depth: 2 },
    ])
    expect(await engine.host.readResource('resource:sql?model=counts', readme, [])).toEqual({
      value: [{ total: 2 }],
      dependencies: ['resource:sql?model=counts', 'index:documents', 'fs:file:insitu/models/counts.sql', 'fs:file:insitu/models/all_tasks.sql'],
    })

    // A managed document is read with its region bodies blanked (generated output never becomes input).
    write('README.md', README)
    const blanked = (await engine.host.readResource('fs:file:README.md', readme, [])).value as string
    expect(blanked).toContain('<!-- insitu:begin count_md\nid = "count"\n-->\n<!-- insitu:end -->')
    expect(blanked).not.toContain('3 files')
    expect((await engine.host.readResource('fs:file:snippets/answer.py', readme, [])).value).toBe('def answer():\n    return 42\n')

    const entries = await engine.host.readResource('fs:dir:tasks', readme, [])
    expect(entries).toEqual({
      value: [
        { path: 'tasks/alpha.md', kind: 'file' },
        { path: 'tasks/beta.md', kind: 'file' },
      ],
      dependencies: ['fs:dir:tasks'],
    })
  })

  it('resolver errors: unsupported identifiers, root escapes, missing files, trace cycles', async () => {
    const readme = locationOf('README.md')
    const readResource = (id: string, trace: string[] = []) => failure(engine.host.readResource(id, readme, trace))
    expect(await readResource('web:https://example.com/x')).toBe('unsupported host resource: web:https://example.com/x')
    expect(await readResource('fs:nope:x')).toBe('unsupported host resource: fs:nope:x')
    expect(await readResource('index:documents')).toBe('unsupported host resource: index:documents')
    expect(await readResource('fs:file:../outside.txt')).toBe('resource escapes project root: fs:file:../outside.txt')
    expect(await readResource('fs:file:/etc/hostname')).toBe('resource escapes project root: fs:file:/etc/hostname')
    expect(await readResource('fs:glob:../*.md')).toBe('resource escapes project root: fs:glob:../*.md')
    expect(await readResource('fs:dir:..')).toBe('resource escapes project root: fs:dir:..')
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-outside-'))
    try {
      fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret\n')
      fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'))
      expect(await readResource('fs:file:link.txt')).toBe('resource escapes project root: fs:file:link.txt')
    } finally {
      fs.rmSync(outside, { recursive: true, force: true })
    }
    expect(await readResource('fs:file:tasks/gamma.md')).toBe('file not found: tasks/gamma.md')
    expect(await readResource('fs:file:README.md', ['resource:x', 'fs:file:README.md'])).toBe(
      'dependency cycle: resource:x -> fs:file:README.md -> fs:file:README.md',
    )
    expect(await readResource('sql:model:missing')).toBe('unknown SQL model: missing (looked for insitu/models/missing.sql)')
    expect(await readResource('resource:nosuch')).toBe('unknown resource: nosuch')
  })
})

describe('SPEC §6–§8 messages through renderDocument', () => {
  beforeEach(async () => {
    await openProject()
    write('insitu/models/loop_a.sql', 'select * from {{ ref("loop_b") }}\n')
    write('insitu/models/loop_b.sql', 'select * from {{ ref("loop_a") }}\n')
    write('insitu/models/writes.sql', 'delete from _documents\n')
    write('insitu/models/uses_missing.sql', 'select * from {{ ref("missing") }}\n')
    await startEngine()
  })

  const region = (kind: string, options: string) => `# Doc\n\n<!-- insitu:begin ${kind}\nid = "r"\n${options}\n-->\nbefore\n<!-- insitu:end -->\n`

  const jobFailures: [string, string, string][] = [
    ['include', '', 'transform include failed in r: include transform requires path'],
    ['materialize', 'renderer = "jinja"', 'transform materialize failed in r: materialize transform requires source'],
    ['sql', 'template = "@insitu/list"', 'transform sql failed in r: SQL materialization requires model'],
    ['materialize', 'source = "web:https://example.com/x"', 'transform materialize failed in r: unsupported host resource: web:https://example.com/x'],
    ['include', 'path = "../../secret.txt"', 'transform include failed in r: resource escapes project root: fs:file:../secret.txt'],
    ['nope', '', 'transform nope failed in r: unknown transform: nope'],
    ['materialize', 'source = "nosuch"', 'transform materialize failed in r: unknown resource: nosuch'],
    ['materialize', 'source = "fs:file:snippets/answer.py"\nrenderer = "nosuch"', 'transform materialize failed in r: unknown renderer: nosuch'],
    ['sql', 'model = "missing"', 'transform sql failed in r: unknown SQL model: missing (looked for insitu/models/missing.sql)'],
    ['sql', 'model = "uses_missing"', 'transform sql failed in r: unknown SQL model: missing (looked for insitu/models/missing.sql)'],
    ['sql', 'model = "loop_a"', 'transform sql failed in r: dependency cycle: loop_a -> loop_b -> loop_a'],
    ['sql', 'model = "writes"', 'transform sql failed in r: SQL models must be a SELECT or WITH query'],
  ]

  it.each(jobFailures)('region %s with [%s] → %s', async (kind, options, message) => {
    const text = region(kind, options)
    const result = await engine.renderDocument('docs/doc.md', text)
    expect(result.diagnostics).toEqual([{ severity: 'error', message, path: 'docs/doc.md', line: 3, code: 'insitu/job' }])
    expect(result.text).toBe(text)
  })

  it('a front-matter sql materialization without model → SQL materialization requires model, at the entry\'s line', async () => {
    const text = '---\ninsitu:\n  materializations:\n    counts:\n      target: frontmatter:/generated/counts\n---\n# Doc\n'
    const result = await engine.renderDocument('doc.md', text)
    expect(result.diagnostics).toEqual([
      { severity: 'error', message: 'transform sql failed in counts: SQL materialization requires model', path: 'doc.md', line: 4, code: 'insitu/job' },
    ])
    expect(result.text).toBe(text)
  })

  const documentFailures: [string, string, string, number | null][] = [
    [
      'an unterminated region',
      '# Doc\n\ntext\n<!-- insitu:begin include\npath = "x"\n-->\nbody\n',
      'unterminated Insitu region at line 4',
      4,
    ],
    ['front matter that is not a mapping', '---\n- a\n- b\n---\n# Doc\n', 'YAML front matter must be a mapping', 1],
    [
      'a front-matter target outside /generated/',
      '---\ninsitu:\n  materializations:\n    counts:\n      model: counts\n      target: frontmatter:/title\n---\n# Doc\n',
      'frontmatter targets must be under /generated/',
      4,
    ],
    [
      'overlapping front-matter pointers',
      '---\ninsitu:\n  materializations:\n    a:\n      model: counts\n      target: frontmatter:/generated/a\n    b:\n      model: counts\n      target:\n        kind: frontmatter\n        pointer: /generated/a/b\n---\n# Doc\n',
      'multiple materializations own /generated/a / /generated/a/b',
      7,
    ],
    [
      'two regions with one id',
      '# Doc\n\n<!-- insitu:begin tree\nid = "dup"\n-->\n<!-- insitu:end -->\n<!-- insitu:begin include\nid = "dup"\npath = "x"\n-->\n<!-- insitu:end -->\n',
      'multiple materializations own region:dup / region:dup',
      null,
    ],
  ]

  it.each(documentFailures)('%s → one document diagnostic, text unchanged', async (_name, text, message, line) => {
    const result = await engine.renderDocument('doc.md', text)
    expect(result.diagnostics).toEqual([{ severity: 'error', message, path: 'doc.md', line, code: 'insitu/document' }])
    expect(result.text).toBe(text)
    expect(result.changed).toBe(false)
    expect(result.jobs).toEqual([])
  })

  it('front-matter materializations: a resource source without renderer gives the raw value, a template gives rendered content', async () => {
    const text = [
      '---',
      'insitu:',
      '  materializations:',
      '    rows:',
      '      kind: materialize',
      '      source: sql',
      '      model: open_tasks',
      '      target: frontmatter:/generated/rows',
      '    listed:',
      '      model: open_tasks',
      '      template: "@insitu/list"',
      '      target: {kind: frontmatter, pointer: /generated/lists/open}',
      '---',
      '',
      '# Doc',
      '',
    ].join('\n')
    const result = await engine.renderDocument('doc.md', text)
    expect(result.diagnostics).toEqual([])
    expect(result.text).toBe(
      [
        '---',
        'insitu:',
        '  materializations:',
        '    rows:',
        '      kind: materialize',
        '      source: sql',
        '      model: open_tasks',
        '      target: frontmatter:/generated/rows',
        '    listed:',
        '      model: open_tasks',
        '      template: "@insitu/list"',
        '      target: {kind: frontmatter, pointer: /generated/lists/open}',
        'generated:',
        '  rows:',
        '    - title: Alpha',
        '      status: backlog',
        '      path: tasks/alpha.md',
        '  lists:',
        `    open: '- {"title": "Alpha", "status": "backlog", "path": "tasks/alpha.md"}'`,
        '---',
        '',
        '# Doc',
        '',
      ].join('\n'),
    )
  })
})

describe('git resources through the engine', () => {
  const IDENTITY = ['-c', 'user.name=Insitu Test', '-c', 'user.email=insitu@example.com', '-c', 'commit.gpgsign=false']
  const DATE = '2024-01-02T03:04:05Z'

  function git(...args: string[]): string {
    return execFileSync('git', [...IDENTITY, ...args], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, GIT_AUTHOR_DATE: DATE, GIT_COMMITTER_DATE: DATE, GIT_DIR: undefined, GIT_WORK_TREE: undefined },
    }).trim()
  }

  const STATUS_DOC = [
    '# Status',
    '',
    '<!-- insitu:begin materialize',
    'id = "head"',
    'source = "git://HEAD"',
    'renderer = "jinja"',
    'template = "@insitu/json"',
    '-->',
    '<!-- insitu:end -->',
    '',
    '<!-- insitu:begin materialize',
    'id = "notes"',
    'source = "git://status/notes.txt"',
    'template = "@insitu/json"',
    '-->',
    '<!-- insitu:end -->',
    '',
    '<!-- insitu:begin materialize',
    'id = "rules"',
    'source = "git://ignore-rules"',
    'template = "@insitu/json"',
    '-->',
    '<!-- insitu:end -->',
    '',
  ].join('\n')

  beforeEach(async () => {
    await openProject({ 'notes.txt': 'first\n', '.gitignore': '*.log\n', 'status.md': STATUS_DOC }, false)
    git('init', '-q', '-b', 'main')
    git('add', '.')
    git('commit', '-q', '-m', 'initial')
    await startEngine()
  })

  it('renders git://HEAD through materialize + jinja @insitu/json', async () => {
    const oid = git('rev-parse', 'HEAD')
    const result = await renderFile('status.md')
    expect(result.diagnostics).toEqual([])
    expect(result.text).toContain(
      `id = "head"\nsource = "git://HEAD"\nrenderer = "jinja"\ntemplate = "@insitu/json"\n-->\n\n\`\`\`json\n{\n  "branch": "main",\n  "detached": false,\n  "oid": "${oid}",\n  "ref": "refs/heads/main"\n}\n\`\`\`\n\n<!-- insitu:end -->`,
    )
    expect(result.text).toContain('```json\n{\n  "flags": [],\n  "ignored": false,\n  "path": "notes.txt",\n  "tracked": true\n}\n```')
    expect(result.dependencies).toEqual(['git://HEAD', 'git://status/notes.txt', 'git://ignore-rules'])
  })

  it('resolves every git:// form', async () => {
    const oid = git('rev-parse', 'HEAD')
    const blobOid = git('rev-parse', 'HEAD:notes.txt')
    write('notes.txt', 'changed\n')
    const readme = locationOf('status.md')
    const readValue = async (id: string) => {
      const read = await engine.host.readResource(id, readme, [])
      expect(read.dependencies).toEqual([id])
      return read.value
    }
    const excludeFile = fs.existsSync(path.join(root, '.git/info/exclude'))
    expect(await readValue('git://HEAD')).toEqual({ oid, ref: 'refs/heads/main', branch: 'main', detached: false })
    expect(await readValue('git://branch')).toEqual({ name: 'main', ref: 'refs/heads/main', oid, detached: false })
    expect(await readValue('git://tracked')).toEqual(['.gitignore', 'notes.txt', 'status.md'])
    expect(await readValue('git://ignore-rules')).toEqual({
      repository: root,
      paths: excludeFile ? ['.git/info/exclude', '.gitignore'] : ['.gitignore'],
    })
    const status = { path: 'notes.txt', flags: ['worktree-modified'], tracked: true, ignored: false }
    expect(await readValue('git://status/notes.txt')).toEqual(status)
    expect(await readValue('git:///status/notes.txt')).toEqual(status)
    write('debug.log', 'x\n')
    expect(await readValue('git://status/debug.log')).toEqual({ path: 'debug.log', flags: ['ignored'], tracked: false, ignored: true })
    const diff = (await readValue('git://diff/notes.txt')) as { path: string; patch: string }
    expect(diff.path).toBe('notes.txt')
    expect(diff.patch).toContain('--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-first\n+changed\n')
    expect(await readValue('git://history/notes.txt')).toEqual([
      { oid, summary: 'initial', author: 'Insitu Test', committed_at: DATE, path: 'notes.txt' },
    ])
    expect(await readValue('git://blob/HEAD/notes.txt')).toEqual({ revision: 'HEAD', path: 'notes.txt', oid: blobOid, content: 'first\n' })
    expect(await readValue('git://blob/HEAD/missing.txt')).toBeNull()
    expect(await failure(engine.host.readResource('git://status/../outside.txt', readme, []))).toBe(
      'path escapes Git worktree: ../outside.txt',
    )
    expect(await failure(engine.host.readResource('git://nope', readme, []))).toBe('unsupported host resource: git://nope')
  })

  it('a new commit is a git change: affected reports gitChanged and selects the git-dependent document', async () => {
    const before = await renderFile('status.md')
    const oldOid = git('rev-parse', 'HEAD')
    write('notes.txt', 'second\n')
    git('commit', '-q', '-am', 'second')
    const newOid = git('rev-parse', 'HEAD')
    expect(newOid).not.toBe(oldOid)

    expect(engine.affected([{ type: 'update', path: path.join(root, '.git/refs/heads/main') }])).toEqual({
      owners: ['status.md'],
      projectionChanged: false,
      gitChanged: true,
    })
    expect(engine.affected([{ type: 'update', path: path.join(root, '.git/HEAD') }]).gitChanged).toBe(true)
    expect(engine.affected([{ type: 'update', path: path.join(root, '.git/index') }]).owners).toEqual(['status.md'])
    expect(engine.affected([{ type: 'update', path: path.join(root, '.git/refs/heads/main.lock') }])).toEqual({
      owners: [],
      projectionChanged: false,
      gitChanged: false,
    })

    const after = await renderFile('status.md')
    expect(before.text).toContain(`"oid": "${oldOid}"`)
    expect(after.text).toContain(`"oid": "${newOid}"`)
    expect(after.text).not.toContain(oldOid)
  })

  it('git://status/<p> selects on an event at p, git://ignore-rules on a .gitignore event, without a git change', async () => {
    await renderFile('status.md')
    write('notes.txt', 'edited\n')
    expect(engine.affected([{ type: 'update', path: 'notes.txt' }])).toEqual({
      owners: ['status.md'],
      projectionChanged: false,
      gitChanged: false,
    })
    write('sub/.gitignore', '*.tmp\n')
    expect(engine.affected([{ type: 'create', path: 'sub/.gitignore' }]).owners).toEqual(['status.md'])
    write('other.txt', 'x\n')
    expect(engine.affected([{ type: 'update', path: 'other.txt' }]).owners).toEqual([])
  })
})

describe('the engine layers are build-tool agnostic', () => {
  it('src/engine, host, resources, documents and builtins never import vite or rollup', () => {
    const offenders: string[] = []
    let checked = 0
    for (const layer of ['engine', 'host', 'resources', 'documents', 'builtins']) {
      for (const entry of fs.readdirSync(path.join(SRC, layer), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith('.ts')) continue
        const file = path.join(entry.parentPath, entry.name)
        const text = fs.readFileSync(file, 'utf8')
        checked++
        if (/(?:from|import)\s*\(?\s*['"](?:vite|rollup)(?:\/[^'"]*)?['"]/.test(text) || /require\(\s*['"](?:vite|rollup)/.test(text)) {
          offenders.push(path.relative(SRC, file))
        }
      }
    }
    expect(checked).toBeGreaterThan(20)
    expect(offenders).toEqual([])
  })
})
