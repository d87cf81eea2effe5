/**
 * Astro 5 (Vite 6): the fixture site test/clients/astro5 with write mode (INSITU_WRITE=1).
 *
 * Astro renders Markdown pages and content-collection entries from the files on disk, so
 * regions show only when insitu writes the regenerated documents back. Checks: in the real
 * `astro dev`, seen by Chromium, the `.md` page and the page of a glob content-collection
 * entry show the open-task table and the included partial, and show the new table after a
 * task's front-matter edit; `astro build` writes the current regions into both HTML pages;
 * `INSITU_CHECK=1 astro build` fails on the stale documents and leaves them untouched.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { copySite, removeSites, runBuild, tableRowsOf, useDevSession } from './client-site.js'

const BIN = 'astro/astro.js'
const TIMEOUT = 100_000 // two polls per test
/** How long a change may take to show: below TIMEOUT, so a failure names the expectation. */
const POLL = 45_000
const WRITE = { INSITU_WRITE: '1' }
const OPEN_TASKS = [
  ['Review the plugin', 'doing'],
  ['Zanzibarquux launch', 'open'],
]

describe.sequential('astro5: astro dev in Chromium, write mode', () => {
  const dev = useDevSession({ fixture: 'astro5', bin: BIN, args: (port) => ['dev', '--port', String(port)], env: WRITE, timeout: TIMEOUT })

  /**
   * Loads `route` afresh and reads its first table and its text. A navigation that Astro's own
   * reload interrupts can wait for a `load` event that never comes: a short timeout lets the
   * poll try again instead of waiting out Playwright's 30 s.
   */
  async function visit(route: string): Promise<{ rows: string[][]; text: string }> {
    await dev.page.goto(new URL(route, dev.server.url).href, { waitUntil: 'domcontentloaded', timeout: 10_000 })
    return { rows: tableRowsOf(await dev.page.content()), text: await dev.page.locator('body').innerText() }
  }

  it('shows the regions of the Markdown page and of the collection entry', { timeout: TIMEOUT }, async () => {
    await expect.poll(() => visit('/'), { timeout: POLL }).toMatchObject({ rows: OPEN_TASKS })
    expect((await visit('/')).text).toContain('Notes from the partial: original wording.')
    await expect.poll(async () => (await visit('/notes/status/')).rows, { timeout: POLL }).toEqual(OPEN_TASKS)
  })

  it('shows the new table on both pages after a front-matter edit of a task', { timeout: TIMEOUT }, async () => {
    const file = path.join(dev.site, 'tasks/review.md')
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('status: doing', 'status: done'))
    const now = [['Zanzibarquux launch', 'open']]
    await expect.poll(async () => (await visit('/')).rows, { timeout: POLL }).toEqual(now)
    await expect.poll(async () => (await visit('/notes/status/')).rows, { timeout: POLL }).toEqual(now)
  })
})

describe.sequential('astro5: astro build, write mode', () => {
  afterAll(() => removeSites())

  it('writes the current regions into the page and the collection entry', { timeout: TIMEOUT }, async () => {
    const site = copySite('astro5')
    await runBuild(site, BIN, ['build'], WRITE)
    const index = fs.readFileSync(path.join(site, 'dist/index.html'), 'utf8')
    expect(tableRowsOf(index)).toEqual(OPEN_TASKS)
    expect(index).toContain('Notes from the partial: original wording.')
    expect(tableRowsOf(fs.readFileSync(path.join(site, 'dist/notes/status/index.html'), 'utf8'))).toEqual(OPEN_TASKS)
  })

  it('INSITU_CHECK=1 fails the build with the stale list and writes nothing, though the config asks for write mode', { timeout: TIMEOUT }, async () => {
    // Astro's content sync runs a Vite dev server before the build: check must win there too (issue #14.3).
    const site = copySite('astro5')
    const documents = ['src/pages/index.md', 'src/content/notes/status.md']
    const before = documents.map((rel) => fs.readFileSync(path.join(site, rel), 'utf8'))
    const failure = await runBuild(site, BIN, ['build'], { ...WRITE, INSITU_CHECK: '1' }).then(
      () => new Error('the build passed'),
      (error: Error) => error,
    )
    expect(failure.message).toContain('insitu check failed')
    for (const rel of documents) expect(failure.message).toMatch(new RegExp(`${rel.replaceAll('.', '\\.')}:\\d+ region \\S+ is stale`))
    expect(documents.map((rel) => fs.readFileSync(path.join(site, rel), 'utf8'))).toEqual(before)
    expect(fs.readdirSync(path.join(site, 'src/pages')).filter((name) => name.includes('.insitu-'))).toEqual([])
  })
})
