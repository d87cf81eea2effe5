/**
 * The differential test (issue #15, SPEC §6–§8, §11): a varied project (folders, CRLF and BOM
 * documents, typed front matter, models with params, refs and duplicate columns, includes with
 * odd line breaks and fence lines, trees of mixed-case and non-ASCII names, a front-matter
 * materialization) rendered by the plugin's engine must equal, byte for byte, the expected files
 * that test/fixtures/parity/generate.py wrote with the Python implementation's rules (real
 * sqlite3, Jinja2 and ruamel.yaml; SPEC §10's deliberate differences applied). No Python runs
 * here. The project is a real git work tree, so its .gitignore applies. A second engine starts
 * warm (the index snapshot and job store the first one wrote) and must render the same bytes.
 */
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/parity/', import.meta.url))

let root: string

beforeEach(() => {
  root = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-parity-'))), 'parity')
  fs.cpSync(path.join(FIXTURE, 'project'), root, { recursive: true })
  fs.renameSync(path.join(root, 'gitignore'), path.join(root, '.gitignore'))
  execFileSync('git', ['init', '--quiet'], { cwd: root })
})

afterEach(() => {
  fs.rmSync(path.dirname(root), { recursive: true, force: true })
})

const documents = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected', 'documents.json'), 'utf8')) as string[]

async function renderAll(): Promise<{ rendered: Record<string, string>; indexed: string[]; reused: number }> {
  const engine = await InsituEngine.create({ root })
  try {
    const rendered: Record<string, string> = {}
    let reused = 0
    for (const relPath of documents) {
      const result = await engine.renderDocument(relPath, fs.readFileSync(path.join(root, relPath), 'utf8'))
      expect(result.diagnostics.filter((d) => d.severity === 'error')).toEqual([])
      rendered[relPath] = result.text
      reused += result.jobs.filter((job) => job.reused).length
    }
    return { rendered, indexed: engine.index.documentPaths(), reused }
  } finally {
    await engine.close()
  }
}

function expected(relPath: string): string {
  return fs.readFileSync(path.join(FIXTURE, 'expected', relPath), 'utf8')
}

describe('parity with the Python implementation', () => {
  it('indexes the same documents (gitignored ones left out)', async () => {
    const { indexed } = await renderAll()
    expect(indexed).toEqual(documents)
  })

  it.each(documents)('renders %s as the Python implementation does', async (relPath) => {
    const { rendered } = await renderAll()
    expect(rendered[relPath]).toBe(expected(relPath))
  })

  it('renders the same bytes warm (from the job store and the index snapshot) as cold', async () => {
    const cold = await renderAll()
    const warm = await renderAll()
    expect(warm.reused).toBeGreaterThan(0)
    expect(warm.rendered).toEqual(cold.rendered)
    for (const relPath of documents) expect([relPath, warm.rendered[relPath]]).toEqual([relPath, expected(relPath)])
  })
})
