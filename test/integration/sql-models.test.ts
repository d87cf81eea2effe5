import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { loadSqlModels, modelCteName, runSqlModel, type SqlModels } from '../../src/documents/sql-models.js'
import type { Location } from '../../src/protocol/schemas.js'

const MODELS = 'insitu/models'
const LOCATION: Location = { path: 'docs/guide/index.md', directory: 'docs/guide', root: '../..', depth: 2 }

let root: string
let index: DocumentIndex
let models: SqlModels

function write(relPath: string, text: string): void {
  const file = path.join(root, relPath)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

function writeModel(name: string, sql: string): void {
  write(`${MODELS}/${name}.sql`, sql)
}

function run(name: string, params: Record<string, unknown> = {}) {
  return runSqlModel(index, models, name, params, LOCATION)
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
  write('tasks/alpha.md', '---\ntitle: Alpha\nstatus: backlog\n---\n# Alpha\n')
  write('tasks/beta.md', '---\nstatus: done\n---\n# Beta\n')
  writeModel('all_tasks', 'select title, status, path from documents where status is not null;\n')
  writeModel('open_tasks', `select title, status, path\nfrom {{ ref("all_tasks") }}\nwhere status != 'done'\norder by title\n`)
  writeModel('counts', 'select count(*) as total from {{ ref("all_tasks") }}')
  index = new DocumentIndex({ root, include: ['**/*.md'], exclude: ['.git/**', 'node_modules/**'], respectGitignore: true })
  index.rebuild()
  models = loadSqlModels(root, MODELS)
})

afterEach(() => {
  index.close()
  fs.rmSync(root, { recursive: true, force: true })
})

/** Match a thrown error by its whole message (errors also carry `dependencies`). */
function exactly(message: string): RegExp {
  return new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)
}

/** The error `run` throws. */
function thrown(run: () => unknown): Error & { dependencies?: string[] } {
  try {
    run()
  } catch (error) {
    return error as Error & { dependencies?: string[] }
  }
  throw new Error('expected a throw')
}

describe('the SPEC fixture', () => {
  it('lists the models by relative path without suffix', async () => {
    writeModel('reports/by_status', 'select status, count(*) as n from {{ ref("all_tasks") }} group by status')
    write(`${MODELS}/notes.txt`, 'not a model')
    expect(models.names()).toEqual(['all_tasks', 'counts', 'open_tasks', 'reports/by_status'])
    expect(models.modelsDir).toBe('insitu/models')
  })

  it('runs all_tasks', async () => {
    expect(await run('all_tasks')).toEqual({
      rows: [
        { title: 'Alpha', status: 'backlog', path: 'tasks/alpha.md' },
        { title: null, status: 'done', path: 'tasks/beta.md' },
      ],
      dependencies: ['index:documents', 'fs:file:insitu/models/all_tasks.sql'],
    })
  })

  it('runs open_tasks through its ref', async () => {
    expect(await run('open_tasks')).toEqual({
      rows: [{ title: 'Alpha', status: 'backlog', path: 'tasks/alpha.md' }],
      dependencies: ['index:documents', 'fs:file:insitu/models/open_tasks.sql', 'fs:file:insitu/models/all_tasks.sql'],
    })
  })

  it('runs counts', async () => {
    expect((await run('counts')).rows).toEqual([{ total: 2 }])
  })

  it('compiles refs into a chain of CTEs', async () => {
    const { parts, ...compiled } = models.compile('open_tasks')
    expect(parts.map((part) => [part.name, part.file, part.cte])).toEqual([
      ['all_tasks', 'insitu/models/all_tasks.sql', '__insitu_model_all_tasks'],
      ['open_tasks', 'insitu/models/open_tasks.sql', '__insitu_result'],
    ])
    expect(compiled).toEqual({
      sql: [
        'with __insitu_model_all_tasks as (',
        'select title, status, path from documents where status is not null',
        '),',
        '__insitu_result as (',
        'select title, status, path',
        'from __insitu_model_all_tasks',
        "where status != 'done'",
        'order by title',
        ')',
        'select * from __insitu_result',
      ].join('\n'),
      files: ['insitu/models/open_tasks.sql', 'insitu/models/all_tasks.sql'],
    })
  })
})

