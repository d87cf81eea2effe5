/**
 * `git://` resources against real temporary repositories (real `git`, fixed author/committer dates):
 * every form with exact values, detached HEAD in a linked worktree, an unborn repository, a folder
 * outside any repository, a project that is a subfolder of the worktree, path escapes, unsupported
 * forms, and the metadata paths a watcher should follow.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  gitMetadataPaths,
  isGitMetadataPath,
  resolveGitResource,
  statusFlagsOf,
} from '../../src/resources/git.js'

const FIRST_DATE = '2026-01-02T03:04:05Z'
const SECOND_DATE = '2026-01-03T10:20:30Z'

function git(cwd: string, args: string[], date = FIRST_DATE): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.org',
      GIT_COMMITTER_NAME: 'Charles Babbage',
      GIT_COMMITTER_EMAIL: 'charles@example.org',
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
      GIT_CONFIG_NOSYSTEM: '1',
    },
  })
}

function write(root: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

async function value(identifier: string, root: string): Promise<unknown> {
  const result = await resolveGitResource(identifier, { root })
  expect(result.dependencies).toEqual([identifier])
  return result.value
}

let temp: string
/** main repository (physical path, as git reports it) */
let repo: string
let firstOid: string
let secondOid: string

beforeAll(() => {
  temp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-')))
  repo = path.join(temp, 'repo')
  fs.mkdirSync(repo)
  git(repo, ['init', '-q', '-b', 'main'])
  write(repo, '.gitignore', 'dist/\n*.log\n')
  write(repo, 'README.md', '# Title\n')
  write(repo, 'docs/guide.md', 'v1\n')
  write(repo, 'docs/gone.md', 'to delete\n')
  git(repo, ['add', '.'])
  git(repo, ['commit', '-q', '-m', 'First commit'], FIRST_DATE)
  firstOid = git(repo, ['rev-parse', 'HEAD']).trim()
  write(repo, 'docs/guide.md', 'v2\n')
  write(repo, 'docs/.gitignore', 'draft-*.md\n')
  write(repo, 'docs/ünï côde.md', 'unicode\n')
  write(repo, 'docs/staged.md', 'one\n')
  git(repo, ['add', '.'])
  git(repo, ['commit', '-q', '-m', 'Second commit\n\nWith a body.'], SECOND_DATE)
  secondOid = git(repo, ['rev-parse', 'HEAD']).trim()
  // Working tree state on top of the second commit.
  write(repo, 'README.md', '# Title\nmore\n') // worktree-modified
  write(repo, 'docs/new.md', 'new\n')
  git(repo, ['add', 'docs/new.md']) // index-added
  write(repo, 'docs/staged.md', 'two\n')
  git(repo, ['add', 'docs/staged.md'])
  write(repo, 'docs/staged.md', 'three\n') // index-modified + worktree-modified
  fs.rmSync(path.join(repo, 'docs/gone.md')) // worktree-deleted
  write(repo, 'notes.txt', 'untracked\n')
  write(repo, 'dist/out.js', 'ignored\n')
  write(repo, 'docs/draft-1.md', 'ignored by docs/.gitignore\n')
  write(repo, 'sub/.gitignore', '*.tmp\n') // untracked, not ignored: still an ignore file
  write(repo, '.git/info/exclude', 'secret.txt\n')
})

afterAll(() => {
  fs.rmSync(temp, { recursive: true, force: true })
})

