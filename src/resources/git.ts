/**
 * `git://` host resources, read through the `git` command line (SPEC §6).
 *
 * In:  an identifier `git://<form>[/<path>]` (leading empty segments ignored, so `git://status/x`
 *      and `git:///status/x` are the same) and the absolute project root.
 * Out: `{ value, dependencies: [identifier] }`. Forms and values:
 *  - `HEAD`         `{oid, ref, branch, detached}`; null when HEAD is unborn or there is no repository.
 *                   Detached: `ref` and `branch` are null.
 *  - `branch`       `{name, ref, oid, detached}`; unborn branch: name/ref set, `oid` null;
 *                   detached: `{name: null, ref: null, oid, detached: true}`; no repository: null.
 *  - `tracked`      paths in the index under the project root, relative to it, in Git's (byte) order.
 *  - `ignore-rules` `{repository, paths}`: `repository` is the absolute POSIX worktree root; `paths` the
 *                   sorted project-relative paths of the ignore files that apply to the project: every
 *                   `.gitignore` under it (tracked or untracked-and-not-ignored, present on disk), every
 *                   `.gitignore` in the folders between it and the worktree root, and `<common git
 *                   dir>/info/exclude` when it exists. `core.excludesFile` is not reported.
 *  - `status/<p>`   `{path, flags, tracked, ignored}` from `git status --porcelain=v1`; flags (in this
 *                   order, de-duplicated; a folder gets the union of its entries): see STATUS_FLAGS.
 *                   `tracked`: some index entry is `<p>` or under it. `ignored`: `git check-ignore`.
 *  - `diff/<p>`     `{path, patch}`: `git diff HEAD -- <p>` (working tree vs HEAD, the empty tree when
 *                   HEAD is unborn); "" when no change; untracked files have no patch (as in Git).
 *  - `history/<p>`  up to 20 commits reachable from HEAD touching `<p>`, newest first:
 *                   `{oid, summary, author (name), committed_at (ISO 8601 UTC, seconds), path}`; renames
 *                   are not followed, `path` is the requested path.
 *  - `blob/<rev>/<p>` `{revision, path, oid, content (UTF-8)}`, raw blob (no filters); null when the
 *                   revision or the path is missing or not a blob. `<rev>` cannot contain `/` or `:`.
 * Paths: project-relative, echoed normalized (`docs/./a.md/` → `docs/a.md`, the root is `.`); they may
 * leave the project but not the worktree: `path escapes Git worktree: <p>`. Pathspecs are literal.
 * No repository (or no worktree): HEAD/branch/blob null, tracked/history [], ignore-rules
 * `{repository: null, paths: []}`, status `{flags: [], tracked: false, ignored: false}`, diff "";
 * paths are then confined to the project root with the same message.
 * Anything else: `unsupported host resource: <identifier>`.
 * Git runs via execFile (never a shell) with `GIT_OPTIONAL_LOCKS=0`, `core.quotepath=off`, `-z`
 * output where paths appear, and repository-locating variables (GIT_DIR, ...) removed from the env.
 */
import { execFile } from 'node:child_process'
import { promises as fs } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { compareCodePoints } from '../values/code-point-order.js'
import { isInsideFolder, toPosixPath, toPosixRelative } from '../documents/project-paths.js'

const execFileAsync = promisify(execFile)

export interface GitResolveContext {
  /** absolute project root */
  root: string
}

export interface GitResourceResult {
  value: unknown
  dependencies: string[]
}

const SCHEME = 'git://'
const HISTORY_LIMIT = 20
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024
/** Variables that would point git at another repository than the one containing the project. */
const LOCATING_ENV = [
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_NAMESPACE', 'GIT_PREFIX',
]

/** Status words, in output order. Porcelain XY letters map onto them in `statusFlagsOf`. */
export const STATUS_FLAGS = [
  'conflicted',
  'index-added', 'index-modified', 'index-deleted', 'index-renamed', 'index-copied', 'index-typechange',
  'worktree-added', 'worktree-modified', 'worktree-deleted', 'worktree-renamed', 'worktree-typechange',
  'untracked', 'ignored',
] as const
export type StatusFlag = (typeof STATUS_FLAGS)[number]

