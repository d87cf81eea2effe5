/**
 * The job memo and the persistent job store, one test per invalidation rule, on a fresh copy
 * of test/fixtures/plugin-project (real files, real SQLite, real git, the real Python
 * extension): docs/tasks.md (sql region over tasks/*.md through a template), docs/snippet.md
 * (include of snippets/x.txt), docs/notes.md (the extension's count of notes/*.md), docs/git.md
 * (git://HEAD). Jobs run and reused are counted with `engine.stats`.
 */
import fs from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { type EngineOptions, InsituEngine } from '../../src/engine/engine.js'
import type { FileEvent } from '../../src/engine/dependency-graph.js'
import { copyProject, editFile, git, GIT_DOC, NOTES_DOC, readFile, removeProjects, SNIPPET_DOC, TASKS_DOC } from './plugin-project.js'

const DOCS = ['docs/tasks.md', 'docs/snippet.md', 'docs/notes.md', 'docs/git.md'] as const
const engines: InsituEngine[] = []

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()))
  removeProjects()
})

async function start(root: string, options: Partial<EngineOptions> = {}): Promise<InsituEngine> {
  const engine = await InsituEngine.create({ root, ...options })
  engines.push(engine)
  return engine
}

/** Render one document from its text on disk. */
function render(engine: InsituEngine, rel: string) {
  return engine.renderDocument(path.join(engine.root, rel), readFile(engine.root, rel))
}

async function renderAll(engine: InsituEngine): Promise<Record<string, string>> {
  const texts: Record<string, string> = {}
  for (const rel of DOCS) texts[rel] = (await render(engine, rel)).text
  return texts
}

/** Jobs run by `action`, and the ids of the jobs `action` ran, by document. */
async function jobsRunBy(engine: InsituEngine, action: () => Promise<unknown>): Promise<number> {
  const before = engine.stats.jobsRun
  await action()
  return engine.stats.jobsRun - before
}

function update(root: string, rel: string): FileEvent {
  return { type: 'update', path: path.join(root, rel) }
}

async function close(engine: InsituEngine): Promise<void> {
  engines.splice(engines.indexOf(engine), 1)
  await engine.close()
}

/**
 * A document holding one sql region per model (id: the model's name), and the models with a SQL
 * text (null: an existing model), all last modified a minute ago (as settledProject's files).
 */
function addSqlDocument(root: string, document: string, models: Record<string, string | null>): void {
  const files = [document]
  const regions = Object.keys(models).map((name) => `<!-- insitu:begin sql\nid = "${name}"\nmodel = "${name}"\n-->\n<!-- insitu:end -->\n`)
  for (const [name, sql] of Object.entries(models)) {
    if (sql === null) continue
    fs.writeFileSync(path.join(root, `insitu/models/${name}.sql`), `${sql}\n`)
    files.push(`insitu/models/${name}.sql`)
  }
  fs.writeFileSync(path.join(root, document), `# ${path.basename(document, '.md')}\n\n${regions.join('\n')}`)
  const past = new Date(Date.now() - 60_000)
  for (const rel of files) fs.utimesSync(path.join(root, rel), past, past)
}

/** The SQL of every query run on the engine's index from now on (`query` and `runQuery`) (the real queries still run: the memo's checks go through them). */
function indexQueriesOf(engine: InsituEngine): string[] {
  const queries: string[] = []
  const query = engine.index.query.bind(engine.index)
  engine.index.query = (sql, params) => {
    queries.push(sql)
    return query(sql, params)
  }
  // The project's queries run in the query sandbox (the engine's own questions stay in `query`).
  const runQuery = engine.index.runQuery.bind(engine.index)
  engine.index.runQuery = (sql, params) => {
    queries.push(sql)
    return runQuery(sql, params)
  }
  return queries
}

const JOBS_DB = '.insitu/vite-plugin-insitu/jobs.db'

/**
 * A project copy whose files were last modified a minute ago, as in a checkout: the memo
 * trusts fingerprints of files read around the host (templates, SQL models) only when they
 * were not modified just before or while the job ran.
 */
function settledProject(options: { git?: boolean } = {}): string {
  const root = copyProject(options)
  const past = new Date(Date.now() - 60_000)
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && !entry.parentPath.includes('.git')) fs.utimesSync(path.join(entry.parentPath, entry.name), past, past)
  }
  return root
}

