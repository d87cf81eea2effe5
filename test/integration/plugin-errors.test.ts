/**
 * How the errors a user meets are printed: a real Vite dev server (and `build`) on a copy of
 * test/fixtures/plugin-project, with Vite's own logger writing to a captured console, so the
 * test sees exactly what the terminal shows.
 *
 * Each failing module is printed once (Vite would print it when it pre-transforms an import and
 * again for each request), with its file:line and no stack trace; the error has no doubled
 * plugin name (Vite adds `[plugin:vite-plugin-insitu]`). A bad `insitu.toml` is printed once,
 * at its key's line, however many managed modules fail with it.
 *
 * One coordinate system (issue #18): the overlay's payload (`loc`, `frame`), Vite's `File:` line
 * and the message name the same 1-based line and column, the one an editor opens; a SQL error
 * points at the model file. The real `vite build` command line prints a user error as its
 * message, location and frame (or the check report) and nothing else.
 */
import { execFile } from 'node:child_process'
import { Console } from 'node:console'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { build, createLogger, createServer, type HotPayload, type Logger, type ViteDevServer } from 'vite'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { parseRegions } from '../../src/documents/regions.js'
import insitu from '../../src/index.js'
import { type ChildRun, copyProject, editFile, removeProjects } from './plugin-project.js'
import { recordPayloads } from './dev-server-harness.js'

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g
const WAIT = { timeout: 10_000 }

let root: string
let server: ViteDevServer | undefined
/** Everything Vite's logger printed, ANSI colours stripped. */
let output = ''
const changed = new Set<string>()

/** Vite's real logger (createLogger), printing to a console that writes into `output`. */
function capturingLogger(): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      output += String(chunk).replace(ANSI, '')
      done()
    },
  })
  return createLogger('info', { console: new Console({ stdout: sink, stderr: sink }), allowClearScreen: false })
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1
}

const MISSING_DOC = '# Missing\n\n<!-- insitu:begin include\npath = "nope.txt"\n-->\n<!-- insitu:end -->\n'
const REPORT_DOC = '# Report\n\n\n<!-- insitu:begin sql\nmodel = "bad"\n-->\n<!-- insitu:end -->\n'
/** The (default) id of a document's only region. */
const idOf = (text: string): string => parseRegions(text)[0]!.id
const MISSING_MESSAGE = `transform include failed in ${idOf(MISSING_DOC)}: file not found: docs/nope.txt`
const SQL_MESSAGE = `transform sql failed in ${idOf(REPORT_DOC)}: insitu/models/bad.sql:2: no such column: stauts`

beforeEach(() => {
  root = copyProject()
  output = ''
  changed.clear()
  fs.writeFileSync(path.join(root, 'docs/missing.md'), MISSING_DOC)
  fs.writeFileSync(path.join(root, 'docs/report.md'), REPORT_DOC)
  fs.writeFileSync(path.join(root, 'insitu/models/bad.sql'), 'select title,\n  stauts\nfrom documents\n')
  fs.writeFileSync(
    path.join(root, 'main.js'),
    "import missing from './docs/missing.md?raw'\nimport report from './docs/report.md?raw'\nimport tasks from './docs/tasks.md?raw'\nconsole.log(missing, report, tasks)\n",
  )
})

afterEach(async () => {
  try {
    await server?.close()
    server = undefined
  } finally {
    removeProjects()
  }
})

async function startServer(): Promise<string> {
  server = await createServer({
    root,
    configFile: false,
    customLogger: capturingLogger(),
    plugins: [insitu()],
    server: { port: 0, watch: { usePolling: true, interval: 50 } },
  })
  server.watcher.on('change', (file) => changed.add(path.resolve(root, file)))
  await server.listen()
  const address = server.httpServer?.address()
  if (!address || typeof address === 'string') throw new Error('the server is not listening on a port')
  return `http://localhost:${address.port}`
}

/** What the browser does: the entry (Vite pre-transforms its imports), then each import. */
async function openApp(base: string): Promise<number[]> {
  const statuses = [(await fetch(`${base}/main.js`)).status]
  for (const doc of ['missing', 'report', 'tasks']) {
    const response = await fetch(`${base}/docs/${doc}.md?import&raw`)
    await response.text()
    statuses.push(response.status)
  }
  return statuses
}

async function transformError(url: string): Promise<Error & { loc?: unknown; plugin?: unknown }> {
  const error = await server!.environments.client.transformRequest(url).then(
    () => null,
    (failure: unknown) => failure as Error & { loc?: unknown; plugin?: unknown },
  )
  if (!error) throw new Error(`${url} did not fail`)
  return error
}

