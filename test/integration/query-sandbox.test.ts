/**
 * The query sandbox (src/documents/query-sandbox.ts on src/sandbox/process-pool.ts): the
 * project's SQL queries run in child processes holding a copy of the document index, so a query that never ends is stopped at its
 * budget and never holds this process (issue #34). Real processes, real SQLite, real files.
 *
 * - The copy follows the index: every write before a query is seen by it (a new document, an
 *   edit, a new front-matter key, which recreates the `documents` view), and a rolled-back
 *   transaction leaves nothing to replay (index-journal.ts).
 * - A runaway query fails with `QueryTimeoutError` at its budget, while this event loop keeps
 *   turning and a query asked meanwhile is answered by another process long before the budget.
 * - Rows over the size bound fail with `QueryTooLargeError`; a process that dies fails its query
 *   with what happened and the next query is answered; the journal's bound lets a lagging copy go
 *   and a fresh one sees every row; `close()` leaves no process alive.
 * - A process started before the index is read and given its copy after follows later writes; an
 *   engine with SQL models starts one at once, but a one-shot build that reuses its job store
 *   starts none, nor does a start that finds its index as its snapshot left it (`deferQueryProcess`,
 *   a dev server's) until a query asks for one or `startQueryProcess()`.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { InsituEngine } from '../../src/engine/engine.js'
import { IndexJournal, MAX_JOURNAL_BYTES } from '../../src/documents/index-journal.js'
import { queryHooks, QueryTimeoutError, QueryTooLargeError, runQuery } from '../../src/documents/query-sandbox.js'
import { liveSandboxPids, MAX_PROCESSES, ProcessPool, SLOW_MS } from '../../src/sandbox/process-pool.js'

/** A pool of copies of a bare database's index, as the document index makes one. */
function querySandbox(db: Database.Database, options: { maxRowBytes?: number } = {}) {
  const pool = new ProcessPool(queryHooks(new IndexJournal(db), options))
  closers.push(() => pool.close(), () => db.close())
  return { query: (sql: string, params: Record<string, unknown>) => runQuery(pool, sql, params, 30_000) }
}

const folders: string[] = []
const closers: (() => unknown)[] = []

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
  expect(liveSandboxPids()).toEqual([])
})

function project(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-sandbox-'))
  folders.push(root)
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), text)
  }
  return root
}

function openIndex(root: string, queryTimeoutMs = 30_000): DocumentIndex {
  const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false, queryTimeoutMs })
  index.rebuild()
  closers.push(async () => {
    await index.closeQueries()
    index.close()
  })
  return index
}

/** A project whose README has a table of the documents' titles, through a SQL model. */
const TITLES_PROJECT = {
  'insitu.toml': 'version = 1\n',
  'insitu/models/titles.sql': 'select title from documents order by path\n',
  'README.md': '<!-- insitu:begin sql\nmodel = "titles"\n-->\n<!-- insitu:end -->\n',
  'a.md': '---\ntitle: A\n---\n',
}

const RUNAWAY = 'with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) as c from n'

