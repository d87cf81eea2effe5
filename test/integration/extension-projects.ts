/**
 * Shared harness of the extension install and lock tests: real folders, real git repositories,
 * the command line run in this process with its output captured.
 *
 * Contract:
 * - `writeExtension(dir, spec)` writes an `insitu-extension.toml` (name, version, permissions,
 *   capabilities `kind:name`, dependencies with optional version, source and capability flag)
 *   and an `extension.py` into `dir`.
 * - `gitRepository(dir)` runs `git init -b main` in `dir` and `commitAll(dir, message)` commits
 *   everything, returning the new commit's id.
 * - `cli(argv, cwd)` runs `runCli` with captured stdout/stderr and resolves to
 *   `{ code, stdout, stderr }`.
 * - `snapshot(root)` lists every file under `root` with its bytes (folders as `<path>/`), to
 *   compare a project before and after a rolled-back install.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { runCli } from '../../src/cli/main.js'

export interface ExtensionSpec {
  name: string
  version: string
  permissions?: string[]
  /** `kind:name` pairs. */
  capabilities?: string[]
  dependencies?: { name: string; version?: string; source?: string; capability?: boolean }[]
}

const quote = (value: string) => JSON.stringify(value)

export function writeExtension(dir: string, spec: ExtensionSpec): void {
  fs.mkdirSync(dir, { recursive: true })
  const lines = [
    `name = ${quote(spec.name)}`,
    `version = ${quote(spec.version)}`,
    `permissions = [${(spec.permissions ?? []).map(quote).join(', ')}]`,
    '',
    '[extension]',
    'command = ["{python}", "extension.py"]',
  ]
  for (const capability of spec.capabilities ?? []) {
    const [kind, name] = capability.split(':')
    lines.push('', '[[capabilities]]', `kind = ${quote(kind!)}`, `name = ${quote(name!)}`)
  }
  for (const dependency of spec.dependencies ?? []) {
    lines.push('', '[[dependencies]]', `name = ${quote(dependency.name)}`)
    if (dependency.version) lines.push(`version = ${quote(dependency.version)}`)
    if (dependency.source) lines.push(`source = ${quote(dependency.source)}`)
    if (dependency.capability) lines.push('capability = true')
  }
  fs.writeFileSync(path.join(dir, 'insitu-extension.toml'), `${lines.join('\n')}\n`)
  fs.writeFileSync(path.join(dir, 'extension.py'), `# ${spec.name} ${spec.version}\n`)
}

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

export function gitRepository(dir: string): void {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '-b', 'main')
}

export function commitAll(dir: string, message: string): string {
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', message)
  return git(dir, 'rev-parse', 'HEAD')
}

export async function cli(argv: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = ''
  let stderr = ''
  const code = await runCli(argv, {
    cwd,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  })
  return { code, stdout, stderr }
}

export function snapshot(root: string): Record<string, string> {
  const files: Record<string, string> = {}
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        files[`${child}/`] = ''
        walk(child)
      } else {
        files[child] = fs.readFileSync(path.join(root, child)).toString('base64')
      }
    }
  }
  walk('')
  return files
}
