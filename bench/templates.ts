/**
 * Benchmark: template engines measured on the Jinja conformance corpus (pass rate) and on two
 * render workloads (speed), to choose the engine by measurement (issue #15).
 * `npm run bench:templates [-- --candidates=/path/to/folder --runs=N]`.
 *
 * Contract:
 * - Engines: this package's own (src/builtins/jinja.ts: the renderer's environment) always;
 *   `nunjucks`, `minijinja-js` and `@huggingface/jinja` when `--candidates=<folder>` holds them
 *   in its node_modules (they are not dependencies of the plugin: install them in a scratch
 *   folder, `npm install nunjucks@3.2.4 minijinja-js@2 @huggingface/jinja`). Each candidate is
 *   configured as close to the Python implementation's environment as it allows (trim/lstrip
 *   blocks, keep trailing newline, strict undefined, autoescape off, the `json`, `tojson`,
 *   `relative_to` filters, minijinja's `enablePyCompat()`).
 * - Pass rate: every case of test/fixtures/jinja-conformance/corpus.json; an output case passes
 *   when the output is byte-identical to Jinja2's, an error case when the engine raises (any
 *   error: candidates do not report Jinja's lines). Candidates get plain JSON values (integral
 *   floats and big ints become JavaScript numbers: they have no Python number model).
 * - Speed: median milliseconds per render over `--runs` (default 30) after warm-up, of (a) the
 *   generated bench project's list template over 5,000 rows (bench/project-generator.ts), and
 *   (b) a template using loops, filters, a macro and a namespace over 1,000 rows; a cell is
 *   `n/a` when the engine renders it differently from this package's engine (the reference:
 *   it passes the corpus).
 * - `--baseline=<checkout>`: also renders the list template over 5,000 rows through the
 *   plugin's renderer (`createJinjaRenderer`, template file, `rows` shaping, right-trim) of
 *   another checkout of this repository (e.g. `git worktree add /tmp/base <commit>`, its
 *   node_modules linked) and through this one's, alternating, and reports both medians of wall
 *   and CPU time (CPU time is steadier on a busy machine): the before/after of a change.
 * - Rewrites the section `templates` of bench/RESULTS.md.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { createJinjaEnvironment, relativeTo as pluginRelativeTo } from '../src/builtins/jinja.js'
import { createJinjaEngine } from '../src/jinja/engine.js'
import { jinjaToJson, pythonJsonDumps } from '../src/values/python-json.js'
import { benchArgs, cell, machineLine } from './measurements.js'
import { writeSection } from './results-file.js'
import { CORPUS_LOCATION, type CorpusCase as Case, decodeCorpusValue as decode, readCorpus } from '../test/fixtures/jinja-conformance/corpus.js'

interface Candidate {
  name: string
  version: string
  /** Renders `main.j2` of `files` with `context` (`sql`: in the SQL models' environment, no trim/lstrip of blocks). */
  render(files: Record<string, string>, context: Record<string, unknown>, sql?: boolean): string
}

const LOCATION = CORPUS_LOCATION
const RELATIVE_BASE = '/srv/project/templates'

function rowsOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.map((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? item : { value: item }))
  if (value !== null && typeof value === 'object') return [value]
  return [{ value }]
}

function rendererContext(context: Record<string, unknown>): Record<string, unknown> {
  return { rows: rowsOf(context.value), params: context.params ?? {}, this: LOCATION, value: context.value }
}

/** The plugin's own `relative_to` for every candidate, so the speed columns compare engines, not filters. */
const relativeTo = (value: unknown, directory: unknown): string => pluginRelativeTo(RELATIVE_BASE, value, directory)

function ownEngine(): Candidate {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-bench-templates-'))
  process.on('exit', () => fs.rmSync(folder, { recursive: true, force: true }))
  let written = new Map<string, string>()
  const environment = createJinjaEnvironment(folder)
  const models = createJinjaEngine({ trimBlocks: false, lstripBlocks: false })
  return {
    name: 'this package (src/jinja/engine.ts)',
    version: '—',
    render(files, context, sql) {
      if (sql) return models.renderString(files['main.j2']!, context, 'main.sql')
      for (const [name, text] of Object.entries(files)) {
        if (written.get(name) === text) continue
        fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true })
        fs.writeFileSync(path.join(folder, name), text)
        written.set(name, text)
      }
      for (const name of written.keys()) {
        if (!(name in files)) {
          fs.rmSync(path.join(folder, name), { force: true })
          written = new Map([...written].filter(([n]) => n !== name))
        }
      }
      return environment.render('main.j2', context)
    },
  }
}

