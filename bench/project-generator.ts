/**
 * A generated insitu project of a given size, for the benchmarks (bench/*.ts); not a test fixture.
 *
 * Contract:
 * - `generateProject(dir, { documents, layout })` writes into `dir` (created; it should be
 *   empty) the layout `flat` (default) or `nested` (below). `flat`:
 *   - `insitu.toml` (`version = 1`, every other key at its default);
 *   - `documents` task documents `tasks/t0001.md` … (numbers zero-padded to at least 4 digits),
 *     each with front matter `title` (`Task 1`), `status` (`open` for i % 4 in {1, 2}, `done` for
 *     3, `blocked` for 0: half the tasks are open), `priority` (1..3), `tags` (a list of one or
 *     two words), then a heading and one paragraph of prose;
 *   - `insitu/models/open_tasks.sql` (open tasks by path), `status_mix.sql` (count per status),
 *     `counts.sql` (one row: total and open), `insitu/templates/open.md.j2` (one list line per row);
 *   - `snippets/example.ts` (included);
 *   - `README.md`: front matter with a `counts` materialization (`frontmatter:/generated/counts`),
 *     then the regions `open` (sql, open_tasks through open.md.j2), `mix` (sql, status_mix as a
 *     table), `layout` (tree, depth 1) and `snippet` (include of snippets/example.ts), with
 *     prose around them. Every region body is empty on disk (stale until rendered or synced).
 * - `nested` (issue #17's second layout): the same task documents spread over many small
 *   folders (`tasks/gNNN/tNNNN.md`, `nestedFolders(documents)` folders: 200 at 1,000 documents,
 *   630 at 10,000), each folder with an `index.md` holding one sql region over its own tasks
 *   (`folder_tasks.sql` with `:insitu_dir`, through `folder.md.j2`): a few hundred documents
 *   with regions. Its `README.md` has several sql regions over templates (`open`, `blocked`,
 *   `folders`: open tasks per folder) besides `mix`, `layout`, `snippet` and `counts`.
 * - Deterministic: the same `documents` always gives the same bytes. Every file written gets
 *   the modification time `GENERATED_MTIME` (2026-01-01), as files of a real project are old:
 *   a start right after generating then trusts their stat (the index re-reads a file read
 *   within 2 s of its mtime at the next start).
 * - Returns the paths (project-relative POSIX) a benchmark edits: the README, the included
 *   snippet, and every task document in order.
 */
import fs from 'node:fs'
import path from 'node:path'
import { DEFAULT_EXCLUDE } from '../src/host/config.js'

export interface GeneratedProject {
  root: string
  readme: string
  snippet: string
  tasks: string[]
}

export type ProjectLayout = 'flat' | 'nested' | 'readme'

export const LAYOUTS: readonly ProjectLayout[] = ['flat', 'nested', 'readme']

export interface GenerateOptions {
  /** Number of task documents. */
  documents: number
  /** @default 'flat' */
  layout?: ProjectLayout
}

const STATUSES = ['blocked', 'open', 'open', 'done'] as const
const TAGS = ['backend', 'frontend', 'docs', 'infra', 'bug', 'feature', 'perf'] as const

export function taskStatus(i: number): (typeof STATUSES)[number] {
  return STATUSES[i % 4]!
}

/** The text of task document number `i` (1-based). */
export function taskDocument(i: number): string {
  const tags = i % 3 === 0 ? [TAGS[i % 7]!, TAGS[(i + 3) % 7]!] : [TAGS[i % 7]!]
  return [
    '---',
    `title: Task ${i}`,
    `status: ${taskStatus(i)}`,
    `priority: ${(i % 3) + 1}`,
    'tags:',
    ...tags.map((tag) => `  - ${tag}`),
    '---',
    '',
    `# Task ${i}`,
    '',
    `This task tracks piece of work number ${i}. It has a short paragraph of prose so that the`,
    'body column holds something realistic: a sentence or two about what to do, why it matters',
    'and what done looks like, as a person would write in a tracker.',
    '',
  ].join('\n')
}

