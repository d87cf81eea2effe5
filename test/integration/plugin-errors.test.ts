/**
 * How the errors a user meets are printed: a real Vite dev server (and `build`) on a copy of
 * test/fixtures/plugin-project, with Vite's own logger writing to a captured console, so the
 * test sees exactly what the terminal shows.
 *
 * Each failing module is printed once (Vite would print it when it pre-transforms an import and
 * again for each request), with its file:line and no stack trace; the error has no doubled
 * plugin name (Vite adds `[plugin:vite-plugin-insitu]`). A bad `insitu.toml` is printed once,
 * at its key's line, however many managed modules fail with it.
 */
import { Console } from 'node:console'
import fs from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { build, createLogger, createServer, type Logger, type ViteDevServer } from 'vite'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import insitu from '../../src/index.js'
import { copyProject, editFile, removeProjects } from './plugin-project.js'

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

const MISSING_MESSAGE = 'transform include failed in region-1: file not found: docs/nope.txt'
const SQL_MESSAGE = 'transform sql failed in region-1: insitu/models/bad.sql:2: no such column: stauts'

beforeEach(() => {
  root = copyProject()
  output = ''
  changed.clear()
  fs.writeFileSync(path.join(root, 'docs/missing.md'), '# Missing\n\n<!-- insitu:begin include\npath = "nope.txt"\n-->\n<!-- insitu:end -->\n')
  fs.writeFileSync(path.join(root, 'docs/report.md'), '# Report\n\n\n<!-- insitu:begin sql\nmodel = "bad"\n-->\n<!-- insitu:end -->\n')
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
    const report = path.join(root, 'docs/report.md')
    expect(occurrences(output, MISSING_MESSAGE)).toBe(1)
    expect(occurrences(output, SQL_MESSAGE)).toBe(1)
    expect(output).toContain(`  File: ${missing}:3:0\n`)
    expect(output).toContain(`  File: ${report}:4:0\n`)
    expect(output).not.toMatch(/^\s+at /m)
    expect(output).not.toContain('vite-plugin-insitu: ')

    const error = await transformError('/docs/missing.md?raw')
    expect(error.message).toBe(MISSING_MESSAGE)
    expect(error.plugin).toBe('vite-plugin-insitu')
    expect(error.loc).toEqual({ file: missing, line: 3, column: 0 })
    expect(error.stack).toBe(`Error: ${MISSING_MESSAGE}`)

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
    expect(error.loc).toEqual({ file: config, line, column: 0 })
    expect(occurrences(output, message)).toBe(1)
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
    expect(error!.message).toContain(`[plugin vite-plugin-insitu] ${missing}:3:0\nError: ${MISSING_MESSAGE}`)
    expect(occurrences(String(error!.stack), MISSING_MESSAGE)).toBe(1)
    expect(String(error!.stack)).not.toContain('diagnostics')
    expect(String(error!.stack)).not.toContain('vite-plugin-insitu: ')
  })
})
