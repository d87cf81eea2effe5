/**
 * Transform `protocol-capture`: output of a real run of the shipped Python example extension
 * (examples/python-extension, `acme/words`) under the built command line, for the pages that
 * show what that run prints, writes and says on the wire.
 *
 * The scenario (run once per process of this extension and per `scenario`, memoized while the
 * example's files and dist/cli/bin.js stay the same, so a long-lived host sees changes; its
 * temporary folder is removed afterwards): a fresh project `<tmp>/tw` holding `README.md` (a
 * `word_count` region and a `materialize` region with `renderer = "word_list"`, both over
 * `docs/*.md`; `scenario = "denied"` gives the `word_count` region `pattern = "*.txt"`, a read the
 * manifest's permissions refuse) and `docs/guide.md` (`# Guide`, a blank line, `TODO: more
 * words.`), with the example copied to `node_modules/vite-plugin-insitu/examples/python-extension`
 * (as the package ships it). The temporary folder must be outside any git work tree (else the
 * region fails saying so): the project is not a git repository, so the lock has no `revision`
 * and no gitignore hides its documents. Then,
 * with `node <repo>/dist/cli/bin.js` and the project as the current folder:
 * `extension add node_modules/vite-plugin-insitu/examples/python-extension`, then
 * `sync --no-cache --root <tmp>/tw`, with a `python3` first on PATH that is a tee proxy: it runs
 * the real `python3` (found on PATH before; missing, the region fails saying so) and logs each
 * `Content-Length` frame in each direction, in order.
 *
 * Options:
 * - `artifact`: `"frames"` (default), the selected exchanges as a ```text block, one frame per
 *   line, `-> body` host to extension and `<- body` extension to host, bodies as on the wire;
 *   `"lock"`, the `insitu.lock` that `extension add` wrote (```toml); `"add-output"`, what
 *   `extension add` printed (```text, stderr lines then stdout lines); `"output"`, what `sync`
 *   printed (```text: its stderr lines, the extension's log, then its stdout lines; `lines`
 *   keeps only the lines holding that text); `"document"`, `README.md` after the sync (```md).
 * - `scenario`: `"example"` (default) or `"denied"`.
 * - `method` (frames: required): a method name or a list; the exchanges (a request and its
 *   response) whose request has one of them. `trace` (a list): only those whose request's
 *   `params.trace` is exactly it. `errors`: only those answered with an error (true) or a
 *   result (false). `show`: `"both"` (default) or `"response"`. Exchanges come in the order their
 *   responses were sent (the selections the pages make are causally ordered, so that order is
 *   the same in every run). Selecting nothing fails.
 * - `root`: the text that replaces the temporary project's path (default `/tmp/tw`).
 *
 * Determinism: the host numbers its requests in a fixed order, but the example answers each host
 * request on its own thread and numbers its own `host.resource.get` requests from one counter, so
 * when the host has two invocations running at once (the two regions of README.md) which read
 * gets which id is a race. The capture is normalised: within each group of overlapping
 * invocations, the extension's request ids (the same set of numbers) are handed out again as if
 * the handlers took turns in the order of the host's requests (each handler's first read, then
 * each one's second, ...), and the host's answers follow their request. That is one of the orders
 * a real run produces. The temporary path becomes `root`; nothing else in the output varies.
 *
 * Dependencies: `repo:<file>` for each file of examples/python-extension and
 * `repo:dist/cli/bin.js` (so every `sync`/`check` runs the scenario again).
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { readRepo, repoRoot } from './repo.mjs'

const run = promisify(execFile)
const EXAMPLE = 'examples/python-extension'
const CLI = 'dist/cli/bin.js'
const INSTALL_FROM = 'node_modules/vite-plugin-insitu/examples/python-extension'
const GUIDE = '# Guide\n\nTODO: more words.\n'

function readme(pattern) {
  return [
    '<!-- insitu:begin word_count',
    'id = "words"',
    `pattern = "${pattern}"`,
    '-->',
    '<!-- insitu:end -->',
    '',
    '<!-- insitu:begin materialize',
    'id = "list"',
    'source = "word_totals"',
    'renderer = "word_list"',
    'pattern = "docs/*.md"',
    '-->',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

const SCENARIOS = { example: readme('docs/*.md'), denied: readme('*.txt') }

// The tee proxy, installed as `python3` (CommonJS: it has no extension). Frames are logged as
// JSON lines `{"dir": "->" | "<-", "body": "<the frame's body>"}` in the order they passed.
const PROXY = `
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const log = process.env.INSITU_CAPTURE_LOG
const child = spawn(process.env.INSITU_CAPTURE_PYTHON, process.argv.slice(2), { stdio: ['pipe', 'pipe', 'inherit'] })
function frames(dir) {
  let pending = Buffer.alloc(0)
  return (chunk) => {
    pending = Buffer.concat([pending, chunk])
    for (;;) {
      const end = pending.indexOf('\\r\\n\\r\\n')
      if (end < 0) return
      const header = /Content-Length: *(\\d+)/i.exec(pending.subarray(0, end).toString('latin1'))
      if (!header) throw new Error('tee proxy: a frame without Content-Length')
      const start = end + 4
      const length = Number(header[1])
      if (pending.length < start + length) return
      fs.appendFileSync(log, JSON.stringify({ dir, body: pending.subarray(start, start + length).toString('utf8') }) + '\\n')
      pending = pending.subarray(start + length)
    }
  }
}
const toChild = frames('->')
const fromChild = frames('<-')
process.stdin.on('data', (chunk) => { toChild(chunk); child.stdin.write(chunk) })
process.stdin.on('end', () => child.stdin.end())
child.stdin.on('error', () => {})
child.stdout.on('data', (chunk) => { fromChild(chunk); process.stdout.write(chunk) })
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal))
child.on('close', (code, signal) => process.stdout.write('', () => process.exit(code ?? (signal ? 1 : 0))))
`

/** The first `name` on PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue
    const file = path.join(dir, name)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {}
  }
  return undefined
}

/** The nearest folder at or above `dir` holding `.git`, or undefined. */
function gitWorkTree(dir) {
  for (let at = fs.realpathSync(dir); ; at = path.dirname(at)) {
    if (fs.existsSync(path.join(at, '.git'))) return at
    if (path.dirname(at) === at) return undefined
  }
}

