import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isBelowFolder, projectRelativePath, toPosixRelative } from '../../src/documents/project-paths.js'

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
