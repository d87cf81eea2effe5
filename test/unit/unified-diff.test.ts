import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { diffLines, splitLines, unifiedDiff } from '../../src/sync/unified-diff.js'

describe('diffLines', () => {
  it('keeps common lines and orders removals before additions', () => {
    expect(diffLines(['a', 'b', 'c'], ['a', 'x', 'c'])).toEqual([
      { op: ' ', text: 'a' },
      { op: '-', text: 'b' },
      { op: '+', text: 'x' },
      { op: ' ', text: 'c' },
    ])
  })

  it('is a shortest edit script whose sides rebuild both inputs', () => {
    const lines = fc.array(fc.constantFrom('a', 'b', 'c', ''), { maxLength: 12 })
    fc.assert(
      fc.property(lines, lines, (before, after) => {
        const diff = diffLines(before, after)
        expect(diff.filter((l) => l.op !== '+').map((l) => l.text)).toEqual(before)
        expect(diff.filter((l) => l.op !== '-').map((l) => l.text)).toEqual(after)
        const kept = diff.filter((l) => l.op === ' ').length
        expect(kept).toBe(lcsLength(before, after))
      }),
    )
  })
})

describe('splitLines', () => {
  it('reads LF and CRLF and ignores one trailing line break', () => {
    expect(splitLines('a\r\nb\n')).toEqual(['a', 'b'])
    expect(splitLines('a\n\n')).toEqual(['a', ''])
    expect(splitLines('')).toEqual([])
  })
})

describe('unifiedDiff', () => {
  it('gives nothing for equal texts', () => {
    expect(unifiedDiff('a\nb', 'a\r\nb\n')).toEqual([])
  })

  it('shows a change with two lines of context and GNU hunk headers', () => {
    const before = ['1', '2', '3', '4', '5', '6', '7'].join('\n')
    const after = ['1', '2', '3', 'four', '5', '6', '7'].join('\n')
    expect(unifiedDiff(before, after)).toEqual(['@@ -2,5 +2,5 @@', ' 2', ' 3', '-4', '+four', ' 5', ' 6'])
  })

  it('names the line before an empty side', () => {
    expect(unifiedDiff('', 'x\ny')).toEqual(['@@ -0,0 +1,2 @@', '+x', '+y'])
    expect(unifiedDiff('a\nb', 'a')).toEqual(['@@ -1,2 +1,1 @@', ' a', '-b'])
  })

  it('splits distant changes into hunks', () => {
    const before = Array.from({ length: 10 }, (_, i) => `l${i}`)
    const after = before.map((line, i) => (i === 1 || i === 8 ? `${line}!` : line))
    expect(unifiedDiff(before.join('\n'), after.join('\n'))).toEqual([
      '@@ -1,4 +1,4 @@',
      ' l0',
      '-l1',
      '+l1!',
      ' l2',
      ' l3',
      '@@ -7,4 +7,4 @@',
      ' l6',
      ' l7',
      '-l8',
      '+l8!',
      ' l9',
    ])
  })

  it('caps the output and says how many lines are left out', () => {
    const after = Array.from({ length: 30 }, (_, i) => `row ${i}`).join('\n')
    const diff = unifiedDiff('', after, { maxLines: 5 })
    expect(diff).toEqual(['@@ -0,0 +1,30 @@', '+row 0', '+row 1', '+row 2', '+row 3', '… 26 more lines'])
    expect(unifiedDiff('', 'a\nb', { maxLines: 2 })).toEqual(['@@ -0,0 +1,2 @@', '+a', '… 1 more line'])
  })
})

function lcsLength(a: readonly string[], b: readonly string[]): number {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!)
    }
  }
  return table[0]![0]!
}
