/**
 * End to end: "why did this re-run?" (`/__insitu/`) and warnings in the browser console, in a
 * real Vite dev server seen by real Chromium.
 *
 * The project is a fresh copy of test/fixtures/plugin-project (its real Python extension
 * `plugin/notes`, real git) plus `docs/stray.md`, a document with a stray end comment (a
 * warning at its line), imported by main.js.
 *
 * Checks: the page lists the documents the app requested with their first-request reason;
 * creating a note (which the extension's glob covers) updates the app, and after a reload the
 * page names that event as the reason; the stray-end warning is printed in the browser console
 * with file:line, once per page, and a second one added by an edit is printed too; a page Vite serves as is
 * (public/, no `transformIndexHtml`) that carries the client's script tag itself prints them.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Browser, type ConsoleMessage, type Page } from 'playwright-core'
import { createServer, type ViteDevServer } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { copyProject, removeProjects } from '../integration/plugin-project.js'
import { launchChromium } from './chromium.js'

const TIMEOUT = 60_000
const WAIT = { timeout: 30_000 }

const STRAY = '# Stray\n\n<!-- insitu:end -->\n'
const STRAY_WARNING = 'stray insitu:end without a matching begin'

let root: string
let server: ViteDevServer | undefined
let browser: Browser | undefined
let app: Page
let inspector: Page
let origin: string
/** Console messages of the app page: `<type> <text>`. */
const consoleLines: string[] = []

/** The app's `[insitu]` console lines, per page load (Vite's client logs `[vite] connecting...` first on each). */
function insituLinesPerPage(): string[][] {
  const pages: string[][] = []
  for (const line of consoleLines) {
    if (line === 'debug [vite] connecting...') pages.push([])
    else if (line.includes('[insitu]')) pages.at(-1)?.push(line)
  }
  return pages
}

/** The rows of the inspector's table, as `owner → reason` (the page reloaded first). */
async function reasons(): Promise<Record<string, string>> {
  await inspector.goto(`${origin}/__insitu/`)
  const rows = await inspector
    .locator('#owners tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-owner') ?? '', (tr.querySelector('td.reason')?.textContent ?? '').trim()]))
  return Object.fromEntries(rows)
}

describe('/__insitu/ and browser diagnostics (Vite dev server + Chromium)', () => {
  beforeAll(async () => {
    root = copyProject({ git: true })
    fs.writeFileSync(path.join(root, 'docs/stray.md'), STRAY)
    fs.appendFileSync(path.join(root, 'main.js'), "\nimport './docs/stray.md?raw'\n")
    // A page Vite serves as is (no transformIndexHtml), carrying the client's tag itself.
    fs.mkdirSync(path.join(root, 'public'))
    fs.writeFileSync(path.join(root, 'public/static.html'), `<!doctype html>\n<script type="module" src="/__insitu/client.js"></script>\n`)
    server = await createServer({
      root,
      configFile: false,
      logLevel: 'silent',
      plugins: [insitu()],
      server: { port: 0, strictPort: false, watch: { usePolling: true, interval: 50 } },
    })
    await server.listen()
    const url = server.resolvedUrls?.local[0]
    if (!url) throw new Error('the dev server has no local URL')
    origin = new URL(url).origin
    browser = await launchChromium()
    app = await browser.newPage()
    app.on('console', (message: ConsoleMessage) => consoleLines.push(`${message.type()} ${message.text()}`))
    await app.goto(url)
    await app.locator('#out', { hasText: '2 notes: notes/one.md, notes/two.md' }).waitFor({ timeout: TIMEOUT })
    inspector = await browser.newPage()
  }, TIMEOUT)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    removeProjects()
  }, TIMEOUT)

  it('lists the requested documents, and after an edit and a reload names the event that re-ran one', { timeout: TIMEOUT }, async () => {
    expect(await inspector.goto(`${origin}/__insitu/`).then((r) => r?.status())).toBe(200)
    expect(await inspector.locator('h1').innerText()).toBe('insitu: why did this re-run?')
    expect(await reasons()).toEqual({
      'docs/git.md?raw': 'first request',
      'docs/notes.md?raw': 'first request',
      'docs/snippet.md?raw': 'first request',
      'docs/stray.md?raw': 'first request',
      'docs/tasks.md?raw': 'first request',
    })
    const jobs = await inspector.locator('tr[data-owner="docs/notes.md?raw"] td.jobs li').allInnerTexts()
    expect(jobs).toEqual(['count count_notes, line 3, plugin/notes'])

    fs.writeFileSync(path.join(root, 'notes/three.md'), '# Three\n')
    // The app shows the new count (hot update, no reload), so the document has re-run.
    await expect.poll(() => app.locator('#out').innerText(), WAIT).toContain('3 notes: notes/one.md, notes/three.md, notes/two.md')
    await expect.poll(async () => (await reasons())['docs/notes.md?raw'], WAIT).toBe('notes/three.md created')
  })

  it('prints warnings in the browser console with file:line, once per page, also after an edit', { timeout: TIMEOUT }, async () => {
    const warning = (line: number) => `warning [insitu] docs/stray.md:${line} ${STRAY_WARNING}`
    await expect.poll(() => consoleLines, WAIT).toContain(warning(3))
    // The edit reloads the page (main.js does not accept docs/stray.md?raw): the new page prints
    // both. (The edited document is rendered when the edit happens: the old page may print the
    // new warning before it goes.)
    fs.appendFileSync(path.join(root, 'docs/stray.md'), '\n<!-- insitu:end -->\n')
    await expect.poll(() => insituLinesPerPage().length, WAIT).toBe(2)
    await expect.poll(() => insituLinesPerPage()[1], WAIT).toEqual([warning(3), warning(5)])
    expect([[warning(3)], [warning(3), warning(5)]]).toContainEqual(insituLinesPerPage()[0])
  })

  it('a page not served through transformIndexHtml prints them with the client tag of its own', { timeout: TIMEOUT }, async () => {
    const lines: string[] = []
    const page = await browser!.newPage()
    page.on('console', (message: ConsoleMessage) => lines.push(`${message.type()} ${message.text()}`))
    await page.goto(`${origin}/static.html`)
    expect(await page.content()).not.toContain('/@vite/client')
    await expect.poll(() => lines.filter((line) => line.includes('[insitu]')), WAIT).toEqual([
      `warning [insitu] docs/stray.md:3 ${STRAY_WARNING}`,
      `warning [insitu] docs/stray.md:5 ${STRAY_WARNING}`,
    ])
  })
})
