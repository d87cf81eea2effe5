/**
 * A generated documentation site for bench/docs-build.ts: the pages people build with VitePress
 * or Astro, using insitu as a docs site does. Not a test fixture.
 *
 * Contract:
 * - `generateDocsSite(dir, { tool, pages, withPlugin, pluginOptions })` writes into `dir`
 *   (created) a site of `pages` content pages (numbers zero-padded to 4 digits) spread over
 *   `sections(pages)` folders `sNN/` (50 pages each), plus one `index.md` per section and the
 *   home `index.md`. For `tool: 'vitepress'` the pages sit at the site root with
 *   `.vitepress/config.mjs` (a sidebar of the sections); for `tool: 'astro'` under `src/pages/`
 *   with one layout (`src/layouts/Page.astro`, named in each page's front matter) and
 *   `astro.config.mjs`; for `tool: 'starlight'` (Astro with @astrojs/starlight: not installed in
 *   the fixture so far, so this variant has not run) under `src/content/docs/`, Starlight's
 *   `docs` collection (`src/content.config.ts`) and a sidebar of the sections. `withPlugin` puts `insitu(<pluginOptions>)` (imported as
 *   `vite-plugin-insitu`) into the config's `vite.plugins`; without it the config has no plugin.
 * - Every page has front matter `title`, `status` (draft / review / published, a third each)
 *   and `tags` (one or two words), a heading, prose, a list and a code block. Regions: the home
 *   page lists every page that is not a draft through a template (sql region `pages`), the
 *   pages per status (sql, a table) and the site's folders (tree, depth 1); each section index
 *   lists its own pages through a template (`:insitu_dir`); every 100th page (from page 50) includes
 *   `snippets/example.ts` as a code block and every 100th (from page 100) includes the partial
 *   `parts/notice.md` raw. Every region body is empty on disk (stale: the plugin regenerates
 *   them; `vite-plugin-insitu sync` makes the copy built without it).
 * - Links in templates: VitePress gets the page's relative `.md` path (it rewrites it to
 *   `.html`); Astro and Starlight get the route (`/s01/p0001/`).
 * - Deterministic; every file gets the modification time `GENERATED_MTIME` (old files, as in
 *   bench/project-generator.ts). Returns the site-relative paths of the documents with regions.
 */
import fs from 'node:fs'
import path from 'node:path'
import { GENERATED_MTIME } from './project-generator.js'

/** `starlight`: Astro with @astrojs/starlight, the pages a `docs` content collection. */
export type DocsTool = 'vitepress' | 'astro' | 'starlight'

export interface DocsSiteOptions {
  tool: DocsTool
  /** Number of content pages (section indexes and the home page come on top). */
  pages: number
  /** Whether the config adds insitu to `vite.plugins`. */
  withPlugin: boolean
  /** The plugin's options as JavaScript source (`{ write: true }`). @default '' */
  pluginOptions?: string
}

const PAGES_PER_SECTION = 50
const STATUSES = ['draft', 'review', 'published'] as const
const TAGS = ['api', 'guide', 'howto', 'concepts', 'reference', 'migration', 'faq'] as const

export function sections(pages: number): number {
  return Math.max(1, Math.ceil(pages / PAGES_PER_SECTION))
}

function sectionName(section: number): string {
  return `s${String(section).padStart(2, '0')}`
}

function pageName(i: number): string {
  return `p${String(i).padStart(4, '0')}`
}

/** Folder of the Markdown pages inside the site. */
function pagesFolder(tool: DocsTool): string {
  return { vitepress: '', astro: 'src/pages/', starlight: 'src/content/docs/' }[tool]
}

/** From a page's folder back to the site root (`../`, or `../../../` under src/pages/). */
function toRoot(tool: DocsTool): string {
  return tool === 'vitepress' ? '../' : '../../../'
}

function frontMatter(tool: DocsTool, depth: number, fields: string[]): string[] {
  const layout = tool === 'astro' ? [`layout: ${'../'.repeat(depth + 1)}layouts/Page.astro`] : []
  return ['---', ...fields, ...layout, '---', '']
}