describe('the copy follows the index', () => {
  it('sees every write made before the query: a new document, an edit, a new front-matter key', async () => {
    const root = project({ 'a.md': '---\ntitle: A\n---\n# A\n' })
    const index = openIndex(root)
    expect(await index.runQuery('select path, title from documents order by path')).toEqual([{ path: 'a.md', title: 'A' }])

    fs.writeFileSync(path.join(root, 'b.md'), '---\ntitle: B\nowner: ann\n---\n# B\n')
    fs.writeFileSync(path.join(root, 'a.md'), '---\ntitle: A, edited\n---\n# A\n')
    index.refresh([
      { type: 'create', path: 'b.md' },
      { type: 'update', path: 'a.md' },
    ])
    // `owner` is a new key: the view is recreated with a column for it.
    expect(await index.runQuery('select path, title, owner from documents order by path')).toEqual([
      { path: 'a.md', title: 'A, edited', owner: null },
      { path: 'b.md', title: 'B', owner: 'ann' },
    ])
    // The same rows as this process's own copy, with the same parameters.
    const sql = 'select path, length(body) as size from documents where title like :t'
    expect(await index.runQuery(sql, { t: 'A%' })).toEqual(index.query(sql, { t: 'A%' }))

    fs.rmSync(path.join(root, 'b.md'))
    index.refresh([{ type: 'delete', path: 'b.md' }])
    expect(await index.runQuery('select count(*) as n from documents')).toEqual([{ n: 1 }])
  })

  it('queries sent before a write see the rows before it, those sent after see it', async () => {
    const root = project({ 'a.md': '# A\n' })
    const index = openIndex(root)
    await index.runQuery('select 1')
    const before = index.runQuery('select count(*) as n from documents')
    fs.writeFileSync(path.join(root, 'b.md'), '# B\n')
    index.refresh([{ type: 'create', path: 'b.md' }])
    const after = index.runQuery('select count(*) as n from documents')
    expect(await before).toEqual([{ n: 1 }])
    expect(await after).toEqual([{ n: 2 }])
  })

  it('a rolled-back transaction leaves nothing to replay', () => {
    const db = new Database(':memory:')
    const journal = new IndexJournal(db)
    db.exec('create table t (x)')
    const { position } = journal.snapshot()
    const insert = db.prepare('insert into t values (?)')
    insert.run(1)
    expect(() =>
      db.transaction(() => {
        insert.run(2)
        throw new Error('rolled back')
      })(),
    ).toThrow('rolled back')
    expect(journal.since(position)).toEqual([{ sql: 'insert into t values (?)', args: [1] }])
    db.close()
  })

  it('a copy that can no longer follow (the journal dropped what it had not received) is replaced by a fresh one', async () => {
    const db = new Database(':memory:')
    db.exec('create table t (x)')
    const journal = new IndexJournal(db)
    const pool = new ProcessPool(queryHooks(journal))
    closers.push(() => pool.close(), () => db.close())
    const sandbox = { query: (sql: string, params: Record<string, unknown>) => runQuery(pool, sql, params, 30_000) }
    expect(await sandbox.query('select count(*) as n from t', {})).toEqual([{ n: 0 }])
    const [first] = liveSandboxPids()
    // More than the journal holds, written while no query came.
    const chunk = 'x'.repeat(1024 * 1024)
    const insert = db.prepare('insert into t values (?)')
    for (let written = 0; written <= MAX_JOURNAL_BYTES; written += chunk.length) insert.run(chunk)
    expect(journal.end - journal.start).toBeLessThan(40)
    const rows = (await sandbox.query('select count(*) as n from t', {})) as { n: number }[]
    expect(rows[0]!.n).toBeGreaterThan(MAX_JOURNAL_BYTES / chunk.length)
    expect(liveSandboxPids()).not.toContain(first)
  })
})

describe('ready ahead of the first query', () => {
  it('a process started before the index is read, given its copy after, answers with the rows and follows later writes', async () => {
    const root = project({ 'a.md': '---\ntitle: A\n---\n' })
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false })
    closers.push(async () => {
      await index.closeQueries()
      index.close()
    })
    index.prepareQueries('process')
    expect(liveSandboxPids()).toHaveLength(1)
    index.rebuild()
    index.prepareQueries('copy')
    fs.writeFileSync(path.join(root, 'b.md'), '---\ntitle: B\n---\n')
    index.refresh([{ type: 'create', path: 'b.md' }])
    expect(await index.runQuery('select title from documents order by path')).toEqual([{ title: 'A' }, { title: 'B' }])
    // The copy was given to the process started ahead: no second process.
    expect(liveSandboxPids()).toHaveLength(1)
  })

  it('an engine with SQL models starts one at its start, unless it is a one-shot build that reuses its job store', async () => {
    const root = project(TITLES_PROJECT)
    const readme = path.join(root, 'README.md')
    const oneShot = { root, cache: true, snapshotAtStart: false, gitMetadata: false } as const
    const first = await InsituEngine.create(oneShot)
    expect(liveSandboxPids()).toHaveLength(1)
    const rendered = await first.renderDocument(readme, fs.readFileSync(readme, 'utf8'))
    expect(rendered.text).toContain('| A |')
    first.persistCache()
    await first.close()
    expect(liveSandboxPids()).toEqual([])

    // The second build usually reuses the first one's rows: it starts a process only if a query must run.
    const second = await InsituEngine.create(oneShot)
    expect(liveSandboxPids()).toEqual([])
    expect((await second.renderDocument(readme, fs.readFileSync(readme, 'utf8'))).text).toBe(rendered.text)
    await second.close()

    // A long-lived engine (a dev server) starts one at once.
    const served = await InsituEngine.create({ root, cache: true, gitMetadata: false })
    closers.push(() => served.close())
    expect(liveSandboxPids()).toHaveLength(1)
  })
})

