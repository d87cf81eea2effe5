/**
 * The git metadata watcher (src/sync/git-watcher.ts) on real repositories: a commit is seen in a
 * plain repository and in a linked worktree (`git worktree add`), whose HEAD and index live under
 * `.git/worktrees/<name>/` (a folder the watcher must not take for the skipped `worktrees/`).
 * And the engine locates those files at start only when something will hear file events.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { gitMetadataPaths, isGitMetadataPath } from '../../src/resources/git.js'
import { type GitWatcher, watchGitMetadata } from '../../src/sync/git-watcher.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const watchers: GitWatcher[] = []
afterEach(async () => {
  for (const watcher of watchers.splice(0)) await watcher.close()
  removeTempDirs()
})

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8' }).trim()
}

async function commitsSeen(root: string): Promise<() => number> {
  const paths = await gitMetadataPaths(root)
  if (!paths) throw new Error(`no repository at ${root}`)
  let bursts = 0
  const isMetadata = (file: string) => paths.some((p) => isGitMetadataPath(path.dirname(p), file) || file === p || file.startsWith(`${p}${path.sep}`))
  const watcher = watchGitMetadata(paths, isMetadata, () => bursts++, 25, (error) => {
    throw error
  })
  watchers.push(watcher)
  await watcher.ready
  return () => bursts
}

describe('watchGitMetadata', () => {
  it('sees a commit in a plain repository', async () => {
    const root = tempDir()
    git(root, 'init', '-q')
    git(root, 'commit', '-q', '--allow-empty', '-m', 'first')
    const bursts = await commitsSeen(root)
    git(root, 'commit', '-q', '--allow-empty', '-m', 'second')
    await expect.poll(bursts, { timeout: 10_000 }).toBeGreaterThan(0)
  })

  it('sees a commit and a checkout in a linked worktree', async () => {
    const main = tempDir()
    git(main, 'init', '-q')
    fs.writeFileSync(path.join(main, 'a.txt'), 'a\n')
    git(main, 'add', 'a.txt')
    git(main, 'commit', '-q', '-m', 'first')
    const linked = path.join(tempDir(), 'linked')
    git(main, 'worktree', 'add', '-q', '-b', 'side', linked)
    const bursts = await commitsSeen(linked)
    git(linked, 'commit', '-q', '--allow-empty', '-m', 'on the side')
    await expect.poll(bursts, { timeout: 10_000 }).toBeGreaterThan(0)
    const afterCommit = bursts()
    git(linked, 'checkout', '-q', '--detach')
    await expect.poll(bursts, { timeout: 10_000 }).toBeGreaterThan(afterCommit)
  })
})

describe('the engine’s git metadata (EngineOptions.gitMetadata)', () => {
  it('is located at start by default, and not at all for an engine that hears no file events', async () => {
    const root = tempDir()
    git(root, 'init', '-q')
    fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
    const watching = await InsituEngine.create({ root, cache: false })
    const oneShot = await InsituEngine.create({ root, cache: false, gitMetadata: false })
    try {
      const head = path.join(fs.realpathSync(root), '.git', 'HEAD')
      expect(watching.gitPaths).not.toBeNull()
      expect(watching.isGitMetadata(head)).toBe(true)
      expect(oneShot.gitPaths).toBeNull()
      expect(oneShot.isGitMetadata(head)).toBe(false)
    } finally {
      await watching.close()
      await oneShot.close()
    }
  })
})