describe('dev server', () => {
  test('prints each failing module once, with file:line, no stack trace and no doubled plugin name', async () => {
    const base = await startServer()
    expect(await openApp(base)).toEqual([200, 500, 500, 200])
    // A second page load (same files): printed already.
    expect(await openApp(base)).toEqual([200, 500, 500, 200])

    const missing = path.join(root, 'docs/missing.md')
    const model = path.join(root, 'insitu/models/bad.sql')
    expect(occurrences(output, MISSING_MESSAGE)).toBe(1)
    expect(occurrences(output, SQL_MESSAGE)).toBe(1)
    expect(output).toContain(`  File: ${missing}:3:1\n`)
    // The SQL error points at the model file's line (its first non-blank column), not the document.
    expect(output).toContain(`  File: ${model}:2:3\n`)
    expect(output).not.toMatch(/^\s+at /m)
    expect(output).not.toContain('vite-plugin-insitu: ')

    const error = await transformError('/docs/missing.md?raw')
    expect(error.message).toBe(MISSING_MESSAGE)
    expect(error.plugin).toBe('vite-plugin-insitu')
    expect(error.loc).toEqual({ file: missing, line: 3, column: 1 })
    expect(error.stack).toBe('')

    // After a change the next failure is news again: printed once more.
    editFile(root, 'docs/missing.md', '# Missing', '# Still missing')
    await expect.poll(() => changed.has(missing), WAIT).toBe(true)
    const again = await fetch(`${base}/docs/missing.md?import&raw`)
    await again.text()
    expect(again.status).toBe(500)
    expect(occurrences(output, MISSING_MESSAGE)).toBe(2)
  })

  test('a bad insitu.toml value is printed once, at its key, and fails managed modules without the plugin name', async () => {
    const config = path.join(root, 'insitu.toml')
    const lines = fs.readFileSync(config, 'utf8').split('\n').length
    fs.appendFileSync(config, '\n[watch]\nstep_ms = 5\ndebounce_ms = -1\n')
    const line = lines + 3
    const message = `${config}:${line}:1: watch.debounce_ms: must be >= 0`
    const base = await startServer()
    expect(await openApp(base)).toEqual([200, 500, 500, 500])
    await expect.poll(() => occurrences(output, message), WAIT).toBe(1)
    expect(output).toContain(`[vite] vite-plugin-insitu: ${message}\n`)
    expect(output).not.toMatch(/^\s+at /m)

    const error = await transformError('/docs/tasks.md?raw')
    expect(error.message).toBe(message)
    expect(error.loc).toEqual({ file: config, line, column: 1 })
    expect(occurrences(output, message)).toBe(1)
  })
})

describe('one coordinate system', () => {
  test("the overlay's loc and frame, Vite's File: line and the message name the same line and column", async () => {
    const doc = path.join(root, 'docs/toml.md')
    // Line 4, column 8: the unquoted value.
    fs.writeFileSync(doc, '# TOML\n\n<!-- insitu:begin include\npath = ../snippets/x.txt\n-->\n<!-- insitu:end -->\n')
    const base = await startServer()
    const payloads: HotPayload[] = []
    recordPayloads(server!.environments.client, () => payloads)
    const overlay = async (url: string) => {
      payloads.length = 0
      const response = await fetch(`${base}${url}`)
      await response.text()
      expect(response.status).toBe(500)
      const sent = payloads.find((p) => p.type === 'error')
      if (sent?.type !== 'error') throw new Error(`no error payload for ${url}`)
      return sent.err as { message: string; loc?: { file: string; line: number; column: number }; frame?: string }
    }
    /** The column the frame's caret points at (1-based), and the text of the frame line it points into. */
    const caret = (frame: string, line: number) => {
      const lines = frame.split('\n')
      const index = lines.findIndex((l) => new RegExp(`^ *${line} \\| `).test(l))
      const prefix = lines[index]!.indexOf('| ') + 2
      return { column: lines[index + 1]!.indexOf('^') - prefix + 1, text: lines[index]!.slice(prefix) }
    }

    const toml = await overlay('/docs/toml.md?import&raw')
    expect(toml.message).toBe(
      'invalid TOML in Insitu region at line 3: invalid value (line 4, column 8); strings need quotes: path = "../snippets/x.txt"',
    )
    const [, line, column] = /\(line (\d+), column (\d+)\)/.exec(toml.message)!.map(Number) as [number, number, number]
    expect(toml.loc).toEqual({ file: doc, line, column })
    expect(caret(toml.frame!, line)).toEqual({ column, text: 'path = ../snippets/x.txt' })
    expect('path = ../snippets/x.txt'.slice(column - 1)).toBe('../snippets/x.txt')
    expect(output).toContain(`  File: ${doc}:${line}:${column}\n`)

    // A SQL error links the model file, at the line the message names.
    const sql = await overlay('/docs/report.md?import&raw')
    const model = path.join(root, 'insitu/models/bad.sql')
    expect(sql.message).toBe(SQL_MESSAGE)
    expect(sql.loc).toEqual({ file: model, line: 2, column: 3 })
    expect(caret(sql.frame!, 2)).toEqual({ column: 3, text: '  stauts' })
    expect(output).toContain(`  File: ${model}:2:3\n`)
  })
})