describe('a start that finds its index as its snapshot left it (deferQueryProcess)', () => {
  it('starts no process until a query asks for one or startQueryProcess(); a start with new rows starts one with the index', async () => {
    const root = project(TITLES_PROJECT)
    // Read long after their mtimes: a stat vouches for the rows at the next start, and the
    // model file is old enough for the stored result to be kept (job-memo.ts, rule 5).
    for (const file of ['README.md', 'a.md', 'insitu.toml', 'insitu/models/titles.sql']) fs.utimesSync(path.join(root, file), 1_600_000_000, 1_600_000_000)
    const readme = path.join(root, 'README.md')
    const render = async (engine: InsituEngine) => (await engine.renderDocument(readme, fs.readFileSync(readme, 'utf8'))).text
    const options = { root, cache: true, gitMetadata: false, deferQueryProcess: true } as const

    // No snapshot yet: the first renders will query, so a process starts with the index.
    const cold = await InsituEngine.create(options)
    expect(liveSandboxPids()).toHaveLength(1)
    const rendered = await render(cold)
    expect(rendered).toContain('| A |')
    await cold.close()
    expect(liveSandboxPids()).toEqual([])

    // The same rows: the README is served from the stored result, and no process started.
    const warm = await InsituEngine.create(options)
    expect(liveSandboxPids()).toEqual([])
    expect(await render(warm)).toBe(rendered)
    expect(liveSandboxPids()).toEqual([])
    warm.startQueryProcess()
    expect(liveSandboxPids()).toHaveLength(1)
    warm.startQueryProcess() // once
    expect(liveSandboxPids()).toHaveLength(1)
    await warm.close()

    // A query before the later start starts one itself, with the rows as they are.
    const asked = await InsituEngine.create(options)
    expect(liveSandboxPids()).toEqual([])
    expect(await asked.index.runQuery('select title from documents where path = :p', { p: 'a.md' })).toEqual([{ title: 'A' }])
    expect(liveSandboxPids()).toHaveLength(1)
    asked.startQueryProcess() // brings that one up to date: no second process
    expect(liveSandboxPids()).toHaveLength(1)
    await asked.close()

    // insitu.toml edited while no engine ran: the rows are the snapshot's, but the stored results
    // are another config's (the job store's header), so the first render queries: a process starts.
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n# edited\n')
    fs.utimesSync(path.join(root, 'insitu.toml'), 1_600_000_000, 1_600_000_000)
    const reconfigured = await InsituEngine.create(options)
    expect(reconfigured.index.matchesSnapshot).toBe(true)
    expect(liveSandboxPids()).toHaveLength(1)
    expect(await render(reconfigured)).toBe(rendered)
    await reconfigured.close()

    // A document changed while no engine ran: the README's table must query, so a process starts with the index.
    fs.writeFileSync(path.join(root, 'a.md'), '---\ntitle: A2\n---\n')
    const changed = await InsituEngine.create(options)
    expect(liveSandboxPids()).toHaveLength(1)
    expect(await render(changed)).toContain('| A2 |')
    await changed.close()

    // Without the option, a long-lived engine starts one at once, as before.
    const always = await InsituEngine.create({ root, cache: true, gitMetadata: false })
    closers.push(() => always.close())
    expect(liveSandboxPids()).toHaveLength(1)
  })
})

