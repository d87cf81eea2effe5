/**
 * The edits of the hot-reload benchmarks (bench/hmr.ts, bench/edit-timeline.ts): the edit
 * kinds over a generated project, a dev server with its Chromium page per side, and one timed
 * edit.
 *
 * Contract:
 * - `editKinds(projects)`: prose (README.md, both sides), front matter (the first open task's
 *   title: with the plugin the page shows the README's sql region, Vite alone shows the task),
 *   include (snippets/example.ts: the README's include region, or the snippet itself), then the
 *   last two against Vite editing the regenerated README instead. Each kind remembers the text
 *   it last wrote, per side.
 * - `serve(side, root, browser, probes)`: a dev server on `root` (the plugin's side runs
 *   `insitu()` between `probes.before` and `probes.after`), a page of it in its own browser
 *   context, resolved once page.js is ready.
 * - `measureEdit(served, kind, marker)`: after SETTLE_MS of quiet, the milliseconds from just
 *   before the write to the page's MutationObserver first seeing `marker` (Node's and
 *   Chromium's `performance.timeOrigin + now()`); `onWrite` is told the write's wall-clock time.
 */
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout } from 'node:timers/promises'
import { type Browser, type Page } from 'playwright-core'
import { createServer, type Plugin, type ViteDevServer } from 'vite'
import insitu from '../src/index.js'
import { type BenchProjects } from './bench-projects.js'
import { wallClockMs } from './measurements.js'

export const UPDATE_TIMEOUT = 60_000
/**
 * Quiet time before each edit. Vite's watcher drops a change that follows the previous event
 * on the same file within a few tens of milliseconds (seen with Vite 8 on Linux: a second
 * write 20 ms after an update never reaches the page), on both servers alike.
 */
export const SETTLE_MS = 200

export type Side = 'plugin' | 'plain'
/** The `<pre>` of page.js showing README.md, the task or the snippet. */
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
  page: Page
}

/** One edit kind: how to put a marker into each project, and where the page shows it. */
export interface EditKind {
  label: string
  /** What Vite alone is given instead (the row's baseline). */
  baseline: string
  /** Writes the edit carrying `marker` into the project of `side`. */
  apply(side: Side, marker: string): void
  /** The `<pre>` (page.js) whose text shows the marker. */
  shownIn: Record<Side, Shown>
}

function replaceOnce(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8')
  const at = text.indexOf(from)
  if (at < 0) throw new Error(`${file} does not contain ${JSON.stringify(from)}`)
  if (text.indexOf(from, at + 1) >= 0) throw new Error(`${file} contains ${JSON.stringify(from)} more than once`)
  fs.writeFileSync(file, text.slice(0, at) + to + text.slice(at + from.length))
}

