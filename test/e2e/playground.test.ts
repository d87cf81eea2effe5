/**
 * End to end: the playground in a real Vite dev server, seen by real Chromium.
 *
 * The playground is copied to a temporary folder (edits never touch the repository) laid
 * out like the repository, `<tmp>/playground` beside symlinks `<tmp>/src` and
 * `<tmp>/node_modules` to the repository's: so the copied `vite.config.ts` still imports
 * `../src/index.ts`, the Node extension still imports `../../../src/sdk/index.ts`, and
 * `node --import tsx` (run in the extension folder) still finds tsx in a parent folder.
 * The copy is made a git repository with one commit on branch `e2e-playground`.
 *
 * Checks: every region kind is visible with the values the task files, data/team.csv and
 * git imply (computed from the copy, so the assertions follow edits of the playground);
 * editing a task's title shows up in the SQL table and in the Python word count without a
 * page reload; a syntax error in the template of a SQL region (issue #34) keeps the page, its
 * other regions and that region's last good list, shows Vite's overlay with insitu's message
 * and tells the console and the terminal (the server's logger) once, and the fix closes the
 * overlay and updates the region without a reload; closing the server leaves no extension
 * process (children of this process whose cwd is an extension folder of the copy, found
 * through /proc; `liveExtensionPids()` would not see them: the config file bundles its own
 * copy of the plugin).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, type Page } from 'playwright-core'
import { createServer, type Logger, type ViteDevServer } from 'vite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { launchChromium } from './chromium.js'
import { openWatched, overlayTexts } from './page-watch.js'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const BRANCH = 'e2e-playground'
const TIMEOUT = 60_000

interface Task {
  file: string
  title: string
  status: string
  owner: string
  words: number
}

let tmp: string
let copy: string
let server: ViteDevServer | undefined
let browser: Browser | undefined
let page: Page
let url: string
let headOid: string
/** What the dev server printed (its logger's messages), the terminal of a user. */
const serverLog: string[] = []
const BRANCH_REGION = 'article.doc[data-path="docs/05-git.md"] section.region[data-id="branch"]'

/** A logger that prints nothing and keeps every message in `serverLog`. */
function recordingLogger(): Logger {
  const record = (message: string) => void serverLog.push(message)
  return { hasWarned: false, info: record, warn: record, warnOnce: record, error: record, clearScreen: () => {}, hasErrorLogged: () => false }
}

/** The task files of the copy, read the way the SQL model and the Python extension read them. */
function readTasks(): Task[] {
  const folder = path.join(copy, 'tasks')
  return fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => {
      const text = fs.readFileSync(path.join(folder, name), 'utf8')
      const match = /^---\n([\s\S]*?)\n---\s*\n/.exec(text)
      const data = parseYaml(match?.[1] ?? '') as Record<string, string>
      const body = match ? text.slice(match[0].length) : text
      return {
        file: `tasks/${name}`,
        title: data.title ?? '',
        status: data.status ?? '',
        owner: data.owner ?? '',
        words: body.match(/[\w'-]+/g)?.length ?? 0,
      }
    })
}

function readTeam(): { name: string; role: string; focus: string }[] {
  const [, ...lines] = fs.readFileSync(path.join(copy, 'data/team.csv'), 'utf8').trim().split('\n')
  return lines.map((line) => {
    const cells = [...line.matchAll(/"([^"]*)"|([^,]+)/g)].map((m) => m[1] ?? m[2] ?? '')
    return { name: cells[0] ?? '', role: cells[1] ?? '', focus: cells[2] ?? '' }
  })
}

/** Rows of the table inside a region, as arrays of cell texts (header row excluded). */
async function tableRows(selector: string): Promise<string[][]> {
  return page.locator(`${selector} tbody tr`).evaluateAll((rows) =>
    rows.map((row) => [...row.querySelectorAll('td')].map((cell) => (cell.textContent ?? '').trim())),
  )
}

/** Extension processes alive (`<folder> (pid <n>)`): children of this process whose cwd is an extension folder of the copy. */
function extensionProcesses(): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      const cwd = fs.readlinkSync(`/proc/${entry}/cwd`)
      if (!cwd.startsWith(path.join(fs.realpathSync(copy), 'extensions') + path.sep)) continue
      found.push(`${path.basename(cwd)} (pid ${entry})`)
    } catch {
      // the process ended while we looked
    }
  }
  return found.sort()
}

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], {
    cwd: copy,
    encoding: 'utf8',
    env: Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))),
  }).trim()
}

async function stopAll(): Promise<void> {
  await browser?.close()
  browser = undefined
  await server?.close()
  server = undefined
}

