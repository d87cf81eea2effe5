/**
 * The two projects a side-by-side benchmark runs on: the generated project as the plugin sees
 * it, and a plain copy whose documents are already regenerated, served or built without it.
 *
 * Contract: `prepareProjects(documents, layout)` makes a temp folder holding
 * - `plugin/`: `generateProject(…, { documents, layout })` (region bodies empty on disk, as
 *   generated; layout `flat` by default, see project-generator.ts), plus the page files below;
 * - `plain/`: a copy of `plugin/` in which every document with regions holds its regenerated
 *   text (rendered once here with `InsituEngine`, no persistent state), so that both serve the
 *   same text;
 * - in both, three pages (`PAGES`), each showing one module as text and accepting its hot
 *   updates: `index.html` README.md in `<pre id="out">`, `task.html` the first open task in
 *   `<pre id="task">`, `snippet.html` the included snippet in `<pre id="snippet">` (scripts
 *   `page-<id>.js`); each records in `window.__seenAt` the wall-clock time at which a
 *   MutationObserver first sees `window.__expect` in its `<pre>`; and
 *   `all-documents.js` (imports every `*.md?raw` with an eager `import.meta.glob`: the build entry).
 * `regionDocuments` lists the documents with regions; `remove()` deletes the temp folder.
 * `removePluginState(root)` deletes what the plugin persisted there (the next build is cold).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { InsituEngine } from '../src/engine/engine.js'
import { type GeneratedProject, generateProject, type ProjectLayout } from './project-generator.js'

export type { ProjectLayout }

export interface BenchProjects {
  tmp: string
  generated: GeneratedProject
  /** Root of the project the plugin runs on. */
  plugin: string
  /** Root of the regenerated copy, for Vite without the plugin. */
  plain: string
  layout: ProjectLayout
  regionDocuments: string[]
  /** The first task document with `status: open` (listed by the README's sql region; shown by the page). */
  openTask: string
  remove(): void
}

/** The pages, one per module shown: which `<pre>` id shows it, and its script. */
export const PAGES = { out: 'index.html', task: 'task.html', snippet: 'snippet.html' } as const

function pageHtml(id: keyof typeof PAGES): string {
  return `<!doctype html>
<html>
  <body>
    <pre id="${id}"></pre>
    <script type="module" src="./page-${id}.js"></script>
  </body>
</html>
`
}

/**
 * A page script: one module as text in `<pre id>`; its hot updates replace it. One module per
 * page, as a site's page shows its own document only: an update of several modules is applied
 * once all of them are fetched, so a page importing the task and the snippet too would wait for
 * Vite's update of those beside the README's.
 */
function pageScript(module: string, id: keyof typeof PAGES): string {
  return `// Benchmark page: ${module} as text; hot updates replace it.
import text from './${module}?raw'

const shown = document.getElementById('${id}')
window.__expect = null
window.__expectIn = '${id}'
window.__seenAt = null
new MutationObserver(() => {
  if (window.__expect === null || window.__seenAt !== null) return
  if (shown.textContent.includes(window.__expect)) {
    window.__seenAt = performance.timeOrigin + performance.now()
  }
}).observe(document.body, { childList: true, characterData: true, subtree: true })
shown.textContent = text
window.__ready = true

if (import.meta.hot) {
  import.meta.hot.accept('./${module}?raw', (next) => {
    if (next) shown.textContent = next.default
  })
}
`
}

const ALL_DOCUMENTS_JS = `// Build entry: every Markdown document of the project as text.
const documents = import.meta.glob(['./**/*.md', '!./node_modules/**', '!./dist*/**'], { query: '?raw', import: 'default', eager: true })
export default documents
console.log(Object.keys(documents).length)
`

export async function prepareProjects(documents: number, layout: ProjectLayout = 'flat'): Promise<BenchProjects> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `insitu-bench-${layout}-${documents}-`)))
  const plugin = path.join(tmp, 'plugin')
  const plain = path.join(tmp, 'plain')
  const generated = generateProject(plugin, { documents, layout })
  const openTask = firstOpenTask(plugin, generated.tasks)
  for (const [name, text] of [
    [PAGES.out, pageHtml('out')],
    [PAGES.task, pageHtml('task')],
    [PAGES.snippet, pageHtml('snippet')],
    ['page-out.js', pageScript(generated.readme, 'out')],
    ['page-task.js', pageScript(openTask, 'task')],
    ['page-snippet.js', pageScript(generated.snippet, 'snippet')],
    ['all-documents.js', ALL_DOCUMENTS_JS],
  ] as const) {
    fs.writeFileSync(path.join(plugin, name), text)
  }
  fs.cpSync(plugin, plain, { recursive: true })
  const regionDocuments = findRegionDocuments(plugin)
  const engine = await InsituEngine.create({ root: plugin, cache: false })
  try {
    for (const document of regionDocuments) {
      const result = await engine.renderDocument(document, fs.readFileSync(path.join(plugin, document), 'utf8'))
      const errors = result.diagnostics.filter((d) => d.severity === 'error')
      if (errors.length > 0) throw new Error(`${document}: ${errors.map((d) => d.message).join('; ')}`)
      fs.writeFileSync(path.join(plain, document), result.text)
    }
  } finally {
    await engine.close()
  }
  return { tmp, generated, plugin, plain, layout, regionDocuments, openTask, remove: () => fs.rmSync(tmp, { recursive: true, force: true }) }
}

/** Project-relative paths of the Markdown files that hold a region (task documents never do: only `index.md` is read under `tasks/`). */
export function findRegionDocuments(root: string): string[] {
  const found: string[] = []
  const walk = (relDir: string) => {
    for (const entry of fs.readdirSync(path.join(root, relDir), { withFileTypes: true })) {
      const rel = relDir ? `${relDir}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (!['node_modules', '.insitu', '.git'].includes(entry.name) && !entry.name.startsWith('dist')) walk(rel)
      } else if (relDir.startsWith('tasks') && entry.name !== 'index.md') {
        continue
      } else if (entry.name.endsWith('.md') && fs.readFileSync(path.join(root, rel), 'utf8').includes('<!-- insitu:begin')) {
        found.push(rel)
      }
    }
  }
  walk('')
  return found.sort()
}

/** The first of `tasks` (project-relative) whose front matter says `status: open`. */
export function firstOpenTask(root: string, tasks: readonly string[]): string {
  const task = tasks.find((rel) => /^status: open$/m.test(fs.readFileSync(path.join(root, rel), 'utf8')))
  if (!task) throw new Error(`the generated project ${root} has no open task`)
  return task
}

/** Removes what the plugin persisted in `root` (its state folder, Vite's dependency cache): the next build is cold. */
export function removePluginState(root: string): void {
  for (const state of ['.insitu', 'node_modules/.vite']) fs.rmSync(path.join(root, state), { recursive: true, force: true })
}
