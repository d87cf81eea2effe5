/**
 * values/python-str.ts and values/python-casefold.ts against Python 3.11 itself: the expected
 * texts come from test/fixtures/python-str/generate.py and test/fixtures/casefold/generate.py.
 */
import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { compareCasefolded, pythonCasefold } from '../../src/values/python-casefold.js'
import { pythonFloat } from '../../src/values/python-float.js'
import { pythonRepr, pythonStr } from '../../src/values/python-str.js'

type Tagged = null | boolean | string | { int: string } | { float: string } | { list: Tagged[] } | { dict: [string, Tagged][] }

function readJson<T>(relative: string): T {
  return JSON.parse(fs.readFileSync(new URL(relative, import.meta.url), 'utf8')) as T
}

/** A tagged case as the plugin's value model holds it. */
function decode(value: Tagged): unknown {
  if (value === null || typeof value !== 'object') return value
  if ('int' in value) {
    const n = BigInt(value.int)
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
  }
  if ('float' in value) {
    const special: Record<string, number> = { nan: NaN, inf: Infinity, '-inf': -Infinity }
    return pythonFloat(special[value.float] ?? Number(value.float))
  }
  if ('list' in value) return value.list.map(decode)
  return Object.fromEntries(value.dict.map(([key, item]) => [key, decode(item)]))
}

describe("Python's str() and repr()", () => {
  const cases = readJson<{ value: Tagged; str: string; repr: string }[]>('../fixtures/python-str/expected.json')

  it.each(cases.map((c) => [c.repr, c] as const))('%s', (_name, { value, str, repr }) => {
    expect(pythonStr(decode(value))).toBe(str)
    expect(pythonRepr(decode(value))).toBe(repr)
  })
})

describe("Python's str.casefold()", () => {
  const expected = readJson<{ sorted: string[]; folded: Record<string, string> }>('../fixtures/casefold/expected.json')

  it('folds as Python folds (ß → ss, ǅ → ǆ, ﬁ → fi, Cherokee → capitals)', () => {
    for (const [name, folded] of Object.entries(expected.folded)) expect([name, pythonCasefold(name)]).toEqual([name, folded])
  })

  it('orders names by their fold, then by code point', () => {
    const shuffled = [...expected.sorted].reverse()
    expect(shuffled.sort(compareCasefolded)).toEqual(expected.sorted)
  })
})