describe('composition', () => {
  it('orders shared dependencies once, before their users', async () => {
    writeModel('base', 'select 1 as n')
    writeModel('left', 'select n + 1 as n from {{ ref("base") }}')
    writeModel('right', 'select n + 2 as n from {{ ref("base") }}')
    writeModel('top', 'select l.n as l, r.n as r from {{ ref("left") }} l, {{ ref("right") }} r')
    const compiled = models.compile('top')
    expect(compiled.files).toEqual([
      'insitu/models/top.sql',
      'insitu/models/left.sql',
      'insitu/models/base.sql',
      'insitu/models/right.sql',
    ])
    expect([...compiled.sql.matchAll(/^(?:with )?(\w+) as \(/gm)].map((m) => m[1])).toEqual([
      '__insitu_model_base',
      '__insitu_model_left',
      '__insitu_model_right',
      '__insitu_result',
    ])
    expect((await run('top')).rows).toEqual([{ l: 2, r: 3 }])
  })

  it('refs models in subfolders by their path', async () => {
    writeModel('reports/done', `select path from {{ ref("all_tasks") }} where status = 'done'`)
    writeModel('summary', 'select count(*) as done from {{ ref("reports/done") }}')
    expect(await run('summary')).toEqual({
      rows: [{ done: 1 }],
      dependencies: [
        'index:documents',
        'fs:file:insitu/models/summary.sql',
        'fs:file:insitu/models/reports/done.sql',
        'fs:file:insitu/models/all_tasks.sql',
      ],
    })
    expect((await run('reports/done')).rows).toEqual([{ path: 'tasks/beta.md' }])
  })

  it('gives distinct models distinct CTE names', async () => {
    expect(modelCteName('all_tasks')).toBe('__insitu_model_all_tasks')
    expect(modelCteName('reports/done')).toMatch(/^__insitu_model_reports_done_[0-9a-f]{8}$/)
    expect(modelCteName('Open')).toMatch(/^__insitu_model__pen_[0-9a-f]{8}$/)
    const names = ['reports/done', 'reports_done', 'reports-done', 'Reports_done', 'reports_DONE']
    expect(new Set(names.map((name) => modelCteName(name).toLowerCase())).size).toBe(names.length)
  })

  it('keeps models with their own WITH clause and comments working', async () => {
    writeModel('commented', '-- the open tasks\nwith open as (select * from {{ ref("open_tasks") }})\nselect path from open -- trailing')
    expect((await run('commented')).rows).toEqual([{ path: 'tasks/alpha.md' }])
  })

  it('reads model files again on every compile', async () => {
    expect((await run('counts')).rows).toEqual([{ total: 2 }])
    writeModel('counts', `select count(*) as open from {{ ref("all_tasks") }} where status != 'done'`)
    expect((await run('counts')).rows).toEqual([{ open: 1 }])
    writeModel('fresh', 'select 42 as answer')
    expect(models.names()).toContain('fresh')
    expect((await run('fresh')).rows).toEqual([{ answer: 42 }])
  })

  it('sees index refreshes', async () => {
    write('tasks/gamma.md', '---\ntitle: Gamma\nstatus: doing\n---\n')
    index.refresh([{ type: 'create', path: 'tasks/gamma.md' }])
    expect((await run('open_tasks')).rows.map((row) => row['title'])).toEqual(['Alpha', 'Gamma'])
  })
})

describe('errors', () => {
  it('carries the model files read so far, and the one that would define an unknown model', async () => {
    writeModel('broken_ref', 'select * from {{ ref("missing") }}')
    expect(thrown(() => models.compile('broken_ref')).dependencies).toEqual([
      'fs:file:insitu/models/broken_ref.sql',
      'fs:file:insitu/models/missing.sql',
    ])
    expect(thrown(() => models.compile('nope')).dependencies).toEqual(['fs:file:insitu/models/nope.sql'])
    writeModel('bad', 'select {{ not_defined }} as x')
    expect(thrown(() => models.compile('bad')).dependencies).toEqual(['fs:file:insitu/models/bad.sql'])
  })

  it('names an unknown model, requested or referenced', async () => {
    expect(() => models.compile('nope')).toThrow(exactly('unknown SQL model: nope (looked for insitu/models/nope.sql)'))
    writeModel('broken_ref', 'select * from {{ ref("missing") }}')
    expect(() => models.compile('broken_ref')).toThrow(exactly('unknown SQL model: missing (looked for insitu/models/missing.sql)'))
    expect(() => models.compile('../models/all_tasks')).toThrow(
      exactly('unknown SQL model: ../models/all_tasks (a model is named by its path under insitu/models/, without .sql)'),
    )
    expect(() => models.compile('reports')).toThrow(exactly('unknown SQL model: reports (looked for insitu/models/reports.sql)'))
  })

  it('reports a missing models folder as an unknown model', async () => {
    const empty = loadSqlModels(root, 'nowhere')
    expect(empty.names()).toEqual([])
    expect(() => empty.compile('all_tasks')).toThrow(exactly('unknown SQL model: all_tasks (looked for nowhere/all_tasks.sql)'))
  })

  it('reports dependency cycles with the chain of refs', async () => {
    writeModel('a', 'select * from {{ ref("b") }}')
    writeModel('b', 'select * from {{ ref("a") }}')
    writeModel('c', 'select * from {{ ref("a") }}')
    writeModel('self', 'select * from {{ ref("self") }}')
    expect(() => models.compile('a')).toThrow(exactly('dependency cycle: a -> b -> a'))
    expect(() => models.compile('c')).toThrow(exactly('dependency cycle: c -> a -> b -> a'))
    expect(() => models.compile('self')).toThrow(exactly('dependency cycle: self -> self'))
  })

  it('refuses models that are not queries', async () => {
    writeModel('wipe', 'delete from _documents')
    writeModel('pragma', 'pragma user_version = 3')
    writeModel('uses_wipe', 'select * from {{ ref("wipe") }}')
    await expect(run('wipe')).rejects.toThrow(exactly('SQL models must be a SELECT or WITH query'))
    await expect(run('pragma')).rejects.toThrow(exactly('SQL models must be a SELECT or WITH query'))
    await expect(run('uses_wipe')).rejects.toThrow(exactly('SQL models must be a SELECT or WITH query'))
    writeModel('sneaky', 'with x as (select 1) delete from _documents')
    await expect(run('sneaky')).rejects.toThrow()
    expect((await run('all_tasks')).rows).toHaveLength(2)
  })

  it('names the model file and line of SQLite errors', async () => {
    writeModel('syntax', 'select title,\n  status\nfrom documents\nwhere 1 1\n')
    await expect(run('syntax')).rejects.toThrow(exactly('insitu/models/syntax.sql:4: near "1": syntax error'))
    writeModel('column', 'select title,\n  stauts\nfrom documents')
    await expect(run('column')).rejects.toThrow(exactly('insitu/models/column.sql:2: no such column: stauts'))
    writeModel('table', '-- tasks\nselect * from document')
    await expect(run('table')).rejects.toThrow(exactly('insitu/models/table.sql:2: no such table: document'))
    // Jinja moves lines: the line is found by its text in the model file.
    writeModel('moved', '{% if true %}\n{% set x = 1 %}\n{% endif %}\nselect nope_fn(title)\nfrom documents')
    await expect(run('moved')).rejects.toThrow(exactly('insitu/models/moved.sql:4: no such function: nope_fn'))
    // A failure while running (not preparing) names the model file without a line.
    writeModel('runtime', "select json_extract('{', '$.a') as a")
    await expect(run('runtime')).rejects.toThrow(exactly('insitu/models/runtime.sql: malformed JSON'))
  })

  it('names the referenced model that fails, and who used it', async () => {
    writeModel('base', 'select path,\n  missing_column\nfrom documents')
    writeModel('top', 'select count(*) as n\nfrom {{ ref("base") }}')
    const error = (await run('top').then(() => undefined, (failure: unknown) => failure)) as Error & { dependencies?: string[] }
    expect(error.message).toBe('insitu/models/base.sql:2: no such column: missing_column (in SQL model base, used by top)')
    // Fixing either model file re-runs the job: both are dependencies of the failure.
    expect(error.dependencies).toEqual(['index:documents', 'fs:file:insitu/models/top.sql', 'fs:file:insitu/models/base.sql'])
    writeModel('top_bad', 'select count(*) as n\nfrom {{ ref("all_tasks") }}\nwhere )')
    await expect(run('top_bad')).rejects.toThrow(exactly('insitu/models/top_bad.sql:3: near ")": syntax error'))
  })

  it('names the model file in template errors', async () => {
    writeModel('bad', 'select {{ not_defined }} as x')
    expect(() => models.compile('bad')).toThrow(
      exactly("cannot render SQL model bad: 'not_defined' is undefined (insitu/models/bad.sql line 1, column 8)"),
    )
  })
})

describe('parameters', () => {
  beforeEach(() => {
    writeModel('where_am_i', 'select :insitu_path as path, :insitu_dir as dir, :insitu_root as root, :insitu_depth as depth')
    writeModel('by_status', 'select path from documents where status = :status order by path')
  })

  it('binds the location', async () => {
    expect((await run('where_am_i')).rows).toEqual([{ path: 'docs/guide/index.md', dir: 'docs/guide', root: '../..', depth: 2 }])
  })

  it('lets user params override the location ones', async () => {
    expect((await run('where_am_i', { insitu_dir: 'elsewhere', insitu_depth: '7' })).rows).toEqual([
      { path: 'docs/guide/index.md', dir: 'elsewhere', root: '../..', depth: '7' },
    ])
  })

  it('binds user params, including in referenced models', async () => {
    expect((await run('by_status', { status: 'done' })).rows).toEqual([{ path: 'tasks/beta.md' }])
    writeModel('count_by_status', 'select count(*) as n from {{ ref("by_status") }}')
    expect((await run('count_by_status', { status: 'backlog' })).rows).toEqual([{ n: 1 }])
  })

  it('names a missing parameter', async () => {
    await expect(run('by_status')).rejects.toThrow(exactly('missing SQL parameter :status'))
  })
})