const INDEX_LETTERS: Record<string, StatusFlag> = {
  A: 'index-added', M: 'index-modified', D: 'index-deleted', R: 'index-renamed', C: 'index-copied',
  T: 'index-typechange',
}
const WORKTREE_LETTERS: Record<string, StatusFlag> = {
  A: 'worktree-added', M: 'worktree-modified', D: 'worktree-deleted', R: 'worktree-renamed',
  T: 'worktree-typechange',
}
const UNMERGED = new Set(['DD', 'AU', 'UD', 'UA', 'DU', 'AA', 'UU'])

/** Where the project sits in a repository. All paths absolute; `prefix` is worktree-relative POSIX ("" or "docs/"). */
interface Repository {
  topLevel: string
  prefix: string
  gitDir: string
  commonDir: string
}

interface GitOutput {
  stdout: string
  stderr: string
  code: number
}

function gitEnv(literalPathspecs: boolean): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of LOCATING_ENV) delete env[name]
  env.GIT_OPTIONAL_LOCKS = '0'
  env.GIT_LITERAL_PATHSPECS = literalPathspecs ? '1' : '0'
  env.GIT_TERMINAL_PROMPT = '0'
  env.LC_ALL = 'C'
  env.LANGUAGE = 'C'
  return env
}

/**
 * Runs `git -c core.quotepath=off <args>` in `cwd`, pathspecs literal unless `literalPathspecs` is
 * false (check-ignore rejects that magic; it takes plain path names anyway). Exit codes in `allowed`
 * resolve (with `code`); any other failure rejects with git's stderr.
 */
async function runGit(
  cwd: string,
  args: string[],
  allowed: number[] = [],
  literalPathspecs = true,
): Promise<GitOutput> {
  const fullArgs = ['-c', 'core.quotepath=off', ...args]
  try {
    const { stdout } = await execFileAsync('git', fullArgs, {
      cwd, maxBuffer: MAX_OUTPUT_BYTES, env: gitEnv(literalPathspecs), encoding: 'utf8', windowsHide: true,
    })
    return { stdout, stderr: '', code: 0 }
  } catch (error) {
    const failure = error as { code?: unknown; stdout?: string; stderr?: string; message: string }
    if (typeof failure.code === 'number' && allowed.includes(failure.code)) {
      return { stdout: failure.stdout ?? '', stderr: failure.stderr ?? '', code: failure.code }
    }
    const detail = (failure.stderr ?? '').trim() || failure.message
    throw new Error(`git ${args.join(' ')} failed in ${cwd}: ${detail}`)
  }
}

/** The repository containing `root` with a worktree, or null (not a repository, bare, inside `.git`). */
async function locateRepository(root: string): Promise<Repository | null> {
  const result = await runGit(
    root,
    ['rev-parse', '--show-toplevel', '--show-prefix', '--absolute-git-dir', '--git-common-dir'],
    [128],
  )
  if (result.code !== 0) {
    // Outside any repository, or in one without a worktree (bare, inside `.git`). Anything else
    // (e.g. "detected dubious ownership") is a real error the user must see.
    if (/not a git repository|must be run in a work tree/.test(result.stderr)) return null
    throw new Error(`git rev-parse failed in ${root}: ${result.stderr.trim()}`)
  }
  const [topLevel, prefix, gitDir, commonDir] = result.stdout.split('\n')
  if (!topLevel || prefix === undefined || !gitDir || !commonDir) {
    throw new Error(`unexpected output of git rev-parse in ${root}: ${JSON.stringify(result.stdout)}`)
  }
  // A relative common dir is relative to git's (physical) working directory.
  const physicalRoot = await fs.realpath(root)
  return {
    topLevel: path.resolve(topLevel),
    prefix,
    gitDir: path.resolve(gitDir),
    commonDir: path.resolve(physicalRoot, commonDir),
  }
}

