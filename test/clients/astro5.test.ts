/**
 * Astro 5 (Vite 6): the fixture site test/clients/astro5 with write mode (INSITU_WRITE=1).
 *
 * Astro renders Markdown pages and content-collection entries from the files on disk, so
 * regions show only when insitu writes the regenerated documents back. Checks: in the real
 * `astro dev`, seen by Chromium, the `.md` page and the page of a glob content-collection
 * entry show the open-task table and the included partial, and show the new table after a
 * task's front-matter edit; a region broken with the page open (issue #34: a SQL syntax error
 * in the model) keeps both pages, their other regions and their last good tables (on disk too),
 * shows the overlay and tells the console and the terminal once, and the model restored closes
 * the overlay without a reload. Astro itself reloads the page on any edit of a Markdown page
 * (shown by a plain edit), so after a fix that rewrites the pages the test asks only for the
 * fixed table on both pages and no overlay.
 * `astro build` writes the current regions into both HTML pages; `INSITU_CHECK=1 astro build`
 * fails on the stale documents and leaves them untouched.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openWatched, overlayTexts, type PageWatch } from '../e2e/page-watch.js'
import { copySite, removeSites, runBuild, tableRowsOf, useDevSession } from './client-site.js'

const BIN = 'astro/astro.js'
const TIMEOUT = 100_000 // two polls per test
/** How long a change may take to show: below TIMEOUT, so a failure names the expectation. */
const POLL = 45_000
const WRITE = { INSITU_WRITE: '1' }
/** How long the failures may take to clear once the fixed page shows (it is told at once). */
const SETTLE = 10_000
const MODEL = 'insitu/models/open_tasks.sql'
/** What insitu says of the model with a SQL syntax error (a trailing comma). */
const MODEL_FAILURE = 'transform sql failed in open-tasks: insitu/models/open_tasks.sql: '
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

  /** Opens `/` afresh, watched (page-watch.ts), once its table shows. */
  async function openHome(): Promise<PageWatch> {
    return openWatched(dev.page, dev.server.url, () => dev.page.locator('table').first().waitFor({ timeout: POLL }), POLL)
  }

  const pageRows = async () => tableRowsOf(await dev.page.content())
  const pageText = () => dev.page.locator('body').innerText()
  /** The rows of the collection entry's page as the server renders it now. */
  const entryRows = async () => tableRowsOf(await (await fetch(new URL('/notes/status/', dev.server.url))).text())
  /** How often `pattern` occurs in the dev server's output after its first `from` characters. */
  const printed = (from: number, pattern: RegExp) => dev.server.output().slice(from).match(new RegExp(pattern.source, 'g'))?.length ?? 0

  /**
   * Astro reloads the page on any edit of a Markdown page, by itself: its `astro:hmr-reload`
   * plugin (astro/dist/vite-plugin-hmr-reload) sends `{ type: 'full-reload' }` for a change of a
   * module only the server renders (a Markdown page is one), with or without insitu (the same
   * edit in the site without the plugin reloads the same way). Insitu's own reloads carry a
   * path (`full-reload *`). So "without a reload" is only insitu's to keep when no file changes.
   */
  it('reloads the page on a plain edit of the Markdown page, by itself (astro:hmr-reload)', { timeout: TIMEOUT }, async () => {
    const file = path.join(dev.site, 'src/pages/index.md')
    const watch = await openHome()
    try {
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Open tasks, from', 'Open tasks, plainly edited, from'))
      await expect.poll(pageText, { timeout: POLL }).toContain('Open tasks, plainly edited, from')
      expect(watch.payloads()).toContain('full-reload')
      expect(watch.payloads()).not.toContain('full-reload *')
      expect(watch.navigations()).toBeGreaterThan(0)
      expect(await watch.markerKept()).toBe(false)
    } finally {
      watch.stop()
    }
  })

  it('a SQL error in the model keeps both pages, their other regions and their tables, shows the overlay, and restoring the model closes it without a reload', { timeout: TIMEOUT }, async () => {
    const model = path.join(dev.site, MODEL)
    const good = fs.readFileSync(model, 'utf8')
    const documents = ['src/pages/index.md', 'src/content/notes/status.md'].map((rel) => path.join(dev.site, rel))
    const texts = documents.map((file) => fs.readFileSync(file, 'utf8'))
    const watch = await openHome()
    const logged = dev.server.output().length
    try {
      const rows = await pageRows()
      expect(rows.length).toBeGreaterThan(0)
      fs.writeFileSync(model, good.replace('order by title', 'order by title,'))
      await expect.poll(() => overlayTexts(dev.page), { timeout: POLL }).toEqual([expect.stringContaining(MODEL_FAILURE)])
      // Both documents keep their last good table, on disk (write mode) and so on both pages.
      expect(documents.map((file) => fs.readFileSync(file, 'utf8'))).toEqual(texts)
      expect(await pageRows()).toEqual(rows)
      expect(await pageText()).toContain('Notes from the partial: original wording.')
      expect(await entryRows()).toEqual(rows)
      expect(watch.insituErrors().filter((line) => line.startsWith('[insitu] src/pages/index.md:'))).toEqual([
        expect.stringMatching(/^\[insitu\] src\/pages\/index\.md:8 transform sql failed in open-tasks: insitu\/models\/open_tasks\.sql: /),
      ])
      await expect.poll(() => printed(logged, /insitu: src\/pages\/index\.md:8: transform sql failed in open-tasks/), { timeout: POLL }).toBe(1)
      expect(dev.server.output().slice(logged)).toContain(`File: ${model}:`)

      // The model as it was: the regions' output is what the files hold, nothing is written, so
      // Astro has nothing to reload; insitu's client closes its overlay.
      fs.writeFileSync(model, good)
      await expect.poll(() => overlayTexts(dev.page), { timeout: POLL }).toEqual([])
      await expect.poll(() => printed(logged, /insitu: src\/pages\/index\.md: fixed/), { timeout: POLL }).toBe(1)
      expect(await pageRows()).toEqual(rows)
      expect(documents.map((file) => fs.readFileSync(file, 'utf8'))).toEqual(texts)
      expect(watch.navigations()).toBe(0)
      expect(await watch.markerKept()).toBe(true)
      expect(watch.insituErrors().filter((line) => line.startsWith('[insitu] src/pages/index.md:'))).toHaveLength(1)
    } finally {
      watch.stop()
    }
  })

  // Astro reloads the page on the rewrite (its own reload, see above): the page it loads must
  // show the fixed table and no overlay (the failure told as fixed at the sync, not later).
  it('a fix that changes the table: Astro reloads the page (its own reload), which shows the fixed table and no overlay', { timeout: TIMEOUT }, async () => {
    const model = path.join(dev.site, MODEL)
    const good = fs.readFileSync(model, 'utf8')
    const watch = await openHome()
    const logged = dev.server.output().length
    try {
      const rows = await pageRows()
      fs.writeFileSync(model, good.replace('order by title', 'order by title,'))
      await expect.poll(() => overlayTexts(dev.page), { timeout: POLL }).toEqual([expect.stringContaining(MODEL_FAILURE)])
      fs.writeFileSync(model, good.replace('select title,', "select title || ' (fixed)' as title,"))
      const fixed = rows.map(([title, status]) => [`${title} (fixed)`, status])
      await expect.poll(pageRows, { timeout: POLL }).toEqual(fixed)
      await expect.poll(() => overlayTexts(dev.page), { timeout: SETTLE }).toEqual([])
      expect(printed(logged, /insitu: src\/pages\/index\.md: fixed/)).toBe(1)
      // The collection entry follows once Astro's content layer has reloaded the file written.
      await expect.poll(entryRows, { timeout: POLL }).toEqual(fixed)
    } finally {
      watch.stop()
    }
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