function page(tool: DocsTool, i: number): string {
  const tags = i % 3 === 0 ? [TAGS[i % 7]!, TAGS[(i + 2) % 7]!] : [TAGS[i % 7]!]
  const lines = [
    ...frontMatter(tool, 1, [`title: Page ${i}`, `status: ${STATUSES[i % 3]}`, 'tags:', ...tags.map((tag) => `  - ${tag}`)]),
    `# Page ${i}`,
    '',
    `This page documents topic number ${i}. It reads like a page of a real manual: a sentence on`,
    'what the feature is for, one on when to reach for it, and one on what to avoid. Readers',
    'arrive here from the sidebar, from search, or from a link in another page.',
    '',
    '## Usage',
    '',
    `Call the function with the options you need; every option has a default, so \`configure${i}()\``,
    'alone already works. The options are:',
    '',
    '- `enabled`: turns the feature on or off;',
    '- `limit`: how many items to keep;',
    '- `mode`: `fast` or `thorough`.',
    '',
    '```ts',
    `import { configure${i} } from 'example'`,
    '',
    `configure${i}({ enabled: true, limit: ${i % 50}, mode: 'fast' })`,
    '```',
    '',
    '## Details',
    '',
    'Most projects never change the defaults. When they do, it is usually the limit, for pages',
    'with many items, or the mode, for builds where time matters more than thoroughness.',
    '',
  ]
  if (i % 100 === 50) {
    lines.push('## Example', '', '<!-- insitu:begin include', 'id = "example"', `path = "${toRoot(tool)}snippets/example.ts"`, '-->', '<!-- insitu:end -->', '')
  }
  if (i % 100 === 0) {
    lines.push('## Notice', '', '<!-- insitu:begin include', 'id = "notice"', `path = "${toRoot(tool)}parts/notice.md"`, 'raw = true', '-->', '<!-- insitu:end -->', '')
  }
  return lines.join('\n')
}

