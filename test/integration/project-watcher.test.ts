/**
 * The project watcher of the command line's `watch` (src/sync/project-watcher.ts) on real folders
 * with real chokidar: which paths it reports (not `.git`, excluded folders, the state folder or
 * write-back temporaries; extension folders and single files added on purpose), and that the
 * events of one path reach the handler one at a time, in order, with `report()` in the same
 * pipeline, while other paths go on; `close()` waits for handlers in progress.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createPathMatcher } from '../../src/documents/project-files.js'
import { type ProjectWatcher, type ProjectWatchEvent, watchProject } from '../../src/sync/project-watcher.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const WAIT = { timeout: 10_000, interval: 10 }
const watchers: ProjectWatcher[] = []

afterEach(async () => {
  await Promise.all(watchers.splice(0).map((watcher) => watcher.close()))
  removeTempDirs()
})

function write(root: string, rel: string, text = 'x'): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
  fs.writeFileSync(path.join(root, rel), text)
}

function start(root: string, onEvent: (event: ProjectWatchEvent) => Promise<void> | void, errors: Error[] = []): ProjectWatcher {
  const watcher = watchProject({
    root,
    isExcluded: createPathMatcher(['dist/**', 'node_modules/**', '.insitu/**']),
    ignoredFolders: [path.join(root, 'state')],
    onEvent,
    onError: (error) => errors.push(error),
  })
  watchers.push(watcher)
  return watcher
}

/** `type path` with the path relative to `root` (folders end in `/`). */
function describeEvent(root: string, event: ProjectWatchEvent): string {
  return `${event.type} ${path.relative(root, event.path)}${event.directory ? '/' : ''}`
}