describe('git:// in a repository (project = worktree root)', () => {
  it('HEAD and branch on a branch, both spellings', async () => {
    const head = { oid: secondOid, ref: 'refs/heads/main', branch: 'main', detached: false }
    expect(await value('git://HEAD', repo)).toEqual(head)
    expect(await value('git:///HEAD', repo)).toEqual(head)
    expect(await value('git://branch', repo)).toEqual({
      name: 'main', ref: 'refs/heads/main', oid: secondOid, detached: false,
    })
  })

  it('tracked lists index entries (staged new file included, deleted-on-disk still tracked)', async () => {
    expect(await value('git://tracked', repo)).toEqual([
      '.gitignore', 'README.md', 'docs/.gitignore', 'docs/gone.md', 'docs/guide.md', 'docs/new.md',
      'docs/staged.md', 'docs/ünï côde.md',
    ])
  })

  it('ignore-rules lists the ignore files that apply', async () => {
    expect(await value('git://ignore-rules', repo)).toEqual({
      repository: repo,
      paths: ['.git/info/exclude', '.gitignore', 'docs/.gitignore', 'sub/.gitignore'],
    })
  })

  it('status maps porcelain letters to flags, in both spellings', async () => {
    const cases: Array<[string, unknown]> = [
      ['README.md', { path: 'README.md', flags: ['worktree-modified'], tracked: true, ignored: false }],
      ['docs/new.md', { path: 'docs/new.md', flags: ['index-added'], tracked: true, ignored: false }],
      ['docs/staged.md', {
        path: 'docs/staged.md', flags: ['index-modified', 'worktree-modified'], tracked: true, ignored: false,
      }],
      ['docs/gone.md', { path: 'docs/gone.md', flags: ['worktree-deleted'], tracked: true, ignored: false }],
      ['docs/guide.md', { path: 'docs/guide.md', flags: [], tracked: true, ignored: false }],
      ['docs/ünï côde.md', { path: 'docs/ünï côde.md', flags: [], tracked: true, ignored: false }],
      ['notes.txt', { path: 'notes.txt', flags: ['untracked'], tracked: false, ignored: false }],
      ['dist/out.js', { path: 'dist/out.js', flags: ['ignored'], tracked: false, ignored: true }],
      ['docs/draft-1.md', { path: 'docs/draft-1.md', flags: ['ignored'], tracked: false, ignored: true }],
      ['missing.md', { path: 'missing.md', flags: [], tracked: false, ignored: false }],
      ['later.log', { path: 'later.log', flags: [], tracked: false, ignored: true }],
      ['docs/./guide.md/', { path: 'docs/guide.md', flags: [], tracked: true, ignored: false }],
      // pathspecs are literal: no glob matching of docs/guide.md
      ['docs/g*', { path: 'docs/g*', flags: [], tracked: false, ignored: false }],
    ]
    for (const [p, expected] of cases) {
      expect(await value(`git://status/${p}`, repo)).toEqual(expected)
      expect(await value(`git:///status/${p}`, repo)).toEqual(expected)
    }
  })

  it('status of a folder is the union of its entries', async () => {
    expect(await value('git://status/docs', repo)).toEqual({
      path: 'docs',
      flags: ['index-added', 'index-modified', 'worktree-modified', 'worktree-deleted', 'ignored'],
      tracked: true,
      ignored: false,
    })
  })

  it('diff is working tree vs HEAD', async () => {
    const before = git(repo, ['rev-parse', 'HEAD:README.md']).trim()
    const after = git(repo, ['hash-object', 'README.md']).trim()
    expect(await value('git://diff/README.md', repo)).toEqual({
      path: 'README.md',
      patch:
        'diff --git a/README.md b/README.md\n' +
        `index ${before.slice(0, 7)}..${after.slice(0, 7)} 100644\n` +
        '--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # Title\n+more\n',
    })
    expect(await value('git://diff/docs/guide.md', repo)).toEqual({ path: 'docs/guide.md', patch: '' })
    expect(await value('git://diff/notes.txt', repo)).toEqual({ path: 'notes.txt', patch: '' })
  })

  it('history lists commits touching a path, newest first', async () => {
    const second = {
      oid: secondOid, summary: 'Second commit', author: 'Ada Lovelace', committed_at: '2026-01-03T10:20:30Z',
      path: 'docs/guide.md',
    }
    const first = {
      oid: firstOid, summary: 'First commit', author: 'Ada Lovelace', committed_at: '2026-01-02T03:04:05Z',
      path: 'docs/guide.md',
    }
    expect(await value('git://history/docs/guide.md', repo)).toEqual([second, first])
    expect(await value('git://history/README.md', repo)).toEqual([{ ...first, path: 'README.md' }])
    expect(await value('git://history/notes.txt', repo)).toEqual([])
  })

  it('history keeps at most 20 commits', async () => {
    const many = path.join(temp, 'many')
    fs.mkdirSync(many)
    git(many, ['init', '-q', '-b', 'main'])
    for (let i = 1; i <= 22; i++) {
      write(many, 'a.md', `${i}\n`)
      git(many, ['add', 'a.md'])
      git(many, ['commit', '-q', '-m', `c${i}`])
    }
    const history = (await value('git://history/a.md', many)) as Array<{ summary: string }>
    expect(history.map((commit) => commit.summary)).toEqual(
      Array.from({ length: 20 }, (_, i) => `c${22 - i}`),
    )
  })

  it('blob at a revision, and null when missing', async () => {
    expect(await value('git://blob/HEAD~1/docs/guide.md', repo)).toEqual({
      revision: 'HEAD~1',
      path: 'docs/guide.md',
      oid: git(repo, ['rev-parse', 'HEAD~1:docs/guide.md']).trim(),
      content: 'v1\n',
    })
    expect(await value(`git://blob/${secondOid}/docs/ünï côde.md`, repo)).toEqual({
      revision: secondOid,
      path: 'docs/ünï côde.md',
      oid: git(repo, ['rev-parse', 'HEAD:docs/ünï côde.md']).trim(),
      content: 'unicode\n',
    })
    expect(await value('git://blob/main/docs/guide.md', repo)).toMatchObject({ content: 'v2\n' })
    expect(await value('git://blob/HEAD~1/docs/new.md', repo)).toBeNull()
    expect(await value('git://blob/no-such-rev/README.md', repo)).toBeNull()
    expect(await value('git://blob/HEAD/docs', repo)).toBeNull() // a tree, not a blob
  })

  it('rejects paths leaving the worktree', async () => {
    await expect(value('git://status/../outside.md', repo)).rejects.toThrow(
      'path escapes Git worktree: ../outside.md',
    )
    await expect(value('git://diff/docs/../../x', repo)).rejects.toThrow('path escapes Git worktree: docs/../../x')
    await expect(value('git://blob/HEAD/../x', repo)).rejects.toThrow('path escapes Git worktree: ../x')
    await expect(value('git://history//etc/passwd', repo)).rejects.toThrow(
      'path escapes Git worktree: /etc/passwd',
    )
  })

  it('rejects unsupported forms', async () => {
    for (const identifier of [
      'git://nope', 'git://head', 'git://status', 'git://status/', 'git://HEAD/extra', 'git://blob/HEAD',
      'git://blob//README.md', 'git://blob/HEAD:docs/guide.md', 'git://', 'fs:file:README.md',
    ]) {
      await expect(resolveGitResource(identifier, { root: repo })).rejects.toThrow(
        `unsupported host resource: ${identifier}`,
      )
    }
  })

  it('reports metadata paths to watch', async () => {
    const gitDir = path.join(repo, '.git')
    expect(await gitMetadataPaths(repo)).toEqual([
      path.join(gitDir, 'HEAD'), path.join(gitDir, 'refs'), path.join(gitDir, 'packed-refs'),
      path.join(gitDir, 'index'),
    ])
    expect(await gitMetadataPaths(path.join(repo, 'docs'))).toEqual(await gitMetadataPaths(repo))
  })

  it('follows a symlinked project root', async () => {
    const link = path.join(temp, 'link')
    fs.symlinkSync(repo, link)
    expect(await value('git://status/README.md', link)).toMatchObject({ path: 'README.md', tracked: true })
    expect(await value('git://tracked', link)).toHaveLength(8)
  })
})

