/**
 * The VitePress client tests, shared by VitePress 2 (Vite 8) and VitePress 1.6.4 (Vite 5).
 *
 * Contract: `describeVitePress(fixture)` declares, for the fixture site test/clients/<fixture>:
 * - `vitepress dev` seen by real Chromium updates the open-task table (a SQL region) after a
 *   task's front-matter edit and after a new task file, and the `include` region after an
 *   edit of its partial, without the test reloading the page;
 * - with write mode (INSITU_WRITE=1 in the site's config), `vitepress dev` writes the regions
 *   to disk at start and after a task edit, and createContentLoader (reads the files) follows,
 *   and so does its local search index where VitePress re-indexes in dev (`devSearchFollowsFiles`);
 * - a region broken with the page open (issue #34: a SQL syntax error in the model; with write
 *   mode, the included partial deleted) keeps the page, its other regions and the region's last
 *   good content (on disk too, with write mode), shows Vite's overlay with insitu's message,
 *   tells the console and the terminal once, and the fix closes the overlay and updates the
 *   region without a reload (`breakAndFix`); an edit of the page that breaks its include region
 *   does the same;
 * - `vitepress build` writes the regenerated regions into the HTML and builds the dynamic route;
 * - with write mode, the build's local search index holds a word only a region produces,
 *   `createContentLoader` sees it, a `<!--@include:-->` partial shows its region's current
 *   content, and the file of a dynamic route is current on disk.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { openWatched, overlayTexts, type PageWatch } from '../e2e/page-watch.js'
import { copySite, type DevSession, removeSites, runBuild, tableRowsOf, useDevSession } from './client-site.js'

const BIN = 'vitepress/bin/vitepress.js'
const TIMEOUT = 60_000
/** How long a change may take to show: below TIMEOUT, so a failure names the expectation. */
const POLL = 45_000

/** Cells of the rows of the first table of the page (the open-task region), header excluded. */
async function openTaskRows(page: Page): Promise<string[][]> {
  return page
    .locator('.vp-doc table')
    .first()
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => (cell.textContent ?? '').trim())),
    )
}

/** The dev CLI's arguments: the site in the current folder, on exactly `port`. */
function devArgs(port: number): string[] {
  return ['dev', '.', '--port', String(port), '--strictPort']
}

/** Opens the home page and waits for its first table (the open-task region). */
async function firstTableShown({ page, server }: DevSession): Promise<void> {
  await page.goto(server.url)
  await page.locator('.vp-doc table').first().waitFor({ timeout: POLL })
}

/**
 * Opens the home page afresh, watched (page-watch.ts): Vite's client has seen no update yet,
 * so it would reload the page at its first update if insitu's overlay were still shown.
 */
async function openHome({ page, server }: DevSession): Promise<PageWatch> {
  return openWatched(page, server.url, () => page.locator('.vp-doc table').first().waitFor({ timeout: POLL }), POLL)
}

/** How often `pattern` occurs in the dev server's output after its first `from` characters. */
function printed({ server }: DevSession, from: number, pattern: RegExp): number {
  return server.output().slice(from).match(new RegExp(pattern.source, 'g'))?.length ?? 0
}

function searchIndexOf(site: string): string {
  const chunks = path.join(site, '.vitepress/dist/assets/chunks')
  const files = fs.readdirSync(chunks).filter((name) => name.startsWith('@localSearchIndex'))
  if (files.length === 0) throw new Error(`no local search index in ${chunks}`)
  return files.map((name) => fs.readFileSync(path.join(chunks, name), 'utf8')).join('\n')
}

/** Replaces `from` (which must be there) with `to` in `file`. */
function editFile(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8')
  if (!text.includes(from)) throw new Error(`${file} holds no ${JSON.stringify(from)}`)
  fs.writeFileSync(file, text.replace(from, to))
}

/** The text of the `include` region of index.md (the paragraph under its `## Notes`). */
async function notesText(page: Page): Promise<string> {
  return page.locator('.vp-doc h2#notes + p').innerText()
}

/** One way to break a region of index.md, and to fix it with a visible change. */
interface Breakage {
  break(site: string): void
  fix(site: string): void
  /** The region's id: its begin line in index.md as the file is then (`index.md:<line>`) starts the console's and the terminal's line. */
  id: string
  /** What insitu says after it (the overlay shows it too). */
  message: string
  /** The file the failure points at (the terminal's `File:` line), relative to the site. */
  points: string
  /** What the region shows (its last good content while broken), and what it shows once fixed. */
  shows(page: Page): Promise<unknown>
  fixed(before: unknown): unknown
}