export const README = `---
title: Project tasks
insitu:
  materializations:
    counts:
      model: counts
      target: frontmatter:/generated/counts
---
# Project tasks

This project keeps its tasks as Markdown documents under \`tasks/\`. The lists below are
generated from their front matter.

## Open tasks

<!-- insitu:begin sql
id = "open"
model = "open_tasks"
template = "open.md.j2"
-->
<!-- insitu:end -->

## Status mix

<!-- insitu:begin sql
id = "mix"
model = "status_mix"
-->
<!-- insitu:end -->

## Layout

<!-- insitu:begin tree
id = "layout"
depth = 1
-->
<!-- insitu:end -->

## Example

<!-- insitu:begin include
id = "snippet"
path = "snippets/example.ts"
-->
<!-- insitu:end -->

That is all for now.
`

const MODELS: Record<string, string> = {
  'open_tasks.sql': "select title, priority, path from documents where parent = 'tasks' and status = 'open' order by path\n",
  'status_mix.sql': "select status, count(*) as tasks from documents where parent = 'tasks' group by status order by status\n",
  'counts.sql':
    "select count(*) as total, sum(case when status = 'open' then 1 else 0 end) as open from documents where parent = 'tasks'\n",
}

const TEMPLATE = `{% for row in rows %}
- [{{ row.title }}]({{ row.path | relative_to(this.directory) }}) (priority {{ row.priority }})
{% endfor %}
`

const SNIPPET = `export function greet(name: string): string {
  return \`hello, \${name}\`
}
`

/** The modification time of every generated file (seconds since the epoch): 2026-01-01T00:00:00Z. */
export const GENERATED_MTIME = 1_767_225_600

/** How many task folders the nested layout has (a few hundred, each holding a few tasks). */
export function nestedFolders(documents: number): number {
  return Math.max(1, Math.min(documents, Math.round(Math.sqrt(documents) * 6.3)))
}

export function taskPath(i: number, documents: number, layout: ProjectLayout = 'flat'): string {
  const width = Math.max(4, String(documents).length)
  const name = `t${String(i).padStart(width, '0')}.md`
  if (layout === 'flat') return `tasks/${name}`
  const folders = nestedFolders(documents)
  const folder = Math.floor(((i - 1) * folders) / documents) + 1
  return `tasks/g${String(folder).padStart(String(folders).length, '0')}/${name}`
}

export const NESTED_README = `---
title: Project tasks
insitu:
  materializations:
    counts:
      model: counts
      target: frontmatter:/generated/counts
---
# Project tasks

The tasks live in small folders under \`tasks/\`, each with an index of its own. The lists
below are generated from their front matter.

## Open tasks

<!-- insitu:begin sql
id = "open"
model = "open_tasks"
template = "open.md.j2"
-->
<!-- insitu:end -->

## Blocked tasks

<!-- insitu:begin sql
id = "blocked"
model = "blocked_tasks"
template = "blocked.md.j2"
-->
<!-- insitu:end -->

## Open tasks per folder

<!-- insitu:begin sql
id = "folders"
model = "open_per_folder"
template = "folders.md.j2"
-->
<!-- insitu:end -->

## Status mix

<!-- insitu:begin sql
id = "mix"
model = "status_mix"
-->
<!-- insitu:end -->

## Layout

<!-- insitu:begin tree
id = "layout"
depth = 1
-->
<!-- insitu:end -->

## Example

<!-- insitu:begin include
id = "snippet"
path = "snippets/example.ts"
-->
<!-- insitu:end -->

That is all for now.
`

/** The index of one task folder: a sql region over the folder's own tasks. */
export function folderIndex(folder: string): string {
  return `---
title: Folder ${folder}
---
# Folder ${folder}

<!-- insitu:begin sql
id = "tasks"
model = "folder_tasks"
template = "folder.md.j2"
-->
<!-- insitu:end -->
`
}