/** The example's files, repository-relative, sorted. */
function exampleFiles(root) {
  return fs
    .readdirSync(path.join(root, EXAMPLE), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !path.relative(path.join(root, EXAMPLE), entry.parentPath).split(path.sep).includes('__pycache__'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort()
}

async function cli(root, args, options) {
  try {
    return await run(process.execPath, [path.join(root, CLI), ...args], { encoding: 'utf8', ...options })
  } catch (error) {
    if (error.code === 'ENOENT' || !fs.existsSync(path.join(root, CLI))) throw new Error(`${CLI} is missing: run npm run build first`)
    return { stdout: error.stdout ?? '', stderr: error.stderr ?? '', status: error.code }
  }
}

const scenarios = new Map()

/** The scenario's result, run once per process for the same example files and command line. */
function scenario(ctx, name) {
  const root = repoRoot(ctx)
  const hash = createHash('sha256').update(name)
  for (const file of exampleFiles(root)) hash.update(`\0${file}\0`).update(fs.readFileSync(path.join(root, file)))
  const cli = fs.statSync(path.join(root, CLI), { throwIfNoEntry: false })
  hash.update(`\0${cli?.size}:${cli?.mtimeMs}`)
  const key = hash.digest('hex')
  if (!scenarios.has(key)) {
    const running = runScenario(ctx, root, name)
    running.catch(() => scenarios.delete(key)) // a failed run is tried again by the next region
    scenarios.set(key, running)
  }
  return scenarios.get(key)
}

async function runScenario(ctx, root, name) {
  const python = onPath('python3')
  if (!python) throw new Error('protocol-capture runs examples/python-extension with python3, and there is no python3 on PATH')
  const files = exampleFiles(root)
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-capture-'))
  try {
    const work = gitWorkTree(base)
    if (work) throw new Error(`protocol-capture needs a temporary folder outside any git work tree, and ${os.tmpdir()} is inside ${work}: set TMPDIR`)
    const project = path.join(base, 'tw')
    for (const file of files) {
      const target = path.join(project, INSTALL_FROM, path.relative(EXAMPLE, file))
      fs.mkdirSync(path.dirname(target), { recursive: true })
      fs.writeFileSync(target, readRepo(ctx, file))
    }
    fs.mkdirSync(path.join(project, 'docs'))
    fs.writeFileSync(path.join(project, 'docs', 'guide.md'), GUIDE)
    fs.writeFileSync(path.join(project, 'README.md'), SCENARIOS[name])
    const bin = path.join(base, 'bin')
    fs.mkdirSync(bin)
    // An extensionless script is CommonJS only where the nearest package.json does not say otherwise.
    fs.writeFileSync(path.join(bin, 'package.json'), '{"type":"commonjs"}\n')
    fs.writeFileSync(path.join(bin, 'python3'), `#!${process.execPath}\n${PROXY}`, { mode: 0o755 })
    const log = path.join(base, 'frames.log')
    fs.writeFileSync(log, '')

    const add = await cli(root, ['extension', 'add', INSTALL_FROM], { cwd: project })
    if (add.status !== undefined) throw new Error(`extension add failed:\n${add.stdout}${add.stderr}`)
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`, INSITU_CAPTURE_LOG: log, INSITU_CAPTURE_PYTHON: python }
    const sync = await cli(root, ['sync', '--no-cache', '--root', project], { cwd: project, env })
    const real = [fs.realpathSync(project), project]
    const frames = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    if (frames.length === 0) throw new Error(`sync ran no extension:\n${sync.stdout}${sync.stderr}`)
    return {
      real,
      frames: normalise(frames),
      lock: fs.readFileSync(path.join(project, 'insitu.lock'), 'utf8'),
      addOutput: [...lines(add.stderr), ...lines(add.stdout)],
      output: [...lines(sync.stderr), ...lines(sync.stdout)],
      document: fs.readFileSync(path.join(project, 'README.md'), 'utf8'),
    }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
}

const lines = (text) => text.split('\n').filter((line) => line.trim() !== '')
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Frames as `{ dir, body, message, at }`, the extension's request ids renumbered (see the
 * contract): within each group of overlapping host invocations, its requests' ids are handed out
 * again by (index of the read within its invocation, id of the host request it serves).
 */
function normalise(raw) {
  const frames = raw.map((frame, at) => ({ ...frame, message: JSON.parse(frame.body), at }))
  const hostRequests = frames.filter((f) => f.dir === '->' && f.message.method)
  const invocations = hostRequests.map((request) => {
    const answer = frames.find((f) => f.dir === '<-' && !f.message.method && f.message.id === request.message.id && f.at > request.at)
    return { request, start: request.at, end: answer ? answer.at : frames.length, reads: [] }
  })
  for (const read of frames.filter((f) => f.dir === '<-' && f.message.method)) {
    const owner = invocations.find(
      (inv) =>
        inv.start < read.at &&
        read.at < inv.end &&
        same(inv.request.message.params?.trace, read.message.params?.trace) &&
        same(inv.request.message.params?.location, read.message.params?.location),
    )
    if (!owner) throw new Error(`no host request is waiting for ${read.body}`)
    owner.reads.push(read)
  }
  const renumber = new Map()
  const groups = []
  for (const inv of [...invocations].sort((a, b) => a.start - b.start)) {
    const group = groups.at(-1)
    if (group && inv.start < group.end) {
      group.members.push(inv)
      group.end = Math.max(group.end, inv.end)
    } else groups.push({ end: inv.end, members: [inv] })
  }
  for (const { members } of groups) {
    const reads = members.flatMap((inv) => inv.reads.map((read, index) => ({ read, index, host: inv.request.message.id })))
    const ids = reads.map(({ read }) => read.message.id).sort((a, b) => a - b)
    reads.sort((a, b) => a.index - b.index || a.host - b.host)
    reads.forEach(({ read }, i) => renumber.set(read.message.id, ids[i]))
  }
  return frames.map((frame) => {
    const fromExtension = (frame.dir === '<-') === Boolean(frame.message.method)
    if (!fromExtension || !renumber.has(frame.message.id)) return frame
    const id = renumber.get(frame.message.id)
    const body = frame.body.replace(/^\{"jsonrpc":"2\.0","id":\d+,/, `{"jsonrpc":"2.0","id":${id},`)
    if (body === frame.body && id !== frame.message.id) throw new Error(`cannot renumber ${frame.body}`)
    return { ...frame, body, message: { ...frame.message, id } }
  })
}

/** The exchanges the options select, each `{ request, response }`, in the order of their responses. */
function exchanges(frames, params) {
  const methods = [params.method].flat()
  const selected = []
  for (const request of frames) {
    if (!request.message.method || !methods.includes(request.message.method)) continue
    const response = frames.find(
      (f) => f.at > request.at && f.dir !== request.dir && !f.message.method && f.message.id === request.message.id,
    )
    if (!response) throw new Error(`no response to ${request.body}`)
    if (params.trace !== undefined && !same(request.message.params?.trace, params.trace)) continue
    if (params.errors !== undefined && 'error' in response.message !== params.errors) continue
    selected.push({ request, response })
  }
  return selected.sort((a, b) => a.response.at - b.response.at)
}

export async function protocolCapture(params, ctx) {
  const root = repoRoot(ctx)
  for (const file of exampleFiles(root)) ctx.dependOn(`repo:${file}`)
  ctx.dependOn(`repo:${CLI}`)
  const result = await scenario(ctx, params.scenario)
  const stable = (text) => result.real.reduce((out, real) => out.replaceAll(real, params.root), text)
  const block = (lang, text) => `\`\`\`${lang}\n${stable(text).replace(/\s+$/, '')}\n\`\`\``
  switch (params.artifact) {
    case 'lock':
      return block('toml', result.lock)
    case 'add-output':
      return block('text', result.addOutput.join('\n'))
    case 'document':
      return block('md', result.document)
    case 'output': {
      const shown = params.lines === undefined ? result.output : result.output.filter((line) => line.includes(params.lines))
      if (shown.length === 0) throw new Error(`protocol-capture: sync printed no line with ${JSON.stringify(params.lines)}:\n${result.output.join('\n')}`)
      return block('text', shown.join('\n'))
    }
    default: {
      if (params.method === undefined) throw new Error('protocol-capture: frames need `method`')
      const selected = exchanges(result.frames, params)
      if (selected.length === 0) throw new Error(`protocol-capture: no exchange matches ${JSON.stringify(params)}`)
      const shown = selected.flatMap(({ request, response }) => (params.show === 'response' ? [response] : [request, response]))
      return block('text', shown.map((frame) => `${frame.dir} ${frame.body}`).join('\n'))
    }
  }
}
