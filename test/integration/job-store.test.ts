/**
 * The job store keeps the value model across processes (issue #15): a `PythonFloat` stored by
 * one engine is a `PythonFloat` for the next (V8 alone would hand back `{ value: 2 }`), so a warm
 * start renders `2.0` as a cold one does. Real SQLite file, written, closed and opened again.
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
