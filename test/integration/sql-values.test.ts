/**
 * SQL values as the Python implementation binds and reads them (issue #15, SPEC §11): the
 * expected rows come from test/fixtures/sql-values/generate.py (the Python implementation's
 * rules on Python 3.11's sqlite3, rows as `dict(sqlite3.Row)`), in a tagged form that keeps
 * Python's int and float apart. Real SQLite through the plugin's document index.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DocumentIndex } from '../../src/documents/document-index.js'
import { loadSqlModels, runSqlModel } from '../../src/documents/sql-models.js'
import { isPythonFloat, PythonFloat } from '../../src/values/python-float.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/sql-values/', import.meta.url))

type Tagged = null | boolean | string | { int: string } | { float: string }

interface Expected {
  queries: { name: string; sql: string; params: Record<string, Tagged>; rows: [string, Tagged][][] }[]
  models: { model: string; rows: [string, Tagged][][] }[]
}

const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected.json'), 'utf8')) as Expected

/** A tagged Python value in the plugin's value model (int → number or bigint, float → number or PythonFloat). */
function decode(value: Tagged): unknown {
  if (value === null || typeof value !== 'object') return value
  if ('int' in value) {
    const n = BigInt(value.int)
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
  }
  const n = Number(value.float)
  return Number.isInteger(n) ? new PythonFloat(n) : n
}

/** A row as entries with Python's kinds made visible (`2` and `2.0` must not compare equal). */
function visible(row: Record<string, unknown>): [string, unknown][] {
  return Object.entries(row).map(([key, value]) => [key, isPythonFloat(value) ? { float: value.value } : value])
}

let root: string
let index: DocumentIndex

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-sql-values-'))
  fs.cpSync(path.join(FIXTURE, 'project'), root, { recursive: true })
  index = new DocumentIndex({ root, include: ['**/*.md'], exclude: ['.git/**'], respectGitignore: false })
  index.rebuild()
})

afterAll(() => {
  index.close()
  fs.rmSync(root, { recursive: true, force: true })
})

describe('SQL values', () => {
  it.each(expected.queries.map((c) => [c.name, c] as const))('%s', (_name, { sql, params, rows }) => {
    const bound = Object.fromEntries(Object.entries(params).map(([key, value]) => [key, decode(value)]))
    const actual = index.query(sql, bound).map(visible)
    expect(actual).toEqual(rows.map((row) => visible(Object.fromEntries(row.map(([key, value]) => [key, decode(value)])))))
  })

  it.each(expected.models.map((c) => [c.model, c] as const))('model %s runs as the Python implementation runs it', async (name, { rows }) => {
    const models = loadSqlModels(root, 'insitu/models')
    const location = { path: 'docs/deep/unicode.md', directory: 'docs/deep', root: '.', depth: 2 }
    const actual = (await runSqlModel(index, models, name, {}, location)).rows.map(visible)
    expect(actual).toEqual(rows.map((row) => visible(Object.fromEntries(row.map(([key, value]) => [key, decode(value)])))))
  })
})
