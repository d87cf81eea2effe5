import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { FrontMatterError, splitFrontMatter } from '../../src/documents/frontmatter.js'
import { MAX_ALIAS_EXPANSION } from '../../src/documents/input-limits.js'
import { readYamlMapping, YamlReadError } from '../../src/documents/yaml-read.js'
import { pythonJsonDumps } from '../../src/values/python-json.js'
import { decodeTagged } from '../fixtures/yaml-frontmatter/tagged-values.js'
import { errorOf } from './thrown-error.js'

/** Cases and ruamel's values: test/fixtures/yaml-frontmatter/generate.py (ruamel.yaml 0.19.1). */
interface ReadCase {
  name: string
  yaml: string
  value?: unknown
  error?: string
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/yaml-frontmatter')
const cases = JSON.parse(fs.readFileSync(path.join(fixtures, 'read.json'), 'utf8')) as ReadCase[]

/** Where the plugin deliberately differs from ruamel (docs/guide/compatibility.md). */
const DELIBERATE: Record<string, string> = {
  // ruamel builds `[None]` for a list that contains itself; no Python program could index that
  'recursive alias': 'error',
}

function outcome(run: () => unknown): unknown {
  try {
    return { value: run() }
  } catch (error) {
    if (error instanceof YamlReadError || error instanceof FrontMatterError) return 'error'
    throw error
  }
}

describe('front matter read as ruamel reads it (read.json)', () => {
  it('has the generated corpus', () => {
    expect(cases.length).toBeGreaterThan(800)
  })

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const expected = DELIBERATE[c.name] ?? (c.error !== undefined ? 'error' : { value: decodeTagged(c.value) })
    expect({ yaml: c.yaml, read: outcome(() => readYamlMapping(c.yaml) ?? {}) }).toStrictEqual({ yaml: c.yaml, read: expected })
    expect({ yaml: c.yaml, split: outcome(() => splitFrontMatter(`---\n${c.yaml}---\nBody\n`).data) }).toStrictEqual({
      yaml: c.yaml,
      split: expected,
    })
  })
})

/** Cases and ruamel's values: test/fixtures/yaml-frontmatter/generate-aliases.py. */
interface AliasCase {
  name: string
  yaml: string
  expanded: number
  sha256: string | null
  value?: unknown
}

const aliasCases = JSON.parse(fs.readFileSync(path.join(fixtures, 'aliases.json'), 'utf8')) as AliasCase[]

/** The limit error `readYamlMapping` throws, or null when it reads. */
function limitOf(yaml: string): { limit: string | undefined; line: number } | null {
  try {
    readYamlMapping(yaml)
    return null
  } catch (error) {
    if (!(error instanceof YamlReadError)) throw error
    return { limit: error.limit, line: 1 + (yaml.slice(0, error.offset).match(/\n/g)?.length ?? 0) }
  }
}

/** `levels` flow sequences, one inside the other, around `inner`. */
function nested(levels: number, inner = '1'): string {
  return '['.repeat(levels) + inner + ']'.repeat(levels)
}