describe('watchProject', () => {
  it('reports files and folders of the project, never .git, excluded folders, the state folder or write-back temporaries', async () => {
    const root = tempDir()
    for (const folder of ['.git', 'dist', 'node_modules/pkg', 'state', 'docs']) fs.mkdirSync(path.join(root, folder), { recursive: true })
    const seen: string[] = []
    const watcher = start(root, (event) => void seen.push(describeEvent(root, event)))
    await watcher.ready
    write(root, '.git/HEAD')
    write(root, 'dist/out.js')
    write(root, 'node_modules/pkg/index.js')
    write(root, 'state/index.db')
    write(root, 'docs/.a.md.insitu-0123456789ab.tmp')
    write(root, 'docs/.a.md.insitu-0123456789ab.bak')
    fs.mkdirSync(path.join(root, 'docs/new'))
    await expect.poll(() => seen, WAIT).toContain('create docs/new/')
    write(root, 'docs/a.md', 'one')
    await expect.poll(() => seen, WAIT).toContain('create docs/a.md')
    write(root, 'docs/a.md', 'two, longer')
    await expect.poll(() => seen, WAIT).toContain('update docs/a.md')
    fs.rmSync(path.join(root, 'docs/a.md'))
    await expect.poll(() => seen, WAIT).toContain('delete docs/a.md')
    fs.rmSync(path.join(root, 'docs/new'), { recursive: true })
    await expect.poll(() => seen, WAIT).toContain('delete docs/new/')
    expect(seen).toEqual(['create docs/new/', 'create docs/a.md', 'update docs/a.md', 'delete docs/a.md', 'delete docs/new/'])
    expect(watcher.covers(path.join(root, 'docs/a.md'))).toBe(true)
    for (const rel of ['dist/out.js', '.git/HEAD', 'state/index.db', '../elsewhere.md']) expect(watcher.covers(path.join(root, rel))).toBe(false)
  })

  it('also watches an added folder and an added file whatever the exclusions (not their runtime folders)', async () => {
    const root = tempDir()
    const outside = tempDir()
    write(root, '.insitu/extensions/acme-x/extension.py')
    write(root, 'dist/version.txt', '1')
    write(outside, 'tool/extension.py')
    const seen: string[] = []
    const watcher = start(root, (event) => void seen.push(describeEvent(root, event)))
    await watcher.ready
    watcher.alsoWatch(path.join(root, '.insitu/extensions/acme-x'))
    watcher.alsoWatch(path.join(outside, 'tool'))
    watcher.alsoWatchFile(path.join(root, 'dist/version.txt'))
    // chokidar's `add()` has no ready event of its own: edit until the edit is seen.
    let n = 0
    await expect
      .poll(() => {
        write(root, '.insitu/extensions/acme-x/extension.py', `v${++n}`)
        return seen.includes('update .insitu/extensions/acme-x/extension.py')
      }, WAIT)
      .toBe(true)
    await expect
      .poll(() => {
        write(outside, 'tool/extension.py', `v${++n}`)
        return seen.some((line) => line.startsWith('update ') && line.endsWith('/tool/extension.py'))
      }, WAIT)
      .toBe(true)
    await expect
      .poll(() => {
        write(root, 'dist/version.txt', `${++n}`)
        return seen.includes('update dist/version.txt')
      }, WAIT)
      .toBe(true)
    write(root, '.insitu/extensions/acme-x/__pycache__/extension.pyc')
    write(root, 'dist/other.txt')
    write(root, 'docs/sentinel.md')
    await expect.poll(() => seen, WAIT).toContain('create docs/sentinel.md')
    expect(seen.filter((line) => line.includes('__pycache__') || line.includes('other.txt'))).toEqual([])
  })

  it('hands the events of one path on one at a time, in order (report() included), while other paths go on', async () => {
    const root = tempDir()
    write(root, 'a.md')
    const log: string[] = []
    let running = 0
    let overlapped = false
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const errors: Error[] = []
    const watcher = start(
      root,
      async (event) => {
        const line = describeEvent(root, event)
        if (!line.endsWith('a.md')) {
          log.push(line)
          return
        }
        running++
        overlapped ||= running > 1
        log.push(`begin ${line}`)
        try {
          if (line === 'update a.md') {
            await held // a slow handler…
            throw new Error('handler failed') // …that fails: the next event still runs
          }
          log.push(`end ${line}`)
        } finally {
          running--
        }
      },
      errors,
    )
    await watcher.ready
    watcher.report('update', path.join(root, 'a.md'))
    await expect.poll(() => log, WAIT).toContain('begin update a.md')
    fs.rmSync(path.join(root, 'a.md'))
    write(root, 'b.md')
    // b.md does not wait for a.md; a.md's delete waits for its update.
    await expect.poll(() => log, WAIT).toContain('create b.md')
    await new Promise((resolve) => setTimeout(resolve, 300)) // past chokidar's 100 ms wait for an unlink's add
    expect(log.filter((line) => line.endsWith('a.md'))).toEqual(['begin update a.md'])
    release()
    await expect.poll(() => log, WAIT).toContain('end delete a.md')
    expect(log.filter((line) => line.endsWith('a.md'))).toEqual(['begin update a.md', 'begin delete a.md', 'end delete a.md'])
    expect(errors.map((error) => error.message)).toEqual(['handler failed'])
    expect(overlapped).toBe(false)
  })

  it('reports a change chokidar drops inside its 50 ms throttle window (a second save right after the first)', async () => {
    const root = tempDir()
    write(root, 'a.txt', 'one')
    const seen: string[] = []
    let saved = false
    const watcher = start(root, (event) => {
      seen.push(`${describeEvent(root, event)} ${fs.readFileSync(event.path, 'utf8')}`)
      if (!saved) {
        saved = true
        write(root, 'a.txt', 'two, longer') // within milliseconds of the change chokidar just reported
      }
    })
    await watcher.ready
    write(root, 'a.txt', 'one, edited')
    await expect.poll(() => seen.at(-1), WAIT).toBe('update a.txt two, longer')
    await new Promise((resolve) => setTimeout(resolve, 300)) // a doubled report would come now
    expect(seen).toEqual(['update a.txt one, edited', 'update a.txt two, longer'])
  })

  it('close() resolves once the handlers in progress have settled, and reports nothing after', async () => {
    const root = tempDir()
    let finished = false
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const seen: string[] = []
    const watcher = start(root, async (event) => {
      seen.push(describeEvent(root, event))
      await held
      finished = true
    })
    await watcher.ready
    write(root, 'a.md')
    await expect.poll(() => seen, WAIT).toEqual(['create a.md'])
    const closed = watcher.close()
    let closedYet = false
    void closed.then(() => (closedYet = true))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(closedYet).toBe(false)
    release()
    await closed
    expect(finished).toBe(true)
    watcher.report('update', path.join(root, 'a.md'))
    write(root, 'b.md')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(seen).toEqual(['create a.md'])
  })
})
