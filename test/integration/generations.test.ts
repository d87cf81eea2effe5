/**
 * Generations (src/engine/generations.ts): the bodies each region was generated with, kept in a
 * real job store (SQLite file) across a reopen (written by `flush`, rows summarized then, merged
 * with another process's), found whatever the line endings and under another region id, the
 * newest `KEPT_PER_REGION` per region; `latestBefore` by time; rows named by `path` when they
 * changed, never from rows a template changed in place.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { regionBodyText } from '../../src/documents/regions.js'
import { fingerprintValue } from '../../src/engine/dependency-fingerprints.js'
import { bodyHash, changedRows, type Generation, Generations, KEPT_PER_REGION, regionJob, summarizeRows } from '../../src/engine/generations.js'
import { JobStore } from '../../src/engine/job-store.js'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

const HEADER = { plugin: 'test', config: 'c', v8: 'v' }
const quiet = { info() {}, warn() {}, error() {} }
const JOB = regionJob('t')

function generation(content: string, at: number): Generation {
  return { bodyHash: bodyHash(content), at, optionsHash: 'o', location: { path: 'a.md', directory: '', root: '.', depth: 0 }, fingerprints: [], queries: [], extensions: [] }
}

function storeFile(): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-generations-'))
  folders.push(folder)
  return path.join(folder, 'jobs.db')
}

describe('generations', () => {
  it('finds a body by its text (LF or CRLF), keeps the newest per region, and survives the store', () => {
    const file = storeFile()
    const store = JobStore.open(file, HEADER, quiet)
    const generations = new Generations(store)
    for (let i = 0; i <= KEPT_PER_REGION; i++) generations.record('a.md', JOB, generation(`line ${i}\nnext`, 1000 + i))
    expect(generations.find('a.md', JOB, regionBodyText(`line ${KEPT_PER_REGION}\nnext`, '\r\n'))?.generation.at).toBe(1000 + KEPT_PER_REGION)
    expect(generations.find('a.md', JOB, regionBodyText('line 1\nnext'))?.generation.at).toBe(1001)
    expect(generations.find('a.md', JOB, regionBodyText('line 0\nnext'))).toBeUndefined() // the oldest went
    expect(generations.find('b.md', JOB, regionBodyText('line 1\nnext'))).toBeUndefined()
    expect(generations.latestBefore('a.md', JOB, 1001)).toBeUndefined() // the one made at 1000 went
    expect(generations.latestBefore('a.md', JOB, 1003)?.at).toBe(1002)
    generations.flush() // what the engine does before the store writes
    store.close()

    const reopened = new Generations(JobStore.open(file, HEADER, quiet))
    expect(reopened.find('a.md', JOB, regionBodyText('line 2\nnext'))?.generation.at).toBe(1002)
    expect(reopened.latest('a.md', JOB)?.at).toBe(1000 + KEPT_PER_REGION)
  })

  it('finds a body generated under another region id (a region without an id changes it with its options)', () => {
    const generations = new Generations(null)
    generations.record('a.md', regionJob('include-aaaaaa'), generation('old body', 1))
    generations.record('a.md', regionJob('include-bbbbbb'), generation('new body', 2))
    expect(generations.find('a.md', regionJob('include-bbbbbb'), regionBodyText('old body'))).toMatchObject({ job: regionJob('include-aaaaaa') })
    expect(generations.find('a.md', regionJob('include-bbbbbb'), regionBodyText('new body'))).toMatchObject({ job: regionJob('include-bbbbbb') })
  })

  it('two processes writing one store keep each other\'s generations', () => {
    const file = storeFile()
    const first = JobStore.open(file, HEADER, quiet)
    const second = JobStore.open(file, HEADER, quiet)
    const one = new Generations(first)
    const two = new Generations(second)
    one.record('a.md', JOB, generation('from the dev server', 10))
    one.flush()
    first.flush()
    two.record('a.md', JOB, generation('from the language server', 20))
    two.flush()
    second.close()
    first.close()
    const after = new Generations(JobStore.open(file, HEADER, quiet))
    expect(after.find('a.md', JOB, regionBodyText('from the dev server'))?.generation.at).toBe(10)
    expect(after.find('a.md', JOB, regionBodyText('from the language server'))?.generation.at).toBe(20)
  })

  it('summarizes rows when asked for, and not rows a template changed in place since', () => {
    const generations = new Generations(null)
    const rows = [{ path: 'x.md' }, { path: 'y.md' }]
    const made = generation('with rows', 1)
    made.queries = [{ sql: 'select path from documents', params: {}, hash: fingerprintValue(rows), rows: null }]
    generations.record('a.md', JOB, made, [rows])
    expect(made.queries[0]!.rows).toBeNull()
    expect(generations.summarized(made)[0]!.rows?.map(([label]) => label)).toEqual(['x.md', 'y.md'])

    const sorted = [{ path: 'b.md' }, { path: 'a.md' }]
    const changed = generation('sorted in place', 2)
    changed.queries = [{ sql: 'select path from documents', params: {}, hash: fingerprintValue(sorted), rows: null }]
    generations.record('a.md', JOB, changed, [sorted])
    sorted.reverse() // what `rows | sort` does to the list a template was given
    expect(generations.summarized(changed)[0]!.rows).toBeNull()
  })

  it('names the rows that changed by path, appeared or went; rows without a path by position', () => {
    const then = summarizeRows([{ path: 'a.md', n: 1 }, { path: 'b.md', n: 2 }, { path: 'c.md', n: 3 }])!
    const now = summarizeRows([{ path: 'a.md', n: 1 }, { path: 'b.md', n: 5 }, { path: 'd.md', n: 4 }])!
    expect(changedRows(then, now).sort()).toEqual(['b.md', 'c.md', 'd.md'])
    expect(changedRows(summarizeRows([{ n: 1 }])!, summarizeRows([{ n: 2 }])!)).toEqual(['row 1', 'row 1 (then)'])
    expect(summarizeRows(Array.from({ length: 2_001 }, (_, n) => ({ n })))).toBeNull()
  })
})
