/**
 * The edits of the hot-reload benchmarks (bench/hmr.ts, bench/edit-timeline.ts): the edit
 * kinds over a generated project, a dev server with its Chromium page per side, and one timed
 * edit.
 *
 * Contract:
 * - `editKinds(projects)`: one kind per row of bench/hmr.ts, each with the plugin's edit and
 *   Vite's two edits that make its floor (issue #38):
 *   - prose: the last prose line of README.md (no region reads it). The plugin's README; Vite
 *     alone gets the same edit of the regenerated README, which is both the same file and the
 *     page showing the change (`page` is absent: measured once);
 *   - front matter: the `title` of the first open task. With the plugin the page shows the
 *     README's sql table row; Vite alone gets (same file) the same edit of that task, shown by
 *     the page as itself, and (page) the task's row of the sql table in the regenerated README;
 *   - include: the line of snippets/example.ts holding `hello, ` (inside the lines the README
 *     includes). With the plugin the README's include region changes; Vite alone gets (same
 *     file) the same edit of the snippet, shown as itself, and (page) that line of the include
 *     region in the regenerated README.
 *   Each edit edits one file of one side and remembers the text it last wrote there.
 * - `serve(side, root, browser, probes, shows)`: a dev server on `root` (the plugin's side runs
 *   `insitu()` between `probes.before` and `probes.after`; Vite's cache folder beside `root`, not
 *   in it), and in one browser context a page per module shown (`shows`; the plugin's side
 *   shows the README only, every edit's change appears there; Vite alone also the task and the
 *   snippet, its same-file edits' pages), resolved once each page's script is ready.
 *   `closePages(served)` closes them.
 * - `measureEdit(served, edit, marker, onWrite)`: after `waitForQuiet()` (bench/quiet.ts: at
 *   least SETTLE_MS, then until this process is quiet), the milliseconds from just before the
 *   write to the page's MutationObserver first seeing `marker` (Node's and Chromium's
 *   `performance.timeOrigin + now()`), and how long the quiet wait took; `onWrite` is told the
 *   write's wall-clock time.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type Browser, type Page } from 'playwright-core'
import { createServer, type Plugin, type ViteDevServer } from 'vite'
import insitu from '../src/index.js'
import { type BenchProjects, PAGES } from './bench-projects.js'
import { wallClockMs } from './measurements.js'
import { type QuietWait, waitForQuiet } from './quiet.js'

export { SETTLE_MS } from './quiet.js'

export const UPDATE_TIMEOUT = 60_000

export type Side = 'plugin' | 'plain'
/** The `<pre>` id of the page showing README.md, the task or the snippet (bench-projects.ts `PAGES`). */
export type Shown = 'out' | 'task' | 'snippet'

/** What page.js (bench/bench-projects.ts) keeps on `window`, as seen from page functions. */
export interface PageGlobals {
  __ready?: boolean
  __expect: string | null
  __expectIn: Shown
  __seenAt: number | null
  document: { getElementById(id: string): { textContent: string | null } | null }
}

export interface Served {
  side: Side
  root: string
  server: ViteDevServer
  /** One page per module shown (bench-projects.ts `PAGES`), in one browser context. */
  pages: Partial<Record<Shown, Page>>
}

/** One edit of one file of one side's project, and where that side's page shows it. */
export interface Edit {
  /** What is edited, as a table cell names it. */
  label: string
  side: Side
  /** The project-relative file written. */
  file: string
  /** The page (by its `<pre>` id) whose text shows the marker. */
  shownIn: Shown
  /** Writes the edit carrying `marker`. */
  apply(marker: string): void
}

/** One row of bench/hmr.ts: the plugin's edit and Vite's two edits that make its floor. */
export interface EditKind {
  label: string
  plugin: Edit
  /** Vite alone, the same edit of the same file, shown by the page as itself. */
  sameFile: Edit
  /** Vite alone, the regenerated README edited the same way; absent when that is `sameFile` (prose). */
  page?: Edit
}

export interface EditTiming {
  /** Milliseconds from the write to the marker in the page's DOM. */
  ms: number
  quiet: QuietWait
}


function replaceOnce(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8')
  const at = text.indexOf(from)
  if (at < 0) throw new Error(`${file} does not contain ${JSON.stringify(from)}`)
  if (text.indexOf(from, at + 1) >= 0) throw new Error(`${file} contains ${JSON.stringify(from)} more than once`)
  fs.writeFileSync(file, text.slice(0, at) + to + text.slice(at + from.length))
}

/**
 * An edit that replaces `original` in `file` of `side` by `next(marker)`, then that text by
 * the next edit's, and so on.
 */
function textEdit(
  projects: BenchProjects,
  side: Side,
  file: string,
  shownIn: Shown,
  label: string,
  original: string,
  next: (marker: string) => string,
): Edit {
  let current = original
  const absolute = path.join(side === 'plugin' ? projects.plugin : projects.plain, file)
  return {
    label,
    side,
    file,
    shownIn,
    apply(marker) {
      const text = next(marker)
      replaceOnce(absolute, current, text)
      current = text
    },
  }
}

