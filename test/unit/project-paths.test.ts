import path from 'node:path'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { isBelowFolder, isInsideFolder, projectRelativePath, toPosixRelative } from '../../src/documents/project-paths.js'

/** The lexical definition the fast path must agree with. */
function reference(root: string, p: string): string | null {
  const absolute = path.resolve(root, p)
  return isBelowFolder(root, absolute) ? toPosixRelative(root, absolute) : null
}

describe('projectRelativePath', () => {
  const roots = ['/p', '/p/', '/work/my site', '/', '/p/./q', '/p//q']
  const paths = [
    '/p/a.md', '/p/docs/a.md', '/p', '/p/', '/pa/b.md', '/p/../etc/passwd', '/p/./a.md', '/p//a.md', '/p/docs/',
    '/p/..notes/x.md', '/p/docs/..', '/work/my site/README.md', '/work/my site/../x', 'docs/a.md', './a.md', '../a.md',
    '/p/q/a.md', '/p/q/../r.md', 'a\\b.md', '/p/a\\b.md',
  ]
  it('gives exactly what path.resolve and path.relative give, for every root and path', () => {
    for (const root of roots) {
      for (const p of paths) expect(projectRelativePath(root, p), `${root} ${p}`).toBe(reference(root, p))
    }
  })

  it('takes module files below the root as they are', () => {
    expect(projectRelativePath('/work/site', '/work/site/docs/a b.md')).toBe('docs/a b.md')
    expect(projectRelativePath('/work/site', '/work/site2/a.md')).toBeNull()
    expect(projectRelativePath('/work/site', '/work/site')).toBeNull()
  })
})

describe('isInsideFolder / isBelowFolder', () => {
  /** The lexical definition (path.relative) the string-prefix fast path must agree with. */
  function relativeTo(folder: string, p: string): { inside: boolean; below: boolean } {
    const relative = path.relative(folder, p)
    const descending = !/^\.\.(?:[\\/]|$)/.test(relative) && !path.isAbsolute(relative)
    return { inside: relative === '' || descending, below: relative !== '' && descending }
  }
  const segment = fc.constantFrom('a', 'b', 'ab', '.', '..', '', '...', '.x', 'a b', '..a', '..\\b', 'a\\b', '\\', '.\\')
  const somePath = fc.tuple(fc.boolean(), fc.array(segment, { maxLength: 5 })).map(([absolute, parts]) => (absolute ? '/' : '') + parts.join('/'))

  it('agree with path.relative for every pair of paths, normal or not', () => {
    fc.assert(
      fc.property(somePath, somePath, (folder, p) => {
        expect({ inside: isInsideFolder(folder, p), below: isBelowFolder(folder, p) }).toEqual(relativeTo(folder, p))
      }),
      { numRuns: 5000 },
    )
    for (const [folder, p] of [['/', '/'], ['/', '/a'], ['/a', '/ab'], ['/a', '/a/b'], ['/a/b', '/a'], ['/a', '/a/'], ['/a/', '/a/b'], ['/a', '/a/..\\b'], ['/', '/..\\b']]) {
      expect({ inside: isInsideFolder(folder!, p!), below: isBelowFolder(folder!, p!) }, `${folder} ${p}`).toEqual(relativeTo(folder!, p!))
    }
  })
})