describe('alias expansion and nesting are bounded (issue #34)', () => {
  it.each(aliasCases.filter((c) => c.sha256 !== null).map((c) => [c.name, c] as const))(
    'reads %s as ruamel does (the JSON the index stores, byte for byte)',
    (_name, c) => {
      const value = readYamlMapping(c.yaml)
      expect(createHash('sha256').update(pythonJsonDumps(value)).digest('hex')).toBe(c.sha256)
      if (c.value !== undefined) expect(value).toStrictEqual(c.value)
    },
  )

  it.each(aliasCases.filter((c) => c.sha256 === null).map((c) => [c.name, c] as const))('refuses %s at once, at the alias that crosses the limit', (_name, c) => {
    expect(c.expanded).toBeGreaterThan(MAX_ALIAS_EXPANSION)
    const started = performance.now()
    const text = `---\ntitle: Bomb\n${c.yaml}---\nBody\n`
    const error = errorOf(FrontMatterError, () => splitFrontMatter(text))
    expect(performance.now() - started).toBeLessThan(500)
    expect(error).toBeInstanceOf(FrontMatterError)
    // a5 (the sixth line of aliases, document line 8) is the first whose aliases pass 100,000 values
    expect(error).toMatchObject({ line: 8, message: 'front matter expands YAML aliases to more than 100,000 values (line 8): an alias bomb?' })
  })

  it('counts every value an alias stands for: exactly the limit reads, one more does not', () => {
    // `all` is 1,000 values (the list and its 999 items); 100 aliases of it are 100,000
    const list = `all: &all [${Array.from({ length: 999 }, (_, i) => i).join(', ')}]\n`
    const copies = `copies: [${Array(100).fill('*all').join(', ')}]\n`
    expect(limitOf(list + copies)).toBeNull()
    expect(limitOf(`${list}one: &one 1\n${copies}more: *one\n`)).toEqual({ limit: 'aliases', line: 4 })
    // a merge counts what it merges: `d` is 999 values (the mapping, 499 keys and values), so
    // 100 merges are 99,900 and the 101st (e100, line 102) passes the limit
    const merges = `d: &d {${Array.from({ length: 499 }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`
    const entries = Array.from({ length: 101 }, (_, i) => `e${i}: {<<: *d}\n`).join('')
    expect(limitOf(merges + entries)).toEqual({ limit: 'aliases', line: 102 })
  })

  it('reads 128 levels of collections, flow or block, and refuses 129 at the collection past the limit', () => {
    expect(limitOf(`a: ${nested(127)}\n`)).toBeNull()
    expect(limitOf(`a: ${nested(128)}\n`)).toEqual({ limit: 'depth', line: 1 })
    const block = (levels: number) => Array.from({ length: levels }, (_, i) => `${' '.repeat(i)}k:\n`).join('') + `${' '.repeat(levels)}k: 1\n`
    expect(limitOf(block(127))).toBeNull()
    // the root mapping is level 1 (line 1): level 129 is the mapping on line 129
    expect(limitOf(block(128))).toEqual({ limit: 'depth', line: 129 })
    expect(limitOf(`a:\n${Array.from({ length: 200 }, (_, i) => `${' '.repeat(i)}-\n`).join('')}`)).toEqual({ limit: 'depth', line: 129 })
    expect(readYamlMapping(`a: ${nested(127, '"deep"')}\n`)).toHaveProperty('a')
  })

  it('counts an alias at the depth it is used: nesting built from aliases is refused too', () => {
    const inner = nested(64)
    // the root mapping is level 1: `*a` inside 63 sequences is at level 64, `a` adds 64 levels
    expect(limitOf(`a: &a ${inner}\nb: ${nested(63, '*a')}\n`)).toBeNull()
    expect(limitOf(`a: &a ${inner}\nb: ${nested(64, '*a')}\n`)).toEqual({ limit: 'depth', line: 2 })
    const chain = Array.from({ length: 4 }, (_, i) => `a${i + 1}: &a${i + 1} ${nested(40, `*a${i}`)}\n`).join('')
    expect(limitOf(`a0: &a0 1\n${chain}`)).toEqual({ limit: 'depth', line: 5 })
  })

  it('refuses nesting far past the limit before the yaml package builds it, in milliseconds', () => {
    // each within the front-matter size limit (128 KiB)
    const cases: Array<[string, number]> = [
      [`a: ${'['.repeat(60_000)}${']'.repeat(60_000)}\n`, 1],
      [`a: ${'{a: '.repeat(25_000)}1${'}'.repeat(25_000)}\n`, 1],
      [`a:\n${'- '.repeat(60_000)}x\n`, 2],
      [`${Array.from({ length: 500 }, (_, i) => `${' '.repeat(i)}k:\n`).join('')}`, 129],
    ]
    for (const [yaml, line] of cases) {
      const started = performance.now()
      expect(errorOf(FrontMatterError, () => splitFrontMatter(`---\n${yaml}---\n`))).toMatchObject({
        line: line + 1,
        message: `front matter nests collections deeper than 128 levels (line ${line + 1})`,
      })
      expect(performance.now() - started).toBeLessThan(500)
    }
  })

  it('does not take brackets in strings for nesting', () => {
    const text = `a: "${'['.repeat(300)}"\nb: '${'{'.repeat(300)}'\nc: x${'['.repeat(300)}\nd: ${'-'.repeat(300)}\n`
    expect(readYamlMapping(text)).toStrictEqual({ a: '['.repeat(300), b: '{'.repeat(300), c: `x${'['.repeat(300)}`, d: '-'.repeat(300) })
  })
})
