/**
 * The parity fixture (test/fixtures/parity, issue #15) for the differential tests: a fresh copy of
 * its project and the expected files that test/fixtures/parity/generate.py wrote.
 *
 * Contract:
 * - `copyParityProject()` copies project/ into a new temporary folder as `<tmp>/parity` (the
 *   tree region prints that name), renames `gitignore` to `.gitignore` (so the fixture's rules do
 *   not apply to this repository) and makes it a git work tree (its .gitignore applies only
 *   inside one), as generate.py does; it returns the copy's root. `removeParityProjects()`
 *   deletes every copy made so far.
 * - `EXPECTED_DOCUMENTS` is expected/documents.json (the managed documents, sorted),
 *   `expectedText(path)` the expected bytes of one (as UTF-8 text), `EXPECTED_ERRORS`
 *   expected/errors.json: per document, the regions whose template Jinja2 fails (region id and
 *   line, Jinja2's reason, the template file and line it points at).
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const PARITY_FIXTURE = fileURLToPath(new URL('../fixtures/parity/', import.meta.url))

export interface ExpectedError {
  region: string
  /** 1-based line of the region's begin comment */
  line: number
  /** Jinja2's message */
  reason: string
  /** the template file (relative to the templates folder) the error is in */
  template: string
  template_line: number
}

function readExpected(name: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(PARITY_FIXTURE, 'expected', name), 'utf8'))
}

export const EXPECTED_DOCUMENTS = readExpected('documents.json') as string[]
export const EXPECTED_ERRORS = readExpected('errors.json') as Record<string, ExpectedError[]>

export function expectedText(relPath: string): string {
  return fs.readFileSync(path.join(PARITY_FIXTURE, 'expected', relPath), 'utf8')
}

const copies: string[] = []

export function copyParityProject(): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-parity-')))
  copies.push(folder)
  const root = path.join(folder, 'parity')
  fs.cpSync(path.join(PARITY_FIXTURE, 'project'), root, { recursive: true })
  fs.renameSync(path.join(root, 'gitignore'), path.join(root, '.gitignore'))
  execFileSync('git', ['init', '--quiet'], { cwd: root })
  return root
}

export function removeParityProjects(): void {
  for (const folder of copies.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
}