/** A SQL syntax error in the model of the open-task region (a trailing comma); fixed, each title gets ` (fixed)`. */
const MODEL_SYNTAX_ERROR: Breakage = {
  break: (site) => editFile(path.join(site, 'insitu/models/open_tasks.sql'), 'order by title', 'order by title,'),
  fix: (site) => {
    const model = path.join(site, 'insitu/models/open_tasks.sql')
    editFile(model, 'order by title,', 'order by title')
    editFile(model, 'select title,', "select title || ' (fixed)' as title,")
  },
  id: 'open-tasks',
  message: 'transform sql failed in open-tasks: insitu/models/open_tasks.sql: ',
  points: 'insitu/models/open_tasks.sql',
  shows: openTaskRows,
  fixed: (before) => (before as string[][]).map(([title, status]) => [`${title} (fixed)`, status]),
}

/** The partial the include region reads deleted; fixed, written again with new words. */
const PARTIAL_DELETED: Breakage = {
  break: (site) => fs.rmSync(path.join(site, 'parts/notes.md')),
  fix: (site) => fs.writeFileSync(path.join(site, 'parts/notes.md'), 'Notes from the partial: written again for the fix.\n'),
  id: 'notes',
  message: 'transform include failed in notes: file not found: parts/notes.md',
  points: 'index.md',
  shows: notesText,
  fixed: () => 'Notes from the partial: written again for the fix.',
}

/**
 * Breaking a region of index.md and fixing it, the page open (issue #34): the page keeps its
 * content, its other regions (`others(phase)` reads or checks them, and the file, before the
 * break, while broken and once fixed) and the region's last good content; Vite's overlay shows
 * insitu's message; the console and the terminal tell it once. The fix closes the overlay and
 * the page shows the fixed region, not reloaded.
 */
async function breakAndFix(dev: DevSession, breakage: Breakage, others: (phase: 'before' | 'broken' | 'fixed') => Promise<void>): Promise<void> {
  const watch = await openHome(dev)
  const logged = dev.server.output().length
  // The begin comment's line: the line before `id = "<id>"` (with write mode, below a written body).
  const where = () => `index.md:${fs.readFileSync(path.join(dev.site, 'index.md'), 'utf8').split('\n').indexOf(`id = "${breakage.id}"`)}`
  const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  // The page's console lines about index.md (another document may fail too).
  const consoleLines = () => watch.insituErrors().filter((line) => line.startsWith('[insitu] index.md:'))
  try {
    const before = await breakage.shows(dev.page)
    await others('before')
    breakage.break(dev.site)
    await expect.poll(() => overlayTexts(dev.page), { timeout: POLL }).toEqual([expect.stringContaining(breakage.message)])
    expect(await breakage.shows(dev.page)).toEqual(before)
    await others('broken')
    expect(consoleLines()).toEqual([expect.stringMatching(new RegExp(`^\\[insitu\\] ${escaped(where())} ${escaped(breakage.message)}`))])
    const told = new RegExp(`insitu: ${escaped(where())}: ${escaped(breakage.message)}`)
    await expect.poll(() => printed(dev, logged, told), { timeout: POLL }).toBe(1)
    expect(dev.server.output().slice(logged)).toContain(`File: ${path.join(dev.site, breakage.points)}:`)

    breakage.fix(dev.site)
    await expect.poll(() => breakage.shows(dev.page), { timeout: POLL }).toEqual(breakage.fixed(before))
    expect(await overlayTexts(dev.page)).toEqual([])
    expect(watch.navigations()).toBe(0)
    expect(await watch.markerKept()).toBe(true)
    await others('fixed')
    expect(consoleLines()).toHaveLength(1)
    await expect.poll(() => printed(dev, logged, /insitu: index\.md: fixed/), { timeout: POLL }).toBe(1)
    expect(printed(dev, logged, told)).toBe(1)
  } finally {
    watch.stop()
  }
}

export interface VitePressOptions {
  /**
   * Whether the dev server's local search index follows the files on disk. VitePress 1.6.4
   * indexes them once, in its `configureServer` (before any plugin's `buildStart`, so before
   * the start-up write), and never invalidates the index module it serves
   * (`/@localSearchIndexroot`): its dev search is a snapshot of the files at start, with or
   * without insitu. VitePress 2 re-indexes a page on its watcher event and versions the import.
   */
  devSearchFollowsFiles: boolean
}

