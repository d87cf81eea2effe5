/**
 * A request of a document in flight while the plugin sends that document an update, in a real
 * dev server on a copy of test/fixtures/plugin-project.
 *
 * (test/integration/vite-majors.test.ts runs the first case on every Vite major.)
 *
 * Vite caches a module's transform result unless the module was invalidated while it was being
 * processed, and only a plain `invalidateModule` counts for that: the one an HMR update makes
 * records an HMR timestamp instead. Vite's own files get the plain one from their watcher event
 * (`onFileChange`) before any hook runs; the documents the plugin updates because one of their
 * dependencies changed (a task's front matter read by a SQL model, an included file) have no such
 * node unless the plugin makes it. A request that had read the previous inputs and finished after
 * the update then stayed cached: every later fetch served the previous text, until the next edit.
 *
 * A post plugin holds one transform of the document (as a slow downstream plugin would) across a
 * second edit and its update; every fetch after that must show the second edit.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createServer, type HotPayload, type Plugin } from 'vite'
import { describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { acceptedPaths, loadRaw, recordPayloads, serverPerTest, transformGate } from './dev-server-harness.js'
import { copyProject, editFile, removeProjects, SNIPPET_DOC, TASKS_DOC } from './plugin-project.js'

const WAIT = { timeout: 10_000 }
const keepServer = serverPerTest(removeProjects)

async function start(root: string, gate: Plugin) {
  const payloads: HotPayload[] = []
  // Polling, so each edit is reported once, at the next poll (no throttle window in play).
  const dev = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [insitu(), gate],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  keepServer(dev)
  recordPayloads(dev.environments.client, () => payloads)
  await dev.environments.client.transformRequest('/main.js')
  return { dev, payloads }
}

const cases = [
  {
    dependency: 'a task’s front matter (a SQL model reads it)',
    url: '/docs/tasks.md?raw',
    initial: TASKS_DOC('open', 'done'),
    first: { file: 'tasks/alpha.md', from: 'status: open', to: 'status: reviewing', shows: TASKS_DOC('reviewing', 'done') },
    second: { file: 'tasks/alpha.md', from: 'status: reviewing', to: 'status: blocked', shows: TASKS_DOC('blocked', 'done') },
  },
  {
    dependency: 'an included file',
    url: '/docs/snippet.md?raw',
    initial: SNIPPET_DOC(['included line one', 'included line two']),
    first: { file: 'snippets/x.txt', from: 'line one', to: 'line one, edited', shows: SNIPPET_DOC(['included line one, edited', 'included line two']) },
    second: { file: 'snippets/x.txt', from: 'line two', to: 'line two, edited', shows: SNIPPET_DOC(['included line one, edited', 'included line two, edited']) },
  },
]

describe('a request of a document in flight while its update goes out', () => {
  for (const scenario of cases) {
    it(`is not kept as the document’s text afterwards: ${scenario.dependency}`, async () => {
      const root = copyProject()
      const gate = transformGate(scenario.url)
      const { dev, payloads } = await start(root, gate.plugin)
      const client = dev.environments.client
      expect(await loadRaw(client, scenario.url)).toBe(scenario.initial)

      // The first edit's update clears the cached module; the next fetch is held mid-transform.
      editFile(root, scenario.first.file, scenario.first.from, scenario.first.to)
      await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual([scenario.url])
      gate.arm()
      const inFlight = loadRaw(client, scenario.url)
      await expect.poll(gate.reached, WAIT).toBe(true)

      // The second edit's update goes out while that fetch (of the first edit's text) is held.
      await new Promise((resolve) => setTimeout(resolve, 150)) // a later mtime than the first edit's
      editFile(root, scenario.second.file, scenario.second.from, scenario.second.to)
      await expect.poll(() => acceptedPaths(payloads), WAIT).toEqual([scenario.url, scenario.url])
      gate.release()
      expect(await inFlight).toBe(scenario.first.shows)

      // Every fetch from now on shows the second edit.
      expect(await loadRaw(client, scenario.url)).toBe(scenario.second.shows)
      expect(fs.readFileSync(path.join(root, scenario.second.file), 'utf8')).toContain(scenario.second.to)
    })
  }
})
