/**
 * The docs site (docs/): its regions are current, it builds, and its links hold.
 *
 * Contract: with the built command line (dist/, built by the global setup, which also installs
 * docs/ from its lockfile and links the plugin into it), `check --root docs` passes (every
 * generated part of the docs matches the code); VitePress then builds the site once into a
 * temporary folder, and in every built page: each internal `href` resolves to a built file (a
 * page, an asset), each `#anchor` exists as an `id` in its target page, and no region marker
 * (`insitu:begin` / `insitu:end`) appears outside code (as a comment or as text).
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
