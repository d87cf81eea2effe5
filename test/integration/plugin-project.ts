/**
 * Shared harness of the plugin integration tests (plugin-dev / plugin-build): a fresh copy of
 * test/fixtures/plugin-project per test, real git, and the exact texts the fixture's documents
 * regenerate to.
 *
 * Contract:
 * - `copyProject({ git })` copies the fixture into a fresh temp folder (realpath), optionally
 *   runs `git init -b main` and commits everything; `removeProjects()` deletes every copy.
 * - `editFile(root, rel, from, to)` replaces text in a file and checks the byte length changed
 *   (polling watchers only notice length or mtime changes).
 * - `expectProcessesGone(pids)` polls until no PID in `pids` is alive, then checks that no
 *   extension child is tracked any more.
 * - The `*_DOC` builders return a document's regenerated text for the given inputs.
 * - `addExtension(root, fixture)` lists the Python fixture extension test/fixtures/python/<fixture>
 *   in the copy's `insitu.toml`.
 * - `runTypeScript(script, args, { cwd, uid })` runs a TypeScript file in a child Node (through
 *   tsx), optionally as another user (`NOBODY`: root ignores permission bits, so a real EACCES
 *   needs another user; `chownTree` hands it a project copy).
 */
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { expect } from 'vitest'
import { liveExtensionPids } from '../../src/host/process.js'

export const FIXTURE = fileURLToPath(new URL('../fixtures/plugin-project/', import.meta.url))

const projects: string[] = []

export function copyProject(options: { git?: boolean } = {}): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-plugin-')))
  projects.push(root)
  fs.cpSync(FIXTURE, root, { recursive: true })
  if (options.git) {
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'initial')
  }
  return root
}

export function removeProjects(): void {
  for (const root of projects.splice(0)) fs.rmSync(root, { recursive: true, force: true })
}

export function git(root: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'commit.gpgsign=false', ...args], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

export function readFile(root: string, rel: string): string {
  return fs.readFileSync(path.join(root, rel), 'utf8')
}

export function editFile(root: string, rel: string, from: string, to: string): void {
  const before = readFile(root, rel)
  if (!before.includes(from)) throw new Error(`${rel} does not contain ${JSON.stringify(from)}`)
  const after = before.replace(from, to)
  if (Buffer.byteLength(after) === Buffer.byteLength(before)) throw new Error(`the edit of ${rel} keeps its length`)
  fs.writeFileSync(path.join(root, rel), after)
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw error
  }
}

export async function expectProcessesGone(pids: Iterable<number>): Promise<void> {
  for (const pid of pids) {
    await expect.poll(() => isAlive(pid), { message: `extension process ${pid} is still alive`, timeout: 10_000 }).toBe(false)
  }
  expect(liveExtensionPids()).toEqual([])
}

/**
 * The build processes of `parent` (this process by default; src/build-child.ts, forked by a
 * build that does not watch) and, for each, the pids of the processes it started (extensions,
 * sandboxes), from `ps`.
 */
export function buildProcessTrees(parent = process.pid): { pid: number; children: number[] }[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3]! }))
  return rows
    .filter((row) => row.ppid === parent && /build-child\.m?js/.test(row.args))
    .map((row) => ({ pid: row.pid, children: rows.filter((child) => child.ppid === row.pid).map((child) => child.pid) }))
}

/** `docs/tasks.md` with the SQL region listing the two tasks with these statuses. */
export function TASKS_DOC(alpha: string, beta: string): string {
  return [
    '# Tasks',
    '',
    '<!-- insitu:begin sql',
    'id = "all"',
    'model = "all_tasks"',
    'template = "tasks.md.j2"',
    '-->',
    '',
    `- [Alpha](../tasks/alpha.md) — ${alpha}`,
    `- [Beta](../tasks/beta.md) — ${beta}`,
    '',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

/** `docs/snippet.md` with the include region holding these lines of snippets/x.txt. */
export function SNIPPET_DOC(lines: readonly string[]): string {
  return [
    '# Snippet',
    '',
    '<!-- insitu:begin include',
    'id = "x"',
    'path = "../snippets/x.txt"',
    'raw = true',
    '-->',
    '',
    ...lines,
    '',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

/** `docs/notes.md` with the extension's count of notes/*.md. */
export function NOTES_DOC(notes: readonly string[]): string {
  return [
    '# Notes',
    '',
    '<!-- insitu:begin count_notes',
    'id = "count"',
    '-->',
    '',
    `${notes.length} notes: ${notes.join(', ')}`,
    '',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

/** `docs/git.md` with git://HEAD rendered by @insitu/json (branch main). */
export function GIT_DOC(oid: string): string {
  return [
    '# Git',
    '',
    '<!-- insitu:begin materialize',
    'id = "head"',
    'source = "git://HEAD"',
    'template = "@insitu/json"',
    '-->',
    '',
    '```json',
    '{',
    '  "branch": "main",',
    '  "detached": false,',
    `  "oid": "${oid}",`,
    '  "ref": "refs/heads/main"',
    '}',
    '```',
    '',
    '<!-- insitu:end -->',
    '',
  ].join('\n')
}

export const INITIAL_SNIPPET = ['included line one', 'included line two']
export const INITIAL_NOTES = ['notes/one.md', 'notes/two.md']

/** The region of docs/broken.md: its line and the message the failing extension produces. */
export const BROKEN_LINE = 5
export const BROKEN_MESSAGE =
  'transform explode (extension plugin/notes) failed in boom: the fuse was lit'

export const NOBODY = 65534

const require = createRequire(import.meta.url)
const tsxPackage = require.resolve('tsx/package.json')
const TSX = pathToFileURL(path.join(path.dirname(tsxPackage), (require(tsxPackage) as { exports: { '.': string } }).exports['.'])).href

export interface ChildRun {
  code: number
  stdout: string
  stderr: string
}

export function runTypeScript(script: string, args: readonly string[], options: { cwd: string; uid?: number }): Promise<ChildRun> {
  return runNode(['--import', TSX, script], args, options)
}

/** Runs `node <nodeArgs> ...args` (a built `.js` script needs no TypeScript loader) and resolves with its exit code and output. */
export function runNode(nodeArgs: readonly string[], args: readonly string[], options: { cwd: string; uid?: number }): Promise<ChildRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...nodeArgs, ...args],
      { cwd: options.cwd, uid: options.uid, gid: options.uid, env: { ...process.env, FORCE_COLOR: '0' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

export function chownTree(folder: string, uid: number): void {
  fs.chownSync(folder, uid, uid)
  for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
    const target = path.join(folder, entry.name)
    if (entry.isDirectory()) chownTree(target, uid)
    else fs.chownSync(target, uid, uid)
  }
}

/** List the Python fixture extension `test/fixtures/python/<fixture>` in the project's insitu.toml. */
export function addExtension(root: string, fixture: string): void {
  const folder = fileURLToPath(new URL(`../fixtures/python/${fixture}/`, import.meta.url))
  fs.appendFileSync(path.join(root, 'insitu.toml'), `\n[[extensions]]\npath = ${JSON.stringify(folder)}\n`)
}