describe('job memo', () => {
  it('re-runs no job for a prose edit: the document is spliced from the memo', async () => {
    const root = settledProject()
    const engine = await start(root)
    await renderAll(engine)
    expect(engine.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
    editFile(root, 'docs/tasks.md', '# Tasks', '# Tasks of the week')
    engine.affected([update(root, 'docs/tasks.md')])
    const result = await render(engine, 'docs/tasks.md')
    expect(result.text).toBe(TASKS_DOC('open', 'done').replace('# Tasks', '# Tasks of the week'))
    expect(result.jobs.map((j) => [j.id, j.reused])).toEqual([['all', true]])
    expect(engine.stats).toEqual({ jobsRun: 4, jobsReused: 1, queriesPatched: 0 })
  })

  it('gives the very same result object when a re-render reuses every job on the same text', async () => {
    const root = settledProject()
    const engine = await start(root)
    const first = await render(engine, 'docs/tasks.md')
    // A new front-matter key recreates the documents view (any column of any row may have
    // changed), so the document is affected; its rows (titles, statuses, paths) do not change.
    editFile(root, 'tasks/alpha.md', 'title: Alpha', 'title: Alpha\nowner: someone')
    const { owners } = engine.affected([update(root, 'tasks/alpha.md')])
    expect(owners).toContain('docs/tasks.md')
    const second = await render(engine, 'docs/tasks.md')
    expect(second).toBe(first)
    expect(second.outputHash).toMatch(/^[0-9a-f]{40}$/)
    expect(engine.stats).toEqual({ jobsRun: 1, jobsReused: 1, queriesPatched: 0 })
  })

  it('re-runs only the job that read an edited file; a touched but identical file re-runs nothing', async () => {
    const root = settledProject()
    const engine = await start(root)
    await renderAll(engine)
    fs.writeFileSync(path.join(root, 'snippets/x.txt'), readFile(root, 'snippets/x.txt'))
    engine.affected([update(root, 'snippets/x.txt')])
    expect(await jobsRunBy(engine, () => renderAll(engine))).toBe(0)

    editFile(root, 'snippets/x.txt', 'included line two', 'included line 2, edited')
    const { owners } = engine.affected([update(root, 'snippets/x.txt')])
    expect(owners).toEqual(['docs/snippet.md'])
    let texts: Record<string, string> = {}
    expect(await jobsRunBy(engine, async () => (texts = await renderAll(engine)))).toBe(1)
    expect(texts['docs/snippet.md']).toBe(SNIPPET_DOC(['included line one', 'included line 2, edited']))
  })

  it('re-runs a glob reader when a matching file is added or removed, not for other files', async () => {
    const root = settledProject()
    const engine = await start(root)
    await renderAll(engine)
    fs.writeFileSync(path.join(root, 'snippets/y.txt'), 'elsewhere\n')
    engine.affected([{ type: 'create', path: path.join(root, 'snippets/y.txt') }])
    expect(await jobsRunBy(engine, () => renderAll(engine))).toBe(0)

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    engine.affected([{ type: 'create', path: path.join(root, 'notes/three.md') }])
    let notes = ''
    expect(await jobsRunBy(engine, async () => (notes = (await render(engine, 'docs/notes.md')).text))).toBe(1)
    expect(notes).toBe(NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md']))
    // The front-matter-free notes changed the documents projection: the SQL job's rows did not.
    expect(await jobsRunBy(engine, () => render(engine, 'docs/tasks.md'))).toBe(0)

    fs.rmSync(path.join(root, 'notes/one.md'))
    engine.affected([{ type: 'delete', path: path.join(root, 'notes/one.md') }])
    expect(await jobsRunBy(engine, async () => (notes = (await render(engine, 'docs/notes.md')).text))).toBe(1)
    expect(notes).toBe(NOTES_DOC(['notes/three.md', 'notes/two.md']))
  })

  it('re-runs a SQL job when a document its query sees changes, not for one it filters out', async () => {
    const root = settledProject()
    const engine = await start(root)
    await renderAll(engine)
    // A front-matter edit of a document outside the query's `tasks/%`.
    fs.writeFileSync(path.join(root, 'notes/two.md'), '---\ntitle: Two\nstatus: open\n---\n# Two\n')
    expect(engine.affected([update(root, 'notes/two.md')]).projectionChanged).toBe(true)
    expect(await jobsRunBy(engine, () => renderAll(engine))).toBe(0)
    // A body edit of a task: the query does not select bodies.
    editFile(root, 'tasks/beta.md', '# Beta', '# Beta, the second task')
    engine.affected([update(root, 'tasks/beta.md')])
    expect(await jobsRunBy(engine, () => renderAll(engine))).toBe(0)
    // A front-matter edit of a task the query lists.
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: closed')
    engine.affected([update(root, 'tasks/alpha.md')])
    let texts: Record<string, string> = {}
    expect(await jobsRunBy(engine, async () => (texts = await renderAll(engine)))).toBe(1)
    expect(texts['docs/tasks.md']).toBe(TASKS_DOC('closed', 'done'))
  })

  it('after a body-only edit, runs no query of a job that cannot read bodies, and re-runs one that reads them', async () => {
    const root = settledProject()
    addSqlDocument(root, 'docs/sizes.md', { task_sizes: "select path, length(body) as size from documents where path like 'tasks/%' order by path" })
    const engine = await start(root)
    await renderAll(engine)
    const sizesBefore = (await render(engine, 'docs/sizes.md')).text
    // Count the index queries (the real ones still run): the memo's re-checks go through them.
    const queries = indexQueriesOf(engine)
    editFile(root, 'tasks/beta.md', '# Beta', '# Beta, the second task')
    expect(engine.affected([update(root, 'tasks/beta.md')])).toMatchObject({ projectionChanged: true })
    let sizes = ''
    // docs/tasks.md's job (titles and statuses) is neither re-run nor re-checked; the sizes job is.
    expect(await jobsRunBy(engine, async () => {
      await renderAll(engine)
      sizes = (await render(engine, 'docs/sizes.md')).text
    })).toBe(1)
    expect(sizes).not.toBe(sizesBefore)
    expect(queries.some((sql) => sql.includes('length(body)'))).toBe(true)
    // (The row rule asks SQLite whether tasks/beta.md matches `like 'tasks/%'`: no job's query.)
    expect(queries.filter((sql) => !sql.includes('length(body)') && !/^select :text (like|glob) :pattern/.test(sql))).toEqual([])
  })

  it('after a body-only edit, re-runs a job whose query reads content_hash (it hashes the body)', async () => {
    const root = settledProject()
    addSqlDocument(root, 'docs/hashes.md', { task_hashes: "select path, content_hash from documents where path like 'tasks/%' order by path" })
    const engine = await start(root)
    const before = (await render(engine, 'docs/hashes.md')).text
    editFile(root, 'tasks/beta.md', '# Beta', '# Beta, the second task')
    engine.affected([update(root, 'tasks/beta.md')])
    const after = (await render(engine, 'docs/hashes.md')).text
    const hash = engine.index.query("select content_hash from documents where path = 'tasks/beta.md'", {})[0]?.content_hash
    expect(after).not.toBe(before)
    expect(after).toContain(String(hash))
  })

  it('after a title edit, re-checks only queries that can read a changed column, and runs each once', async () => {
    const root = settledProject()
    // Both regions run at one location: each job's record also holds the other's query.
    addSqlDocument(root, 'docs/both.md', {
      all_tasks: null,
      status_counts: "select status, count(*) as n from documents where path like 'tasks/%' group by status order by status",
    })
    const engine = await start(root)
    const before = (await render(engine, 'docs/both.md')).text
    const queries = indexQueriesOf(engine)
    editFile(root, 'tasks/beta.md', 'title: Beta', 'title: Beta, renamed')
    engine.affected([update(root, 'tasks/beta.md')])
    let after = ''
    expect(await jobsRunBy(engine, async () => (after = (await render(engine, 'docs/both.md')).text))).toBe(1)
    expect(after).toBe(before.replace('| Beta |', '| Beta, renamed |'))
    // The titles query ran once (the check's rows went to the job); the status counts never.
    expect(queries.filter((sql) => sql.includes('all_tasks') || sql.includes('title, status, path'))).toHaveLength(1)
    expect(queries.filter((sql) => sql.includes('count(*)'))).toEqual([])

    queries.length = 0
    editFile(root, 'tasks/beta.md', 'status: done', 'status: doing')
    engine.affected([update(root, 'tasks/beta.md')])
    expect(await jobsRunBy(engine, async () => (after = (await render(engine, 'docs/both.md')).text))).toBe(2)
    expect(after).toContain('| doing | 1 |')
    expect(queries.filter((sql) => sql.includes('count(*)'))).toHaveLength(1)
  })

  it('re-runs a job that read a SQL model for another path when a column of that path changes', async () => {
    const root = settledProject()
    const extension = path.resolve('test/fixtures/cross-read-extension')
    fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(extension)}\n`)
    fs.writeFileSync(path.join(root, 'insitu/models/count_tasks.sql'), "select count(*) as n from documents where path like 'tasks/%'\n")
    fs.writeFileSync(path.join(root, 'insitu/models/title_of.sql'), 'select title from documents where path = :insitu_path\n')
    fs.writeFileSync(path.join(root, 'docs/cross.md'), '# Cross\n\n<!-- insitu:begin cross_read\nid = "x"\nother = "tasks/alpha.md"\n-->\n<!-- insitu:end -->\n')
    const past = new Date(Date.now() - 60_000)
    for (const rel of ['insitu.toml', 'insitu/models/count_tasks.sql', 'insitu/models/title_of.sql', 'docs/cross.md']) fs.utimesSync(path.join(root, rel), past, past)
    const engine = await start(root, { cache: false })
    expect((await render(engine, 'docs/cross.md')).text).toContain('2 tasks; other title: Alpha\n')
    // Its own recorded query (a count) names no changed column; the model read for alpha does.
    editFile(root, 'tasks/alpha.md', 'title: Alpha', 'title: Alpha renamed')
    engine.affected([update(root, 'tasks/alpha.md')])
    expect((await render(engine, 'docs/cross.md')).text).toContain('2 tasks; other title: Alpha renamed\n')
  })

  it("neither re-checks nor re-runs a query whose WHERE keeps none of the rows that changed", async () => {
    const root = settledProject()
    addSqlDocument(root, 'docs/beta.md', { beta_title: "select title from documents where path = 'tasks/beta.md'" })
    const engine = await start(root)
    expect((await render(engine, 'docs/beta.md')).text).toContain('| Beta |')
    const queries = indexQueriesOf(engine)
    // Another task's title: the query names `title`, but only of tasks/beta.md's row.
    editFile(root, 'tasks/alpha.md', 'title: Alpha', 'title: Alpha renamed')
    expect(engine.affected([update(root, 'tasks/alpha.md')]).owners).not.toContain('docs/beta.md')
    // The model file touched (same text): the job is suspect, and its check skips the query,
    // whose rows cannot have changed since its hash was taken.
    const now = new Date()
    fs.utimesSync(path.join(root, 'insitu/models/beta_title.sql'), now, now)
    expect(engine.affected([update(root, 'insitu/models/beta_title.sql')]).owners).toContain('docs/beta.md')
    expect(await jobsRunBy(engine, () => render(engine, 'docs/beta.md'))).toBe(0)
    expect(queries.filter((sql) => sql.includes('tasks/beta.md'))).toEqual([])
    // Its own row's title: affected, checked, re-run.
    editFile(root, 'tasks/beta.md', 'title: Beta', 'title: Beta renamed')
    expect(engine.affected([update(root, 'tasks/beta.md')]).owners).toContain('docs/beta.md')
    let text = ''
    expect(await jobsRunBy(engine, async () => (text = (await render(engine, 'docs/beta.md')).text))).toBe(1)
    expect(text).toContain('| Beta renamed |')
  })

  it('re-runs a job naming a SQL model it did not read through the host when a column changes', async () => {
    const root = settledProject()
    const extension = path.resolve('test/fixtures/cross-read-extension')
    fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(extension)}\n`)
    fs.writeFileSync(path.join(root, 'insitu/models/title_of.sql'), 'select title from documents where path = :insitu_path\n')
    fs.writeFileSync(path.join(root, 'insitu/models/paths.sql'), "select path from documents where path like 'tasks/%' order by path\n")
    // The claim runs while the sql region beside it queries paths at the same location, so the
    // claim's entry records that query (no title column) and no fingerprint for the model it names.
    const claim = `<!-- insitu:begin claimed_title\nid = "c"\nother = "tasks/alpha.md"\nroot = ${JSON.stringify(root)}\n-->\n<!-- insitu:end -->\n`
    const paths = '<!-- insitu:begin sql\nid = "p"\nmodel = "paths"\n-->\n<!-- insitu:end -->\n'
    fs.writeFileSync(path.join(root, 'docs/claims.md'), `# Claims\n\n${claim}\n${paths}`)
    const past = new Date(Date.now() - 60_000)
    for (const rel of ['insitu.toml', 'insitu/models/title_of.sql', 'insitu/models/paths.sql', 'docs/claims.md']) fs.utimesSync(path.join(root, rel), past, past)
    const engine = await start(root, { cache: false })
    expect((await render(engine, 'docs/claims.md')).text).toContain('claimed title: Alpha\n')
    editFile(root, 'tasks/alpha.md', 'title: Alpha', 'title: Alpha renamed')
    expect(engine.affected([update(root, 'tasks/alpha.md')]).owners).toContain('docs/claims.md')
    expect((await render(engine, 'docs/claims.md')).text).toContain('claimed title: Alpha renamed\n')
  })

  it('runs a query on the clock again on a warm start over unchanged documents', async () => {
    const root = settledProject()
    addSqlDocument(root, 'docs/clock.md', { clock: "select strftime('%Y-%m-%d %H:%M:%f', 'now') as now" })
    const first = (await render(await start(root), 'docs/clock.md')).text
    await Promise.all(engines.splice(0).map((e) => e.close()))
    await new Promise((resolve) => setTimeout(resolve, 20))
    const warm = await start(root)
    const second = (await render(warm, 'docs/clock.md')).text
    expect(warm.stats.jobsRun).toBe(1)
    expect(second).not.toBe(first)
  })

  it('re-runs a git reader after a commit, and nothing else', async () => {
    const root = settledProject({ git: true })
    const engine = await start(root)
    await renderAll(engine)
    fs.writeFileSync(path.join(root, 'snippets/y.txt'), 'committed\n')
    git(root, 'add', 'snippets/y.txt')
    git(root, 'commit', '-q', '-m', 'second')
    const oid = git(root, 'rev-parse', 'HEAD')
    const result = engine.affected([
      { type: 'create', path: path.join(root, 'snippets/y.txt') },
      update(root, '.git/refs/heads/main'),
    ])
    expect(result.gitChanged).toBe(true)
    let texts: Record<string, string> = {}
    expect(await jobsRunBy(engine, async () => (texts = await renderAll(engine)))).toBe(1)
    expect(texts['docs/git.md']).toBe(GIT_DOC(oid))
  })

  it('never stores a failed job: it runs on every render, in memory and across engines', async () => {
    const root = settledProject()
    const first = await start(root)
    expect(await jobsRunBy(first, () => render(first, 'docs/broken.md'))).toBe(1)
    const again = await render(first, 'docs/broken.md')
    expect(again.jobs.map((j) => [j.error, j.reused])).toEqual([['transform explode (extension plugin/notes) failed in boom: the fuse was lit', false]])
    expect(first.stats.jobsRun).toBe(2)
    await close(first)
    const second = await start(root)
    expect(await jobsRunBy(second, () => render(second, 'docs/broken.md'))).toBe(1)
  })

  it('never reuses a result of an extension process that has restarted', async () => {
    const root = settledProject()
    const engine = await start(root)
    await renderAll(engine)
    const pid = engine.host.pids().get('plugin/notes')!
    process.kill(pid, 'SIGKILL')
    await expect.poll(() => engine.host.pids().get('plugin/notes')).toBeUndefined()
    let notes = ''
    expect(await jobsRunBy(engine, async () => (notes = (await render(engine, 'docs/notes.md')).text))).toBe(1)
    expect(notes).toBe(NOTES_DOC(['notes/one.md', 'notes/two.md']))
    expect(engine.host.pids().get('plugin/notes')).not.toBe(pid)
    // Jobs that never involved the extension are still served.
    expect(await jobsRunBy(engine, () => render(engine, 'docs/snippet.md'))).toBe(0)
  })
})

