/**
 * createPathMatcher's suffix fast path (src/documents/project-files.ts) against the gitignore
 * matcher it stands in for (the `ignore` library, as createIgnore configures it): the same
 * answer for every path, file or folder, for every pattern list the fast path takes.
 */
import { describe, expect, test } from 'vitest'
import { createPathMatcher } from '../../src/documents/project-files.js'
import { createIgnore } from '../../src/documents/gitignore-rules.js'

const PATHS = [
  'a.md', 'x/a.md', 'x/y/z/a.md', 'a.md/b.txt', 'x.md/y/z', '.md', 'x/.md', 'a.MD', 'a.mdx', 'a.md.txt', 'a', 'dir.md',
  'notes.markdown', 'x/notes.markdown', 'a.md~', 'a..md', 'x/y.mdx/z.md', 'x/y.mdx/z', 'md', 'x/md', 'amd', 'x/a.md ',
  'ünï/cödé.md', 'a b/c d.md', 'x/a.md/', 'tasks/g001/t0001.md', 'node_modules/p/readme.md',
]

describe.each([[['**/*.md']], [['*.md']], [['*.md', '*.mdx']], [['**/*.markdown', '**/*.md']]])('patterns %j', (patterns) => {
  const fast = createPathMatcher(patterns)
  const reference = createIgnore(patterns)
  test.each(PATHS)('%j as a file and as a folder', (relPath) => {
    expect(fast(relPath, false)).toBe(reference.ignores(relPath))
    expect(fast(relPath, true)).toBe(reference.ignores(`${relPath.replace(/\/$/, '')}/`))
  })
})

test('other pattern lists keep the general matcher', () => {
  const matcher = createPathMatcher(['docs/*.md'])
  expect(matcher('docs/a.md')).toBe(true)
  expect(matcher('x/docs/a.md')).toBe(false)
  expect(createPathMatcher(['**/*.md', '!draft.md'])('draft.md')).toBe(false)
})