const NESTED_MODELS: Record<string, string> = {
  'open_tasks.sql': "select title, priority, path from documents where path like 'tasks/%' and name != 'index.md' and status = 'open' order by path\n",
  'blocked_tasks.sql': "select title, path, tags from documents where path like 'tasks/%' and status = 'blocked' order by priority desc, path\n",
  'open_per_folder.sql':
    "select parent, count(*) as open from documents where path like 'tasks/%' and status = 'open' group by parent order by parent\n",
  'status_mix.sql':
    "select status, count(*) as tasks from documents where path like 'tasks/%' and name != 'index.md' group by status order by status\n",
  'counts.sql':
    "select count(*) as total, sum(case when status = 'open' then 1 else 0 end) as open from documents where path like 'tasks/%' and name != 'index.md'\n",
  'folder_tasks.sql': "select title, status, priority, path from documents where parent = :insitu_dir and name != 'index.md' order by path\n",
}

const NESTED_TEMPLATES: Record<string, string> = {
  'open.md.j2': TEMPLATE,
  'blocked.md.j2': `{% for row in rows %}
- [{{ row.title }}]({{ row.path | relative_to(this.directory) }}){% if row.tags %} (tags {{ row.tags }}){% endif %}
{% endfor %}
`,
  'folders.md.j2': `| folder | open |
| --- | --- |
{% for row in rows %}
| [{{ row.parent }}]({{ row.parent | relative_to(this.directory) }}/index.md) | {{ row.open }} |
{% endfor %}
`,
  'folder.md.j2': `{% for row in rows %}
- [{{ row.title }}]({{ row.path | relative_to(this.directory) }}): {{ row.status }}, priority {{ row.priority }}
{% endfor %}
`,
}