function loadCandidates(folder: string | undefined): Candidate[] {
  if (!folder) return []
  const require = createRequire(path.join(path.resolve(folder), 'package.json'))
  const version = (name: string): string => {
    try {
      const file = path.join(path.resolve(folder), 'node_modules', name, 'package.json')
      return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version
    } catch {
      return '?'
    }
  }
  const out: Candidate[] = []
  try {
    const nunjucks = require('nunjucks') as NunjucksModule
    let files: Record<string, string> = {}
    const loader = {
      getSource: (name: string) => (name in files ? { src: files[name]!, path: name, noCache: true } : null),
    }
    const env = new nunjucks.Environment(loader as never, { autoescape: false, throwOnUndefined: true, trimBlocks: true, lstripBlocks: true })
    env.addFilter('json', (value: unknown) => pythonJsonDumps(value))
    env.addFilter('tojson', (value: unknown, indent?: unknown) => jinjaToJson(value, typeof indent === 'number' ? indent : null))
    env.addFilter('relative_to', relativeTo)
    const models = new nunjucks.Environment(loader as never, { autoescape: false, throwOnUndefined: true })
    out.push({
      name: 'nunjucks (configured like Jinja)',
      version: version('nunjucks'),
      render(next, context, sql) {
        files = next
        return (sql ? models : env).render('main.j2', context)
      },
    })
  } catch {
    // not installed
  }
  try {
    const minijinja = require('minijinja-js') as { Environment: new () => MiniJinja }
    out.push({
      name: 'minijinja-js (enablePyCompat)',
      version: version('minijinja-js'),
      render(files, context, sql) {
        const env = new minijinja.Environment()
        try {
          env.trimBlocks = !sql
          env.lstripBlocks = !sql
          env.keepTrailingNewline = true
          env.undefinedBehavior = 'strict'
          env.enablePyCompat()
          env.addFilter('json', (value: unknown) => pythonJsonDumps(value))
          env.addFilter('relative_to', relativeTo)
          for (const [name, text] of Object.entries(files)) env.addTemplate(name, text)
          return env.renderTemplate('main.j2', context)
        } finally {
          env.free()
        }
      },
    })
  } catch {
    // not installed
  }
  try {
    const hf = require('@huggingface/jinja') as { Template: new (source: string) => { render(context: unknown): string } }
    out.push({
      name: '@huggingface/jinja',
      version: version('@huggingface/jinja'),
      render(files, context) {
        return new hf.Template(files['main.j2']!).render(context)
      },
    })
  } catch {
    // not installed
  }
  return out
}

interface NunjucksModule {
  Environment: new (
    loader: unknown,
    options: Record<string, unknown>,
  ) => { addFilter(name: string, fn: (...args: never[]) => unknown): void; render(name: string, context: unknown): string }
}

interface MiniJinja {
  trimBlocks: boolean
  lstripBlocks: boolean
  keepTrailingNewline: boolean
  undefinedBehavior: string
  enablePyCompat(): void
  addFilter(name: string, fn: (...args: never[]) => unknown): void
  addTemplate(name: string, source: string): void
  renderTemplate(name: string, context: unknown): string
  free(): void
}

/**
 * Corpus cases that end a candidate's process instead of failing: a `range()` over powers
 * (`range(10**12)`, `range(2**53, 2**53 + 3)`), whose list nunjucks builds in floats until V8
 * aborts. Counted as not passed for candidates, not rendered (this package's ranges are lazy and
 * exact: it renders them).
 */
const FATAL_FOR_CANDIDATES = /range\([^)]*\*\*/

