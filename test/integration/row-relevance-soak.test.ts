/**
 * The row rule (src/engine/query-rows.ts) against the real engine, by random edits: after each
 * edit and `affected()`, every document as the engine serves it (its caches and job memo, which
 * skip documents and queries the rule says cannot see the edit) must equal what a fresh engine
 * renders. Models mix the shapes the rule reads (folder and section filters, LIKE's ASCII case,
 * GLOB, name and stem) with shapes it must not (or, between, a subquery, select *). Seeded: a
 * failure names its seed and step.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'

let root: string
let engine: InsituEngine

const FOLDERS = ['tasks/a', 'tasks/b', 'tasks/B', 'tasks/a_b', 'notes']
const MODELS: Record<string, string> = {
  folder: "select title, status from documents where parent = :insitu_dir and name != 'index.md' order by path",
  section: "select title from documents where path like 'TASKS/A%' order by path",
  escaped: "select title from documents where path like 'tasks/a!_%' escape '!' order by path",
  globbed: "select path, status from documents where path glob 'tasks/[bB]/*' and stem <> 'index' order by path",
  named: "select path, title from documents where name = 'two.md' order by path",
  own: 'select title, status from documents where path = :insitu_path',
  either: "select title from documents where parent = :insitu_dir or status = 'blocked' order by path",
  // `or` binds looser than `and`: the equality is no conjunct of the whole clause.
  sneaky: "select title from documents where status = 'blocked' or priority = 3 and parent = :insitu_dir order by path",
  ranged: 'select title from documents where priority between 1 and 2 and parent = :insitu_dir order by path',
  counted: "select status, count(*) as n from documents where parent = :insitu_dir and (select count(*) from documents where status = 'done') >= 0 group by status order by status",
  starred: "select * from documents where parent = 'tasks/b' order by path",
  // Conjuncts on front-matter values, and shapes whose rows a check patches by path (issue #38).
  valued: "select title, path from documents where status = 'open' and parent = :insitu_dir order by path",
  unfinished: "select path, title, status from documents where status != 'done' and name != 'index.md' order by path",
  aliased: "select d.Path, d.title from documents d where d.status = 'blocked' order by d.path asc",
  keyed: "select path, owner0 from documents where owner0 = 'someone' order by path",
  // A subquery over the row's own JSON reads no other row.
  ownkeys: "select title, (select group_concat(key, ',') from json_each(documents.frontmatter)) as keys from documents where parent = :insitu_dir order by path",
}

const DOCUMENT_MODELS: Record<string, string[]> = {
  'index.md': ['folder', 'own', 'named'],
  'sections.md': ['section', 'escaped', 'globbed'],
  'mixed.md': ['either', 'ranged', 'counted', 'starred'],
  'sneaky.md': ['sneaky'],
  'values.md': ['valued', 'unfinished', 'aliased', 'keyed', 'ownkeys'],
}

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

function region(id: string, model: string): string {
  return `<!-- insitu:begin sql\nid = "${id}"\nmodel = "${model}"\n-->\n<!-- insitu:end -->\n`
}

function taskText(title: string, status: string, priority: number, extra = ''): string {
  return `---\ntitle: ${title}\nstatus: ${status}\npriority: ${priority}\n${extra}---\n\nBody of ${title}.\n`
}

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const documents: string[] = []
const tasks: string[] = []

beforeEach(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-row-soak-')))
  write('insitu.toml', 'version = 1\n')
  for (const [name, sql] of Object.entries(MODELS)) write(`insitu/models/${name}.sql`, `${sql}\n`)
  documents.length = 0
  tasks.length = 0
  for (const folder of FOLDERS) {
    for (const name of ['one.md', 'two.md', 'three.md']) {
      const rel = `${folder}/${name}`
      write(rel, taskText(`${folder} ${name}`, 'open', 1))
      tasks.push(rel)
    }
    // Documents whose every query the rule reads, and one whose queries it must not skip.
    for (const [name, models] of Object.entries(DOCUMENT_MODELS)) {
      const document = `${folder}/${name}`
      write(document, `# ${folder}\n\n${models.map((model) => region(model, model)).join('\n')}`)
      documents.push(document)
    }
  }
  engine = await InsituEngine.create({ root, cache: false })
  for (const rel of documents) await render(engine, rel)
})

afterEach(async () => {
  await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

async function render(on: InsituEngine, rel: string): Promise<string> {
  return (await on.renderDocument(path.join(root, rel), fs.readFileSync(path.join(root, rel), 'utf8'))).text
}

test.each([1, 2, 3])('served documents equal a fresh render after every random edit (seed %i)', async (seed) => {
  const next = random(seed)
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T
  let skipped = 0
  for (let step = 0; step < 40; step++) {
    const rel = pick(tasks)
    const kind = pick(['title', 'status', 'priority', 'body', 'key', 'index'] as const)
    const text = fs.readFileSync(path.join(root, rel), 'utf8')
    let edited: string
    let target = rel
    if (kind === 'title') edited = text.replace(/^title: .*$/m, `title: ${rel} v${step}`)
    else if (kind === 'status') edited = text.replace(/^status: .*$/m, `status: ${pick(['open', 'done', 'blocked'])}`)
    else if (kind === 'priority') edited = text.replace(/^priority: .*$/m, `priority: ${1 + Math.floor(next() * 3)}`)
    else if (kind === 'body') edited = text.replace(/^Body of .*$/m, `Body of ${rel}, step ${step}.`)
    else if (kind === 'key') edited = text.replace(/^---\n/, `---\nowner${step % 3}: ${pick(['someone', 'nobody'])}\n`)
    else {
      // An index's own prose: its row changes (body), every other index's queries cannot see it.
      target = pick(documents)
      edited = fs.readFileSync(path.join(root, target), 'utf8').replace(/^# .*$/m, `# ${target} step ${step}`)
    }
    write(target, edited)
    const affected = engine.affected([{ type: 'update', path: target }])
    skipped += documents.length - affected.owners.filter((owner) => documents.includes(owner)).length
    const served: string[] = []
    for (const doc of documents) served.push(await render(engine, doc))
    const fresh = await InsituEngine.create({ root, cache: false })
    try {
      const expected: string[] = []
      for (const doc of documents) expected.push(await render(fresh, doc))
      expect({ seed, step, kind, target, served }).toEqual({ seed, step, kind, target, served: expected })
    } finally {
      await fresh.close()
    }
  }
  // The rule did leave documents out, and checks did patch rows (the check is not vacuous).
  expect(skipped).toBeGreaterThan(200)
  expect(engine.stats.queriesPatched).toBeGreaterThan(20)
})