/** Edit kinds over the generated project; each remembers the text it last wrote, per side. */
export function editKinds(projects: BenchProjects): EditKind[] {
  const root = (side: Side) => (side === 'plugin' ? projects.plugin : projects.plain)
  const readme = (side: Side) => path.join(root(side), projects.generated.readme)

  const proseLine = { plugin: 'That is all for now.', plain: 'That is all for now.' }
  const prose: EditKind = {
    label: 'prose edit of README.md',
    baseline: 'the same edit of the regenerated README',
    shownIn: { plugin: 'out', plain: 'out' },
    apply(side, marker) {
      const next = `That is all for now (${marker}).`
      replaceOnce(readme(side), proseLine[side], next)
      proseLine[side] = next
    },
  }

  // The first open task: listed by the sql region, and shown by the page as itself.
  const task = projects.openTask
  const taskFile = (side: Side) => path.join(root(side), task)
  const originalTitle = /^title: (.*)$/m.exec(fs.readFileSync(taskFile('plugin'), 'utf8'))![1]!
  // The title in each side's task file, and in the plain README's row.
  const title = { plugin: originalTitle, plain: originalTitle, plainReadme: originalTitle }
  const editTask = (side: Side, marker: string) => {
    const next = `${originalTitle} ${marker}`
    replaceOnce(taskFile(side), `title: ${title[side]}\n`, `title: ${next}\n`)
    title[side] = next
  }
  const frontMatter: EditKind = {
    label: `front-matter edit of ${task} (its row in the sql region)`,
    baseline: `the same edit of ${task}, shown by the page as itself`,
    shownIn: { plugin: 'out', plain: 'task' },
    apply: editTask,
  }
  const frontMatterVsReadme: EditKind = {
    label: `front-matter edit of ${task} (its row in the sql region)`,
    baseline: 'the same row edited in the regenerated README',
    shownIn: { plugin: 'out', plain: 'out' },
    apply(side, marker) {
      if (side === 'plugin') return editTask(side, marker)
      const next = `${originalTitle} ${marker}`
      replaceOnce(readme(side), `[${title.plainReadme}](${task})`, `[${next}](${task})`)
      title.plainReadme = next
    },
  }

  const snippet = projects.generated.snippet
  const snippetFile = (side: Side) => path.join(root(side), snippet)
  // The greeting in each side's snippet file, and in the plain README's include region.
  const greeting = { plugin: 'hello, ', plain: 'hello, ', plainReadme: 'hello, ' }
  const editSnippet = (side: Side, marker: string) => {
    const next = `hello ${marker}, `
    replaceOnce(snippetFile(side), greeting[side], next)
    greeting[side] = next
  }
  const include: EditKind = {
    label: `included-file edit (${snippet})`,
    baseline: `the same edit of ${snippet}, shown by the page as itself`,
    shownIn: { plugin: 'out', plain: 'snippet' },
    apply: editSnippet,
  }
  const includeVsReadme: EditKind = {
    label: `included-file edit (${snippet})`,
    baseline: 'the same line edited in the regenerated README',
    shownIn: { plugin: 'out', plain: 'out' },
    apply(side, marker) {
      if (side === 'plugin') return editSnippet(side, marker)
      const next = `hello ${marker}, `
      replaceOnce(readme(side), greeting.plainReadme, next)
      greeting.plainReadme = next
    },
  }
  return [prose, frontMatter, include, frontMatterVsReadme, includeVsReadme]
}

export async function serve(side: Side, root: string, browser: Browser, probes: { before?: Plugin[]; after?: Plugin[] } = {}): Promise<Served> {
  const server = await createServer({
    root,
    configFile: false,
    logLevel: 'silent',
    plugins: [...(probes.before ?? []), ...(side === 'plugin' ? [insitu()] : []), ...(probes.after ?? [])],
    server: { port: 0, strictPort: false },
  })
  await server.listen()
  const url = server.resolvedUrls?.local[0]
  if (!url) throw new Error(`the ${side} dev server has no local URL`)
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(url)
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).__ready === true, undefined, { timeout: UPDATE_TIMEOUT })
  return { side, root, server, page }
}

/** Milliseconds from the write to the marker in the page's DOM. */
export async function measureEdit(served: Served, kind: EditKind, marker: string, onWrite?: (at: number) => void): Promise<number> {
  await setTimeout(SETTLE_MS)
  await served.page.evaluate(
    ([expected, shownIn]) => {
      const w = globalThis as unknown as PageGlobals
      w.__expect = expected
      w.__expectIn = shownIn
      w.__seenAt = null
    },
    [marker, kind.shownIn[served.side]] as const,
  )
  const writtenAt = wallClockMs()
  onWrite?.(writtenAt)
  kind.apply(served.side, marker)
  const handle = await served.page
    .waitForFunction(() => (globalThis as unknown as PageGlobals).__seenAt, undefined, {
      timeout: UPDATE_TIMEOUT,
      polling: 5,
    })
    .catch(async (error: unknown) => {
      const shownIn = kind.shownIn[served.side]
      const shown = await served.page.evaluate((id) => (globalThis as unknown as PageGlobals).document.getElementById(id)?.textContent ?? '', shownIn)
      throw new Error(`the ${served.side} page did not show ${marker} in #${shownIn} (${kind.label}): it shows ${JSON.stringify(shown.slice(0, 200))}…`,
        { cause: error },
      )
    })
  const seenAt = (await handle.jsonValue()) as number
  return seenAt - writtenAt
}
