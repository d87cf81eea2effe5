/**
 * The docs site (docs/): its regions are current, it builds, and its links hold.
 *
 * Contract: with the built command line (dist/, built by the global setup, which also installs
 * docs/ from its lockfile and links the plugin into it), `check --root docs` passes (every
 * generated part of the docs matches the code); VitePress then builds the site once into a
 * temporary folder, and in every built page: each internal `href` resolves to a built file (a
 * page, an asset), each `#anchor` exists as an `id` in its target page, and no region marker
 * (`insitu:begin` / `insitu:end`) appears outside code (as a comment or as text).
 *
 * The Markdown sources are checked too, without the build, as GitHub shows them: in README.md,
 * CONTRIBUTING.md and every .md file under docs/ (not node_modules/ or .vitepress/), every
 * relative link `[x](path#anchor)` (and `[x]: path` definition) outside fenced code, inline code
 * and HTML comments (a region's body is Markdown, so its links count) names an existing file or
 * folder, and an `#anchor` into a Markdown file is one of its headings' GitHub slugs.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const DOCS = path.join(REPO, 'docs')

function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const failed = error as { status?: number; stdout?: string; stderr?: string }
    throw new Error(`${path.basename(command)} ${args.join(' ')} exited with ${failed.status}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`)
  }
}

/** Every file under `folder`, relative, POSIX. */
function filesOf(folder: string): string[] {
  return fs.readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
}

/** The built file a site path names (`/guide/x.html`, `/guide/`, `/`), or undefined. */
function builtFile(out: string, sitePath: string): string | undefined {
  const clean = decodeURIComponent(sitePath).replace(/^\//, '')
  const candidates = clean === '' || clean.endsWith('/') ? [`${clean}index.html`] : [clean, `${clean}.html`]
  return candidates.find((candidate) => fs.existsSync(path.join(out, candidate)) && fs.statSync(path.join(out, candidate)).isFile())
}

function idsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&')))
}

/** The page's text outside `<pre>`, `<code>`, `<script>` and `<style>`. */
function proseOf(html: string): string {
  return html.replace(/<(pre|code|script|style)\b[\s\S]*?<\/\1>/g, '')
}

/**
 * The anchors GitHub gives a Markdown file's ATX headings (outside fenced code and front matter):
 * the heading's text (code spans, link text and emphasis as shown), lowercased, everything but
 * letters, digits, spaces, hyphens and underscores removed, each space a hyphen; a repeated slug
 * gets `-1`, `-2`, … Also the `id` / `name` of `<a>` tags, which GitHub keeps.
 */
function githubSlugs(markdown: string): Set<string> {
  const slugs = new Set<string>()
  const seen = new Map<string, number>()
  for (const line of proseLines(markdown)) {
    for (const m of line.matchAll(/<a\s[^>]*\b(?:id|name)="([^"]+)"/g)) slugs.add(m[1]!)
    const heading = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line)
    if (!heading) continue
    const text = (heading[1] ?? '')
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '')
    const base = text.toLowerCase().replace(/[^\p{L}\p{M}\p{N} _-]/gu, '').replace(/ /g, '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    slugs.add(count === 0 ? base : `${base}-${count}`)
  }
  return slugs
}

