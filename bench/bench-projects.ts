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
 * - in both, `index.html` + `page.js` (imports `./README.md?raw`, the first open task's `?raw`
 *   and the included snippet's `?raw`, shows them as the text of `<pre id="out">`,
 *   `<pre id="task">` and `<pre id="snippet">`, accepts their hot updates, and records in `window.__seenAt` the wall-clock time at which a MutationObserver
 *   first sees `window.__expect` in the element `window.__expectIn` (`out`, `task` or `snippet`)), and
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

const INDEX_HTML = `<!doctype html>
<html>
  <body>
    <pre id="out"></pre>
    <pre id="task"></pre>
    <pre id="snippet"></pre>
    <script type="module" src="./page.js"></script>
  </body>
</html>
`

/** The page script: README.md, one task document and the included snippet as text, each in its own `<pre>`. */
function pageScript(task: string, snippet: string): string {
  return `// Benchmark page: README.md, ${task} and ${snippet} as text; hot updates replace them.
import readme from './README.md?raw'
import task from './${task}?raw'
import snippet from './${snippet}?raw'

const out = document.getElementById('out')
const taskOut = document.getElementById('task')
const snippetOut = document.getElementById('snippet')
window.__expect = null
window.__expectIn = 'out'
window.__seenAt = null
new MutationObserver(() => {
  if (window.__expect === null || window.__seenAt !== null) return
  if (document.getElementById(window.__expectIn).textContent.includes(window.__expect)) {
    window.__seenAt = performance.timeOrigin + performance.now()
  }
}).observe(document.body, { childList: true, characterData: true, subtree: true })
out.textContent = readme
taskOut.textContent = task
snippetOut.textContent = snippet
window.__ready = true

if (import.meta.hot) {
  import.meta.hot.accept(['./README.md?raw', './${task}?raw', './${snippet}?raw'], ([nextReadme, nextTask, nextSnippet]) => {
    if (nextReadme) out.textContent = nextReadme.default
    if (nextTask) taskOut.textContent = nextTask.default
    if (nextSnippet) snippetOut.textContent = nextSnippet.default
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
    ['index.html', INDEX_HTML],
    ['page.js', pageScript(openTask, generated.snippet)],
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