describe('a one-shot build gives its query process back', () => {
  it('the last process ends once left idle (`queryProcessIdleMs`), and a later query starts another with the rows as they are', async () => {
    const root = project({ 'a.md': '---\ntitle: A\n---\n' })
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false, queryProcessIdleMs: 200 })
    closers.push(async () => {
      await index.closeQueries()
      index.close()
    })
    index.rebuild()
    expect(await index.runQuery('select title from documents')).toEqual([{ title: 'A' }])
    expect(liveSandboxPids()).toHaveLength(1)
    await expect.poll(() => liveSandboxPids(), { timeout: 5000, interval: 50 }).toEqual([])

    fs.writeFileSync(path.join(root, 'b.md'), '---\ntitle: B\n---\n')
    index.refresh([{ type: 'create', path: 'b.md' }])
    expect(await index.runQuery('select title from documents order by path')).toEqual([{ title: 'A' }, { title: 'B' }])
    // A process started ahead and never given a query ends too.
    await expect.poll(() => liveSandboxPids(), { timeout: 5000, interval: 50 }).toEqual([])
    index.prepareQueries('process')
    expect(liveSandboxPids()).toHaveLength(1)
    await expect.poll(() => liveSandboxPids(), { timeout: 5000, interval: 50 }).toEqual([])
  })

  it('a process brought up to date ahead counts its idle time from then (found by review)', async () => {
    const root = project({ 'a.md': '---\ntitle: A\n---\n' })
    const index = new DocumentIndex({ root, include: ['**/*.md'], exclude: [], respectGitignore: false, queryProcessIdleMs: 600 })
    closers.push(async () => {
      await index.closeQueries()
      index.close()
    })
    index.prepareQueries('process')
    const [pid] = liveSandboxPids()
    await new Promise((resolve) => setTimeout(resolve, 400))
    index.rebuild()
    index.prepareQueries('copy')
    await new Promise((resolve) => setTimeout(resolve, 400))
    // 800 ms after its start, 400 after its copy: still the same process.
    expect(liveSandboxPids()).toEqual([pid])
    expect(await index.runQuery('select title from documents')).toEqual([{ title: 'A' }])
    expect(liveSandboxPids()).toEqual([pid])
  })

  it('without it the last process stays', async () => {
    const root = project({ 'a.md': '---\ntitle: A\n---\n' })
    const index = openIndex(root)
    expect(await index.runQuery('select title from documents')).toEqual([{ title: 'A' }])
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect(liveSandboxPids()).toHaveLength(1)
  })
})

