/**
 * Hostile jobs (issue #34, "Every input is bounded" and "no input freezes the server"): a SQL
 * query that never ends, a template that loops without end, a SQL model whose template does, a
 * template that includes itself, a macro that recurses without end, 100,000 nested brackets,
 * `range(10**12)|list`, a string of 10**10 characters, and an extension that floods its stdout with
 * 16 MiB frames, each in its own region of a real project (test/fixtures/plugin-project plus the
 * Node extension test/fixtures/node/flood). (Hostile documents are hostile-documents.test.ts.)
 *
 * - The built command line's `check`, with the default budgets (30 s), reports each at its file and
 *   line with a clear message, checks the other documents (one is stale), exits 1, all within 35 s,
 *   its peak RSS and every sandbox process's under 1 GiB, and leaves no process behind.
 * - A dev server (budgets of 3 s) holding all of them serves a normal page with a SQL region while
 *   every hostile page is requested at once, its event loop turning; each hostile page is served
 *   (its text as on disk) within its budget, and the normal page after it.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { createServer } from 'vite'
import { afterEach, describe, expect, it } from 'vitest'
import insitu from '../../src/index.js'
import { liveExtensionPids } from '../../src/host/process.js'
import { liveSandboxPids } from '../../src/sandbox/process-pool.js'
import { processGroupMembers } from '../clients/client-site.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { loadRaw, recordingLogger } from './dev-server-harness.js'
import { copyProject, removeProjects, TASKS_DOC } from './plugin-project.js'

const BIN = path.resolve(import.meta.dirname, '../../dist/cli/bin.js')
const FLOOD = path.resolve(import.meta.dirname, '../fixtures/node/flood')
const MAX_RSS_KIB = 1024 * 1024

afterEach(() => {
  removeProjects()
  removeTempDirs()
})

/** Each hostile job: the document holding it, the template or model it uses, and what its failure says. */
const TEMPLATES: Record<string, string> = {
  'forever.md.j2': '{% for i in range(10**12) %}{% endfor %}\n',
  'self.md.j2': '{% include "self.md.j2" %}\n',
  'macro.md.j2': '{% macro walk(n) %}{{ walk(n + 1) }}{% endmacro %}{{ walk(0) }}\n',
  'brackets.md.j2': `{{ ${'('.repeat(100_000)}1${')'.repeat(100_000)} }}\n`,
  'range.md.j2': '{{ range(10**12)|list }}\n',
  'string.md.j2': "{{ 'x' * 10**10 }}\n",
}
const MODELS: Record<string, string> = {
  'forever.sql': 'with recursive n(i) as (select 1 union all select i + 1 from n) select count(*) as c from n\n',
  'slowmodel.sql': 'select {% for i in range(10**12) %}{% endfor %}1 as x\n',
}

const region = (kind: string, options: string) => `<!-- insitu:begin ${kind}\n${options}\n-->\n<!-- insitu:end -->\n`

/** Document → its regions (each begins at line 3 + 6 × its index). */
const DOCUMENTS: Record<string, string[]> = {
  'docs/hostile-query.md': [region('sql', 'model = "forever"')],
  'docs/hostile-template.md': [region('sql', 'model = "all_tasks"\ntemplate = "forever.md.j2"')],
  'docs/hostile-model.md': [region('sql', 'model = "slowmodel"')],
  'docs/hostile-flood.md': [region('flood', 'id = "flood"')],
  'docs/hostile-quick.md': ['self', 'macro', 'brackets', 'range', 'string'].map((name) => region('sql', `model = "all_tasks"\ntemplate = "${name}.md.j2"`)),
}

/** What `check` prints for each hostile region (`<file>:<line>: error: <message>`), as patterns of the message. */
function expectedFailures(budget: string): [string, number, RegExp][] {
  const sql = (template: string) => new RegExp(`^transform sql failed in sql-\\w+: template ${template.replace('.', '\\.')}: `)
  return [
    ['docs/hostile-flood.md', 3, /^transform flood \(extension probe\/flood\) failed in flood: extension probe\/flood broke the protocol: probe\/flood sent 64 MiB of messages nothing asked for \(the last: a response for id 1000000000\)/],
    ['docs/hostile-model.md', 3, new RegExp(`^transform sql failed in sql-\\w+: insitu/models/slowmodel\\.sql:1: its template ran longer than ${budget}$`)],
    ['docs/hostile-query.md', 3, new RegExp(`^transform sql failed in sql-\\w+: insitu/models/forever\\.sql: the query ran longer than ${budget}$`)],
    ['docs/hostile-quick.md', 3, new RegExp(`${sql('self.md.j2').source}template 'self\\.md\\.j2' includes itself more than 1000 levels deep`)],
    ['docs/hostile-quick.md', 9, new RegExp(`${sql('macro.md.j2').source}macro 'walk' called itself more than 500 levels deep`)],
    ['docs/hostile-quick.md', 15, new RegExp(`${sql('brackets.md.j2').source}expressions nest more than 500 levels deep`)],
    ['docs/hostile-quick.md', 21, new RegExp(`${sql('range.md.j2').source}.*would make a list of 1000000000000 items, more than the limit of 16777216`)],
    ['docs/hostile-quick.md', 27, new RegExp(`${sql('string.md.j2').source}.*would make a string of 10000000000 characters, more than the limit of 16777216`)],
    ['docs/hostile-template.md', 3, new RegExp(`${sql('forever.md.j2').source}the render ran longer than ${budget} \\(line 1, column \\d+\\)$`)],
  ]
}