describe('git:// with a tracked symlink to a folder', () => {
  it('treats a path through the symlink as outside the tree', async () => {
    const linked = path.join(temp, 'linked')
    fs.mkdirSync(path.join(linked, 'real'), { recursive: true })
    write(linked, 'real/f.md', 'x\n')
    fs.symlinkSync('real', path.join(linked, 'link'))
    git(linked, ['init', '-q', '-b', 'main'])
    git(linked, ['add', '.'])
    git(linked, ['commit', '-q', '-m', 'links'])
    expect(await value('git://status/link/f.md', linked)).toEqual({
      path: 'link/f.md', flags: [], tracked: false, ignored: false,
    })
    expect(await value('git://status/.', linked)).toEqual({ path: '.', flags: [], tracked: true, ignored: false })
    expect(await value('git://blob/HEAD/link', linked)).toEqual({
      revision: 'HEAD', path: 'link', oid: git(linked, ['rev-parse', 'HEAD:link']).trim(), content: 'real',
    })
    expect(await value('git://blob/HEAD/.', linked)).toBeNull()
  })
})

describe('git:// for a project in a subfolder of the worktree', () => {
  it('reads paths relative to the project', async () => {
    const docs = path.join(repo, 'docs')
    expect(await value('git://tracked', docs)).toEqual([
      '.gitignore', 'gone.md', 'guide.md', 'new.md', 'staged.md', 'ünï côde.md',
    ])
    expect(await value('git://ignore-rules', docs)).toEqual({
      repository: repo,
      paths: ['../.git/info/exclude', '../.gitignore', '.gitignore'],
    })
    expect(await value('git://status/new.md', docs)).toEqual({
      path: 'new.md', flags: ['index-added'], tracked: true, ignored: false,
    })
    // outside the project but inside the worktree is allowed
    expect(await value('git://status/../README.md', docs)).toEqual({
      path: '../README.md', flags: ['worktree-modified'], tracked: true, ignored: false,
    })
    expect(await value('git://history/guide.md', docs)).toMatchObject([
      { oid: secondOid, path: 'guide.md' }, { oid: firstOid, path: 'guide.md' },
    ])
    expect(await value('git://blob/HEAD~1/guide.md', docs)).toMatchObject({ path: 'guide.md', content: 'v1\n' })
    expect(await value('git://diff/staged.md', docs)).toMatchObject({ path: 'staged.md' })
    expect((await value('git://diff/staged.md', docs)) as { patch: string }).toMatchObject({
      patch: expect.stringContaining('--- a/docs/staged.md\n+++ b/docs/staged.md\n@@ -1 +1 @@\n-one\n+three\n'),
    })
    await expect(value('git://status/../../x', docs)).rejects.toThrow('path escapes Git worktree: ../../x')
  })
})