describe('bounds', () => {
  it('a query that never ends fails at its budget; this event loop keeps turning, and another query is answered meanwhile', async () => {
    const root = project({ 'a.md': '# A\n' })
    const index = openIndex(root, 2_000)
    await index.runQuery('select 1') // the first process is up
    let ticks = 0
    const timer = setInterval(() => ticks++, 20)
    const started = performance.now()
    const runaway = index.runQuery(RUNAWAY).then(
      () => null,
      (error: unknown) => ({ error, ms: performance.now() - started }),
    )
    // Asked while the runaway holds its process: it moves on once that one has run SLOW_MS.
    await new Promise((resolve) => setTimeout(resolve, 50))
    const asked = performance.now()
    expect(await index.runQuery('select count(*) as n from documents')).toEqual([{ n: 1 }])
    const answeredIn = performance.now() - asked
    const failed = await runaway
    clearInterval(timer)
    expect(failed?.error).toBeInstanceOf(QueryTimeoutError)
    expect((failed?.error as Error).message).toBe('the query ran longer than 2 s')
    expect(failed!.ms).toBeGreaterThanOrEqual(2_000)
    expect(failed!.ms).toBeLessThan(6_000)
    expect(answeredIn).toBeLessThan(2_000 - SLOW_MS)
    // ~100 turns in 2 s if nothing held the loop; a held loop would give one or two.
    expect(ticks).toBeGreaterThan(40)
    // The sandbox goes on.
    expect(await index.runQuery('select count(*) as n from documents')).toEqual([{ n: 1 }])
  })

  it('rows over the size bound fail with QueryTooLargeError', async () => {
    const sandbox = querySandbox(new Database(':memory:'), { maxRowBytes: 1024 * 1024 })
    await expect(sandbox.query('select randomblob(2000000) as b', {})).rejects.toThrow(QueryTooLargeError)
    // Many rows, each small: the bound is on all of them.
    await expect(sandbox.query('with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000) select hex(randomblob(200)) as h from n', {})).rejects.toThrow(
      'the query returned more than 1 MiB of rows',
    )
    expect(await sandbox.query('select length(randomblob(1000)) as n', {})).toEqual([{ n: 1000 }])
  })

  it("a process that dies fails its running query with what happened; a query waiting in it, and the next one, are answered", async () => {
    const sandbox = querySandbox(new Database(':memory:'))
    await sandbox.query('select 1', {})
    const running = sandbox.query(RUNAWAY, {})
    await new Promise((resolve) => setTimeout(resolve, 100))
    const waiting = sandbox.query('select 3 as x', {})
    for (const pid of liveSandboxPids()) process.kill(pid, 'SIGTERM')
    await expect(running).rejects.toThrow('the sandbox process ended (SIGTERM)')
    expect(await waiting).toEqual([{ x: 3 }])
    expect(await sandbox.query('select 2 as x', {})).toEqual([{ x: 2 }])
  })

  it("a query's clock starts when it starts: a large answer before a runaway is not blamed for the runaway's time", async () => {
    const db = new Database(':memory:')
    const pool = new ProcessPool(queryHooks(new IndexJournal(db)))
    closers.push(() => pool.close(), () => db.close())
    await runQuery(pool, 'select 1', {}, 2_000)
    const started = performance.now()
    const large = runQuery(pool, 'select hex(randomblob(2000000)) as h', {}, 2_000).then(() => performance.now() - started)
    const runaway = runQuery(pool, RUNAWAY, {}, 2_000)
    expect(await large).toBeLessThan(1_500)
    await expect(runaway).rejects.toThrow(QueryTimeoutError)
  })

  it('slow work holds at most three processes: a query is answered while four slow tasks run', async () => {
    const db = new Database(':memory:')
    const pool = new ProcessPool(queryHooks(new IndexJournal(db)))
    closers.push(() => pool.close(), () => db.close())
    const slow = Array.from({ length: 4 }, () =>
      pool.run({ kind: 'query', sql: RUNAWAY, params: {} }, { slow: true, timeoutMs: 2_000, timedOut: () => new QueryTimeoutError(2_000) }).catch((error: unknown) => error),
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    const asked = performance.now()
    expect(await runQuery(pool, "select 5 as x", {}, 2_000)).toEqual([{ x: 5 }])
    expect(performance.now() - asked).toBeLessThan(3_000)
    expect(liveSandboxPids().length).toBeLessThanOrEqual(MAX_PROCESSES)
    for (const outcome of await Promise.all(slow)) expect(outcome).toBeInstanceOf(QueryTimeoutError)
  })

  it('SQLite errors keep their message and code', async () => {
    const sandbox = querySandbox(new Database(':memory:'))
    await expect(sandbox.query('select nope from nowhere', {})).rejects.toMatchObject({ message: 'no such table: nowhere', code: 'SQLITE_ERROR' })
    await expect(sandbox.query('delete from sqlite_master', {})).rejects.toThrow('SQL models must be a SELECT or WITH query')
  })
})