describe('build', () => {
  test('fails with the message once, at file:line, without our stack frames', async () => {
    fs.rmSync(path.join(root, 'docs/report.md'))
    fs.writeFileSync(path.join(root, 'main.js'), "import missing from './docs/missing.md?raw'\nconsole.log(missing)\n")
    const error = await build({
      root,
      configFile: false,
      customLogger: capturingLogger(),
      plugins: [insitu()],
      build: { outDir: path.join(root, 'dist') },
    }).then(
      () => null,
      (failure: unknown) => failure as Error,
    )
    expect(error).toBeInstanceOf(Error)
    const missing = path.join(root, 'docs/missing.md')
    expect(error!.message).toContain(`[plugin vite-plugin-insitu] ${missing}:3:1\nError: ${MISSING_MESSAGE}`)
    expect(occurrences(String(error!.stack), MISSING_MESSAGE)).toBe(1)
    expect(String(error!.stack)).not.toContain('diagnostics')
    expect(String(error!.stack)).not.toContain('vite-plugin-insitu: ')
  })
})

describe('the vite build command line', () => {
  const require = createRequire(import.meta.url)
  const VITE_BIN = path.join(path.dirname(require.resolve('vite/package.json')), 'bin/vite.js')
  const PLUGIN = fileURLToPath(new URL('../../src/index.ts', import.meta.url))

  /** `vite build` in the project copy (a config that imports the plugin's source), as a user runs it. */
  function viteBuild(env: Record<string, string> = {}): Promise<ChildRun> {
    fs.writeFileSync(
      path.join(root, 'vite.config.mts'),
      `import insitu from ${JSON.stringify(PLUGIN)}\nexport default { plugins: [insitu()], build: { outDir: 'dist' } }\n`,
    )
    return new Promise((resolve) => {
      execFile(process.execPath, [VITE_BIN, 'build'], { cwd: root, env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1', ...env } }, (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr: stderr.replace(ANSI, '') }),
      )
    })
  }

  test('a failing region prints its message, location and frame, and nothing else', async () => {
    fs.rmSync(path.join(root, 'docs/report.md'))
    fs.writeFileSync(path.join(root, 'main.js'), "import missing from './docs/missing.md?raw'\nconsole.log(missing)\n")
    const run = await viteBuild()
    expect(run.code).toBe(1)
    const missing = path.join(root, 'docs/missing.md')
    expect(run.stderr.slice(run.stderr.indexOf('error during build:'))).toBe(
      [
        'error during build:',
        `[vite-plugin-insitu] ${missing}:3:1`,
        MISSING_MESSAGE,
        '1 | # Missing',
        '2 |',
        '3 | <!-- insitu:begin include',
        '  | ^',
        '4 | path = "nope.txt"',
        '5 | -->',
        '',
      ].join('\n'),
    )
  })

  test('check mode prints the report (each stale region with its diff), and nothing else', async () => {
    fs.rmSync(path.join(root, 'docs/report.md'))
    fs.rmSync(path.join(root, 'docs/missing.md'))
    editFile(root, 'tasks/alpha.md', 'status: open', 'status: blocked')
    const run = await viteBuild({ INSITU_CHECK: '1' })
    expect(run.code).toBe(1)
    const error = run.stderr.slice(run.stderr.indexOf('error during build:'))
    const lines = error.trimEnd().split('\n')
    expect(lines.slice(0, 3)).toEqual(['error during build:', '[vite-plugin-insitu]', 'insitu check failed:'])
    expect(error).toContain('docs/tasks.md:3 region all is stale\n    @@ -0,0 +1,2 @@\n    +- [Alpha](../tasks/alpha.md) — blocked\n')
    expect(lines.at(-1)).toMatch(/^\d+ of \d+ documents stale \(\d+ stale jobs\), 1 failed$/)
    // Nothing but the report: stale jobs with their diffs, the failed job, the summary.
    for (const line of lines.slice(3, -1)) expect(line).toMatch(/^(?:\S+:\d+ region \S+ is stale| {4}.*|\S+:\d+: error: .*)$/)
    expect(error).not.toMatch(/RolldownError|^\s+at |Getter|Caused by/m)
  })
})