/** A path from an identifier, checked against the boundary (worktree, or project root without one). */
interface ResolvedPath {
  /** normalized project-relative POSIX path echoed in values (`.` for the project root) */
  display: string
  /** worktree-relative POSIX pathspec (`.` for the worktree root) */
  pathspec: string
}

function projectDirOf(repo: Repository): string {
  return path.resolve(repo.topLevel, repo.prefix)
}

function resolvePath(raw: string, root: string, repo: Repository | null): ResolvedPath {
  const projectDir = repo ? projectDirOf(repo) : path.resolve(root)
  const boundary = repo ? repo.topLevel : path.resolve(root)
  const absolute = path.resolve(projectDir, raw)
  if (!isInsideFolder(boundary, absolute)) throw new Error(`path escapes Git worktree: ${raw}`)
  return {
    display: toPosixRelative(projectDir, absolute) || '.',
    pathspec: toPosixRelative(boundary, absolute) || '.',
  }
}

function splitZ(stdout: string): string[] {
  return stdout.split('\0').filter((entry) => entry !== '')
}

async function headOid(repo: Repository): Promise<string | null> {
  const result = await runGit(repo.topLevel, ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], [1])
  return result.code === 0 ? result.stdout.trim() : null
}

async function headSymbolicRef(repo: Repository): Promise<string | null> {
  const result = await runGit(repo.topLevel, ['symbolic-ref', '-q', 'HEAD'], [1])
  return result.code === 0 ? result.stdout.trim() : null
}

function branchName(ref: string | null): string | null {
  return ref?.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null
}

async function readHead(repo: Repository | null): Promise<unknown> {
  if (!repo) return null
  const [oid, ref] = await Promise.all([headOid(repo), headSymbolicRef(repo)])
  if (oid === null) return null
  return { oid, ref, branch: branchName(ref), detached: ref === null }
}

async function readBranch(repo: Repository | null): Promise<unknown> {
  if (!repo) return null
  const [oid, ref] = await Promise.all([headOid(repo), headSymbolicRef(repo)])
  if (ref === null) return { name: null, ref: null, oid, detached: true }
  return { name: branchName(ref), ref, oid, detached: false }
}

/** Index entries under the project, as worktree-relative paths (deduplicated: unmerged entries repeat). */
async function listFiles(repo: Repository, extra: string[], pathspec: string | null): Promise<string[]> {
  const args = ['ls-files', '-z', ...extra]
  if (pathspec !== null) args.push('--', pathspec)
  const result = await runGit(repo.topLevel, args)
  return [...new Set(splitZ(result.stdout))]
}

function projectPathspec(repo: Repository): string | null {
  return repo.prefix === '' ? null : repo.prefix.replace(/\/$/, '')
}

async function readTracked(repo: Repository | null): Promise<string[]> {
  if (!repo) return []
  const files = await listFiles(repo, [], projectPathspec(repo))
  return files.map((file) => file.slice(repo.prefix.length))
}

async function exists(absolute: string): Promise<boolean> {
  return fs.lstat(absolute).then(() => true, () => false)
}

async function readIgnoreRules(repo: Repository | null): Promise<unknown> {
  if (!repo) return { repository: null, paths: [] }
  const projectDir = projectDirOf(repo)
  const candidates: string[] = []
  const inProject = await listFiles(repo, ['--cached', '--others', '--exclude-standard'], projectPathspec(repo))
  for (const file of inProject) {
    if (path.posix.basename(file) === '.gitignore') candidates.push(path.join(repo.topLevel, file))
  }
  // Folders between the project and the worktree root (the project itself is covered above).
  for (let dir = projectDir; dir !== repo.topLevel && dir !== path.dirname(dir); ) {
    dir = path.dirname(dir)
    candidates.push(path.join(dir, '.gitignore'))
  }
  candidates.push(path.join(repo.commonDir, 'info', 'exclude'))
  const present = await Promise.all(candidates.map(async (file) => ((await exists(file)) ? file : null)))
  const paths = present
    .filter((file): file is string => file !== null)
    .map((file) => toPosixRelative(projectDir, file))
  return { repository: toPosixPath(repo.topLevel), paths: [...new Set(paths)].sort(compareCodePoints) }
}

