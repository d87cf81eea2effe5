/**
 * Values reach extensions with Python's number kinds (issue #15): rows holding an integral REAL
 * (`2.0`) and an INTEGER beyond 2^53 are written on the wire as the Python implementation's host
 * writes them (values/wire-json.ts), both as an invocation's value and as a host.resource.get
 * answer. A real Python extension (test/fixtures/python/value_kinds) answers with Python's repr()
 * of what it decoded; the expected text is Python 3.11's repr() of those rows.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { wireJson } from '../../src/values/wire-json.js'
import { PythonFloat } from '../../src/values/python-float.js'

const EXTENSION = fileURLToPath(new URL('../fixtures/python/value_kinds/', import.meta.url))
// python3 -c "print(repr([{'two': 2.0, 'seven': 7, 'big': 9007199254740993, 'half': 0.5, 'text': 'é'}]))"
const PYTHON_REPR = "[{'two': 2.0, 'seven': 7, 'big': 9007199254740993, 'half': 0.5, 'text': 'é'}]"

let root: string
let engine: InsituEngine | undefined

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-wire-values-')))
  fs.mkdirSync(path.join(root, 'insitu/models'), { recursive: true })
  fs.writeFileSync(path.join(root, 'insitu/models/typed.sql'), "select 2.0 as two, 7 as seven, 9007199254740993 as big, 0.5 as half, 'é' as text\n")
  fs.writeFileSync(path.join(root, 'insitu.toml'), `version = 1\n\n[[extensions]]\npath = ${JSON.stringify(EXTENSION)}\n`)
})

afterEach(async () => {
  await engine?.close()
  engine = undefined
  expect(liveExtensionPids()).toEqual([])
  fs.rmSync(root, { recursive: true, force: true })
})

it('writes PythonFloat boxes and bigints as Python writes them, else exactly as JSON.stringify', () => {
  expect(wireJson({ a: new PythonFloat(2), b: [1, 2n ** 70n, new PythonFloat(1e16), 0.5], c: 'é', d: undefined })).toBe(
    '{"a":2.0,"b":[1,1180591620717411303424,1e+16,0.5],"c":"é"}',
  )
  const plain = { a: 1, b: [null, 'x'], c: { d: true }, e: new Date(0), f: NaN }
  expect(wireJson(plain)).toBe(JSON.stringify(plain))
  // a text that looks like a placeholder stays text
  expect(wireJson({ a: '\u0000insitu-number-x:2.0', b: new PythonFloat(3) })).toBe('{"a":"\\u0000insitu-number-x:2.0","b":3.0}')
})

it("sends rows to a Python extension with Python's number kinds", async () => {
  engine = await InsituEngine.create({ root, cache: false })
  const text = [
    '<!-- insitu:begin materialize',
    'id = "rendered"',
    'source = "sql"',
    'model = "typed"',
    'renderer = "py_repr"',
    '-->',
    '<!-- insitu:end -->',
    '',
    '<!-- insitu:begin py_read_repr',
    'id = "read"',
    'model = "typed"',
    '-->',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
  const result = await engine.renderDocument('README.md', text)
  expect(result.diagnostics).toEqual([])
  expect(result.jobs.map((job) => [job.id, job.content])).toEqual([
    ['rendered', PYTHON_REPR],
    ['read', PYTHON_REPR],
  ])
})