describe('git:// in a detached linked worktree', () => {
  it('HEAD, branch and metadata paths', async () => {
    const worktree = path.join(temp, 'detached')
    git(repo, ['worktree', 'add', '-q', '--detach', worktree, firstOid])
    expect(await value('git://HEAD', worktree)).toEqual({ oid: firstOid, ref: null, branch: null, detached: true })
    expect(await value('git://branch', worktree)).toEqual({ name: null, ref: null, oid: firstOid, detached: true })
    expect(await value('git://tracked', worktree)).toEqual(['.gitignore', 'README.md', 'docs/gone.md', 'docs/guide.md'])
    const worktreeGitDir = git(worktree, ['rev-parse', '--absolute-git-dir']).trim()
    expect(worktreeGitDir).toBe(path.join(repo, '.git', 'worktrees', 'detached'))
    expect(await gitMetadataPaths(worktree)).toEqual([
      path.join(worktreeGitDir, 'HEAD'), path.join(repo, '.git', 'refs'), path.join(repo, '.git', 'packed-refs'),
      path.join(worktreeGitDir, 'index'),
    ])
    expect(await value('git://ignore-rules', worktree)).toEqual({
      repository: worktree, paths: ['../repo/.git/info/exclude', '.gitignore'],
    })
  })
})