/** Flags of porcelain v1 `-z` output (`XY path\0[orig\0]`), in STATUS_FLAGS order. */
export function statusFlagsOf(porcelainZ: string): StatusFlag[] {
  const found = new Set<StatusFlag>()
  const fields = porcelainZ.split('\0')
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] ?? ''
    if (entry.length < 3) continue
    const x = entry[0] ?? ' '
    const y = entry[1] ?? ' '
    if (x === 'R' || x === 'C' || y === 'R' || y === 'C') i++ // skip the original path
    if (x === '?' && y === '?') found.add('untracked')
    else if (x === '!' && y === '!') found.add('ignored')
    else if (UNMERGED.has(x + y)) found.add('conflicted')
    else {
      const staged = INDEX_LETTERS[x]
      const unstaged = WORKTREE_LETTERS[y]
      if (staged) found.add(staged)
      if (unstaged) found.add(unstaged)
    }
  }
  return STATUS_FLAGS.filter((flag) => found.has(flag))
}

async function readStatus(repo: Repository | null, target: ResolvedPath): Promise<unknown> {
  if (!repo) return { path: target.display, flags: [], tracked: false, ignored: false }
  const [status, tracked, ignored] = await Promise.all([
    runGit(repo.topLevel, [
      'status', '--porcelain=v1', '-z', '--ignored=matching', '--untracked-files=all', '--', target.pathspec,
    ]),
    listFiles(repo, [], target.pathspec),
    // 1: not ignored; 128: e.g. "beyond a symbolic link", a path Git does not consider part of the tree.
    runGit(repo.topLevel, ['check-ignore', '-q', '--', target.pathspec], [1, 128], false),
  ])
  return {
    path: target.display,
    flags: statusFlagsOf(status.stdout),
    tracked: tracked.length > 0,
    ignored: ignored.code === 0,
  }
}

async function emptyTreeOid(repo: Repository): Promise<string> {
  const result = await runGit(repo.topLevel, ['hash-object', '-t', 'tree', '/dev/null'])
  return result.stdout.trim()
}

async function readDiff(repo: Repository | null, target: ResolvedPath): Promise<unknown> {
  if (!repo) return { path: target.display, patch: '' }
  const base = (await headOid(repo)) ?? (await emptyTreeOid(repo))
  const result = await runGit(repo.topLevel, [
    'diff', '--no-color', '--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/',
    base, '--', target.pathspec,
  ])
  return { path: target.display, patch: result.stdout }
}

