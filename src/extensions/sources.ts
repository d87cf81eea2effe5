/**
 * Where `extension add SOURCE` gets an extension from (SPEC §12), resolved as the Python insitu
 * tool resolves it.
 *
 * Contract:
 * - `checkoutSource(source, cwd)` → a `Checkout`: an existing path (`~` expanded, resolved
 *   against `cwd`, symlinks resolved) is used in place; anything else is cloned with the real
 *   `git clone --quiet <url> <temp>` into a fresh `insitu-extension-*` temporary folder, then
 *   `git -C <temp> checkout --quiet <rev>` when the source names a revision. `release()` removes
 *   a temporary clone (a path is left alone). A failing git command rejects with
 *   `cannot clone <url>: <git's stderr>` (or `cannot check out <rev> of <url>: …`) and leaves no
 *   temporary folder. git never prompts (`GIT_TERMINAL_PROMPT=0`), so nothing hangs on a password.
 * - `gitSource(source)`: `github:owner/repo[@rev]` → `https://github.com/owner/repo.git` + rev (split
 *   at the first `@`); `git:<url>[#rev]` → url + rev (split at the last `#`); anything else is the
 *   URL itself without a revision.
 * - `dependencySource(checkout, source)`: a dependency's `source` as the Python tool resolves it:
 *   URLs (`git:`, `github:`, `http:`, `https:`, `ssh:`) unchanged, else `<checkout>/<source>` joined
 *   as Python's `pathlib` joins (no `..` folding) when that path exists, else unchanged.
 * - `gitRevision(dir)` → `git -C <dir> rev-parse HEAD`, or null when that fails.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { realPathSync } from '../documents/real-path.js'

export interface Checkout {
  /** Absolute folder holding the extension's files. */
  dir: string
  /** Whether `dir` is a temporary clone. */
  cloned: boolean
  release(): void
}

const URL_PREFIXES = ['git:', 'github:', 'http:', 'https:', 'ssh:']

export function gitSource(source: string): { url: string; revision: string | null } {
  if (source.startsWith('github:')) {
    const value = source.slice('github:'.length)
    const at = value.indexOf('@')
    const repository = at === -1 ? value : value.slice(0, at)
    return { url: `https://github.com/${repository}.git`, revision: at === -1 ? null : value.slice(at + 1) }
  }
  if (source.startsWith('git:')) {
    const value = source.slice('git:'.length)
    const hash = value.lastIndexOf('#')
    return hash === -1 ? { url: value, revision: null } : { url: value.slice(0, hash), revision: value.slice(hash + 1) }
  }
  return { url: source, revision: null }
}

export function dependencySource(checkout: string, source: string): string {
  if (URL_PREFIXES.some((prefix) => source.startsWith(prefix))) return source
  const candidate = pathlibJoin(checkout, source)
  return fs.existsSync(candidate) ? candidate : source
}

export async function checkoutSource(source: string, cwd: string): Promise<Checkout> {
  const local = path.resolve(cwd, expandUser(source))
  if (source !== '' && fs.existsSync(local)) {
    return { dir: realPathSync(local), cloned: false, release() {} }
  }
  const { url, revision } = gitSource(source)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-extension-'))
  const release = () => fs.rmSync(dir, { recursive: true, force: true })
  try {
    await runGit(['clone', '--quiet', url, dir], `cannot clone ${url}`)
    if (revision) await runGit(['-C', dir, 'checkout', '--quiet', revision], `cannot check out ${revision} of ${url}`)
  } catch (error) {
    release()
    throw error
  }
  return { dir: realPathSync(dir), cloned: true, release }
}

export async function gitRevision(dir: string): Promise<string | null> {
  try {
    return (await runGit(['-C', dir, 'rev-parse', 'HEAD'], 'rev-parse')).trim() || null
  } catch {
    return null
  }
}

function runGit(args: readonly string[], failure: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      { encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout)
        const reason = stderr.trim() || error.message
        reject(new Error(`${failure}: ${reason}`, { cause: error }))
      },
    )
  })
}

function expandUser(source: string): string {
  if (source === '~' || source.startsWith('~/')) return path.join(os.homedir(), source.slice(1))
  return source
}

/**
 * `str(Path(base) / rel)` on POSIX: an absolute `rel` replaces `base`; empty and `.` segments
 * vanish, `..` stays as written (pathlib never folds it).
 */
export function pathlibJoin(base: string, rel: string): string {
  const joined = rel.startsWith('/') ? rel : `${base}/${rel}`
  const absolute = joined.startsWith('/')
  // pathlib keeps exactly two leading slashes (a POSIX implementation-defined root), else one.
  const root = absolute ? (joined.startsWith('//') && !joined.startsWith('///') ? '//' : '/') : ''
  const segments = joined.split('/').filter((segment) => segment !== '' && segment !== '.')
  return `${root}${segments.join('/')}` || '.'
}
