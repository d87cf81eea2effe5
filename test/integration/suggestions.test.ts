/**
 * "Did you mean …?" (issue #18) through a real engine on a real project: every message keeps
 * SPEC's exact text as its prefix and adds the nearest name the project knows (capabilities of
 * that kind, builtin option keys, SQL models, templates), and a region's TOML with a bare string
 * says how to quote it. Also the edit distance itself (values/did-you-mean.ts).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { closestName, didYouMean } from '../../src/values/did-you-mean.js'

let root: string
let engine: InsituEngine

const FILES: Record<string, string> = {
  'insitu/models/open_tasks.sql': "select title from documents where status = 'open' order by title\n",
  'insitu/models/reports/done.sql': "select title from documents where status = 'done'\n",
  'insitu/templates/tasks.md.j2': '{% for row in rows %}- {{ row.title }}\n{% endfor %}',
  'tasks/a.md': '---\ntitle: A\nstatus: open\n---\n',
  'snippets/a.txt': 'alpha\n',
  'docs/x.md': '# X\n',
}

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-suggest-')))
  for (const [rel, text] of Object.entries(FILES)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  engine = await InsituEngine.create({ root, cache: false })
})

afterAll(async () => {
  await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

/** The messages of a one-region document `docs/x.md` whose region has this begin line and header. */
async function messagesOf(kind: string, header: string): Promise<{ severity: string; message: string }[]> {
  const text = `# X\n\n<!-- insitu:begin ${kind}\n${header}\n-->\n<!-- insitu:end -->\n`
  const result = await engine.renderDocument(path.join(root, 'docs/x.md'), text)
  // "transform <kind> failed in <id>: " is the engine's frame around the capability's message.
  return result.diagnostics.map((d) => ({ severity: d.severity, message: d.message.replace(/^transform \S+ failed in \S+: /, '') }))
}

describe('suggestions in messages', () => {
  it('an unknown capability: the nearest of that kind (transform, resource, renderer)', async () => {
    expect(await messagesOf('includ', 'path = "../snippets/a.txt"')).toEqual([{ severity: 'error', message: 'unknown transform: includ; did you mean include?' }])
    expect(await messagesOf('materialize', 'source = "sqll"\nmodel = "open_tasks"')).toEqual([
      { severity: 'error', message: 'unknown resource: sqll; did you mean sql?' },
    ])
    expect(await messagesOf('materialize', 'source = "sql"\nmodel = "open_tasks"\nrenderer = "jinj"')).toEqual([
      { severity: 'error', message: 'unknown renderer: jinj; did you mean jinja?' },
    ])
    // Nothing close: SPEC's message alone.
    expect(await messagesOf('nothing_like_it', '')).toEqual([{ severity: 'error', message: 'unknown transform: nothing_like_it' }])
  })

  it('an unknown SQL model and an unknown template: the nearest existing one', async () => {
    expect(await messagesOf('sql', 'model = "open_taks"')).toEqual([
      { severity: 'error', message: 'unknown SQL model: open_taks (looked for insitu/models/open_taks.sql); did you mean open_tasks?' },
    ])
    expect(await messagesOf('sql', 'model = "report/done"')).toEqual([
      { severity: 'error', message: 'unknown SQL model: report/done (looked for insitu/models/report/done.sql); did you mean reports/done?' },
    ])
    const [template] = await messagesOf('sql', 'model = "open_tasks"\ntemplate = "task.md.j2"')
    expect(template!.message).toMatch(/template not found: task\.md\.j2; did you mean tasks\.md\.j2\?$/)
    const [builtin] = await messagesOf('sql', 'model = "open_tasks"\ntemplate = "@insitu/tabel"')
    expect(builtin!.message).toMatch(/unknown builtin template: @insitu\/tabel; did you mean @insitu\/table\?$/)
  })

  it("an option key a builtin does not read: a warning, or part of the job's error", async () => {
    expect(await messagesOf('tree', 'dpth = 2')).toEqual([{ severity: 'warning', message: 'unknown tree option: dpth; did you mean depth?' }])
    expect(await messagesOf('include', 'pth = "../snippets/a.txt"')).toEqual([
      { severity: 'error', message: 'include transform requires path (unknown include option: pth; did you mean path?)' },
    ])
    expect(await messagesOf('include', 'path = "../snippets/a.txt"\nstrat = 1\ncolour = "red"')).toEqual([
      { severity: 'warning', message: 'unknown include options: strat (did you mean start?), colour' },
    ])
    // `id` and `kind` are every region's; materialize hands every option on: no warning.
    expect(await messagesOf('include', 'id = "a"\nkind = "include"\npath = "../snippets/a.txt"')).toEqual([])
    expect(await messagesOf('materialize', 'source = "sql"\nmodel = "open_tasks"\nanything = 1')).toEqual([])
  })

  it('a bare string in the TOML header: how to quote it', async () => {
    expect(await messagesOf('include', 'path = ../snippets/a.txt')).toEqual([
      {
        severity: 'error',
        message: 'invalid TOML in Insitu region at line 3: invalid value (line 4, column 8); strings need quotes: path = "../snippets/a.txt"',
      },
    ])
    expect(await messagesOf('include', 'path = "../snippets/a.txt"\nraw = True')).toEqual([
      { severity: 'error', message: 'invalid TOML in Insitu region at line 3: invalid value (line 5, column 7); booleans are lowercase: raw = true' },
    ])
  })
})

describe('closestName', () => {
  it('finds the nearest name within a third of its length, ignoring case, ties to the first listed', () => {
    expect(closestName('includ', ['sql', 'include', 'tree'])).toBe('include')
    expect(closestName('TREE', ['tree'])).toBe('tree')
    expect(closestName('pth', ['path', 'start'])).toBe('path')
    expect(closestName('tere', ['tree'])).toBe('tree') // a swap of neighbours is one edit
    expect(closestName('nope', ['sql', 'tree'])).toBeUndefined()
    expect(closestName('ab', ['ac', 'ad'])).toBe('ac')
    expect(closestName('tree', ['tree'])).toBeUndefined() // never the name itself
    expect(closestName('@insitu/nope', ['@insitu/table', '@insitu/list', '@insitu/json'])).toBeUndefined()
    expect(closestName('@insitu/tabel', ['@insitu/table', '@insitu/list', '@insitu/json'])).toBe('@insitu/table')
    expect(didYouMean('open_taks', ['open_tasks', 'closed'])).toBe('; did you mean open_tasks?')
    expect(didYouMean('zzz', ['open_tasks'])).toBe('')
  })
})
