import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { FrontMatterError, splitFrontMatter } from '../../src/documents/frontmatter.js'
import { readYamlMapping, YamlReadError } from '../../src/documents/yaml-read.js'
import { decodeTagged } from '../fixtures/yaml-frontmatter/tagged-values.js'

/** Cases and ruamel's values: test/fixtures/yaml-frontmatter/generate.py (ruamel.yaml 0.19.1). */
interface ReadCase {
  name: string
  yaml: string
  value?: unknown
  error?: string
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/yaml-frontmatter')
const cases = JSON.parse(fs.readFileSync(path.join(fixtures, 'read.json'), 'utf8')) as ReadCase[]

/** Where the plugin deliberately differs from ruamel (README Compatibility notes). */
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
