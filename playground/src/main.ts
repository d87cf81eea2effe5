/**
 * The playground page: every managed document under docs/ (imported `?raw`, so the plugin
 * serves it regenerated), rendered with marked, each insitu region labelled with its kind,
 * the `generated` front matter shown as data, and data/team.csv imported as a module (the
 * `csv_module` module rule). The module accepts its own updates, so an edit of a task file
 * re-renders the page in place; changed cards flash.
 */
import { marked } from 'marked'
import { stringify as toYaml } from 'yaml'
import team, { columns } from '../data/team.csv'
import { escapeHtml, labelRegions, type PageDocument, parseDocument, type RegionInfo } from './document.ts'
import './style.css'

const sources = import.meta.glob<string>('../docs/*.md', { query: '?raw', import: 'default', eager: true })

/** Who provides each region kind of this project (shown next to the kind). */
const PROVIDERS: Record<string, string> = {
  sql: 'builtin transform',
  include: 'builtin transform',
  tree: 'builtin transform',
  materialize: 'builtin transform',
  wordcount: 'Python extension · py-wordcount',
}
const RESOURCE_PROVIDERS: Record<string, string> = { team: 'Node extension · node-team' }

function describeRegion(region: RegionInfo): string {
  const source = region.options.find(([key]) => key === 'source')?.[1].replace(/^"|"$/g, '')
  let provider = PROVIDERS[region.kind] ?? 'extension transform'
  if (source) {
    provider += source.includes(':')
      ? ` · reads host resource ${source}`
      : ` · reads resource ${source} (${RESOURCE_PROVIDERS[source] ?? 'extension'})`
  }
  const options = region.options.map(([key, value]) => `<code>${escapeHtml(key)} = ${escapeHtml(value)}</code>`).join('')
  return (
    `<header class="region-label"><span class="chip" data-chip="${escapeHtml(region.kind)}">${escapeHtml(region.kind)}</span>` +
    `<span class="region-id">#${escapeHtml(region.id)}</span><span class="provider">${escapeHtml(provider)}</span>` +
    `<span class="options">${options}</span></header>`
  )
}

/** A pointer like `/generated/progress` read from the `generated` block. */
function readPointer(generated: Record<string, unknown>, pointer: string): unknown {
  const parts = pointer.split('/').slice(2).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
  return parts.reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], generated)
}

function renderValue(value: unknown): string {
  if (Array.isArray(value) && value.every((row) => typeof row === 'object' && row !== null)) {
    const rows = value as Record<string, unknown>[]
    const keys = Object.keys(rows[0] ?? {})
    return (
      `<table class="mini"><thead><tr>${keys.map((k) => `<th>${escapeHtml(k)}</th>`).join('')}</tr></thead><tbody>` +
      rows.map((row) => `<tr>${keys.map((k) => `<td>${pill(String(row[k] ?? ''))}</td>`).join('')}</tr>`).join('') +
      '</tbody></table>'
    )
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
    const { total, done } = value as { total?: unknown; done?: unknown }
    const bar =
      typeof total === 'number' && typeof done === 'number' && total > 0
        ? `<div class="progress" title="${done} of ${total} done"><span style="width:${Math.round((done / total) * 100)}%"></span></div>`
        : ''
    return (
      `<div class="stats">${entries
        .map(([k, v]) => `<div class="stat"><span class="stat-value">${escapeHtml(String(v))}</span><span class="stat-key">${escapeHtml(k)}</span></div>`)
        .join('')}</div>${bar}`
    )
  }
  return `<code>${escapeHtml(JSON.stringify(value))}</code>`
}

function renderFrontMatter(doc: PageDocument): string {
  const entries = Object.entries(doc.materializations)
  if (entries.length === 0) return ''
  const blocks = entries.map(([name, entry]) => {
    const target = typeof entry.target === 'string' ? entry.target.replace(/^frontmatter:/, '') : String((entry.target as { pointer?: unknown })?.pointer)
    const how = typeof entry.model === 'string' ? `sql model ${entry.model}` : String(entry.kind ?? 'sql')
    return (
      `<section class="region" data-kind="frontmatter" data-id="${escapeHtml(name)}">` +
      `<header class="region-label"><span class="chip" data-chip="frontmatter">front matter</span>` +
      `<span class="region-id">#${escapeHtml(name)}</span><span class="provider">${escapeHtml(how)} → ${escapeHtml(target)}</span></header>` +
      `<div class="fm-value">${renderValue(readPointer(doc.generated, target))}</div></section>`
    )
  })
  return (
    `<div class="frontmatter-block"><div class="fm-grid">${blocks.join('')}</div>` +
    `<details><summary>generated front matter (YAML)</summary><pre class="yaml">${escapeHtml(toYaml({ generated: doc.generated }))}</pre></details></div>`
  )
}

