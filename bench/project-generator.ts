/**
 * A generated insitu project of a given size, for the benchmarks (bench/*.ts); not a test fixture.
 *
 * Contract:
 * - `generateProject(dir, { documents })` writes into `dir` (created; it should be empty):
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
 * - Deterministic: the same `documents` always gives the same bytes. Every file written gets
 *   the modification time `GENERATED_MTIME` (2026-01-01), as files of a real project are old:
 *   a start right after generating then trusts their stat (the index re-reads a file read
 *   within 2 s of its mtime at the next start).
 * - Returns the paths (project-relative POSIX) a benchmark edits: the README, the included
 *   snippet, and every task document in order.
 */
import fs from 'node:fs'
import path from 'node:path'

export interface GeneratedProject {
  root: string
  readme: string
  snippet: string
  tasks: string[]
}

export interface GenerateOptions {
  /** Number of task documents. */
  documents: number
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

export function taskPath(i: number, documents: number): string {
  const width = Math.max(4, String(documents).length)
  return `tasks/t${String(i).padStart(width, '0')}.md`
}

export function generateProject(dir: string, options: GenerateOptions): GeneratedProject {
  const root = path.resolve(dir)
  const write = (rel: string, text: string) => {
    const file = path.join(root, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
    fs.utimesSync(file, GENERATED_MTIME, GENERATED_MTIME)
  }
  write('insitu.toml', 'version = 1\n')
  for (const [name, sql] of Object.entries(MODELS)) write(`insitu/models/${name}`, sql)
  write('insitu/templates/open.md.j2', TEMPLATE)
  write('snippets/example.ts', SNIPPET)
  write('README.md', README)
  fs.mkdirSync(path.join(root, 'tasks'), { recursive: true })
  const tasks: string[] = []
  for (let i = 1; i <= options.documents; i++) {
    const rel = taskPath(i, options.documents)
    const file = path.join(root, rel)
    fs.writeFileSync(file, taskDocument(i))
    fs.utimesSync(file, GENERATED_MTIME, GENERATED_MTIME)
    tasks.push(rel)
  }
  return { root, readme: 'README.md', snippet: 'snippets/example.ts', tasks }
}
