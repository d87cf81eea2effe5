/**
 * Which documents an edit of another document affects when only some columns of the index
 * changed (issue #17): a document whose sql jobs cannot read a changed column is not affected
 * (a prose edit changes `body`, so a list of titles is not re-checked), one whose jobs can is,
 * and every document renders what a fresh engine renders. Real files, real SQLite.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'

let root: string
let engine: InsituEngine

const DOCUMENTS = ['tasks/a/index.md', 'tasks/b/index.md', 'all.md', 'broken.md', 'mixed.md']

function write(rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

function sqlRegion(model: string): string {
  return `# Doc\n\n<!-- insitu:begin sql\nid = "r"\nmodel = "${model}"\n-->\n<!-- insitu:end -->\n`
}

function task(title: string, body: string): string {
  return `---\ntitle: ${title}\nstatus: open\n---\n\n${body}\n`
}

async function render(on: InsituEngine, rel: string): Promise<string> {
  return (await on.renderDocument(path.join(root, rel), fs.readFileSync(path.join(root, rel), 'utf8'))).text
}

/** Every document as this engine serves it now, and as a fresh engine renders it. */
async function servedAndFresh(): Promise<{ served: string[]; fresh: string[] }> {
  const served: string[] = []
  for (const rel of DOCUMENTS) served.push(await render(engine, rel))
  const other = await InsituEngine.create({ root, cache: false })
  try {
    const fresh: string[] = []
    for (const rel of DOCUMENTS) fresh.push(await render(other, rel))
    return { served, fresh }
  } finally {
    await other.close()
  }
}

beforeEach(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-column-readers-')))
  write('insitu.toml', 'version = 1\n')
  write('insitu/models/titles.sql', "select title, path from documents where parent = :insitu_dir and name != 'index.md' order by path\n")
  write('insitu/models/everything.sql', "select * from documents where parent = 'tasks/a' and name != 'index.md' order by path\n")
  write('insitu/models/broken.sql', 'select title from no_such_table\n')
  write('tasks/a/one.md', task('One', 'The first task.'))
  write('tasks/a/two.md', task('Two', 'The second task.'))
  write('tasks/b/three.md', task('Three', 'The third task.'))
  write('tasks/a/index.md', sqlRegion('titles'))
  write('tasks/b/index.md', sqlRegion('titles'))
  write('all.md', sqlRegion('everything'))
  write('broken.md', sqlRegion('broken'))
  // A job that reads no index beside one that reads titles: only the second is about the index.
  write('snippets/x.txt', 'included line\n')
  write('mixed.md', `${sqlRegion('titles')}\n<!-- insitu:begin include\nid = "inc"\npath = "snippets/x.txt"\n-->\n<!-- insitu:end -->\n`)
  engine = await InsituEngine.create({ root, cache: false })
  for (const rel of DOCUMENTS) await render(engine, rel)
})

afterEach(async () => {
  await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

test("a body edit affects only the documents whose queries can read `body`, and a job that failed", async () => {
  write('tasks/a/one.md', task('One', 'The first task, described at length.'))
  const affected = engine.affected([{ type: 'update', path: 'tasks/a/one.md' }])
  // `select *` reads every column; a failed job is not kept in the memo (it may read anything).
  // mixed.md's include reads no index, and its list names no `body`: not affected.
  expect(affected.owners).toEqual(['all.md', 'broken.md'])
  const { served, fresh } = await servedAndFresh()
  expect(served).toEqual(fresh)
  expect(served[2]).toContain('described at length')
})

test('a title edit affects the documents whose queries name `title` and can keep the edited row', async () => {
  write('tasks/a/one.md', task('One, renamed', 'The first task.'))
  const affected = engine.affected([{ type: 'update', path: 'tasks/a/one.md' }])
  // tasks/b/index.md and mixed.md list the titles of their own folders (`parent = :insitu_dir`:
  // tasks/b and the root), which cannot hold tasks/a/one.md: not affected.
  expect(affected.owners).toEqual(['all.md', 'broken.md', 'tasks/a/index.md'])
  const { served, fresh } = await servedAndFresh()
  expect(served).toEqual(fresh)
  expect(served[0]).toContain('One, renamed')
})

test('a document whose own row changed is affected as a reader of the index, whatever its jobs read', async () => {
  write('tasks/b/index.md', sqlRegion('titles').replace('# Doc', '# Folder b'))
  const affected = engine.affected([{ type: 'update', path: 'tasks/b/index.md' }])
  // all.md reads every column, but only of the rows in tasks/a (`parent = 'tasks/a'`).
  expect(affected.owners).toEqual(['broken.md', 'tasks/b/index.md'])
  const { served, fresh } = await servedAndFresh()
  expect(served).toEqual(fresh)
  expect(served[1]).toContain('# Folder b')
})

test('rows that appear or go affect every reader of the index, as before', async () => {
  write('tasks/b/four.md', task('Four', 'A new task.'))
  const affected = engine.affected([{ type: 'create', path: 'tasks/b/four.md' }])
  expect(affected.owners).toEqual(['all.md', 'broken.md', 'mixed.md', 'tasks/a/index.md', 'tasks/b/index.md'])
  const { served, fresh } = await servedAndFresh()
  expect(served).toEqual(fresh)
  expect(served[1]).toContain('Four')
})

test('renders of two texts that overlap leave the jobs of both: either text may be what a page shows', async () => {
  write('insitu/models/statuses.sql', "select status, path from documents where parent = 'tasks/a' and name != 'index.md' order by path\n")
  const file = path.join(root, 'overlap.md')
  const readsStatus = sqlRegion('statuses')
  const readsTitles = sqlRegion('titles')
  write('overlap.md', readsTitles)
  // Both in flight at once; the second (titles only) finishes last.
  await Promise.all([engine.renderDocument(file, readsStatus), engine.renderDocument(file, readsTitles)])
  write('tasks/a/one.md', task('One', 'The first task.').replace('status: open', 'status: done'))
  const affected = engine.affected([{ type: 'update', path: 'tasks/a/one.md' }])
  expect(affected.owners).toContain('overlap.md')
})

test("a LIKE or GLOB on the path keeps out an edit elsewhere, asked of the index's SQLite (its ASCII case rule)", async () => {
  write('insitu/models/b_like.sql', "select title from documents where path like 'TASKS/B/%' order by path\n")
  write('insitu/models/a_glob.sql', "select title from documents where path glob 'tasks/a/*' and name <> 'index.md' order by path\n")
  write('like.md', sqlRegion('b_like'))
  write('glob.md', sqlRegion('a_glob'))
  expect(await render(engine, 'like.md')).toContain('| Three |')
  expect(await render(engine, 'glob.md')).toContain('| One |')
  write('tasks/a/one.md', task('One, renamed', 'The first task.'))
  // LIKE ignores ASCII case: `TASKS/B/%` matches tasks/b only, not tasks/a.
  const affected = engine.affected([{ type: 'update', path: 'tasks/a/one.md' }])
  expect(affected.owners).toContain('glob.md')
  expect(affected.owners).not.toContain('like.md')
  expect(await render(engine, 'glob.md')).toContain('| One, renamed |')
  write('tasks/b/three.md', task('Three, renamed', 'The third task.'))
  const second = engine.affected([{ type: 'update', path: 'tasks/b/three.md' }])
  expect(second.owners).toContain('like.md')
  expect(second.owners).not.toContain('glob.md')
  expect(await render(engine, 'like.md')).toContain('| Three, renamed |')
})