function isoSeconds(unixSeconds: string): string {
  return new Date(Number(unixSeconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

async function readHistory(repo: Repository | null, target: ResolvedPath): Promise<unknown[]> {
  if (!repo || (await headOid(repo)) === null) return []
  const result = await runGit(repo.topLevel, [
    '-c', 'log.follow=false', 'log', '-z', '--no-color', '--no-show-signature', `--max-count=${HISTORY_LIMIT}`,
    '--format=%H%n%an%n%ct%n%s', 'HEAD', '--', target.pathspec,
  ])
  return splitZ(result.stdout).map((record) => {
    const [oid = '', author = '', committed = '0', ...summary] = record.split('\n')
    return { oid, summary: summary.join('\n'), author, committed_at: isoSeconds(committed), path: target.display }
  })
}

async function readBlob(repo: Repository | null, revision: string, target: ResolvedPath): Promise<unknown> {
  if (!repo) return null
  const objectName = `${revision}:${target.pathspec === '.' ? '' : target.pathspec}`
  const resolved = await runGit(repo.topLevel, ['rev-parse', '--verify', '-q', '--end-of-options', objectName], [1, 128])
  if (resolved.code !== 0) return null
  const oid = resolved.stdout.trim()
  const type = await runGit(repo.topLevel, ['cat-file', '-t', oid])
  if (type.stdout.trim() !== 'blob') return null
  const content = await runGit(repo.topLevel, ['cat-file', 'blob', oid])
  return { revision, path: target.display, oid, content: content.stdout }
}

/** `git://a/b/c` → `['a', 'b/c']`; leading empty segments are ignored. Null when not a git identifier. */
function parseIdentifier(identifier: string): { form: string; rest: string } | null {
  if (!identifier.startsWith(SCHEME)) return null
  const segments = identifier.slice(SCHEME.length).split('/')
  while (segments.length > 0 && segments[0] === '') segments.shift()
  const [form = '', ...rest] = segments
  return { form, rest: rest.join('/') }
}

async function resolveValue(identifier: string, ctx: GitResolveContext): Promise<unknown> {
  const unsupported = new Error(`unsupported host resource: ${identifier}`)
  const parsed = parseIdentifier(identifier)
  if (!parsed) throw unsupported
  const { form, rest } = parsed
  const withPath = async (): Promise<[Repository | null, ResolvedPath]> => {
    if (rest === '') throw unsupported
    const repo = await locateRepository(ctx.root)
    return [repo, resolvePath(rest, ctx.root, repo)]
  }
  switch (form) {
    case 'HEAD':
    case 'branch':
    case 'tracked':
    case 'ignore-rules': {
      if (rest !== '') throw unsupported
      const repo = await locateRepository(ctx.root)
      if (form === 'HEAD') return readHead(repo)
      if (form === 'branch') return readBranch(repo)
      if (form === 'tracked') return readTracked(repo)
      return readIgnoreRules(repo)
    }
    case 'status':
      return readStatus(...(await withPath()))
    case 'diff':
      return readDiff(...(await withPath()))
    case 'history':
      return readHistory(...(await withPath()))
    case 'blob': {
      const slash = rest.indexOf('/')
      const revision = slash < 0 ? '' : rest.slice(0, slash)
      const rawPath = slash < 0 ? '' : rest.slice(slash + 1)
      if (revision === '' || revision.includes(':') || rawPath === '') throw unsupported
      const repo = await locateRepository(ctx.root)
      return readBlob(repo, revision, resolvePath(rawPath, ctx.root, repo))
    }
    default:
      throw unsupported
  }
}

/** Resolves one `git://` identifier; its only dependency is itself. */
export async function resolveGitResource(identifier: string, ctx: GitResolveContext): Promise<GitResourceResult> {
  const value = await resolveValue(identifier, ctx)
  return { value, dependencies: [identifier] }
}

/**
 * Absolute paths whose changes can change any `git://` value: `<gitdir>/HEAD`, `<common dir>/refs`,
 * `<common dir>/packed-refs`, `<gitdir>/index` (gitdir and common dir differ in linked worktrees).
 * They may not exist yet (packed-refs, index). Null when the root is not in a Git worktree.
 */
export async function gitMetadataPaths(root: string): Promise<string[] | null> {
  const repo = await locateRepository(root)
  if (!repo) return null
  return [
    path.join(repo.gitDir, 'HEAD'),
    path.join(repo.commonDir, 'refs'),
    path.join(repo.commonDir, 'packed-refs'),
    path.join(repo.gitDir, 'index'),
  ]
}

/**
 * Whether `absPath` is `HEAD`, `packed-refs`, `index`, `refs` or a ref under `refs/` of `gitDir`
 * (pass the worktree git dir and/or the common dir). `*.lock` files are not metadata.
 */
export function isGitMetadataPath(gitDir: string, absPath: string): boolean {
  const relative = path.relative(gitDir, absPath)
  if (relative === 'HEAD' || relative === 'packed-refs' || relative === 'index' || relative === 'refs') return true
  return relative.startsWith(`refs${path.sep}`) && !relative.endsWith('.lock')
}
