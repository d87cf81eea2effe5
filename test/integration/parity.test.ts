/**
 * The differential test (issue #15, SPEC §6–§8, §11): a varied project rendered by the plugin's
 * engine must equal, byte for byte, the expected files that test/fixtures/parity/generate.py
 * wrote with the Python implementation's rules (real sqlite3, Jinja2 3.1.6 and ruamel.yaml 0.19.1;
 * SPEC §10's deliberate differences applied). No Python runs here.
 *
 * The project: folders, CRLF and BOM documents, typed front matter, models with params, refs and
 * duplicate columns, includes with odd line breaks and fence lines, trees of mixed-case and
 * non-ASCII names, front-matter materializations; and under features/ one document per feature
 * (so a failure names it): Jinja truth, dicts, filters, loops, printing (None and booleans as
 * Jinja prints them), pprint, strings, macros, template files, template errors; YAML scalars, titles and
 * generated values (integral floats, big ints, lists of maps, multi-line strings, BLOBs, a CRLF
 * document); SQL REAL results, parameter types, list columns and BLOBs.
 *
 * Template errors must fail their region alone, at its line, with Jinja2's reason and the
 * template file and line Jinja2 points at (expected/errors.json); the region keeps its body.
 * The project is a real git work tree, so its .gitignore applies. A second engine starts warm
 * (the index snapshot and job store the first one wrote) and must render the same bytes.
 * parity-cli.test.ts checks the command line's written files against the same expected files.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import type { LocatedDiagnostic } from '../../src/engine/render-document.js'
import { copyParityProject, EXPECTED_DOCUMENTS, EXPECTED_ERRORS, expectedText, removeParityProjects } from './parity-project.js'

interface Rendering {
  rendered: Record<string, string>
  errors: Record<string, LocatedDiagnostic[]>
  indexed: string[]
  reused: number
}

async function renderAll(root: string): Promise<Rendering> {
  const engine = await InsituEngine.create({ root })
  try {
    const rendering: Rendering = { rendered: {}, errors: {}, indexed: engine.index.documentPaths(), reused: 0 }
    for (const relPath of EXPECTED_DOCUMENTS) {
      const result = await engine.renderDocument(relPath, fs.readFileSync(path.join(root, relPath), 'utf8'))
      rendering.rendered[relPath] = result.text
      rendering.errors[relPath] = result.diagnostics.filter((d) => d.severity === 'error')
      rendering.reused += result.jobs.filter((job) => job.reused).length
    }
    return rendering
  } finally {
    await engine.close()
  }
}

let cold: Rendering
let warm: Rendering

beforeAll(async () => {
  const root = copyParityProject()
  cold = await renderAll(root)
  warm = await renderAll(root)
}, 120_000)

afterAll(() => {
  removeParityProjects()
})

describe('parity with the Python implementation', () => {
  it('indexes the same documents (gitignored ones left out)', () => {
    expect(cold.indexed).toEqual(EXPECTED_DOCUMENTS)
  })

  it.each(EXPECTED_DOCUMENTS)('renders %s as the Python implementation does', (relPath) => {
    expect(cold.rendered[relPath]).toBe(expectedText(relPath))
  })

  it.each(EXPECTED_DOCUMENTS)('fails in %s exactly the regions Jinja2 fails, at their lines', (relPath) => {
    const expected = EXPECTED_ERRORS[relPath] ?? []
    const actual = cold.errors[relPath]!
    expect(actual.map((d) => d.line)).toEqual(expected.map((e) => e.line))
    actual.forEach((diagnostic, i) => {
      const error = expected[i]!
      expect(diagnostic.message).toContain(`transform sql failed in ${error.region}: template `)
      expect(diagnostic.message).toContain(`: ${error.reason} (`)
      expect(diagnostic.at).toMatchObject({ path: `insitu/templates/${error.template}`, line: error.template_line })
    })
  })

  it('renders the same bytes warm (from the job store and the index snapshot) as cold', () => {
    expect(warm.reused).toBeGreaterThan(0)
    expect(warm.rendered).toEqual(cold.rendered)
    expect(warm.errors).toEqual(cold.errors)
  })
})
