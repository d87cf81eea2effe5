import path from 'node:path/posix'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isRootedPath } from '../../src/documents/project-paths.js'
import { fsPathOf, stripQuery } from '../../src/resources/identifiers.js'

/** The definition fsPathOf's shortcut must agree with: strip the query, normalize, refuse what leaves the root. */
function reference(body: string): string | null {
  const text = stripQuery(body).replace(/\\/g, '/')
  if (isRootedPath(text)) return null
  const normalized = path.normalize(text === '' ? '.' : text).replace(/\/+$/, '')
  if (normalized === '..' || normalized.startsWith('../')) return null
  return normalized === '.' ? '' : normalized
}

describe('fsPathOf', () => {
  const segment = fc.constantFrom('a', 'docs', 'a.md', '.', '..', '', '...', '.x', '..x', 'C:', 'c:x', 'a?b', 'a\\b', '\\', 'a b', 'é')
  const body = fc.tuple(fc.constantFrom('', '/', './'), fc.array(segment, { maxLength: 5 }), fc.constantFrom('', '/', '?x=1', '//')).map(
    ([lead, parts, tail]) => lead + parts.join('/') + tail,
  )

  it('gives exactly what normalizing gives, for plain and unusual bodies alike', () => {
    fc.assert(
      fc.property(body, (b) => {
        expect(fsPathOf(b)).toBe(reference(b))
      }),
      { numRuns: 5000 },
    )
    for (const b of ['tasks/g001/t0001.md', 'a//b', 'a/./b', 'a/../b', '../a', 'C:/x', 'c:', 'a/b/', 'a?x', 'a\\b', '']) {
      expect(fsPathOf(b), b).toBe(reference(b))
    }
  })
})