function sectionIndex(tool: DocsTool, section: number): string {
  return [
    ...frontMatter(tool, 1, [`title: Section ${section}`, 'status: published', 'tags:', '  - index']),
    `# Section ${section}`,
    '',
    'The pages of this section:',
    '',
    '<!-- insitu:begin sql',
    'id = "pages"',
    'model = "section_pages"',
    'template = "section.md.j2"',
    '-->',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

function home(tool: DocsTool): string {
  return [
    ...frontMatter(tool, 0, ['title: Documentation', 'status: published', 'tags:', '  - index']),
    '# Documentation',
    '',
    'Every page that is not a draft, generated from the pages\' front matter:',
    '',
    '<!-- insitu:begin sql',
    'id = "pages"',
    'model = "pages"',
    'template = "pages.md.j2"',
    '-->',
    '<!-- insitu:end -->',
    '',
    '## Pages per status',
    '',
    '<!-- insitu:begin sql',
    'id = "status"',
    'model = "status_mix"',
    '-->',
    '<!-- insitu:end -->',
    '',
    '## Folders',
    '',
    '<!-- insitu:begin tree',
    'id = "folders"',
    'depth = 1',
    'directories_only = true',
    '-->',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

/** The link of a row in a template: VitePress rewrites relative `.md` links, Astro needs the route. */
function linkExpression(tool: DocsTool): string {
  return tool === 'vitepress' ? 'row.path | relative_to(this.directory)' : `row.path | replace('${pagesFolder(tool)}', '/') | replace('.md', '/')`
}

function insituFiles(tool: DocsTool): Record<string, string> {
  const prefix = pagesFolder(tool)
  const isPage = `path like '${prefix}s%/p%.md'`
  return {
    'insitu.toml': `version = 1\n\n[sources]\ninclude = ["${prefix}index.md", "${prefix}s*/*.md"]\n`,
    'insitu/models/pages.sql': `select title, status, tags, path from documents where ${isPage} and status != 'draft' order by path\n`,
    'insitu/models/status_mix.sql': `select status, count(*) as pages from documents where ${isPage} group by status order by status\n`,
    'insitu/models/section_pages.sql': `select title, status, path from documents where parent = :insitu_dir and name != 'index.md' order by path\n`,
    'insitu/templates/pages.md.j2': `| Page | Status | Tags |\n| --- | --- | --- |\n{% for row in rows %}| [{{ row.title }}]({{ ${linkExpression(tool)} }}) | {{ row.status }} | {{ row.tags | join(', ') }} |\n{% endfor %}`,
    'insitu/templates/section.md.j2': `{% for row in rows %}- [{{ row.title }}]({{ ${linkExpression(tool)} }}) ({{ row.status }})\n{% endfor %}`,
    'snippets/example.ts': "export function configure(options: { enabled?: boolean; limit?: number } = {}): void {\n  console.log('configured', options)\n}\n",
    'parts/notice.md': 'This page describes an option that changed in version 2. See the migration notes before upgrading.\n',
  }
}

function pluginImport(withPlugin: boolean): string {
  return withPlugin ? "import insitu from 'vite-plugin-insitu'\n" : ''
}

function vitepressConfig(pages: number, withPlugin: boolean, pluginOptions: string): string {
  const sidebar = Array.from({ length: sections(pages) }, (_, s) => `{ text: 'Section ${s + 1}', link: '/${sectionName(s + 1)}/' }`)
  return `import { defineConfig } from 'vitepress'
${pluginImport(withPlugin)}
export default defineConfig({
  title: 'Docs benchmark',
  srcExclude: ['parts/**', 'snippets/**', 'insitu/**'],
  themeConfig: { sidebar: [${sidebar.join(', ')}] },
  vite: { plugins: [${withPlugin ? `insitu(${pluginOptions})` : ''}] },
})
`
}

function astroConfig(tool: DocsTool, pages: number, withPlugin: boolean, pluginOptions: string): string {
  const sidebar = Array.from({ length: sections(pages) }, (_, s) => `{ label: 'Section ${s + 1}', link: '/${sectionName(s + 1)}/' }`)
  const starlight = tool === 'starlight'
  return `import { defineConfig } from 'astro/config'
${starlight ? "import starlight from '@astrojs/starlight'\n" : ''}${pluginImport(withPlugin)}
export default defineConfig({
${starlight ? `  integrations: [starlight({ title: 'Docs benchmark', sidebar: [${sidebar.join(', ')}] })],\n` : ''}  vite: { plugins: [${withPlugin ? `insitu(${pluginOptions})` : ''}] },
})
`
}

const ASTRO_LAYOUT = `---
const { frontmatter } = Astro.props
---
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>{frontmatter.title}</title>
  </head>
  <body>
    <nav><a href="/">Documentation</a></nav>
    <main><slot /></main>
    <footer>Status: {frontmatter.status}; tags: {(frontmatter.tags ?? []).join(', ')}</footer>
  </body>
</html>
`

const STARLIGHT_COLLECTIONS = `import { defineCollection } from 'astro:content'
import { docsLoader } from '@astrojs/starlight/loaders'
import { docsSchema } from '@astrojs/starlight/schema'

export const collections = { docs: defineCollection({ loader: docsLoader(), schema: docsSchema() }) }
`

export function generateDocsSite(dir: string, options: DocsSiteOptions): string[] {
  const { tool, pages, withPlugin } = options
  const pluginOptions = options.pluginOptions ?? ''
  const prefix = pagesFolder(tool)
  const files: Record<string, string> = { ...insituFiles(tool) }
  const withRegions: string[] = [`${prefix}index.md`]
  files[`${prefix}index.md`] = home(tool)
  for (let s = 1; s <= sections(pages); s++) {
    const file = `${prefix}${sectionName(s)}/index.md`
    files[file] = sectionIndex(tool, s)
    withRegions.push(file)
  }
  for (let i = 1; i <= pages; i++) {
    const file = `${prefix}${sectionName(Math.ceil(i / PAGES_PER_SECTION))}/${pageName(i)}.md`
    files[file] = page(tool, i)
    if (i % 50 === 0) withRegions.push(file)
  }
  if (tool === 'vitepress') {
    files['.vitepress/config.mjs'] = vitepressConfig(pages, withPlugin, pluginOptions)
  } else {
    files['astro.config.mjs'] = astroConfig(tool, pages, withPlugin, pluginOptions)
    if (tool === 'astro') files['src/layouts/Page.astro'] = ASTRO_LAYOUT
    else files['src/content.config.ts'] = STARLIGHT_COLLECTIONS
  }
  files['package.json'] = `${JSON.stringify({ name: `insitu-bench-${tool}-site`, private: true, type: 'module' }, null, 2)}\n`
  for (const [file, text] of Object.entries(files)) {
    const target = path.join(dir, file)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, text)
    fs.utimesSync(target, GENERATED_MTIME, GENERATED_MTIME)
  }
  return withRegions.sort()
}
