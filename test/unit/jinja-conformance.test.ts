/**
 * The Jinja conformance corpus (test/fixtures/jinja-conformance/corpus.json, rendered by the
 * real Jinja2 3.1.6 in the Python implementation's environment by generate.py beside it) run
 * through the plugin's template environment and renderer. No Python at test time.
 *
 * Each case's template is `main.j2` in a temporary templates folder (with the case's other
 * files); contexts are decoded from the corpus's tagged JSON (`$float` → PythonFloat, `$int` →
 * bigint, `$tuple` → a tuple). SQL model cases are `models/main.sql` of a project compiled by
 * `loadSqlModels` (the models they ref exist as `select 1`). Output cases must match byte for
 * byte; error cases must raise an error naming the template Jinja blamed and Jinja's line (not
 * Python's exact text).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createJinjaEnvironment, createJinjaRenderer } from '../../src/builtins/jinja.js'
import { loadSqlModels } from '../../src/documents/sql-models.js'
import type { Location } from '../../src/protocol/schemas.js'
import { CORPUS_LOCATION, type CorpusCase as Case, decodeCorpusValue as decode, readCorpus } from '../fixtures/jinja-conformance/corpus.js'

const corpus = readCorpus()

/**
 * Corpus cases this engine does not render as Jinja2 does yet, with the class each belongs to.
 * They run as `it.fails`: a fix makes its case pass, and then fail here until its id leaves this
 * list. Found by the random templates of cases.py `define_template_fuzz` (issue #36).
 */
const KNOWN_DIFFERENCES = new Map<string, string>()
const LOCATION: Location = CORPUS_LOCATION

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true })
})

function templatesFor(entry: Case): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-jinja-conformance-'))
  folders.push(folder)
  for (const [name, text] of Object.entries({ ...entry.files, 'main.j2': entry.template })) {
    fs.mkdirSync(path.dirname(path.join(folder, name)), { recursive: true })
    fs.writeFileSync(path.join(folder, name), text)
  }
  return folder
}

function compileModel(entry: Case): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-jinja-conformance-sql-'))
  folders.push(root)
  fs.mkdirSync(path.join(root, 'models'))
  fs.writeFileSync(path.join(root, 'models/main.sql'), entry.template)
  for (const model of entry.sql ?? []) fs.writeFileSync(path.join(root, `models/${model}.sql`), 'select 1')
  const compiled = loadSqlModels(root, 'models').compile('main')
  return compiled.parts.find((part) => part.name === 'main')!.sql
}

function render(entry: Case): string {
  if (entry.sql) return compileModel(entry)
  const folder = templatesFor(entry)
  const context = decode(entry.context) as Record<string, unknown>
  if (entry.renderer) {
    const renderer = createJinjaRenderer({ templatesDir: folder, root: folder })
    return renderer.render({ template: 'main.j2', value: context.value, params: context.params as Record<string, unknown> | undefined, location: LOCATION }).content
  }
  return createJinjaEnvironment(folder).render('main.j2', context)
}

describe(`Jinja conformance corpus (${corpus.cases.length} cases, expected outputs by Jinja2 ${corpus.jinja2})`, () => {
  it('holds several hundred cases, errors among them', () => {
    expect(corpus.cases.length).toBeGreaterThan(600)
    expect(corpus.cases.filter((entry) => 'error' in entry.expected).length).toBeGreaterThan(50)
  })

  const known = corpus.cases.filter((entry) => KNOWN_DIFFERENCES.has(entry.id))
  it('lists only known differences that are in the corpus', () => {
    expect(known.map((entry) => entry.id).sort()).toEqual([...KNOWN_DIFFERENCES.keys()].sort())
  })
  it.fails.each(known.map((entry) => [entry.id, KNOWN_DIFFERENCES.get(entry.id)!, entry] as const))('%s differs (known: %s)', (_id, _class, entry) => conforms(entry))
  it.each(corpus.cases.filter((entry) => !KNOWN_DIFFERENCES.has(entry.id)).map((entry) => [entry.id, entry] as const))('%s', (_id, entry) => conforms(entry))
})

/** The case renders as Jinja2 rendered it: the same output, or an error at the template and line Jinja blamed. */
function conforms(entry: Case): void {
  {
    const expected = entry.expected
    if ('output' in expected) {
      expect(render(entry)).toBe(expected.output)
      return
    }
    let caught: unknown
    try {
      render(entry)
    } catch (error) {
      caught = error
    }
    expect(caught, `expected ${expected.error.type}: ${expected.error.message}`).toBeInstanceOf(Error)
    const message = (caught as Error).message
    const blamed = (caught as { templateName?: string; line?: number }).templateName
    if (entry.sql) {
      expect(message).toMatch(/^cannot render SQL model main: /)
      expect(message).toContain(`(models/main.sql line ${expected.error.line}`)
    } else if (entry.renderer) {
      // The renderer's message names the template and the line (`template main.j2: … (line n…)`).
      expect(message).toMatch(/^template main\.j2: /)
      if (expected.error.line === null) expect(message).not.toMatch(/\(.*line \d+/)
      else {
        const where = expected.error.file === 'main.j2' ? '' : `${expected.error.file} `
        expect(message).toContain(`(${where}line ${expected.error.line}`)
      }
    } else {
      // Errors Jinja raises outside the template's code (its compiler, the render's final join)
      // name no template and line (null in the corpus).
      expect({ file: blamed ?? null, line: (caught as { line?: number }).line ?? null }).toEqual({
        file: expected.error.file,
        line: expected.error.line,
      })
    }
  }
}
