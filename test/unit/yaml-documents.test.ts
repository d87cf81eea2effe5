/**
 * yaml-documents.ts: one parse per text and option set (issue #17), the yaml package's own
 * result, and a bounded number of texts kept.
 */
import { expect, test } from 'vitest'
import { parseDocument } from 'yaml'
import { DEFAULTS, READ_VALUES, WRITE_VALUES, yamlDocument } from '../../src/documents/yaml-documents.js'
import { readYamlMapping } from '../../src/documents/yaml-read.js'

const FRONT_MATTER = 'title: Project tasks\ninsitu:\n  materializations:\n    counts:\n      model: counts\n      target: frontmatter:/generated/counts\n'

test('the same text with the same option set is parsed once; another set is parsed on its own', () => {
  const first = yamlDocument(FRONT_MATTER, READ_VALUES)
  expect(yamlDocument(FRONT_MATTER, READ_VALUES)).toBe(first)
  const written = yamlDocument(FRONT_MATTER, WRITE_VALUES)
  expect(written).not.toBe(first)
  expect(yamlDocument(FRONT_MATTER, DEFAULTS)).not.toBe(first)
  // What the package itself gives for the text and options.
  expect(first.toJSON()).toEqual(parseDocument(FRONT_MATTER, READ_VALUES).toJSON())
  expect(String(written)).toBe(String(parseDocument(FRONT_MATTER, WRITE_VALUES)))
})

test('errors are kept with the document: a bad text fails each reader alike', () => {
  const bad = 'a: [1, 2\n'
  expect(yamlDocument(bad, READ_VALUES).errors.length).toBeGreaterThan(0)
  expect(() => readYamlMapping(bad)).toThrow()
  expect(() => readYamlMapping(bad)).toThrow()
})

test('only the last texts of a set are kept: an old one is parsed again', () => {
  const old = 'kept: no\n'
  const before = yamlDocument(old, DEFAULTS)
  for (let i = 0; i < 32; i++) yamlDocument(`key${i}: ${i}\n`, DEFAULTS)
  const after = yamlDocument(old, DEFAULTS)
  expect(after).not.toBe(before)
  expect(after.toJSON()).toEqual({ kept: 'no' })
  // A text used again stays (the most recently used are kept).
  for (let i = 0; i < 32; i++) {
    expect(yamlDocument(old, DEFAULTS)).toBe(after)
    yamlDocument(`other${i}: ${i}\n`, DEFAULTS)
  }
})

test('values read from one document are fresh objects each time (a reader may change what it gets)', () => {
  const first = readYamlMapping(FRONT_MATTER)!
  ;(first.insitu as Record<string, unknown>).changed = true
  expect(readYamlMapping(FRONT_MATTER)).not.toHaveProperty('insitu.changed')
})
