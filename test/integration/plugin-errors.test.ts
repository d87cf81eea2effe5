/**
 * How the errors a user meets are printed: a real Vite dev server (and `build`) on a copy of
 * test/fixtures/plugin-project, with Vite's own logger writing to a captured console, so the
 * test sees exactly what the terminal shows.
 *
 * A dev server serves a document with a failing region (issue #34) and prints each failure
 * once, when it happens, with its file:line, frame and no stack trace, and no doubled plugin
 * name; the overlay gets it as Vite's error payload. A bad `insitu.toml` is printed once, at its
 * key's line, however many managed documents are served as they are meanwhile.
 *
 * One coordinate system (issue #18): the overlay's payload (`loc`, `frame`), the printed `File:`
 * line and the message name the same 1-based line and column, the one an editor opens; a SQL
 * error points at the model file. The real `vite build` command line prints a user error as its
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

/** The text a `?raw` module exports (the document as served). */
async function served(url: string): Promise<string> {
  const result = await server!.environments.client.transformRequest(url)
  return JSON.parse(/^export default (".*")$/s.exec(result!.code)![1]!) as string
}

/** Vite's error payloads (the overlay's) sent so far. */
function overlays(payloads: readonly HotPayload[]): { message: string; loc?: { file: string; line: number; column: number }; frame?: string; plugin?: string; stack?: string }[] {
  return payloads.flatMap((p) => (p.type === 'error' ? [p.err as { message: string }] : []))
}

describe('dev server', () => {
  test('serves documents with a failing region, and prints each failure once, with file:line, its frame, no stack trace and no doubled plugin name', async () => {
    const base = await startServer()
    const payloads: HotPayload[] = []
    recordPayloads(server!.environments.client, () => payloads)
    // Every document is served: a failing region fails no module (issue #34).
    expect(await openApp(base)).toEqual([200, 200, 200, 200])
    // A second page load (same files): printed already.
    expect(await openApp(base)).toEqual([200, 200, 200, 200])

    const missing = path.join(root, 'docs/missing.md')
    const model = path.join(root, 'insitu/models/bad.sql')
    expect(occurrences(output, MISSING_MESSAGE)).toBe(1)
    expect(occurrences(output, SQL_MESSAGE)).toBe(1)
    expect(output).toContain(`insitu: docs/missing.md:3: ${MISSING_MESSAGE}\n  File: ${missing}:3:1\n`)
    // The SQL error points at the model file's line (its first non-blank column), not the document.
    expect(output).toContain(`insitu: docs/report.md:4: ${SQL_MESSAGE}\n  File: ${model}:2:3\n`)
    expect(output).not.toMatch(/^\s+at /m)
    expect(output).not.toContain('vite-plugin-insitu: ')
    expect(output).not.toContain('Internal server error')

    // The failed region keeps its body (none on disk yet); the rest of the document is served.
    expect(await served('/docs/missing.md?raw')).toBe(MISSING_DOC)
    const sent = overlays(payloads).find((err) => err.message === MISSING_MESSAGE)
    expect(sent).toMatchObject({ plugin: 'vite-plugin-insitu', stack: '', loc: { file: missing, line: 3, column: 1 } })

    // An edit that leaves the same failure at the same line: nothing new to print.
    editFile(root, 'docs/missing.md', '# Missing', '# Still missing')
    await expect.poll(() => changed.has(missing), WAIT).toBe(true)
    await expect.poll(() => served('/docs/missing.md?raw'), WAIT).toBe(MISSING_DOC.replace('# Missing', '# Still missing'))
    expect(occurrences(output, MISSING_MESSAGE)).toBe(1)
    // Fixed, it says so; broken again, the failure is news again, printed when it happens (no request).
    changed.clear()
    fs.writeFileSync(path.join(root, 'docs/nope.txt'), 'found\n')
    editFile(root, 'docs/missing.md', '# Still missing', '# Found')
    await expect.poll(() => output, WAIT).toContain('insitu: docs/missing.md: fixed')
    fs.rmSync(path.join(root, 'docs/nope.txt'))
    await expect.poll(() => occurrences(output, MISSING_MESSAGE), WAIT).toBe(2)
  })

  test('a bad insitu.toml value is printed once, at its key; managed documents are served as they are', async () => {
    const config = path.join(root, 'insitu.toml')
    const lines = fs.readFileSync(config, 'utf8').split('\n').length
    fs.appendFileSync(config, '\n[watch]\nstep_ms = 5\ndebounce_ms = -1\n')
    const line = lines + 3
    const message = `${config}:${line}:1: watch.debounce_ms: must be >= 0`
    const base = await startServer()
    const payloads: HotPayload[] = []
    recordPayloads(server!.environments.client, () => payloads)
    expect(await openApp(base)).toEqual([200, 200, 200, 200])
    await expect.poll(() => occurrences(output, message), WAIT).toBe(1)
    expect(output).toContain(`[vite] vite-plugin-insitu: ${message}\n`)
    expect(output).not.toMatch(/^\s+at /m)

    // The document as it is on disk (its regions as they were), and the overlay says why.
    expect(await served('/docs/missing.md?raw')).toBe(MISSING_DOC)
    expect(overlays(payloads)[0]).toMatchObject({ message, loc: { file: config, line, column: 1 }, plugin: 'vite-plugin-insitu' })
    expect(occurrences(output, message)).toBe(1)
  })
})

describe('one coordinate system', () => {
  test("the overlay's loc and frame, the printed File: line and the message name the same line and column", async () => {
    const doc = path.join(root, 'docs/toml.md')
    // Line 4, column 8: the unquoted value.
    fs.writeFileSync(doc, '# TOML\n\n<!-- insitu:begin include\npath = ../snippets/x.txt\n-->\n<!-- insitu:end -->\n')
    await startServer()
    const payloads: HotPayload[] = []
    recordPayloads(server!.environments.client, () => payloads)
    const overlay = async (url: string) => {
      payloads.length = 0
      await served(url)
      const sent = overlays(payloads)[0]
      if (!sent) throw new Error(`no error payload for ${url}`)
      return sent
    }
    /** The column the frame's caret points at (1-based), and the text of the frame line it points into. */
    const caret = (frame: string, line: number) => {
      const lines = frame.split('\n')
      const index = lines.findIndex((l) => new RegExp(`^ *${line} \\| `).test(l))
      const prefix = lines[index]!.indexOf('| ') + 2
      return { column: lines[index + 1]!.indexOf('^') - prefix + 1, text: lines[index]!.slice(prefix) }
    }

    const toml = await overlay('/docs/toml.md?raw')
    expect(toml.message).toBe(
      'invalid TOML in Insitu region at line 3: invalid value (line 4, column 8); strings need quotes: path = "../snippets/x.txt"',
    )
    const [, line, column] = /\(line (\d+), column (\d+)\)/.exec(toml.message)!.map(Number) as [number, number, number]
    expect(toml.loc).toEqual({ file: doc, line, column })
    expect(caret(toml.frame!, line)).toEqual({ column, text: 'path = ../snippets/x.txt' })
    expect('path = ../snippets/x.txt'.slice(column - 1)).toBe('../snippets/x.txt')
    expect(output).toContain(`  File: ${doc}:${line}:${column}\n`)

    // A SQL error links the model file, at the line the message names.
    const sql = await overlay('/docs/report.md?raw')
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