export function generateProject(dir: string, options: GenerateOptions): GeneratedProject {
  const root = path.resolve(dir)
  const write = (rel: string, text: string) => {
    const file = path.join(root, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
    fs.utimesSync(file, GENERATED_MTIME, GENERATED_MTIME)
  }
  const layout = options.layout ?? 'flat'
  if (layout === 'readme') return generateReadmeProject(root, options.documents, write)
  write('insitu.toml', 'version = 1\n')
  for (const [name, sql] of Object.entries(layout === 'flat' ? MODELS : NESTED_MODELS)) write(`insitu/models/${name}`, sql)
  for (const [name, text] of Object.entries(layout === 'flat' ? { 'open.md.j2': TEMPLATE } : NESTED_TEMPLATES)) {
    write(`insitu/templates/${name}`, text)
  }
  write('snippets/example.ts', SNIPPET)
  write('README.md', layout === 'flat' ? README : NESTED_README)
  fs.mkdirSync(path.join(root, 'tasks'), { recursive: true })
  const tasks: string[] = []
  const folders = new Set<string>()
  for (let i = 1; i <= options.documents; i++) {
    const rel = taskPath(i, options.documents, layout)
    const folder = path.posix.dirname(rel)
    if (layout === 'nested' && !folders.has(folder)) {
      folders.add(folder)
      write(`${folder}/index.md`, folderIndex(path.posix.basename(folder)))
    }
    write(rel, taskDocument(i))
    tasks.push(rel)
  }
  return { root, readme: 'README.md', snippet: 'snippets/example.ts', tasks }
}

// The `readme` layout (issue #38): one README with six regions of different kinds.

/** The default `[sources] exclude` (src/host/config.ts `DEFAULT_EXCLUDE`) plus the archive. */
export const MANY_REGIONS_TOML = `version = 1

[sources]
exclude = [
${[...DEFAULT_EXCLUDE, 'archive/'].map((pattern) => `  ${JSON.stringify(pattern)},`).join('\n')}
]
`

export const MANY_REGIONS_README = `---
title: Project overview
insitu:
  materializations:
    counts:
      model: counts
      target: frontmatter:/generated/counts
---
# Project overview

This project keeps its tasks under \`tasks/\` and its notes under \`notes/\`. Finished work
moves to \`archive/\`, which is not indexed. The sections below are generated.

## Open tasks

<!-- insitu:begin sql
id = "open"
model = "open_tasks"
template = "task_table.md.j2"
-->
<!-- insitu:end -->

## Notes

<!-- insitu:begin sql
id = "notes"
model = "notes"
template = "note_table.md.j2"
-->
<!-- insitu:end -->

## Status mix

<!-- insitu:begin materialize
id = "mix"
source = "sql"
model = "status_mix"
template = "mix.md.j2"
-->
<!-- insitu:end -->

## Layout

<!-- insitu:begin tree
id = "layout"
depth = 2
exclude = ["tasks/*.md", "notes/*.md"]
-->
<!-- insitu:end -->

## Example

<!-- insitu:begin include
id = "snippet"
path = "snippets/example.ts"
start = 2
end = 4
-->
<!-- insitu:end -->

That is all for now.
`

const MANY_REGIONS_MODELS: Record<string, string> = {
  'open_tasks.sql': "select title, priority, path from documents where parent = 'tasks' and status = 'open' order by path\n",
  'notes.sql': "select title, (select group_concat(value, ', ') from json_each(documents.tags)) as tags, path from documents where parent = 'notes' order by path\n",
  'status_mix.sql': "select status, count(*) as tasks from documents where parent = 'tasks' group by status order by status\n",
  'counts.sql':
    "select count(*) as total, sum(case when status = 'open' then 1 else 0 end) as open from documents where parent = 'tasks'\n",
}

const MANY_REGIONS_TEMPLATES: Record<string, string> = {
  'task_table.md.j2': `| task | priority |
| --- | --- |
{% for row in rows %}
| [{{ row.title }}]({{ row.path | relative_to(this.directory) }}) | {{ row.priority }} |
{% endfor %}
`,
  'note_table.md.j2': `| note | tags |
| --- | --- |
{% for row in rows %}
| [{{ row.title }}]({{ row.path | relative_to(this.directory) }}) | {{ row.tags }} |
{% endfor %}
`,
  'mix.md.j2': `{% for row in rows %}
- {{ row.status }}: {{ row.tasks }}
{% endfor %}
`,
}

/** The included file of the `readme` layout: the README includes its lines 2–4 (line 3 holds `hello, `). */
const MANY_REGIONS_SNIPPET = `// An example for the README, which includes lines 2 to 4.
export function greet(name: string): string {
  return \`hello, \${name}\`
}
`

/** How many of `documents` are notes in the `readme` layout (the rest are tasks). */
export function readmeNotes(documents: number): number {
  return Math.floor(documents / 5)
}

/** The text of note document number `i` (1-based). */
export function noteDocument(i: number): string {
  const tags = i % 2 === 0 ? [TAGS[i % 7]!, TAGS[(i + 2) % 7]!] : [TAGS[i % 7]!]
  return [
    '---',
    `title: Note ${i}`,
    'tags:',
    ...tags.map((tag) => `  - ${tag}`),
    '---',
    '',
    `# Note ${i}`,
    '',
    `A note on topic number ${i}: what was decided, what was tried and what is left, in a few`,
    'sentences, as a person keeps notes beside a task list.',
    '',
  ].join('\n')
}

function generateReadmeProject(root: string, documents: number, write: (rel: string, text: string) => void): GeneratedProject {
  write('insitu.toml', MANY_REGIONS_TOML)
  for (const [name, sql] of Object.entries(MANY_REGIONS_MODELS)) write(`insitu/models/${name}`, sql)
  for (const [name, text] of Object.entries(MANY_REGIONS_TEMPLATES)) write(`insitu/templates/${name}`, text)
  write('snippets/example.ts', MANY_REGIONS_SNIPPET)
  write('README.md', MANY_REGIONS_README)
  const notes = readmeNotes(documents)
  const taskCount = documents - notes
  const width = Math.max(4, String(documents).length)
  const number = (i: number) => String(i).padStart(width, '0')
  const tasks: string[] = []
  for (let i = 1; i <= taskCount; i++) {
    const rel = `tasks/t${number(i)}.md`
    write(rel, taskDocument(i))
    tasks.push(rel)
  }
  for (let i = 1; i <= notes; i++) write(`notes/n${number(i)}.md`, noteDocument(i))
  for (let i = 1; i <= Math.max(1, Math.round(documents / 10)); i++) write(`archive/a${number(i)}.md`, taskDocument(i))
  return { root, readme: 'README.md', snippet: 'snippets/example.ts', tasks }
}
