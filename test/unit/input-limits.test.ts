import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  checkDocumentText,
  documentBytesProblem,
  formatSize,
  InputLimitError,
  MAX_DOCUMENT_BYTES,
} from '../../src/documents/input-limits.js'
import { errorOf as thrown } from './thrown-error.js'

/** Where Python's UTF-8 decoder stops: test/fixtures/invalid-utf8/generate.py. */
interface DecodeCase {
  name: string
  hex: string
  offset: number | null
  line: number | null
}

const cases = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../fixtures/invalid-utf8/cases.json'), 'utf8')) as DecodeCase[]

describe('documentBytesProblem', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: the byte Python refuses, at its line', (_name, c) => {
    const bytes = Buffer.from(c.hex, 'hex')
    const problem = documentBytesProblem(bytes)
    if (c.offset === null) {
      // Python reads it (a NUL too): only the NUL is refused, as not text
      expect(problem === null ? null : problem.message.startsWith('holds a NUL byte')).toBe(bytes.includes(0) ? true : null)
      return
    }
    const byte = bytes[c.offset]!.toString(16).padStart(2, '0')
    expect(problem).toEqual({ line: c.line, message: `not valid UTF-8 at line ${c.line} (the byte at offset ${c.offset} is 0x${byte})` })
  })

  it('names the first of a NUL and an invalid byte', () => {
    expect(documentBytesProblem(Buffer.from('a\nb\0c\xff', 'latin1'))).toEqual({ line: 2, message: 'holds a NUL byte at line 2 (offset 3): not a text document' })
    expect(documentBytesProblem(Buffer.from('a\xff\nb\0c', 'latin1'))).toEqual({ line: 1, message: 'not valid UTF-8 at line 1 (the byte at offset 1 is 0xff)' })
  })

  it('takes 16 MiB and refuses one byte more', () => {
    expect(documentBytesProblem(Buffer.alloc(MAX_DOCUMENT_BYTES, 'a'))).toBeNull()
    expect(documentBytesProblem(Buffer.alloc(MAX_DOCUMENT_BYTES + 1, 'a'))).toEqual({
      line: 1,
      message: 'document is 16 MiB (16,777,217 bytes), over the limit of 16 MiB',
    })
  })
})

describe('checkDocumentText', () => {
  it('counts UTF-8 bytes, not UTF-16 units', () => {
    // 6 MiB of a three-byte character: 18 MiB of UTF-8 in 6 Mi units
    expect(thrown(InputLimitError, () => checkDocumentText('日'.repeat(6 * 1024 * 1024)))).toMatchObject({
      line: 1,
      message: 'document is 18 MiB (18,874,368 bytes), over the limit of 16 MiB',
    })
    expect(() => checkDocumentText('日'.repeat(5 * 1024 * 1024))).not.toThrow()
    expect(() => checkDocumentText('a'.repeat(MAX_DOCUMENT_BYTES))).not.toThrow()
  })

  it('refuses a NUL character at its line', () => {
    expect(thrown(InputLimitError, () => checkDocumentText('# T\n\nA\0B\n'))).toMatchObject({ line: 3, message: 'holds a NUL character at line 3: not a text document' })
  })
})

describe('formatSize', () => {
  it.each([
    [0, '0 bytes'],
    [1, '1 byte'],
    [1023, '1023 bytes'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [65_546, '64 KiB'],
    [1_048_586, '1 MiB'],
    [1_258_291, '1.2 MiB'],
    [104_857_600, '100 MiB'],
  ])('%d → %s', (bytes, text) => {
    expect(formatSize(bytes)).toBe(text)
  })
})
