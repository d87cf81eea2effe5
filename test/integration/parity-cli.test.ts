/**
 * The differential test through the plugin's write path (issue #15): the built command line
 * (`node dist/cli/bin.js sync`, as a user runs it; test/clients/setup.ts builds it once per run)
 * on a copy of the parity project must write every managed document with the bytes
 * test/fixtures/parity/expected holds, the same the engine's render path gives
 * (parity.test.ts): regions, the front matter that
 * materializations rewrite (integral floats, lists of maps, multi-line strings, BLOBs, a CRLF
 * document) and the failing regions' kept bodies. sync reports the failing regions at their lines
 * and exits 1 for them.
 */
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyParityProject, EXPECTED_DOCUMENTS, EXPECTED_ERRORS, PARITY_FIXTURE, removeParityProjects } from './parity-project.js'

const REPO = path.resolve(import.meta.dirname, '../..')
/** Built once per run by test/clients/setup.ts (a build here would rewrite dist/ under the other test files). */
const BIN = path.join(REPO, 'dist/cli/bin.js')

function bin(args: readonly string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, GITHUB_WORKSPACE: '' } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr })
    })
  })
}

/**
 * The line a region begins at in the file sync writes: the errors name lines of the text as
 * written (issue #34: a region below a regenerated body moves with it). The region that begins at
 * `line` of the project's document is the same-numbered begin comment of the expected text.
 */
function writtenLine(relPath: string, line: number): number {
  const begins = (text: string) => text.split('\n').flatMap((l, i) => (/<!-{2}\s*insitu:begin/.test(l) ? [i + 1] : []))
  const ordinal = begins(fs.readFileSync(path.join(PARITY_FIXTURE, 'project', relPath), 'utf8')).indexOf(line)
  if (ordinal < 0) throw new Error(`${relPath}:${line} begins no region`)
  return begins(fs.readFileSync(path.join(PARITY_FIXTURE, 'expected', relPath), 'utf8'))[ordinal]!
}

const failurePrefixes = Object.entries(EXPECTED_ERRORS).flatMap(([relPath, errors]) =>
  errors.map((error) => `${relPath}:${writtenLine(relPath, error.line)}: error: transform sql failed in ${error.region}: `),
)

let root: string
let synced: { code: number; stdout: string; stderr: string }

beforeAll(async () => {
  root = copyParityProject()
  synced = await bin(['sync', '--root', root], root)
}, 120_000)

afterAll(() => {
  removeParityProjects()
})

describe('parity of the command line: sync writes what the Python implementation writes', () => {
  it('reports the failing regions at their lines and exits 1 for them', () => {
    expect(synced.stderr).toBe('')
    const reported = synced.stdout.split('\n').filter((line) => line.includes(': error: '))
    expect(reported).toHaveLength(failurePrefixes.length)
    reported.forEach((line, i) => expect(line.startsWith(failurePrefixes[i]!), `${line}\nshould start with ${failurePrefixes[i]}`).toBe(true))
    expect(synced.stdout).toContain(`, ${Object.keys(EXPECTED_ERRORS).length} failed\n`)
    expect(synced.code).toBe(1)
  })

  it.each(EXPECTED_DOCUMENTS)('writes %s byte for byte as expected', (relPath) => {
    const written = fs.readFileSync(path.join(root, relPath))
    expect([relPath, written.toString('utf8')]).toEqual([relPath, fs.readFileSync(path.join(PARITY_FIXTURE, 'expected', relPath), 'utf8')])
  })

  it('leaves stale only the document that includes a document sync rewrote (check after sync)', async () => {
    // docs/bom.md includes notes/managed.md as it is on disk, generated body and all: sync
    // rewrote that body after rendering docs/bom.md, as the Python implementation's sync does.
    const checked = await bin(['check', '--root', root, '--format', 'json'], root)
    const report = JSON.parse(checked.stdout) as { documents: { path: string; state: string }[] }
    const inState = (state: string) => report.documents.filter((document) => document.state === state).map((document) => document.path)
    expect(inState('stale')).toEqual(['docs/bom.md'])
    expect(inState('failed')).toEqual(Object.keys(EXPECTED_ERRORS))
    expect(checked.code).toBe(1)
  })
})