function passRate(candidate: Candidate, cases: Case[], own: boolean): { passed: number; outputs: number; errors: number } {
  let passed = 0
  let outputs = 0
  let errors = 0
  for (const entry of cases) {
    if (!own && FATAL_FOR_CANDIDATES.test(entry.template)) continue
    const files = { ...entry.files, 'main.j2': entry.template }
    const raw = decode(entry.context, !own) as Record<string, unknown>
    const context = entry.renderer ? rendererContext(raw) : entry.sql ? { ref: (model: string) => `__insitu_model_${model}` } : raw
    let output: string | undefined
    let failed = false
    try {
      output = candidate.render(files, context, entry.sql !== undefined)
      if (entry.renderer) output = output.trimEnd()
      if (entry.sql) output = output.replace(/[\s;]+$/, '')
    } catch {
      failed = true
    }
    if ('output' in entry.expected) {
      if (!failed && output === entry.expected.output) {
        passed++
        outputs++
      }
    } else if (failed) {
      passed++
      errors++
    }
  }
  return { passed, outputs, errors }
}

const LIST_TEMPLATE = `{% for row in rows %}
- [{{ row.title }}]({{ row.path | relative_to(this.directory) }}) (priority {{ row.priority }})
{% endfor %}
`
const FEATURE_TEMPLATE = `{% macro badge(status) %}[{{ status | upper }}]{% endmacro %}
{% set ns = namespace(total=0) %}
{% for group in rows | groupby('status') %}
## {{ group.grouper | title }} ({{ group.list | length }})
{% for row in group.list | sort(attribute='priority') %}
{% set ns.total = ns.total + row.priority %}
{{ loop.index }}. {{ badge(row.status) }} {{ row.title | truncate(20) }}{{ (', ' ~ row.tags | join('/')) if row.tags else '' }}
{% endfor %}
{% endfor %}
Total priority: {{ ns.total }}, mean {{ '%.2f' | format(ns.total / (rows | length)) }}
`

type Renderer = { render(input: { template: string; value: unknown; location: typeof LOCATION }): { content: string } }

/** The plugin's renderer of `checkout` (its src/builtins/jinja.ts) against this one's, alternating. */
async function compareRenderers(checkout: string, runs: number): Promise<string[]> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-bench-renderers-'))
  fs.writeFileSync(path.join(folder, 'open.md.j2'), LIST_TEMPLATE)
  const load = async (file: string): Promise<Renderer> => {
    const module = (await import(file)) as { createJinjaRenderer(options: { templatesDir: string; root: string }): Renderer }
    return module.createJinjaRenderer({ templatesDir: folder, root: folder })
  }
  const theirs = await load(path.resolve(checkout, 'src/builtins/jinja.ts'))
  const ours = await load(path.resolve(import.meta.dirname, '../src/builtins/jinja.ts'))
  const value = workloadRows(5000)
  const input = { template: 'open.md.j2', value, location: LOCATION }
  const same = theirs.render(input).content === ours.render(input).content
  const wall = { theirs: [] as number[], ours: [] as number[] }
  const cpu = { theirs: [] as number[], ours: [] as number[] }
  const sides = [['theirs', theirs], ['ours', ours]] as const
  for (let i = 0; i < runs + 3; i++) {
    // Each side goes first every other round: the second of a pair pays for the first's garbage.
    for (const [side, renderer] of i % 2 === 0 ? sides : [sides[1], sides[0]]) {
      const startCpu = process.cpuUsage()
      const start = performance.now()
      renderer.render(input)
      const elapsed = performance.now() - start
      const used = process.cpuUsage(startCpu)
      if (i >= 3) {
        wall[side].push(elapsed)
        cpu[side].push((used.user + used.system) / 1000)
      }
    }
  }
  fs.rmSync(folder, { recursive: true, force: true })
  return [
    `The plugin's renderer (\`createJinjaRenderer\`: the template file, \`rows\`, right-trim) on the list template over 5,000 rows, baseline = \`${path.basename(path.resolve(checkout))}\`, alternating, median of ${runs} (min–max)${same ? '' : ' (the outputs differ)'}:`,
    '',
    '| renderer | wall time | CPU time |',
    '| --- | --- | --- |',
    `| baseline checkout | ${cell(wall.theirs, 'ms')} | ${cell(cpu.theirs, 'ms')} |`,
    `| this checkout | ${cell(wall.ours, 'ms')} | ${cell(cpu.ours, 'ms')} |`,
  ]
}