describe('persistent job store', () => {
  it('serves every job of an unchanged project to a second engine (warm start)', async () => {
    const root = settledProject({ git: true })
    const first = await start(root)
    const cold = await renderAll(first)
    await close(first)
    expect(fs.existsSync(path.join(root, JOBS_DB))).toBe(true)

    const second = await start(root)
    expect(await renderAll(second)).toEqual(cold)
    expect(second.stats).toEqual({ jobsRun: 0, jobsReused: 4, queriesPatched: 0 })
    expect(cold['docs/tasks.md']).toBe(TASKS_DOC('open', 'done'))
  })

  it('runs no index query on a warm start over an unchanged project, and re-runs them after an offline edit', async () => {
    const root = settledProject()
    const cold = await renderAll(await start(root))
    await Promise.all(engines.splice(0).map((e) => e.close()))
    const warm = await start(root)
    const warmQueries = indexQueriesOf(warm)
    expect(await renderAll(warm)).toEqual(cold)
    expect(warm.stats.jobsRun).toBe(0)
    expect(warmQueries).toEqual([])
    await close(warm)

    editFile(root, 'tasks/beta.md', 'status: done', 'status: started')
    const edited = await start(root)
    const editedQueries = indexQueriesOf(edited)
    expect((await renderAll(edited))['docs/tasks.md']).toBe(TASKS_DOC('open', 'started'))
    expect(editedQueries.some((sql) => sql.includes("like 'tasks/%'"))).toBe(true)
  })

  it('runs no query of the documents on a start after only other files appeared (a build output), and re-runs one of entries', async () => {
    const root = settledProject()
    addSqlDocument(root, 'docs/outputs.md', { outputs: "select path from entries where path like 'out/%' order by path" })
    const first = await start(root)
    const cold = await renderAll(first)
    expect((await render(first, 'docs/outputs.md')).text).not.toContain('out/app.js')
    await close(first)

    // What a docs tool's client build leaves before its SSR build starts a second engine.
    fs.mkdirSync(path.join(root, 'out'))
    fs.writeFileSync(path.join(root, 'out/app.js'), 'export {}\n')
    const second = await start(root)
    const queries = indexQueriesOf(second)
    expect(await renderAll(second)).toEqual(cold)
    expect(second.stats.jobsRun).toBe(0)
    expect(queries).toEqual([])
    expect((await render(second, 'docs/outputs.md')).text).toContain('out/app.js')
    expect(queries.some((sql) => sql.includes("like 'out/%'"))).toBe(true)
    expect(second.stats.jobsRun).toBe(1)
  })

  it('memoizes module transforms by their code, in memory and across engines', async () => {
    const root = settledProject()
    const main = path.join(root, 'main.js')
    const rule = { transform: 'count_notes' }
    const first = await start(root)
    const code = (await first.transformModule(main, 'one', rule)).code
    expect(code).toBe('2 notes: notes/one.md, notes/two.md')
    expect(await jobsRunBy(first, () => first.transformModule(main, 'two', rule))).toBe(1)
    await close(first)
    const second = await start(root)
    expect((await second.transformModule(main, 'one', rule)).code).toBe(code)
    expect(second.stats).toEqual({ jobsRun: 0, jobsReused: 1, queriesPatched: 0 })
    expect(await jobsRunBy(second, () => second.transformModule(main, 'three', rule))).toBe(1)
  })

  it('keeps serving a stored result in a copy of the project elsewhere (a CI cache restore)', async () => {
    const root = settledProject({ git: true })
    const texts = await renderAll(await start(root))
    await Promise.all(engines.splice(0).map((e) => e.close()))
    const copy = settledProject()
    fs.rmSync(copy, { recursive: true })
    fs.cpSync(root, copy, { recursive: true, preserveTimestamps: true })
    const moved = await start(copy)
    expect(await renderAll(moved)).toEqual(texts)
    expect(moved.stats).toEqual({ jobsRun: 0, jobsReused: 4, queriesPatched: 0 })
  })

  it('validates stored results against the files before serving them', async () => {
    const root = settledProject()
    await close(await startAndRender(root))
    editFile(root, 'snippets/x.txt', 'included line one', 'included line 1, edited offline')
    editFile(root, 'tasks/beta.md', 'status: done', 'status: started')
    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    const second = await start(root)
    const texts = await renderAll(second)
    expect(texts['docs/snippet.md']).toBe(SNIPPET_DOC(['included line 1, edited offline', 'included line two']))
    expect(texts['docs/tasks.md']).toBe(TASKS_DOC('open', 'started'))
    expect(texts['docs/notes.md']).toBe(NOTES_DOC(['notes/one.md', 'notes/three.md', 'notes/two.md']))
    expect(second.stats).toEqual({ jobsRun: 3, jobsReused: 1, queriesPatched: 0 })
  })

  it('re-runs a stored git reader after a commit made while no engine ran', async () => {
    const root = settledProject({ git: true })
    await close(await startAndRender(root))
    fs.writeFileSync(path.join(root, 'snippets/y.txt'), 'committed\n')
    git(root, 'add', 'snippets/y.txt')
    git(root, 'commit', '-q', '-m', 'second')
    const second = await start(root)
    const texts = await renderAll(second)
    expect(texts['docs/git.md']).toBe(GIT_DOC(git(root, 'rev-parse', 'HEAD')))
    expect(second.stats).toEqual({ jobsRun: 1, jobsReused: 3, queriesPatched: 0 })
  })

  it("reuses nothing of an extension whose program or manifest changed", async () => {
    const root = settledProject()
    await close(await startAndRender(root))
    fs.appendFileSync(path.join(root, 'tools/notes/extension.py'), '# a new release\n')
    const second = await startAndRender(root)
    expect(second.stats).toEqual({ jobsRun: 1, jobsReused: 3, queriesPatched: 0 })
    await close(second)

    editFile(root, 'tools/notes/insitu-extension.toml', 'for the plugin fixture', 'for the plugin fixture, edited')
    const third = await start(root)
    expect(await jobsRunBy(third, () => render(third, 'docs/notes.md'))).toBe(1)
    expect(await jobsRunBy(third, () => render(third, 'docs/snippet.md'))).toBe(0)
  })

  it('reuses nothing after a config change', async () => {
    const root = settledProject()
    await close(await startAndRender(root))
    fs.appendFileSync(path.join(root, 'insitu.toml'), '\n# a comment is a change too\n')
    const second = await startAndRender(root)
    expect(second.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
  })

  it('keeps entries under the header they were computed with when two configs share the store', async () => {
    const root = settledProject()
    const other = { exclude: ['.git/**', '.insitu/**', 'dist/**', 'node_modules/**', 'snippets/y/**'] }
    await close(await startAndRender(root, other))
    const a = await start(root, other) // opens a store written under its own config
    const b = await startAndRender(root) // another config: the store is rewritten under it
    await close(b)
    await renderAll(a)
    expect(a.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
    await close(a) // written last: its config's header, its entries only
    const c = await startAndRender(root)
    expect(c.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
    await close(c)
    const d = await startAndRender(root)
    expect(d.stats).toEqual({ jobsRun: 0, jobsReused: 4, queriesPatched: 0 })
  })

  it('reuses nothing of a store written by another plugin version', async () => {
    const root = settledProject()
    await close(await startAndRender(root))
    const db = new Database(path.join(root, JOBS_DB))
    expect(db.prepare("select value from meta where key = 'plugin'").pluck().get()).toBe(
      JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
    )
    db.prepare("update meta set value = '0.0.0-other' where key = 'plugin'").run()
    db.close()
    const second = await startAndRender(root)
    expect(second.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
    await close(second)
    const third = await startAndRender(root)
    expect(third.stats).toEqual({ jobsRun: 0, jobsReused: 4, queriesPatched: 0 })
  })

  it('ignores a corrupt or foreign store with one logged line, and rebuilds it', async () => {
    for (const content of ['this is not a database\n', null]) {
      const root = settledProject()
      const file = path.join(root, JOBS_DB)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      if (content !== null) fs.writeFileSync(file, content)
      else {
        const foreign = new Database(file)
        foreign.exec('create table other (x)')
        foreign.close()
      }
      const warnings: string[] = []
      const logger = { info() {}, warn: (m: string) => void warnings.push(m), error() {} }
      const first = await startAndRender(root, { logger })
      expect(warnings).toEqual([`insitu: ignoring the job cache ${file} (${content === null ? 'not an insitu job cache' : 'file is not a database'}); rebuilding it`])
      expect(first.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
      await close(first)
      const second = await startAndRender(root, { logger })
      expect(second.stats).toEqual({ jobsRun: 0, jobsReused: 4, queriesPatched: 0 })
      expect(warnings).toHaveLength(1)
    }
  })

  it('writes nothing with cache: false', async () => {
    const root = settledProject()
    const engine = await startAndRender(root, { cache: false })
    await close(engine)
    expect(fs.existsSync(path.join(root, '.insitu'))).toBe(false)
    const second = await startAndRender(root, { cache: false })
    expect(second.stats).toEqual({ jobsRun: 4, jobsReused: 0, queriesPatched: 0 })
  })
})

async function startAndRender(root: string, options: Partial<EngineOptions> = {}): Promise<InsituEngine> {
  const engine = await start(root, options)
  await renderAll(engine)
  return engine
}