export function describeVitePress(fixture: string, options: VitePressOptions): void {
  describe.sequential(`${fixture}: vitepress dev in Chromium`, () => {
    const dev = useDevSession({ fixture, bin: BIN, args: devArgs, timeout: TIMEOUT, ready: firstTableShown })

    it('shows the open tasks of the SQL model', { timeout: TIMEOUT }, async () => {
      expect(await openTaskRows(dev.page)).toEqual([
        ['Review the plugin', 'doing'],
        ['Zanzibarquux launch', 'open'],
      ])
      expect(await dev.page.locator('.vp-doc').innerText()).toContain('Notes from the partial: original wording.')
    })

    it('updates the table after a front-matter edit of a task', { timeout: TIMEOUT }, async () => {
      const file = path.join(dev.site, 'tasks/review.md')
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('status: doing', 'status: done'))
      await expect.poll(() => openTaskRows(dev.page), { timeout: POLL }).toEqual([['Zanzibarquux launch', 'open']])
    })

    it('updates the table after a new task file', { timeout: TIMEOUT }, async () => {
      fs.writeFileSync(path.join(dev.site, 'tasks/parade.md'), '---\ntitle: Quokka parade\nstatus: open\n---\nNew.\n')
      await expect
        .poll(() => openTaskRows(dev.page), { timeout: POLL })
        .toEqual([
          ['Quokka parade', 'open'],
          ['Zanzibarquux launch', 'open'],
        ])
    })

    it('updates the include region after an edit of its partial', { timeout: TIMEOUT }, async () => {
      fs.writeFileSync(path.join(dev.site, 'parts/notes.md'), 'Notes from the partial: revised wording.\n')
      await expect
        .poll(() => dev.page.locator('.vp-doc').innerText(), { timeout: POLL })
        .toContain('Notes from the partial: revised wording.')
      expect(await openTaskRows(dev.page)).toEqual([
        ['Quokka parade', 'open'],
        ['Zanzibarquux launch', 'open'],
      ])
    })

    it('a SQL error in the model keeps the page, its other regions and its table, shows the overlay, and the fix updates the table without a reload', { timeout: TIMEOUT + POLL }, async () => {
      await breakAndFix(dev, MODEL_SYNTAX_ERROR, async () => {
        expect(await notesText(dev.page)).toBe('Notes from the partial: revised wording.')
      })
    })

    // A page edit that breaks one of its regions renders in the background (dev-server.ts
    // `renderEditedDocument`), so insitu's error payload may reach Vite's client before Vite's
    // update of the same edit: at the page's first update Vite's client would reload a page that
    // shows an overlay, and on a later one clear it. Insitu's client keeps its overlay out of the
    // page around each update (browser-diagnostics.ts).
    it('an edit of the page that breaks its include region keeps the page and its other regions, shows the overlay, and creating the file fixes it without a reload', { timeout: TIMEOUT + POLL }, async () => {
      const file = path.join(dev.site, 'index.md')
      const watch = await openHome(dev)
      try {
        const rows = await openTaskRows(dev.page)
        editFile(file, 'path = "parts/notes.md"', 'path = "parts/missing.md"')
        await expect
          .poll(() => overlayTexts(dev.page), { timeout: POLL })
          .toEqual([expect.stringContaining('transform include failed in notes: file not found: parts/missing.md')])
        expect(watch.navigations()).toBe(0)
        expect(await notesText(dev.page)).toBe('Notes from the partial: revised wording.')
        expect(await openTaskRows(dev.page)).toEqual(rows)
        fs.writeFileSync(path.join(dev.site, 'parts/missing.md'), 'Notes from a partial written for the fix.\n')
        await expect.poll(() => notesText(dev.page), { timeout: POLL }).toBe('Notes from a partial written for the fix.')
        expect(await overlayTexts(dev.page)).toEqual([])
        expect(await openTaskRows(dev.page)).toEqual(rows)
        expect(watch.navigations()).toBe(0)
        expect(await watch.markerKept()).toBe(true)
        expect(watch.insituErrors()).toEqual([expect.stringMatching(/^\[insitu\] index\.md:16 transform include failed in notes: file not found: parts\/missing\.md/)])
      } finally {
        watch.stop()
      }
    })
  })

  describe.sequential(`${fixture}: vitepress dev, write mode`, () => {
    const dev = useDevSession({ fixture, bin: BIN, args: devArgs, env: { INSITU_WRITE: '1' }, timeout: TIMEOUT, ready: firstTableShown })

    /**
     * The local search index of the dev server, as its search box loads it: the module
     * `/@localSearchIndex`, then the root locale's index it imports (VitePress 2 versions that
     * import after each update; a fixed URL would answer Vite's cached first version).
     */
    async function devSearchIndex(): Promise<string> {
      const entry = await fetch(new URL('/@localSearchIndex', dev.server.url))
      if (!entry.ok) return `/@localSearchIndex: HTTP ${entry.status}`
      const code = await entry.text()
      const imported = /import\(["']([^"']*@localSearchIndexroot[^"']*)["']\)/.exec(code)?.[1]
      if (!imported) return `/@localSearchIndex imports no root index:\n${code}`
      const response = await fetch(new URL(imported, dev.server.url))
      return response.ok ? response.text() : `${imported}: HTTP ${response.status}`
    }

    it('writes the regions at start', { timeout: TIMEOUT }, async () => {
      await expect.poll(() => fs.readFileSync(path.join(dev.site, 'index.md'), 'utf8'), { timeout: POLL }).toContain(
        '| Zanzibarquux launch | open |',
      )
    })

    it.skipIf(!options.devSearchFollowsFiles)('the dev search index finds the region-only word', { timeout: TIMEOUT }, async () => {
      await expect.poll(devSearchIndex, { timeout: POLL }).toContain('zanzibarquux')
    })

    it('rewrites the page after a task edit: file and page follow', { timeout: TIMEOUT }, async () => {
      const file = path.join(dev.site, 'tasks/launch.md')
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('Zanzibarquux launch', 'Zanzibarquux liftoff'))
      await expect.poll(() => fs.readFileSync(path.join(dev.site, 'index.md'), 'utf8'), { timeout: POLL }).toContain(
        '| Zanzibarquux liftoff | open |',
      )
      await expect
        .poll(() => openTaskRows(dev.page), { timeout: POLL })
        .toEqual([
          ['Review the plugin', 'doing'],
          ['Zanzibarquux liftoff', 'open'],
        ])
    })

    it.skipIf(!options.devSearchFollowsFiles)('the dev search index follows the rewrite', { timeout: TIMEOUT }, async () => {
      await expect.poll(devSearchIndex, { timeout: POLL }).toContain('liftoff')
    })

    it('sends one update per change: a task edit, a task file created and deleted (the @include’d partial’s count too), and an edit of the partial itself', { timeout: TIMEOUT }, async () => {
      // What the browser receives: Vite's HMR payloads on the page's WebSocket, from a fresh load.
      const payloads: { type: string; updates?: { path: string; acceptedPath: string }[] }[] = []
      dev.page.on('websocket', (socket) =>
        socket.on('framereceived', ({ payload }) => {
          const parsed = JSON.parse(String(payload)) as (typeof payloads)[number]
          if (parsed.type === 'update' || parsed.type === 'full-reload') payloads.push(parsed)
        }),
      )
      await firstTableShown(dev)
      await new Promise((resolve) => setTimeout(resolve, 1000))
      payloads.length = 0
      const read = (rel: string) => fs.readFileSync(path.join(dev.site, rel), 'utf8')
      const review = path.join(dev.site, 'tasks/review.md')
      const extra = path.join(dev.site, 'tasks/zeta.md')
      const edit = (from: string, to: string) => () => fs.writeFileSync(review, read('tasks/review.md').replace(`status: ${from}`, `status: ${to}`))
      const partial = path.join(dev.site, 'parts/summary.md')
      const changes: { change: () => void; written: () => unknown }[] = [
        { change: edit('doing', 'blocked'), written: () => read('index.md').includes('| Review the plugin | blocked |') },
        { change: edit('blocked', 'doing'), written: () => read('index.md').includes('| Review the plugin | doing |') },
        // The partial parts/summary.md counts the tasks and index.md @includes it: insitu writes
        // both, and the echo of the partial's write (VitePress adds its includer) sends nothing.
        { change: () => fs.writeFileSync(extra, '---\ntitle: Zeta\nstatus: done\n---\nZeta.\n'), written: () => read('parts/summary.md').includes('| 4 |') },
        { change: () => fs.rmSync(extra), written: () => read('parts/summary.md').includes('| 3 |') },
        // The user's own edit of the partial (its region stays current: nothing to write back).
        { change: () => fs.writeFileSync(partial, `## Task count\n\n${read('parts/summary.md')}`), written: () => read('parts/summary.md').startsWith('## Task count\n') },
      ]
      expect(read('parts/summary.md')).toContain('| 3 |')
      for (const { change, written } of changes) {
        const before = payloads.length
        change()
        await expect.poll(written, { timeout: POLL }).toBe(true)
        await expect.poll(() => payloads.length, { timeout: POLL }).toBeGreaterThan(before)
        await new Promise((resolve) => setTimeout(resolve, 1500)) // a second update would come now
        // VitePress 2 also re-sends its local search index module on every page's change: not the page's update.
        const sent = payloads
          .slice(before)
          .map((p) => (p.type === 'full-reload' ? 'full-reload' : (p.updates ?? []).map((u) => u.path).filter((update) => update !== '/@localSearchIndex').join(' + ')))
          .filter((update) => update !== '')
        // One, on both majors: VitePress 2's `vitepress:hmr-fix` adds the page's module on every
        // file event of it, the echo of insitu's write too; insitu's hook runs after it and drops it.
        expect(sent).toEqual(['/index.md'])
      }
    })

    it('createContentLoader (home.data.ts) sees the rewritten file', { timeout: TIMEOUT }, async () => {
      const loaderTitles = async () => {
        await dev.page.goto(new URL('/loader', dev.server.url).href)
        return dev.page.locator('#loader-titles').innerText()
      }
      await expect.poll(loaderTitles, { timeout: POLL }).toBe('Zanzibarquux liftoff')
    })

    // Only index.md reads the partial: a change that fixes one document. (The model is read by
    // items/[name].md too: its fix is told a little after the update index.md's write brings,
    // and VitePress 1's client, at its first update, reloads a page still showing an overlay.)
    it('with write mode, the included partial deleted keeps the page and the file, shows the overlay, and the partial written again updates file and page without a reload', { timeout: TIMEOUT + POLL }, async () => {
      const index = path.join(dev.site, 'index.md')
      const written = fs.readFileSync(index, 'utf8')
      let rows: string[][] = []
      await breakAndFix(dev, PARTIAL_DELETED, async (phase) => {
        if (phase === 'before') rows = await openTaskRows(dev.page)
        expect(rows.length).toBeGreaterThan(0)
        expect(await openTaskRows(dev.page)).toEqual(rows)
        // The file keeps the region's last good body while the partial is missing; the fix is written.
        if (phase === 'broken') expect(fs.readFileSync(index, 'utf8')).toBe(written)
        if (phase === 'fixed') expect(fs.readFileSync(index, 'utf8')).toContain('Notes from the partial: written again for the fix.')
      })
    })
  })

  describe.sequential(`${fixture}: vitepress build`, () => {
    afterAll(() => removeSites())

    it('writes the regenerated regions into the HTML', { timeout: TIMEOUT }, async () => {
      const site = copySite(fixture)
      await runBuild(site, BIN, ['build', '.'])
      const html = fs.readFileSync(path.join(site, '.vitepress/dist/index.html'), 'utf8')
      expect(tableRowsOf(html)).toEqual([
        ['Review the plugin', 'doing'],
        ['Zanzibarquux launch', 'open'],
      ])
      expect(html).toContain('Notes from the partial: original wording.')
      // The page of the dynamic route items/[name].md (params from items/[name].paths.ts) is
      // built. Its regions need write mode (next test): VitePress's own `load` prefixes the file
      // with the params, and the transform leaves code that is not the file's text untouched.
      const item = fs.readFileSync(path.join(site, '.vitepress/dist/items/alpha.html'), 'utf8')
      expect(item).toContain('Item alpha')
    })

    it('with write mode, local search, createContentLoader and @include see the regions', { timeout: TIMEOUT }, async () => {
      const site = copySite(fixture)
      await runBuild(site, BIN, ['build', '.'], { INSITU_WRITE: '1' })
      // The documents on disk are current: what the disk readers of VitePress read.
      expect(fs.readFileSync(path.join(site, 'index.md'), 'utf8')).toContain('| Zanzibarquux launch | open |')
      // Local search indexes the raw file: the region-only word is a term (MiniSearch lowercases).
      expect(searchIndexOf(site)).toContain('"zanzibarquux"')
      // createContentLoader (home.data.ts) reads index.md through gray-matter.
      const loader = fs.readFileSync(path.join(site, '.vitepress/dist/loader.html'), 'utf8')
      expect(/<p id="loader-titles">([^<]*)<\/p>/.exec(loader)?.[1]).toBe('Zanzibarquux launch')
      // <!--@include: ./parts/summary.md--> inlines the partial read from disk, its region current.
      const html = fs.readFileSync(path.join(site, '.vitepress/dist/index.html'), 'utf8')
      const summary = html.slice(html.indexOf('id="summary"'))
      expect(tableRowsOf(summary)).toEqual([['3']])
      // The dynamic route's file on disk is current too, and so is its page.
      expect(fs.readFileSync(path.join(site, 'items/[name].md'), 'utf8')).toContain('| Zanzibarquux launch | open |')
      const item = fs.readFileSync(path.join(site, '.vitepress/dist/items/alpha.html'), 'utf8')
      expect(tableRowsOf(item)).toEqual([
        ['Review the plugin', 'doing'],
        ['Zanzibarquux launch', 'open'],
      ])
    })
  })
}
