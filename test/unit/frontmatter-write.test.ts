import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { generatedValuesEdit, splitFrontMatter, writeGeneratedValues } from '../../src/documents/frontmatter.js'
import { applyEdits } from '../../src/engine/render-document.js'
import { decodeTagged } from '../fixtures/yaml-frontmatter/tagged-values.js'

/**
 * Cases, ruamel's output and the plugin's expected text: test/fixtures/yaml-frontmatter/generate.py
 * (ruamel.yaml 0.19.1 round trip). `expected` is ruamel's text with the user's own lines kept
 * byte for byte; a case with a `note` is one where the plugin deliberately differs from ruamel.
 */
interface WriteCase {
  name: string
  yaml: string
  set: Array<[string, unknown]>
  ruamel: string
  expected: string
  note?: string
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/yaml-frontmatter')
const cases = JSON.parse(fs.readFileSync(path.join(fixtures, 'write.json'), 'utf8')) as WriteCase[]

const values = (c: WriteCase) => c.set.map(([pointer, value]) => ({ pointer, value: decodeTagged(value) }))

describe('generated values written as ruamel writes them (write.json)', () => {
  it('has the generated corpus', () => {
    expect(cases.length).toBeGreaterThan(300)
  })

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const document = `---\n${c.yaml}---\n\nBody\n`
    const written = writeGeneratedValues(document, values(c))
    expect(written).toBe(`---\n${c.expected}---\n\nBody\n`)
    // what is written reads back as the values
    const data = splitFrontMatter(written).data!
    for (const { pointer, value } of values(c)) {
      const segments = pointer.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      let cursor: unknown = data
      for (const segment of segments) cursor = (cursor as Record<string, unknown>)[segment]
      if (!/\x85|\u2028|\u2029/.test(JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)))) expect(cursor).toStrictEqual(value)
    }
    // the same as one edit
    const edit = generatedValuesEdit(document, values(c))
    expect(edit === null ? document : applyEdits(document, [edit])).toBe(written)
  })

  it.each(cases.filter((c) => !c.name.startsWith('random')).map((c) => [c.name, c] as const))('%s, CRLF', (_name, c) => {
    const crlf = (text: string) => text.replaceAll('\n', '\r\n')
    const written = writeGeneratedValues(crlf(`---\n${c.yaml}---\nBody\n`), values(c))
    expect(written).toBe(crlf(`---\n${c.expected}---\nBody\n`))
  })
})