describe('git:// in an unborn repository', () => {
  it('has no HEAD but a branch name; diffs against the empty tree', async () => {
    const unborn = path.join(temp, 'unborn')
    fs.mkdirSync(unborn)
    git(unborn, ['init', '-q', '-b', 'trunk'])
    write(unborn, 'a.md', 'hello\n')
    git(unborn, ['add', 'a.md'])
    expect(await value('git://HEAD', unborn)).toBeNull()
    expect(await value('git://branch', unborn)).toEqual({
      name: 'trunk', ref: 'refs/heads/trunk', oid: null, detached: false,
    })
    expect(await value('git://tracked', unborn)).toEqual(['a.md'])
    expect(await value('git://status/a.md', unborn)).toEqual({
      path: 'a.md', flags: ['index-added'], tracked: true, ignored: false,
    })
    const blob = git(unborn, ['hash-object', 'a.md']).trim()
    expect(await value('git://diff/a.md', unborn)).toEqual({
      path: 'a.md',
      patch:
        'diff --git a/a.md b/a.md\nnew file mode 100644\n' +
        `index 0000000..${blob.slice(0, 7)}\n` +
        '--- /dev/null\n+++ b/a.md\n@@ -0,0 +1 @@\n+hello\n',
    })
    expect(await value('git://history/a.md', unborn)).toEqual([])
    expect(await value('git://blob/HEAD/a.md', unborn)).toBeNull()
  })
})

describe('git:// outside any repository', () => {
  it('gives empty values', async () => {
    const plain = path.join(temp, 'plain')
    fs.mkdirSync(plain)
    // the temporary folder itself must not be inside a repository for this test to mean anything
    expect(() => execFileSync('git', ['rev-parse', '--git-dir'], { cwd: plain, stdio: 'pipe' })).toThrow(
      /not a git repository/,
    )
    expect(await value('git://HEAD', plain)).toBeNull()
    expect(await value('git://branch', plain)).toBeNull()
    expect(await value('git://tracked', plain)).toEqual([])
    expect(await value('git://ignore-rules', plain)).toEqual({ repository: null, paths: [] })
    expect(await value('git://status/a.md', plain)).toEqual({ path: 'a.md', flags: [], tracked: false, ignored: false })
    expect(await value('git://diff/a.md', plain)).toEqual({ path: 'a.md', patch: '' })
    expect(await value('git://history/a.md', plain)).toEqual([])
    expect(await value('git://blob/HEAD/a.md', plain)).toBeNull()
    expect(await gitMetadataPaths(plain)).toBeNull()
    await expect(value('git://status/../a.md', plain)).rejects.toThrow('path escapes Git worktree: ../a.md')
  })
})

describe('isGitMetadataPath', () => {
  it('accepts HEAD, refs/**, packed-refs and index only', () => {
    const gitDir = path.join('/work', 'repo', '.git')
    const at = (rel: string): string => path.join(gitDir, rel)
    expect(isGitMetadataPath(gitDir, at('HEAD'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('refs'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('refs/heads/main'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('refs/tags/v1/x'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('packed-refs'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('index'))).toBe(true)
    expect(isGitMetadataPath(gitDir, at('index.lock'))).toBe(false)
    expect(isGitMetadataPath(gitDir, at('refs/heads/main.lock'))).toBe(false)
    expect(isGitMetadataPath(gitDir, at('HEADS'))).toBe(false)
    expect(isGitMetadataPath(gitDir, at('refsx/a'))).toBe(false)
    expect(isGitMetadataPath(gitDir, at('objects/ab/cdef'))).toBe(false)
    expect(isGitMetadataPath(gitDir, at('config'))).toBe(false)
    expect(isGitMetadataPath(gitDir, path.join('/work', 'repo', 'HEAD'))).toBe(false)
    expect(isGitMetadataPath(gitDir, path.join('/work', 'other', '.git', 'HEAD'))).toBe(false)
  })
})

describe('statusFlagsOf', () => {
  it('maps XY pairs, skips rename origins, orders flags', () => {
    expect(statusFlagsOf('R  new.md\0old.md\0')).toEqual(['index-renamed'])
    expect(statusFlagsOf(' M a\0?? b\0!! c\0MD d\0')).toEqual([
      'index-modified', 'worktree-modified', 'worktree-deleted', 'untracked', 'ignored',
    ])
    expect(statusFlagsOf('UU a\0AA b\0')).toEqual(['conflicted'])
    expect(statusFlagsOf(' A a\0 T b\0T  c\0')).toEqual(['index-typechange', 'worktree-added', 'worktree-typechange'])
    expect(statusFlagsOf('')).toEqual([])
  })
})