/** The lines of a Markdown text outside front matter and fenced code blocks. */
function proseLines(markdown: string): string[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n')
  let start = 0
  if (lines[0] === '---') {
    const end = lines.indexOf('---', 1)
    if (end > 0) start = end + 1
  }
  const out: string[] = []
  let fence: string | null = null
  for (const line of lines.slice(start)) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === null && marker && !(marker[0] === '`' && line.slice(line.indexOf(marker) + marker.length).includes('`'))) {
      fence = marker
      out.push('')
    } else if (fence !== null) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && /^ {0,3}[`~]+\s*$/.test(line)) fence = null
      out.push('')
    } else out.push(line)
  }
  return out
}

/** Every link target of a Markdown text outside fenced code, inline code and HTML comments, with its line. */
function markdownLinks(markdown: string): { line: number; target: string }[] {
  // Blank out comments and code spans (keeping line breaks), so line numbers still hold.
  const prose = proseLines(markdown)
    .join('\n')
    .replace(/<!--[\s\S]*?-->/g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n)[\s\S])+?)(?<!`)\1(?!`)/g, (span) => span.replace(/[^\n]/g, 'x'))
  const links: { line: number; target: string }[] = []
  const lineOf = (index: number) => prose.slice(0, index).split('\n').length
  for (const m of prose.matchAll(/\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    links.push({ line: lineOf(m.index), target: m[1]!.replace(/^<|>$/g, '') })
  }
  for (const m of prose.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+)/gm)) {
    links.push({ line: lineOf(m.index), target: m[1]!.replace(/^<|>$/g, '') })
  }
  return links
}

/** The broken relative links of the Markdown files `files` (repository-relative), as `file:line: target (why)`. */
function brokenSourceLinks(files: string[]): string[] {
  const texts = new Map<string, string>()
  const textOf = (file: string) => {
    if (!texts.has(file)) texts.set(file, fs.readFileSync(path.join(REPO, file), 'utf8'))
    return texts.get(file)!
  }
  const slugs = new Map<string, Set<string>>()
  const broken: string[] = []
  for (const file of files) {
    for (const { line, target } of markdownLinks(textOf(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) continue
      const hash = target.indexOf('#')
      const rawPath = hash < 0 ? target : target.slice(0, hash)
      const anchor = hash < 0 ? '' : decodeURIComponent(target.slice(hash + 1))
      const resolved = rawPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURIComponent(rawPath)))
      const where = `${file}:${line}: ${target}`
      if (resolved.startsWith('../') || !fs.existsSync(path.join(REPO, resolved))) {
        broken.push(`${where} (no such file)`)
        continue
      }
      if (!anchor || !resolved.endsWith('.md')) continue
      if (!slugs.has(resolved)) slugs.set(resolved, githubSlugs(textOf(resolved)))
      if (!slugs.get(resolved)!.has(anchor)) broken.push(`${where} (no heading "${anchor}" in ${resolved})`)
    }
  }
  return broken
}

describe('docs sources', () => {
  it('gives headings the anchors GitHub gives them', () => {
    const text = ['# `respect_gitignore` and the [lock](x.md)', '## A, b: c?', '## A, b: c?', '```', '# not a heading', '```', '### Why did this re-run'].join('\n')
    expect([...githubSlugs(text)]).toEqual(['respect_gitignore-and-the-lock', 'a-b-c', 'a-b-c-1', 'why-did-this-re-run'])
  })

  it('finds links outside code and comments, region bodies included', () => {
    const text = ['[a](a.md#x) `[b](b.md)` ``[`x`](g.md)``', '```md', '[c](c.md)', '```', '<!-- insitu:begin x', '[d](d.md)', '-->', '[e](./e.md)', '<!-- insitu:end -->', '[f]: f.md'].join('\n')
    expect(markdownLinks(text)).toEqual([
      { line: 1, target: 'a.md#x' },
      { line: 8, target: './e.md' },
      { line: 10, target: 'f.md' },
    ])
  })

  it('resolves every relative link and anchor of README.md, CONTRIBUTING.md and docs/', () => {
    const docs = filesOf(DOCS)
      .filter((f) => f.endsWith('.md') && !/(^|\/)(node_modules|\.vitepress)\//.test(f))
      .map((f) => `docs/${f}`)
    const files = ['README.md', 'CONTRIBUTING.md', ...docs]
    expect(docs.length).toBeGreaterThan(20)
    expect(brokenSourceLinks(files)).toEqual([])
  })
})

describe('docs site', () => {
  let out: string
  const pages = new Map<string, string>()

  beforeAll(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-docs-'))
    run(path.join(DOCS, 'node_modules', '.bin', 'vitepress'), ['build', DOCS, '--outDir', out])
    for (const file of filesOf(out).filter((f) => f.endsWith('.html'))) pages.set(file, fs.readFileSync(path.join(out, file), 'utf8'))
  }, 240_000)

  afterAll(() => {
    if (out) fs.rmSync(out, { recursive: true, force: true })
  })

  it('has current regions: check --root docs passes', () => {
    const report = run(process.execPath, [path.join(REPO, 'dist/cli/bin.js'), 'check', '--root', 'docs'])
    expect(report).toMatch(/documents current/)
  }, 120_000)

  it('builds a page for every Markdown page', () => {
    const sources = filesOf(DOCS).filter((f) => f.endsWith('.md') && !/^(node_modules|insitu|\.vitepress)\//.test(f))
    expect(sources.length).toBeGreaterThan(20)
    const missing = sources.map((f) => f.replace(/\.md$/, '.html')).filter((f) => !pages.has(f))
    expect(missing).toEqual([])
  })

  it('resolves every internal link and anchor of every built page', () => {
    const broken: string[] = []
    const ids = new Map([...pages].map(([file, html]) => [file, idsOf(html)]))
    for (const [file, html] of pages) {
      for (const [, raw] of html.matchAll(/\shref="([^"]*)"/g)) {
        const href = raw!.replace(/&amp;/g, '&')
        if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//') || href === '#') continue
        const url = new URL(href, `https://site.invalid/${file}`)
        const target = url.pathname === `/${file}` ? file : builtFile(out, url.pathname)
        if (!target) {
          broken.push(`${file}: ${href} (no such file)`)
          continue
        }
        const anchor = decodeURIComponent(url.hash.slice(1))
        if (anchor && !ids.get(target)?.has(anchor)) broken.push(`${file}: ${href} (no id "${anchor}" in ${target})`)
      }
    }
    expect(broken).toEqual([])
  })

  it('lets no region marker reach the HTML', () => {
    const leaks = [...pages]
      .filter(([, html]) => /insitu:(begin|end)/.test(proseOf(html)))
      .map(([file, html]) => `${file}: ${/.{0,60}insitu:(begin|end).{0,60}/.exec(proseOf(html))![0]}`)
    expect(leaks).toEqual([])
  })
})