function hostileProject(): string {
  const root = copyProject()
  fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(FLOOD)}\n`)
  for (const [name, text] of Object.entries(TEMPLATES)) fs.writeFileSync(path.join(root, 'insitu/templates', name), text)
  for (const [name, text] of Object.entries(MODELS)) fs.writeFileSync(path.join(root, 'insitu/models', name), text)
  for (const [rel, regions] of Object.entries(DOCUMENTS)) fs.writeFileSync(path.join(root, rel), `# Hostile\n\n${regions.join('\n')}`)
  // The fixture's own broken document fails in its own way: out of the way here.
  fs.rmSync(path.join(root, 'docs/broken.md'))
  return root
}

/** The VmRSS (KiB) of every live process in `group`. */
function groupRssKiB(group: number): number[] {
  return processGroupMembers(group).flatMap((pid) => {
    try {
      const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
      return match ? [Number(match[1])] : []
    } catch {
      return []
    }
  })
}

describe('hostile jobs', () => {
  it('check, with the default budgets, reports each at its file and line within 35 s, under 1 GiB per process, and leaves nothing running', async () => {
    const root = hostileProject()
    fs.writeFileSync(path.join(root, 'tasks/alpha.md'), fs.readFileSync(path.join(root, 'tasks/alpha.md'), 'utf8').replace('status: open', 'status: blocked'))
    const probe = path.join(tempDir(), 'peak-rss.mjs')
    fs.writeFileSync(probe, `import fs from 'node:fs'\nprocess.on('exit', () => fs.writeFileSync(${JSON.stringify(`${probe}.kib`)}, String(process.resourceUsage().maxRSS)))\n`)
    const started = performance.now()
    const child = spawn(process.execPath, ['--import', probe, BIN, 'check'], { cwd: root, detached: true, env: { ...process.env, FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)))
    child.stderr.on('data', () => {})
    let peakChildKiB = 0
    const sampler = setInterval(() => (peakChildKiB = Math.max(peakChildKiB, ...groupRssKiB(child.pid!))), 100)
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    clearInterval(sampler)
    const ms = performance.now() - started

    expect(code).toBe(1)
    expect(ms).toBeLessThan(35_000)
    expect(Number(fs.readFileSync(`${probe}.kib`, 'utf8'))).toBeLessThan(MAX_RSS_KIB)
    expect(peakChildKiB).toBeLessThan(MAX_RSS_KIB)
    const reported = stdout
      .split('\n')
      .filter((line) => line.includes(': error: '))
      .map((line) => /^(\S+):(\d+): error: (.*)$/.exec(line)!)
      .map((match) => [match[1]!, Number(match[2]), match[3]!] as const)
      .sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1])
    const expected = expectedFailures('30 s')
    expect(reported.map(([file, line]) => `${file}:${line}`)).toEqual(expected.map(([file, line]) => `${file}:${line}`))
    reported.forEach(([, , message], i) => expect(message).toMatch(expected[i]![2]))
    // The other documents were checked all the same: the stale one is reported.
    expect(stdout).toMatch(/^docs\/tasks\.md:3 region all is stale$/m)
    // Nothing left behind: no extension, no sandbox process.
    await expect.poll(() => processGroupMembers(child.pid!), { timeout: 5_000 }).toEqual([])
  }, 60_000)

  it('a dev server serves other pages while every hostile page runs, and each hostile page within its budget', async () => {
    const root = hostileProject()
    const logs: string[] = []
    const server = await createServer({
      root,
      configFile: false,
      customLogger: recordingLogger((entry) => logs.push(entry.message)),
      plugins: [insitu({ timeout: 3_000, renderTimeout: 3_000 })],
      server: { port: 0, watch: { usePolling: true, interval: 50 } },
    })
    try {
      const client = server.environments.client
      expect(await loadRaw(client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('open', 'done'))
      let lag = 0
      let last = performance.now()
      const ticker = setInterval(() => {
        const now = performance.now()
        lag = Math.max(lag, now - last - 20)
        last = now
      }, 20)
      const started = performance.now()
      const hostile = Object.keys(DOCUMENTS).map(async (rel) => {
        const text = await loadRaw(client, `/${rel}?raw`)
        return { rel, ms: performance.now() - started, same: text === fs.readFileSync(path.join(root, rel), 'utf8') }
      })
      // Meanwhile, a page with a SQL region: its query goes to a sandbox process no runaway holds,
      // so it is served long before the runaways' budget (on 2 cores the runaways take most of the CPU).
      await new Promise((resolve) => setTimeout(resolve, 500))
      const updates: number[] = []
      for (const status of ['s1', 's22', 's333']) {
        const asked = performance.now()
        fs.writeFileSync(path.join(root, 'tasks/alpha.md'), fs.readFileSync(path.join(root, 'tasks/alpha.md'), 'utf8').replace(/status: \w+/, `status: ${status}`))
        await expect.poll(() => loadRaw(client, '/docs/tasks.md?raw'), { timeout: 5_000, interval: 50 }).toBe(TASKS_DOC(status, 'done'))
        updates.push(performance.now() - asked)
      }
      const served = await Promise.all(hostile)
      expect(Math.min(...updates)).toBeLessThan(3_000)
      clearInterval(ticker)
      for (const page of served) {
        expect(page.same, page.rel).toBe(true)
        expect(page.ms, page.rel).toBeLessThan(3_000 + 3_000)
      }
      expect(lag).toBeLessThan(1_000)
      // Told once each, at its file and line.
      for (const [file, line] of expectedFailures('3 s')) expect(logs.filter((m) => m.startsWith(`insitu: ${file}:${line}: `))).toHaveLength(1)
      expect(await loadRaw(client, '/docs/tasks.md?raw')).toBe(TASKS_DOC('s333', 'done'))
    } finally {
      await server.close()
    }
    expect(liveExtensionPids()).toEqual([])
    await expect.poll(liveSandboxPids, { timeout: 5_000 }).toEqual([])
  }, 60_000)
})