/** The rows of bench/hmr.ts over the generated project. */
export function editKinds(projects: BenchProjects): EditKind[] {
  const readme = projects.generated.readme

  const proseLine = 'That is all for now.'
  const prose = (side: Side, label: string) =>
    textEdit(projects, side, readme, 'out', label, proseLine, (marker) => `That is all for now (${marker}).`)

  // The first open task: a row of the README's sql table, and shown by the page as itself.
  const task = projects.openTask
  const originalTitle = /^title: (.*)$/m.exec(fs.readFileSync(path.join(projects.plugin, task), 'utf8'))![1]!
  const retitled = (marker: string) => `${originalTitle} ${marker}`
  const taskEdit = (side: Side, shownIn: Shown, label: string) =>
    textEdit(projects, side, task, shownIn, label, `title: ${originalTitle}\n`, (marker) => `title: ${retitled(marker)}\n`)

  const snippet = projects.generated.snippet
  const greeting = 'hello, '
  const greet = (marker: string) => `hello ${marker}, `
  const snippetEdit = (side: Side, shownIn: Shown, label: string) => textEdit(projects, side, snippet, shownIn, label, greeting, greet)

  return [
    {
      label: 'prose line of README.md (no region reads it)',
      plugin: prose('plugin', 'README.md'),
      sameFile: prose('plain', 'the regenerated README.md (also the page showing the change)'),
    },
    {
      label: `front-matter \`title\` of ${task} (its row in the README's sql table)`,
      plugin: taskEdit('plugin', 'out', task),
      sameFile: taskEdit('plain', 'task', `${task}, shown by the page as itself`),
      page: textEdit(
        projects,
        'plain',
        readme,
        'out',
        "the task's row in the regenerated README",
        `[${originalTitle}](${task})`,
        (marker) => `[${retitled(marker)}](${task})`,
      ),
    },
    {
      label: `a line of the included ${snippet} (the README's include region)`,
      plugin: snippetEdit('plugin', 'out', snippet),
      sameFile: snippetEdit('plain', 'snippet', `${snippet}, shown by the page as itself`),
      page: textEdit(projects, 'plain', readme, 'out', 'that line in the regenerated README', greeting, greet),
    },
  ]
}

export async function serve(
  side: Side,
  root: string,
  browser: Browser,
  probes: { before?: Plugin[]; after?: Plugin[] } = {},
  shows: readonly Shown[] = side === 'plugin' ? ['out'] : ['out', 'task', 'snippet'],
): Promise<Served> {
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    // Beside the project, not in it: Vite's default (`.vite/` in a folder without package.json)
    // would appear in the plugin's tree region, after the plain copy was regenerated.
    cacheDir: path.join(path.dirname(root), `vite-cache-${side}`),
    plugins: [...(probes.before ?? []), ...(side === 'plugin' ? [insitu()] : []), ...(probes.after ?? [])],
    server: { port: 0, strictPort: false },
  })
  await server.listen()
  const url = server.resolvedUrls?.local[0]
  if (!url) throw new Error(`the ${side} dev server has no local URL`)
  const context = await browser.newContext()
  const pages: Partial<Record<Shown, Page>> = {}
  for (const shown of shows) {
    const page = await context.newPage()
    await page.goto(new URL(PAGES[shown], url).href)
    await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__ready === true, undefined, { timeout: UPDATE_TIMEOUT })
    pages[shown] = page
  }
  return { side, root, server, pages }
}

/** The page of `served` showing `shown`. */
function pageOf(served: Served, shown: Shown): Page {
  const page = served.pages[shown]
  if (!page) throw new Error(`the ${served.side} server has no page showing #${shown}`)
  return page
}

/** Closes the pages' browser context. */
export async function closePages(served: Served): Promise<void> {
  await Object.values(served.pages)[0]?.context().close()
}

/** After a quiet wait, the milliseconds from the write of `edit` to its marker in `served`'s DOM. */
export async function measureEdit(served: Served, edit: Edit, marker: string, onWrite?: (at: number) => void): Promise<EditTiming> {
  if (edit.side !== served.side) throw new Error(`the edit of ${edit.file} is for the ${edit.side} side, not ${served.side}`)
  const page = pageOf(served, edit.shownIn)
  const quiet = await waitForQuiet()
  await page.evaluate(
    ([expected, shownIn]) => {
      const w = globalThis as unknown as PageGlobals
      w.__expect = expected
      w.__expectIn = shownIn
      w.__seenAt = null
    },
    [marker, edit.shownIn] as const,
  )
  const writtenAt = wallClockMs()
  onWrite?.(writtenAt)
  edit.apply(marker)
  const handle = await page
    .waitForFunction(() => (globalThis as unknown as PageGlobals).__seenAt, undefined, {
      timeout: UPDATE_TIMEOUT,
      polling: 5,
    })
    .catch(async (error: unknown) => {
      const shown = await pageText(served, edit.shownIn)
      throw new Error(`the ${served.side} page did not show ${marker} in #${edit.shownIn} (edit of ${edit.file}): it shows ${JSON.stringify(shown.slice(0, 200))}…`, {
        cause: error,
      })
    })
  const seenAt = (await handle.jsonValue()) as number
  return { ms: seenAt - writtenAt, quiet }
}

/** The text the page shows in one of its `<pre>`. */
export async function pageText(served: Served, shown: Shown): Promise<string> {
  return pageOf(served, shown).evaluate((id) => (globalThis as unknown as PageGlobals).document.getElementById(id)?.textContent ?? '', shown)
}