function pill(text: string): string {
  return /^(open|doing|done)$/.test(text) ? `<span class="pill pill-${text}">${text}</span>` : escapeHtml(text)
}

function renderDocument(doc: PageDocument): string {
  let html = marked.parse(labelRegions(doc.body, describeRegion), { async: false, gfm: true })
  html = html.replace(/<td>(open|doing|done)<\/td>/g, (_, status: string) => `<td>${pill(status)}</td>`)
  return (
    `<article class="card doc" id="${escapeHtml(doc.path)}" data-path="${escapeHtml(doc.path)}">` +
    `<div class="doc-path">${escapeHtml(doc.path)}</div><div class="markdown">${withAfterTitle(html, renderFrontMatter(doc))}</div></article>`
  )
}

/** `extra` right after the document's first heading (or first, when it has none). */
function withAfterTitle(html: string, extra: string): string {
  const end = html.indexOf('</h1>')
  return end < 0 ? extra + html : html.slice(0, end + 5) + extra + html.slice(end + 5)
}

function renderTeamModule(): string {
  const members = team
    .map(
      (member) =>
        `<li class="member"><span class="avatar">${escapeHtml((member.name ?? '?').slice(0, 1))}</span>` +
        `<span class="member-name">${escapeHtml(member.name ?? '')}</span>` +
        `<span class="member-role">${escapeHtml(member.role ?? '')}</span>` +
        `<span class="member-focus">${escapeHtml(member.focus ?? '')}</span></li>`,
    )
    .join('')
  return (
    `<article class="card doc" id="team-module" data-path="data/team.csv">` +
    `<div class="doc-path">data/team.csv</div><div class="markdown"><h1>CSV as a module</h1>` +
    `<p><code>import team from '../data/team.csv'</code>: the module rule ` +
    `<code>{ include: 'data/*.csv', transform: 'csv_module' }</code> in <code>vite.config.ts</code> runs the ` +
    `Node extension's <code>csv_module</code> transform on the file, which turns it into JavaScript.</p>` +
    `<section class="region" data-kind="module"><header class="region-label"><span class="chip" data-chip="module">module rule</span>` +
    `<span class="provider">Node extension · node-team</span><span class="options"><code>columns = ${escapeHtml(JSON.stringify(columns))}</code></span></header>` +
    `<ul class="members">${members}</ul></section></div></article>`
  )
}

function render(): void {
  const docs = Object.entries(sources)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([file, text]) => parseDocument(file.replace(/^\.\.\//, ''), text))
  const previous: Record<string, string> = import.meta.hot?.data.texts ?? {}
  const texts: Record<string, string> = Object.fromEntries(Object.entries(sources).map(([f, t]) => [f.replace(/^\.\.\//, ''), t]))
  texts['data/team.csv'] = JSON.stringify(team)
  const cards = docs.map(renderDocument)
  cards.splice(2, 0, renderTeamModule())
  const nav = [...docs.map((doc) => [doc.path, doc.title]), ['team-module', 'CSV module']]
    .map(([id, title]) => `<a href="#${escapeHtml(id ?? '')}">${escapeHtml(title ?? '')}</a>`)
    .join('')
  const app = document.querySelector<HTMLDivElement>('#app')!
  app.innerHTML =
    `<header class="top"><div class="brand"><span class="logo">⟨/⟩</span><h1>insitu playground</h1></div>` +
    `<p class="tagline">Markdown regions regenerated in place by <code>vite-plugin-insitu</code>, live in the Vite dev server.</p>` +
    `<nav>${nav}</nav></header>` +
    `<aside class="hint"><strong>Try it.</strong> Open <code>playground/tasks/ship-the-playground.md</code>, change its ` +
    `<code>title:</code> or set <code>status: done</code>, and save. The tables, the counts in the front matter, the word ` +
    `counts and the team's open tasks update in place, without a reload. Edit <code>data/team.csv</code> or commit in git ` +
    `to see the other regions follow. <span class="updated-at" id="updated-at">rendered ${new Date().toLocaleTimeString()}</span></aside>` +
    `<main>${cards.join('')}</main>` +
    `<footer>Documents: <code>playground/docs/*.md</code> · config: <code>playground/insitu.toml</code> · ` +
    `models: <code>insitu/models</code> · templates: <code>insitu/templates</code> · extensions: <code>extensions/</code></footer>`
  const hot = import.meta.hot
  if (hot) {
    for (const [path, text] of Object.entries(texts)) {
      if (previous[path] !== undefined && previous[path] !== text) {
        document.querySelector(`article[data-path="${CSS.escape(path)}"]`)?.classList.add('updated')
      }
    }
    hot.data.texts = texts
  }
}

render()

if (import.meta.hot) import.meta.hot.accept()