function workloadRows(count: number): Record<string, unknown>[] {
  const statuses = ['open', 'done', 'blocked', 'review']
  return Array.from({ length: count }, (_, i) => ({
    path: `tasks/t${String(i + 1).padStart(5, '0')}.md`,
    title: `Task number ${i + 1} with a longer title`,
    status: statuses[i % statuses.length],
    priority: (i * 7) % 5,
    tags: i % 3 === 0 ? ['a', 'b'] : [],
  }))
}

function timeRenders(candidate: Candidate, template: string, context: Record<string, unknown>, runs: number, reference: string): string {
  const files = { 'main.j2': template }
  let output: string
  try {
    output = candidate.render(files, context)
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim()
    return `n/a (fails: ${message.slice(0, 70)})`
  }
  if (output !== reference) return 'n/a (renders differently)'
  for (let i = 0; i < 3; i++) candidate.render(files, context)
  const times: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    candidate.render(files, context)
    times.push(performance.now() - start)
  }
  return cell(times, 'ms')
}

// nunjucks reports some include errors asynchronously (through `asap`), after render returned:
// count them instead of crashing the benchmark.
let strayErrors = 0
process.on('uncaughtException', () => {
  strayErrors++
})

const argv = process.argv.slice(2)
const option = (name: string): string | undefined => argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)
const candidatesFolder = option('candidates')
const baseline = option('baseline')
const { runs } = benchArgs(argv.filter((arg) => !arg.startsWith('--candidates=') && !arg.startsWith('--baseline=')), 30)
// The before/after runs first: this checkout's engine modules are the ones the corpus runs
// through below, and after 1,880 different templates its functions are slower on the one
// workload than a fresh baseline's (an A/A run read 1.2 ms slower on this side).
const comparison = baseline ? await compareRenderers(baseline, runs) : []
const corpus = readCorpus()
const own = ownEngine()
const engines = [own, ...loadCandidates(candidatesFolder)]
const listContext = { rows: workloadRows(5000), this: LOCATION }
const featureContext = { rows: workloadRows(1000), this: LOCATION }
const listReference = own.render({ 'main.j2': LIST_TEMPLATE }, listContext)
const featureReference = own.render({ 'main.j2': FEATURE_TEMPLATE }, featureContext)
const total = corpus.cases.length
const outputCases = corpus.cases.filter((entry) => 'output' in entry.expected).length
const lines = [
  `Machine: ${machineLine()}. Corpus: ${total} cases (${outputCases} outputs, ${total - outputCases} errors) rendered by Jinja2 ${corpus.jinja2}; speed: median of ${runs} renders after warm-up (min–max).`,
  '',
  '| engine | version | corpus passed | outputs identical | errors raised | list template, 5,000 rows | loops + filters + macro, 1,000 rows |',
  '| --- | --- | --- | --- | --- | --- | --- |',
]
for (const engine of engines) {
  console.error(`templates: ${engine.name}…`)
  const rate = passRate(engine, corpus.cases, engine === own)
  const list = timeRenders(engine, LIST_TEMPLATE, engine === own ? listContext : (decode(listContext, true) as Record<string, unknown>), runs, listReference)
  const features = timeRenders(engine, FEATURE_TEMPLATE, featureContext, runs, featureReference)
  const percent = ((100 * rate.passed) / total).toFixed(1)
  lines.push(
    `| ${engine.name} | ${engine.version} | ${rate.passed} / ${total} (${percent} %) | ${rate.outputs} / ${outputCases} | ${rate.errors} / ${total - outputCases} | ${list} | ${features} |`,
  )
}
if (engines.length === 1) lines.push('', 'Candidates were not measured in this run (no `--candidates=<folder>`).')
if (strayErrors > 0) lines.push('', `(${strayErrors} error(s) were thrown asynchronously by a candidate after its render returned; not counted as raised.)`)
if (baseline) lines.push('', ...comparison)
const markdown = lines.join('\n')
writeSection('templates', markdown)
console.log(markdown)
