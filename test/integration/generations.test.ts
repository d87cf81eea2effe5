/**
 * Generations (src/engine/generations.ts): the bodies each region was generated with, kept in a
 * real job store (SQLite file) across a reopen (written by `flush`, rows summarized then), found
 * whatever the line endings, the newest `KEPT` per region; `knownBefore` by time; rows named by
 * `path` when they changed.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { regionBodyText } from '../../src/documents/regions.js'
import { bodyHash, changedRows, type Generation, Generations, KEPT, summarizeRows } from '../../src/engine/generations.js'
import { JobStore } from '../../src/engine/job-store.js'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

const HEADER = { plugin: 'test', config: 'c', v8: 'v' }
const quiet = { info() {}, warn() {}, error() {} }

function generation(content: string, at: number): Generation {
  return { bodyHash: bodyHash(content), at, optionsHash: 'o', location: { path: 'a.md', directory: '', root: '.', depth: 0 }, dependencies: [], fingerprints: [], queries: [], extensions: [] }
}

describe('generations', () => {
  it('finds a body by its text (LF or CRLF), keeps the newest KEPT per region, and survives the store', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-generations-'))
    folders.push(folder)
    const file = path.join(folder, 'jobs.db')
    const store = JobStore.open(file, HEADER, quiet)
    const generations = new Generations(store)
    for (let i = 0; i <= KEPT; i++) generations.record('a.md', 'region:t', generation(`line ${i}\nnext`, 1000 + i))
    expect(generations.find('a.md', 'region:t', regionBodyText(`line ${KEPT}\nnext`, '\r\n'))?.at).toBe(1000 + KEPT)
    expect(generations.find('a.md', 'region:t', regionBodyText('line 1\nnext'))?.at).toBe(1001)
    expect(generations.find('a.md', 'region:t', regionBodyText('line 0\nnext'))).toBeUndefined() // the oldest went
    expect(generations.find('b.md', 'region:t', regionBodyText(`line ${KEPT}\nnext`))).toBeUndefined()
    expect(generations.knownBefore('a.md', 'region:t', 1001)).toBe(false)
    expect(generations.knownBefore('a.md', 'region:t', 1002)).toBe(true)
    // Rows are kept as they are until asked for or stored, then summarized.
    const withRows = generation('with rows', 2000)
    withRows.queries = [{ sql: 'select path from documents', params: {}, hash: 'h', rows: null }]
    generations.record('a.md', 'region:q', withRows, [[{ path: 'x.md' }, { path: 'y.md' }]])
    expect(withRows.queries[0]!.rows).toBeNull()
    generations.flush() // what the engine does before the store writes
    store.close()

    const reopened = new Generations(JobStore.open(file, HEADER, quiet))
    expect(reopened.find('a.md', 'region:t', regionBodyText('line 2\nnext'))?.at).toBe(1002)
    expect(reopened.latest('a.md', 'region:t')?.at).toBe(1000 + KEPT)
    const stored = reopened.latest('a.md', 'region:q')!
    expect(reopened.summarized(stored)[0]!.rows?.map(([label]) => label)).toEqual(['x.md', 'y.md'])
  })

  it('names the rows that changed by path, appeared or went; rows without a path by position', () => {
    const then = summarizeRows([{ path: 'a.md', n: 1 }, { path: 'b.md', n: 2 }, { path: 'c.md', n: 3 }])!
    const now = summarizeRows([{ path: 'a.md', n: 1 }, { path: 'b.md', n: 5 }, { path: 'd.md', n: 4 }])!
    expect(changedRows(then, now).sort()).toEqual(['b.md', 'c.md', 'd.md'])
    expect(changedRows(summarizeRows([{ n: 1 }])!, summarizeRows([{ n: 2 }])!)).toEqual(['row 1', 'row 1 (then)'])
    expect(summarizeRows(Array.from({ length: 2_001 }, (_, n) => ({ n })))).toBeNull()
  })
})
