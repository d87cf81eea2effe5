/**
 * The job store keeps the value model across processes (issue #15): a `PythonFloat` stored by
 * one engine is a `PythonFloat` for the next (V8 alone would hand back `{ value: 2 }`), so a warm
 * start renders `2.0` as a cold one does; `holdsEntries` tells a file written under the same
 * header (a dev server's start decides by it whether its first renders will query). Real SQLite
 * file, written, closed and opened again.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { JobStore } from '../../src/engine/job-store.js'
import { isPythonFloat, PythonFloat } from '../../src/values/python-float.js'
import { pythonJsonDumps } from '../../src/values/python-json.js'

const HEADER = { plugin: 'test', config: 'c', v8: 'v' }
const logger = { info() {}, warn() {}, error() {} }
let folder: string

beforeEach(() => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-job-store-'))
})

afterEach(() => {
  fs.rmSync(folder, { recursive: true, force: true })
})

it('hands back PythonFloat boxes and bigints as they were stored', () => {
  const file = path.join(folder, 'jobs.db')
  const entry = {
    outcome: { content: 'x', value: { ratio: new PythonFloat(2), rows: [{ n: 1, big: 2n ** 70n, f: new PythonFloat(-0) }], half: 0.5 } },
    when: new Date(0),
  }
  const writer = JobStore.open(file, HEADER, logger)
  writer.put('job', entry)
  writer.close()

  const reader = JobStore.open(file, HEADER, logger)
  const stored = reader.get('job') as typeof entry
  reader.close()
  expect(isPythonFloat(stored.outcome.value.ratio)).toBe(true)
  expect(isPythonFloat(stored.outcome.value.rows[0]?.f)).toBe(true)
  expect(pythonJsonDumps(stored.outcome.value)).toBe(pythonJsonDumps(entry.outcome.value))
  expect(pythonJsonDumps(stored.outcome.value)).toBe('{"half": 0.5, "ratio": 2.0, "rows": [{"big": 1180591620717411303424, "f": -0.0, "n": 1}]}')
  expect(stored.when).toEqual(new Date(0))
})

it('serves the entries it read, sees what another store wrote within a second, and its own writes at once', async () => {
  const file = path.join(folder, 'jobs.db')
  const first = JobStore.open(file, HEADER, logger)
  first.put('a', { n: 1 })
  first.flush()
  const second = JobStore.open(file, HEADER, logger)
  expect(second.get('a')).toEqual({ n: 1 }) // its entries are read now
  expect(second.get('b')).toBeUndefined()
  first.put('a', { n: 2 })
  first.put('b', { n: 3 })
  first.flush()
  // An entry read before is still served (the memo validates every entry before use) ...
  expect(second.get('a')).toEqual({ n: 1 })
  // ... and a key it missed is looked up in the file again a second later at most.
  await new Promise((resolve) => setTimeout(resolve, 1100))
  expect(second.get('b')).toEqual({ n: 3 })
  expect(second.get('a')).toEqual({ n: 2 })
  second.put('c', { n: 4 })
  second.delete('a')
  second.flush()
  expect(second.get('c')).toEqual({ n: 4 })
  expect(second.get('a')).toBeUndefined()
  expect(first.get('c')).toEqual({ n: 4 })
  expect(first.get('a')).toBeUndefined()
  // Another header's writes: its entries are never served to this header.
  const other = JobStore.open(file, { ...HEADER, plugin: 'other' }, logger)
  other.put('d', { n: 5 })
  other.flush()
  const third = JobStore.open(file, HEADER, logger)
  expect(third.get('d')).toBeUndefined()
  expect(third.get('c')).toBeUndefined()
  for (const store of [first, second, other, third]) store.close()
})

it('serializes at the flush: a pending entry is read back as a copy, one V8 cannot serialize is not stored, and the others are', () => {
  const file = path.join(folder, 'jobs.db')
  const store = JobStore.open(file, HEADER, logger)
  const entry = { rows: [{ n: 1 }] }
  store.put('kept', entry)
  store.put('unserializable', { render: () => 'x' })
  const pending = store.get('kept') as typeof entry
  expect(pending).toEqual(entry)
  expect(pending).not.toBe(entry) // a copy, as a read of the file gives
  expect(store.get('unserializable')).toBeUndefined()
  store.flush()
  store.close()
  const reader = JobStore.open(file, HEADER, logger)
  expect(reader.get('kept')).toEqual({ rows: [{ n: 1 }] })
  expect(reader.get('unserializable')).toBeUndefined()
  reader.close()
})

it('holdsEntries: only a file written under the same header', () => {
  const file = path.join(folder, 'jobs.db')
  expect(JobStore.open(file, HEADER, logger).holdsEntries()).toBe(false) // no file yet
  const writer = JobStore.open(file, HEADER, logger)
  writer.put('a', { n: 1 })
  writer.close()
  const same = JobStore.open(file, HEADER, logger)
  expect(same.holdsEntries()).toBe(true)
  same.close()
  const other = JobStore.open(file, { ...HEADER, config: 'another config' }, logger)
  expect(other.holdsEntries()).toBe(false)
  expect(other.get('a')).toBeUndefined()
  other.close()
})
