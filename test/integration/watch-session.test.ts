/**
 * The restarts of a `WatchSession` (src/sync/watch-session.ts), in this process, on real files with
 * its real project watcher: one save of `insitu.toml` restarts once, also when the watcher
 * reports it twice — the truncation of `writeFileSync`, then the write, which chokidar drops
 * inside its throttle window and the dropped-changes guard (src/sync/dropped-changes.ts) reports
 * after the restart began (cli-watch.test.ts's broken config printed `waiting for insitu.toml to
 * change` twice in one go under load, and its wait for one line timed out). A file written again
 * while the restart runs still restarts once more.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { RESTART_DELAY_MS, WatchSession, type WatchSessionOptions } from '../../src/sync/watch-session.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

const WAIT = { timeout: 10_000, interval: 10 }
const CONFIG = 'version = 1\n'
const BROKEN = `${CONFIG}[paths]\nstate = = "x"\n`
/** Past the guard's check of a dropped change (60 ms after the report) and one more restart delay. */
const SETTLE_MS = 500

const sessions: WatchSession[] = []

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((session) => session.stop()))
  removeTempDirs()
})

function project(): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), CONFIG)
  fs.mkdirSync(path.join(root, 'docs'))
  fs.writeFileSync(path.join(root, 'docs/a.md'), '# A\n')
  return root
}

function session(root: string, report: (line: string) => void, extra: Partial<WatchSessionOptions> = {}): WatchSession {
  const watch = new WatchSession({ root, searchParents: false, cache: false, prefix: 'insitu', output: { report, log: () => {} }, ...extra })
  sessions.push(watch)
  return watch
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('WatchSession restarts', () => {
  it.each([
    ['a broken config waits for its next edit, once', BROKEN, 'waiting for insitu.toml to change'],
    ['a valid config starts once', `${CONFIG}# edited\n`, 'watching'],
  ])('a save reported twice (its truncation, then its write chokidar dropped) restarts once: %s', async (_, text, settled) => {
    const root = project()
    const config = path.join(root, 'insitu.toml')
    const lines: string[] = []
    const watch = session(root, (line) => {
      lines.push(line)
      // The truncation is reported: the save's write lands now, inside chokidar's 50 ms throttle
      // window, before the restart reads the file (RESTART_DELAY_MS after the report).
      if (line === 'insitu.toml changed, restarting' && lines.filter((l) => l === line).length === 1) fs.writeFileSync(config, text)
    })
    await watch.start()
    expect(lines).toEqual([`watching ${root}`])
    fs.truncateSync(config) // what fs.writeFileSync and many editors do first
    await expect.poll(() => lines.filter((line) => line.startsWith(settled)), WAIT).toHaveLength(settled === 'watching' ? 2 : 1)
    await sleep(SETTLE_MS)
    expect(lines).toEqual([`watching ${root}`, 'insitu.toml changed, restarting', settled === 'watching' ? `watching ${root}` : settled])
  })

  it('a file written again while the restart runs restarts once more', async () => {
    const root = project()
    const config = path.join(root, 'insitu.toml')
    let started = 0
    let stopped = 0
    const watch = session(root, () => {}, {
      observer: {
        engineStarted: () => void started++,
        affected: () => {},
        engineStopped: () => {
          // The first restart is under way (it read nothing yet): the editor's second write.
          if (++stopped === 1) fs.writeFileSync(config, `${CONFIG}# second write, longer\n`)
        },
      },
    })
    await watch.start()
    fs.writeFileSync(config, `${CONFIG}# first write\n`)
    await expect.poll(() => started, WAIT).toBe(3)
    await sleep(SETTLE_MS + RESTART_DELAY_MS)
    expect(started).toBe(3) // the first start, the restart, and the one more for the second write
  })
})