describe('playground (Vite dev server + Chromium)', () => {
  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-e2e-'))
    copy = path.join(tmp, 'playground')
    const skipped = new Set(['node_modules', '.vite', '.insitu'])
    fs.cpSync(path.join(REPO, 'playground'), copy, {
      recursive: true,
      filter: (source) => !skipped.has(path.basename(source)),
    })
    fs.symlinkSync(path.join(REPO, 'src'), path.join(tmp, 'src'), 'dir')
    fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(tmp, 'node_modules'), 'dir')
    git('init', '-q', '-b', BRANCH)
    git('add', '-A')
    git('commit', '-q', '-m', 'playground copy')
    headOid = git('rev-parse', 'HEAD')

    server = await createServer({
      configFile: path.join(copy, 'vite.config.ts'),
      root: copy,
      logLevel: 'silent',
      customLogger: recordingLogger(),
      server: { port: 0, strictPort: false, watch: { usePolling: true, interval: 50 } },
    })
    await server.listen()
    const local = server.resolvedUrls?.local[0]
    if (!local) throw new Error('the dev server has no local URL')
    url = local
    browser = await launchChromium()
    page = await browser.newPage()
    await page.goto(url)
    await page.waitForSelector(BRANCH_REGION, { timeout: TIMEOUT })
  }, TIMEOUT)

  afterAll(async () => {
    await stopAll()
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true })
  }, TIMEOUT)

  it('shows every region kind with the values of the project', { timeout: TIMEOUT }, async () => {
    const tasks = readTasks()
    const team = readTeam()
    expect(tasks.length).toBeGreaterThan(3)

    // Both extensions are running (so the last test can fail).
    expect(extensionProcesses().map((entry) => entry.replace(/ \(pid \d+\)$/, ''))).toEqual([
      'node-team',
      'py-wordcount',
    ])

    // sql + @insitu/table over tasks/*.md
    const byTitle = [...tasks].sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : 0))
    expect(await tableRows('section.region[data-kind="sql"][data-id="all-tasks"]')).toEqual(
      byTitle.map((task) => [task.title, task.status, task.owner, task.file]),
    )
    // sql + a template of insitu/templates
    const openItems = await page
      .locator('section.region[data-kind="sql"][data-id="open-tasks"] li')
      .evaluateAll((items) => items.map((item) => (item.textContent ?? '').split(' · ')[0]))
    expect([...openItems].sort()).toEqual(tasks.filter((t) => t.status !== 'done').map((t) => t.title).sort())

    // front-matter materialization (the `generated` block, parsed by the page)
    const done = tasks.filter((t) => t.status === 'done').length
    const stats = await page
      .locator('section.region[data-kind="frontmatter"][data-id="progress"] .stat')
      .evaluateAll((tiles) => tiles.map((tile) => [...tile.children].map((part) => part.textContent)))
    expect(stats).toEqual([
      [String(tasks.length), 'total'],
      [String(done), 'done'],
    ])

    // include of the Vite config
    const included = await page.locator('section.region[data-kind="include"][data-id="config"] pre').innerText()
    expect(included.trim()).toBe(fs.readFileSync(path.join(copy, 'vite.config.ts'), 'utf8').trim())

    // tree of docs/
    const docs = fs.readdirSync(path.join(copy, 'docs')).sort()
    const tree = await page.locator('section.region[data-kind="tree"][data-id="docs-tree"] pre').innerText()
    expect(tree.trim().split('\n')).toEqual([
      'docs/',
      ...docs.map((name, i) => `${i === docs.length - 1 ? '└── ' : '├── '}${name}`),
    ])

    // git: HEAD and branch of the copy's repository
    expect(await tableRows('section.region[data-kind="materialize"][data-id="head"]')).toEqual([
      ['commit', headOid.slice(0, 12)],
      ['ref', `refs/heads/${BRANCH}`],
      ['detached', 'no'],
    ])
    expect(await page.locator('section.region[data-id="branch"] p').innerText()).toBe(`On branch ${BRANCH}.`)

    // Python extension transform
    expect(await tableRows('section.region[data-kind="wordcount"][data-id="task-words"]')).toEqual([
      ...tasks.map((task) => [task.title, String(task.words)]),
      [`${tasks.length} files`, String(tasks.reduce((sum, task) => sum + task.words, 0))],
    ])

    // Node SDK resource rendered by the jinja renderer
    expect(await tableRows('section.region[data-kind="materialize"][data-id="team"]')).toEqual(
      team.map((member) => [
        member.name,
        member.role,
        member.focus,
        String(tasks.filter((t) => t.owner === member.name && t.status !== 'done').length),
      ]),
    )

    // the module rule's output (data/team.csv through csv_module), imported by the page
    expect(await page.locator('#team-module .member-name').allInnerTexts()).toEqual(team.map((m) => m.name))
  })

  it('shows an edited task title without reloading the page', { timeout: TIMEOUT }, async () => {
    const [task] = readTasks().filter((t) => t.status !== 'done')
    if (!task) throw new Error('the playground needs an open task')
    const file = path.join(copy, task.file)
    const newTitle = `${task.title} (edited in e2e)`
    await page.evaluate(() => {
      ;(globalThis as unknown as { beforeEdit: boolean }).beforeEdit = true
    })

    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(`title: ${task.title}\n`, `title: ${newTitle}\n`))

    const allTasks = 'section.region[data-kind="sql"][data-id="all-tasks"]'
    await expect
      .poll(async () => (await tableRows(allTasks)).map((row) => row[0]), { timeout: 30_000 })
      .toContain(newTitle)
    await expect
      .poll(async () => (await tableRows('section.region[data-id="task-words"]')).map((row) => row[0]), {
        timeout: 30_000,
      })
      .toContain(newTitle)
    expect((await tableRows(allTasks)).map((row) => row[0])).not.toContain(task.title)
    expect(await page.evaluate(() => (globalThis as unknown as { beforeEdit?: boolean }).beforeEdit)).toBe(true)
  })

  it('a syntax error in the template of a SQL region keeps the page, its other regions and its list, shows the overlay, and the fix updates the region without a reload', { timeout: 2 * TIMEOUT }, async () => {
    const template = path.join(copy, 'insitu/templates/open_tasks.md.j2')
    const good = fs.readFileSync(template, 'utf8')
    const doc = fs.readFileSync(path.join(copy, 'docs/01-tasks.md'), 'utf8').split('\n')
    const line = doc.indexOf('id = "open-tasks"') // the begin comment's line, 1-based
    expect(line).toBeGreaterThan(0)
    const allTasks = 'section.region[data-kind="sql"][data-id="all-tasks"]'
    const openItems = () => page.locator('section.region[data-kind="sql"][data-id="open-tasks"] li').allInnerTexts()
    const failure = 'transform sql failed in open-tasks'
    const consoleLine = new RegExp(`^\\[insitu\\] docs/01-tasks\\.md:${line} ${failure}`)
    const printed = (from: number, text: string) => serverLog.slice(from).filter((message) => message.includes(text)).length
    const watch = await openWatched(page, url, () => page.waitForSelector(BRANCH_REGION, { timeout: TIMEOUT }), 30_000)
    const logged = serverLog.length
    try {
      const items = await openItems()
      const rows = await tableRows(allTasks)
      const branch = await page.locator(`${BRANCH_REGION} p`).innerText()
      expect(items.length).toBeGreaterThan(0)
      // `{% for %}` left without its `{% endfor %}`.
      fs.writeFileSync(template, good.replace('{% endfor %}', ''))
      await expect.poll(() => overlayTexts(page), { timeout: 30_000 }).toEqual([expect.stringContaining(failure)])
      expect((await overlayTexts(page))[0]).toContain('open_tasks.md.j2')
      expect(await openItems()).toEqual(items)
      expect(await tableRows(allTasks)).toEqual(rows)
      expect(await page.locator(`${BRANCH_REGION} p`).innerText()).toBe(branch)
      expect(watch.insituErrors()).toEqual([expect.stringMatching(consoleLine)])
      expect(printed(logged, `insitu: docs/01-tasks.md:${line}: ${failure}`)).toBe(1)
      expect(serverLog.slice(logged).join('\n')).toContain(`File: ${template}:`)

      fs.writeFileSync(template, good.replace('- **{{ row.title }}**', '- **{{ row.title }}** (fixed)'))
      const fixed = items.map((item) => item.replace(' · ', ' (fixed) · '))
      await expect.poll(openItems, { timeout: 30_000 }).toEqual(fixed)
      expect(await overlayTexts(page)).toEqual([])
      expect(await tableRows(allTasks)).toEqual(rows)
      expect(watch.navigations()).toBe(0)
      expect(await watch.markerKept()).toBe(true)
      expect(watch.insituErrors()).toHaveLength(1)
      expect(printed(logged, 'insitu: docs/01-tasks.md: fixed')).toBe(1)
      expect(printed(logged, failure)).toBe(1)
    } finally {
      watch.stop()
    }
  })

  it('leaves no extension process once the browser and the server are closed', { timeout: TIMEOUT }, async () => {
    expect(extensionProcesses()).toHaveLength(2)
    await stopAll()
    await expect.poll(() => extensionProcesses(), { timeout: 10_000 }).toEqual([])
  })
})
