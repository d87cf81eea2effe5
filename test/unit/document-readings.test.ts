import { describe, expect, it } from 'vitest'
import { READING_CHARS_KEPT, READINGS_KEPT, readDocument } from '../../src/engine/document-readings.js'
import { splitFrontMatter } from '../../src/documents/frontmatter.js'
import { LineError } from '../../src/documents/line-error.js'
import { scanRegions } from '../../src/documents/regions.js'

const DOCUMENT = [
  '---',
  'title: Tasks',
  'insitu:',
  '  materializations:',
  '    counts:',
  '      model: counts',
  '      target: frontmatter:/generated/counts',
  '---',
  '# Tasks',
  '',
  '<!-- insitu:begin sql',
  'id = "open"',
  'model = "open_tasks"',
  'columns = ["title", "path"]',
  '-->',
  '| old |',
  '<!-- insitu:end -->',
  '<!-- insitu:end -->',
  '',
].join('\n')

describe('readDocument', () => {
  it('reads what the readers it stands for read', () => {
    const reading = readDocument('a.md', DOCUMENT)
    const scan = scanRegions(DOCUMENT, splitFrontMatter(DOCUMENT).bodyOffset)
    expect(reading.regions).toEqual(scan.regions)
    expect(reading.regions.map((r) => [r.id, r.kind, r.line])).toEqual([['open', 'sql', 11]])
    expect(reading.frontMatter).toEqual({ bodyOffset: DOCUMENT.indexOf('# Tasks'), hasData: true })
    expect(reading.materializations.map((m) => m.pointer)).toEqual(['/generated/counts'])
    expect(reading.strayEnds).toEqual([18])
    expect(reading.unterminated).toBeNull()
  })

  it('gives the same reading for the same text of a path, and a new one when the text changes', () => {
    const first = readDocument('same.md', DOCUMENT)
    // Another string with the same characters (as a file read again gives).
    expect(readDocument('same.md', `${DOCUMENT.slice(0, 10)}${DOCUMENT.slice(10)}`)).toBe(first)
    const edited = DOCUMENT.replace('open_tasks', 'blocked_tasks')
    const second = readDocument('same.md', edited)
    expect(second).not.toBe(first)
    expect(second.regions[0]!.options.model).toBe('blocked_tasks')
    // Another path with the same text has a reading of its own.
    expect(readDocument('other.md', edited)).not.toBe(second)
  })

  it('shares a frozen reading: changing a region option throws instead of reaching the next render', () => {
    const reading = readDocument('frozen.md', DOCUMENT)
    const options = reading.regions[0]!.options
    expect(() => {
      options.model = 'changed'
    }).toThrow(TypeError)
    expect(() => (options.columns as string[]).push('x')).toThrow(TypeError)
    expect(readDocument('frozen.md', DOCUMENT).regions[0]!.options.model).toBe('open_tasks')
  })

  it('keeps the last READINGS_KEPT paths read', () => {
    const first = readDocument('kept-0.md', DOCUMENT)
    for (let i = 1; i < READINGS_KEPT; i++) readDocument(`kept-${i}.md`, DOCUMENT)
    expect(readDocument('kept-0.md', DOCUMENT)).toBe(first) // read again: now the most recent
    readDocument('kept-new.md', DOCUMENT) // one past the bound: kept-1.md goes
    expect(readDocument('kept-0.md', DOCUMENT)).toBe(first)
    const before = readDocument('kept-2.md', DOCUMENT)
    for (let i = 0; i < READINGS_KEPT; i++) readDocument(`flood-${i}.md`, DOCUMENT)
    expect(readDocument('kept-2.md', DOCUMENT)).not.toBe(before)
  })

  it('throws what the readers throw, and keeps nothing for such a text', () => {
    const broken = '---\ntitle: [unclosed\n---\n# x\n'
    expect(() => readDocument('broken.md', broken)).toThrow(LineError)
    expect(() => readDocument('broken.md', broken)).toThrow(LineError)
    const reading = readDocument('broken.md', DOCUMENT)
    expect(reading.regions).toHaveLength(1)
  })
})

describe('readDocument keeps at most READING_CHARS_KEPT characters of text', () => {
  it('reads a text longer than that every time, and lets long texts push older ones out', () => {
    const long = `${DOCUMENT}${'x'.repeat(READING_CHARS_KEPT)}\n`
    expect(readDocument('long.md', long)).not.toBe(readDocument('long.md', long))
    const half = `${DOCUMENT}${'y'.repeat(READING_CHARS_KEPT / 2)}\n`
    const first = readDocument('half-1.md', half)
    expect(readDocument('half-1.md', half)).toBe(first)
    readDocument('half-2.md', half) // both halves together pass the bound: the first goes
    expect(readDocument('half-1.md', half)).not.toBe(first)
  })
})
