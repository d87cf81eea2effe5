import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { exactPathsPattern } from '../../src/plugin/exact-paths-pattern.js'

describe('exactPathsPattern', () => {
  it('matches exactly the given paths, prefixes and extensions included', () => {
    const paths = ['/p/docs/a.md', '/p/docs/a.md.bak', '/p/docs/ab.md', '/p/README.md', '/p/(x)[y]*.md', '/p/ünï/çødé.md']
    const pattern = exactPathsPattern(paths)
    for (const file of paths) expect(pattern.test(file), file).toBe(true)
    for (const file of ['/p/docs/a.m', '/p/docs/a.md.ba', '/p/docs/b.md', '/p/docs/a.mdx', 'x/p/README.md', '/p/README.md/', '/p/(x)[y]x.md', '/p/docs']) {
      expect(pattern.test(file), file).toBe(false)
    }
  })

  it('an empty set matches nothing', () => {
    expect(exactPathsPattern([]).test('')).toBe(false)
    expect(exactPathsPattern([]).test('/p/a.md')).toBe(false)
  })

  it('agrees with set membership on random path sets', () => {
    const segment = fc.stringMatching(/^[a-c.()\[\]*+?$^|\\-]{1,3}$/)
    const file = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => `/${parts.join('/')}`)
    fc.assert(
      fc.property(fc.uniqueArray(file, { maxLength: 30 }), fc.array(file, { maxLength: 30 }), (paths, probes) => {
        const pattern = exactPathsPattern(paths)
        const set = new Set(paths)
        for (const probe of [...paths, ...probes]) expect(pattern.test(probe)).toBe(set.has(probe))
      }),
    )
  })

  it('stays compact for 10,000 documents', () => {
    const paths = Array.from({ length: 10_000 }, (_, i) => `/home/user/project/tasks/t${String(i).padStart(5, '0')}.md`)
    const pattern = exactPathsPattern(paths)
    expect(pattern.source.length).toBeLessThan(200_000)
    expect(pattern.test('/home/user/project/tasks/t09999.md')).toBe(true)
    expect(pattern.test('/home/user/project/tasks/t10000.md')).toBe(false)
  })
})
