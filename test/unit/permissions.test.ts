import { describe, expect, it } from 'vitest'
import { fnmatch, isPermitted, permissionDeniedMessage, permissionFor } from '../../src/resources/permissions.js'

describe('fnmatch (Python fnmatch.fnmatchcase)', () => {
  // Expected values checked against CPython 3.11 fnmatch.fnmatchcase(value, pattern).
  const table: [pattern: string, value: string, expected: boolean][] = [
    ['*', '', true],
    ['*', 'a/b/c', true],
    ['*.md', 'docs/a/b.md', true], // `*` crosses `/`
    ['docs/*', 'docs/a/b.md', true],
    ['docs/*.md', 'docs/a.txt', false],
    ['**/*.md', 'README.md', false], // needs a `/`; the `**/` prefix rule lives in isPermitted
    ['**/*.md', 'docs/README.md', true],
    ['?', 'a', true],
    ['?', '', false],
    ['?', 'ab', false],
    ['a?c', 'a/c', true], // `?` matches `/` too
    ['?', 'é', true], // one code point
    ['?', '😀', true], // one code point, two UTF-16 code units
    ['[abc]', 'b', true],
    ['[abc]', 'd', false],
    ['[a-c]x', 'bx', true],
    ['[a-c]x', 'dx', false],
    ['[!a-c]', 'd', true],
    ['[!a-c]', 'b', false],
    ['[]]', ']', true], // `]` first is literal
    ['[!]]', ']', false],
    ['[!]]', 'a', true],
    ['[]-a]', '^', true], // range `]`..`a`
    ['[a-]', '-', true], // trailing `-` literal
    ['[-a]', '-', true], // leading `-` literal
    ['[z-a]', 'm', false], // reversed range matches nothing
    ['[z-a]', 'z', false],
    ['[!z-a]', 'm', true], // negated empty class matches any character
    ['[a-c-e]', '-', true],
    ['[a-c-e]', 'd', false],
    ['[', '[', true], // unclosed `[` is literal
    ['[ab', '[ab', true],
    ['[ab', 'a', false],
    ['a[', 'a[', true],
    ['[!]', '[!]', true], // `]` after `!` is literal, so this class is unclosed
    ['\\*', '\\x', true], // backslash is an ordinary character
    ['\\*', '*', false],
    ['[\\]', '\\', true],
    ['README.md', 'readme.md', false], // case-sensitive
    ['*.MD', 'a.md', false],
    ['[A-Z]*', 'readme', false],
    ['a*b*c', 'a/x/b/y/c', true],
    ['a*b*c', 'a/x/b/y/d', false],
    ['*a*a*a*b', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', false],
    ['', '', true],
    ['', 'a', false],
  ]
  it.each(table)('fnmatch(%j, %j) is %s', (pattern, value, expected) => {
    expect(fnmatch(pattern, value)).toBe(expected)
  })
})

describe('permissionFor', () => {
  it('maps each scheme to its prefix and value', () => {
    expect(permissionFor('fs:file:docs/a.md')).toEqual({ prefix: 'fs:read:', value: 'docs/a.md' })
    expect(permissionFor('fs:glob:**/*.md')).toEqual({ prefix: 'fs:read:', value: '**/*.md' })
    expect(permissionFor('sql:model:open_tasks')).toEqual({ prefix: 'sql:read:', value: 'open_tasks' })
    expect(permissionFor('resource:loop')).toEqual({ prefix: 'resource:read:', value: 'loop' })
    expect(permissionFor('git://HEAD')).toEqual({ prefix: 'git:read:', value: 'HEAD' })
    expect(permissionFor('git://status/docs/a.md')).toEqual({ prefix: 'git:read:', value: 'status/docs/a.md' })
  })

  it('strips a ?query, except from glob patterns where ? is a wildcard', () => {
    expect(permissionFor('sql:model:tasks?status=open&x=1')).toEqual({ prefix: 'sql:read:', value: 'tasks' })
    expect(permissionFor('resource:loop?depth=2')).toEqual({ prefix: 'resource:read:', value: 'loop' })
    expect(permissionFor('fs:file:docs/a.md?raw=1')).toEqual({ prefix: 'fs:read:', value: 'docs/a.md' })
    expect(permissionFor('fs:glob:docs/?.md')).toEqual({ prefix: 'fs:read:', value: 'docs/?.md' })
  })

  it('strips leading slashes after git://', () => {
    expect(permissionFor('git:///status/x')).toEqual({ prefix: 'git:read:', value: 'status/x' })
  })

  it('returns null for unknown schemes, including the host-internal fs:dir:', () => {
    expect(permissionFor('fs:dir:docs')).toBeNull()
    expect(permissionFor('http://example.com')).toBeNull()
    expect(permissionFor('file:///etc/passwd')).toBeNull()
    expect(permissionFor('index:documents')).toBeNull()
  })
})

describe('isPermitted', () => {
  it('matches permissions of the right prefix with fnmatch', () => {
    expect(isPermitted(['fs:read:docs/*'], 'fs:file:docs/a/b.md')).toBe(true)
    expect(isPermitted(['fs:read:docs/*'], 'fs:file:src/a.ts')).toBe(false)
    expect(isPermitted(['fs:read:docs/*'], 'fs:glob:docs/**/*.md')).toBe(true)
    expect(isPermitted(['sql:read:open_*'], 'sql:model:open_tasks?x=1')).toBe(true)
    expect(isPermitted(['sql:read:open_*'], 'sql:model:closed_tasks')).toBe(false)
    expect(isPermitted(['resource:read:loop'], 'resource:loop?n=1')).toBe(true)
    expect(isPermitted(['resource:read:loop'], 'resource:loops')).toBe(false)
    expect(isPermitted(['git:read:status/*'], 'git://status/docs/a.md')).toBe(true)
    expect(isPermitted(['git:read:status/*'], 'git:///status/docs/a.md')).toBe(true)
    expect(isPermitted(['git:read:status/*'], 'git://HEAD')).toBe(false)
    expect(isPermitted(['git:read:*'], 'git://HEAD')).toBe(true)
  })

  it('does not let a permission of another prefix grant access', () => {
    expect(isPermitted(['fs:read:*'], 'sql:model:tasks')).toBe(false)
    expect(isPermitted(['sql:read:*'], 'fs:file:a.md')).toBe(false)
    expect(isPermitted(['resource:read:*', 'sql:read:*', 'fs:read:*'], 'git://HEAD')).toBe(false)
    expect(isPermitted([], 'fs:file:a.md')).toBe(false)
  })

  it('lets a **/ pattern also match with the prefix removed', () => {
    expect(isPermitted(['fs:read:**/*.md'], 'fs:file:README.md')).toBe(true)
    expect(isPermitted(['fs:read:**/*.md'], 'fs:file:docs/a.md')).toBe(true)
    expect(isPermitted(['fs:read:**/*.md'], 'fs:file:README.txt')).toBe(false)
    // only a leading `**/` is dropped: an inner `/**/` still needs two slashes
    expect(isPermitted(['fs:read:docs/**/*.md'], 'fs:file:docs/a.md')).toBe(false)
    expect(isPermitted(['fs:read:docs/**/*.md'], 'fs:file:docs/sub/a.md')).toBe(true)
  })

  it('matches fs:file: against the normalized path, so .. cannot climb out of a permitted folder', () => {
    expect(isPermitted(['fs:read:docs/*'], 'fs:file:docs/../secret.txt')).toBe(false)
    expect(isPermitted(['fs:read:*'], 'fs:file:docs/../secret.txt')).toBe(true)
    expect(isPermitted(['fs:read:docs/*'], 'fs:file:docs/./a.md')).toBe(true)
    expect(isPermitted(['fs:read:*'], 'fs:file:../outside.txt')).toBe(false)
    expect(isPermitted(['fs:read:*'], 'fs:file:/etc/passwd')).toBe(false)
    expect(permissionFor('fs:file:docs/../secret.txt?x=1')).toEqual({ prefix: 'fs:read:', value: 'secret.txt' })
  })

  it('is case-sensitive', () => {
    expect(isPermitted(['fs:read:docs/*'], 'fs:file:Docs/a.md')).toBe(false)
  })

  it('denies unknown schemes whatever the permissions', () => {
    expect(isPermitted(['fs:read:*', 'fs:dir:*', '*'], 'fs:dir:docs')).toBe(false)
    expect(isPermitted(['*'], 'http://example.com')).toBe(false)
  })
})

describe('permissionDeniedMessage', () => {
  it('names the extension and the resource', () => {
    expect(permissionDeniedMessage('acme/hello', 'sql:model:tasks?x=1')).toBe(
      'acme/hello may not read resource sql:model:tasks?x=1',
    )
  })
  it('reports an fs: path leaving the root as an escape, not as a denial', () => {
    for (const resource of ['fs:file:../x', 'fs:file:/etc/passwd', 'fs:file:docs/../../x?q=1', 'fs:dir:..', 'fs:glob:../*.md', 'fs:file:C:/x']) {
      expect(permissionDeniedMessage('acme/hello', resource)).toBe(`resource escapes project root: ${resource}`)
    }
    expect(permissionDeniedMessage('acme/hello', 'fs:file:docs/../x')).toBe('acme/hello may not read resource fs:file:docs/../x')
    expect(permissionDeniedMessage('acme/hello', 'fs:glob:/docs/*.md')).toBe('acme/hello may not read resource fs:glob:/docs/*.md')
    expect(permissionDeniedMessage('acme/hello', 'git://show/HEAD/../x')).toBe('acme/hello may not read resource git://show/HEAD/../x')
  })
})
