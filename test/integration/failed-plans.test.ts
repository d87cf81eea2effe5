/**
 * A file event whose plan fails still updates the documents that read the file, in a real dev
 * server on a copy of test/fixtures/plugin-project.
 *
 * (test/integration/vite-majors.test.ts runs the same case on every Vite major.)
 *
 * The plan of an event (`LiveSync.changed`) starts with the engine's `affected()`, which
 * refreshes the document index with the event's path. That refresh throws for a path that has
 * become a symbolic link to itself (`ELOOP`: the index resolves a link's target, and only a
 * missing path counts as gone), a real failure, not a mock. Vite's watcher reports such a
 * path as deleted. Before the fallback the error was logged and the event got only Vite's own
 * update: Vite has no module for a file only documents read (an included file), so nothing was
 * sent, and the including document kept serving the lines it included before, silently
 * (the log line aside), until the next change. Now the documents that may read the file are
 * decided as any change's: the including document is rendered again (its include fails: there
 * is no file to read any more; the region keeps its last good body, issue #34, so no update is
 * sent and its failure is told), a reader of the index renders to the same text and gets no
 * update, and the error is logged once, naming the file.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createServer, type HotPayload } from 'vite'
import { describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { acceptedPaths, type LogEntry, loadRaw, recordingLogger, recordPayloads, serverPerTest } from './dev-server-harness.js'
import { copyProject, INITIAL_SNIPPET, removeProjects, SNIPPET_DOC, TASKS_DOC } from './plugin-project.js'

const WAIT = { timeout: 10_000 }
const keepServer = serverPerTest(removeProjects)

async function start(root: string) {
  const payloads: HotPayload[] = []
  const logs: LogEntry[] = []
  // Polling, so each change is reported once, at the next poll (no throttle window in play).
  const dev = await createServer({
    root,
    configFile: false,
    customLogger: recordingLogger((entry) => logs.push(entry)),
    plugins: [insitu()],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  keepServer(dev)
  recordPayloads(dev.environments.client, () => payloads)
  await dev.environments.client.transformRequest('/main.js')
  return { dev, payloads, logs }
}

/** The plugin's error lines about `file`. */
const failuresOf = (logs: readonly LogEntry[], file: string) =>
  logs.filter((entry) => entry.level === 'error' && entry.message.includes('vite-plugin-insitu') && entry.message.includes(file)).map((entry) => entry.message)

describe('a file event whose plan fails', () => {
  it('still decides the documents that read the file: an included file turned into a symlink loop', async () => {
    const root = copyProject()
    const { dev, payloads, logs } = await start(root)
    const client = dev.environments.client
    expect(await loadRaw(client, '/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    // A reader of the document index, which the fallback must decide too (whether the index changed is unknown).
    expect(await loadRaw(client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
    await expect.poll(() => dev.watcher.getWatched()[path.join(root, 'snippets')]?.includes('x.txt'), WAIT).toBe(true)

    // The included file becomes a link to itself: nothing can read it any more.
    const included = path.join(root, 'snippets/x.txt')
    fs.rmSync(included)
    fs.symlinkSync('x.txt', included)

    // The plan failed: the index refresh threw (were this no failure any more, the test would
    // prove nothing: find another real one).
    await expect.poll(() => failuresOf(logs, included), WAIT).toHaveLength(1)
    expect(failuresOf(logs, included)[0]).toContain('failed: ELOOP')
    // The including document is rendered all the same (as are the index's readers: whether the
    // index changed is unknown), decided as any change's: it cannot read the file, so its region
    // keeps its last good body (issue #34), its text is what the page shows, and no update is
    // sent; its failure is told instead.
    const failures = () =>
      payloads.flatMap((p) => (p.type === 'custom' && p.event === 'insitu:failures' ? (p.data as { files: { file: string; failures: { text: string }[] }[] }).files : []))
    await expect.poll(failures, WAIT).toEqual([{ file: 'docs/snippet.md', failures: [expect.objectContaining({ text: expect.stringContaining('file not found: snippets/x.txt') })] }])
    await new Promise((resolve) => setTimeout(resolve, 300)) // an update would come now
    expect(acceptedPaths(payloads)).toEqual([])
    expect(payloads.filter((p) => p.type === 'full-reload')).toEqual([])
    expect(await loadRaw(client, '/docs/snippet.md?raw')).toBe(SNIPPET_DOC(INITIAL_SNIPPET))
    // Logged once, with the file and what was done instead.
    expect(failuresOf(logs, included)).toEqual([expect.stringMatching(/handling the change of .*snippets\/x\.txt failed: ELOOP.*; updating every document that may read it$/)])

    // Once the file is readable again, the next change brings its text as usual.
    payloads.length = 0
    fs.rmSync(included)
    fs.writeFileSync(included, 'restored line\n')
    await expect.poll(() => acceptedPaths(payloads), WAIT).toContain('/docs/snippet.md?raw')
    expect(await loadRaw(client, '/docs/snippet.md?raw')).toBe(SNIPPET_DOC(['restored line']))
  })
})
