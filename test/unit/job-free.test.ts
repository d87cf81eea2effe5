/**
 * isJobFree (src/engine/job-free.ts) against the engine itself: whenever it says a text holds
 * no job, a real engine renders that text to itself with no job and no diagnostic (the cheap
 * path of builds serves such text without the engine, issue #17), and it says so for the
 * plain documents a project is mostly made of. The plugin's entry decides without a YAML
 * parser (job-free-verdict.ts `simpleFrontMatter`): never job-free where isJobFree is not.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { isJobFree, isJobFreeRead } from '../../src/engine/job-free.js'
import { jobFreeVerdict, simpleFrontMatter } from '../../src/documents/job-free-verdict.js'
import { parseDocument, readDocument } from '../../src/documents/document-record.js'

const CASES: Record<string, { text: string; jobFree: boolean }> = {
  'no front matter': { text: '# Title\n\nProse.\n', jobFree: true },
  'front matter without insitu': { text: '---\ntitle: A\nstatus: open\ntags:\n  - x\n---\n# A\n', jobFree: true },
  'a BOM before front matter': { text: '\uFEFF---\ntitle: A\n---\nbody\n', jobFree: true },
  'the word insitu in prose': { text: '---\ntitle: insitu notes\n---\nWe use insitu here.\n', jobFree: true },
  'a thematic break first': { text: '---\n\nnot front matter, no closing fence\n', jobFree: true },
  'a region': { text: '# A\n\n<!-- insitu:begin tree\nid = "t"\n-->\n<!-- insitu:end -->\n', jobFree: false },
  'a stray end': { text: '# A\n\n<!-- insitu:end -->\n', jobFree: false },
  'a materialization': {
    text: '---\ninsitu:\n  materializations:\n    n:\n      model: m\n      target: frontmatter:/generated/n\n---\nbody\n',
    jobFree: false,
  },
  'an insitu key spelled with an escape': {
    text: '---\n"\\x69nsitu":\n  materializations:\n    n:\n      model: m\n      target: frontmatter:/generated/n\n---\nbody\n',
    jobFree: false,
  },
  'an insitu key in flow style': {
    text: '---\n{"insitu" : {materializations: {n: {model: m, target: "frontmatter:/generated/n"}}}}\n---\nbody\n',
    jobFree: false,
  },
  'invalid YAML front matter': { text: '---\ntitle: [unclosed\n---\nbody\n', jobFree: false },
  'front matter that is not a mapping': { text: '---\n- a\n- b\n---\nbody\n', jobFree: false },
  'CRLF line ends': { text: '---\r\ntitle: A\r\n---\r\n# A\r\n', jobFree: true },
  'CRLF line ends and a materialization': {
    text: '---\r\ninsitu:\r\n  materializations:\r\n    n:\r\n      model: m\r\n      target: frontmatter:/generated/n\r\n---\r\nbody\r\n',
    jobFree: false,
  },
  'a BOM before a materialization': {
    text: '\uFEFF---\ninsitu:\n  materializations:\n    n:\n      model: m\n      target: frontmatter:/generated/n\n---\nbody\n',
    jobFree: false,
  },
  'a BOM before invalid YAML': { text: '\uFEFF---\ntitle: [unclosed\n---\nbody\n', jobFree: false },
}

let root: string
let engine: InsituEngine

beforeAll(async () => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-job-free-')))
  fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
  fs.mkdirSync(path.join(root, 'insitu/models'), { recursive: true })
  fs.writeFileSync(path.join(root, 'insitu/models/m.sql'), 'select count(*) as n from documents\n')
  engine = await InsituEngine.create({ root, cache: false })
})

afterAll(async () => {
  await engine.close()
  fs.rmSync(root, { recursive: true, force: true })
})

describe('isJobFree', () => {
  for (const [name, { text, jobFree }] of Object.entries(CASES)) {
    test(`${name}: ${jobFree ? 'job-free, and it renders to itself' : 'not job-free, and it does not render to itself'}`, async () => {
      expect(isJobFree(text)).toBe(jobFree)
      const file = path.join(root, `${name.replace(/\W+/g, '-')}.md`)
      fs.writeFileSync(file, text)
      const result = await engine.renderDocument(file, text.startsWith('\uFEFF') ? text.slice(1) : text)
      const renderedToItself = !result.changed && result.jobs.length === 0 && result.diagnostics.length === 0
      if (jobFree) expect(renderedToItself).toBe(true)
      else expect(renderedToItself).toBe(false)
    })
  }
})

describe('isJobFreeRead (the verdict from the document index\'s own read and parse)', () => {
  for (const [name, { text, jobFree }] of Object.entries(CASES)) {
    test(`${name}: the same verdict as isJobFree`, () => {
      const bytes = Buffer.from(text, 'utf8')
      const { text: decoded, frontMatter } = parseDocument('doc.md', { bytes, mtimeNs: 0n, size: bytes.length })
      expect(decoded).toBe(text)
      expect(isJobFreeRead({ text: decoded, frontMatter })).toBe(jobFree)
      // The read of bytes whose record is stored already (no record built) says the same.
      expect(readDocument(bytes)).toEqual({ text: decoded, frontMatter })
    })
  }
})

describe('jobFreeVerdict with simpleFrontMatter (the plugin entry\'s verdict, without a YAML parser)', () => {
  for (const [name, { text, jobFree }] of Object.entries(CASES)) {
    test(`${name}: job-free only where isJobFree is`, () => {
      const verdict = jobFreeVerdict(text, simpleFrontMatter)
      if (verdict) expect(jobFree).toBe(true)
      else expect(isJobFree(text) === false || simpleFrontMatter(text.replace(/^\uFEFF/, '')) === undefined).toBe(true)
    })
  }

  test('decides the front matter most documents have (a flat mapping with a list), and leaves the rest to the engine', () => {
    expect(jobFreeVerdict(CASES['front matter without insitu']!.text, simpleFrontMatter)).toBe(true)
    expect(jobFreeVerdict(CASES['CRLF line ends']!.text, simpleFrontMatter)).toBe(true)
    // Outside the simple subset (an escape, flow style, invalid YAML): undecided, so not job-free here.
    expect(simpleFrontMatter(CASES['an insitu key spelled with an escape']!.text)).toBeUndefined()
    expect(simpleFrontMatter(CASES['invalid YAML front matter']!.text)).toBeUndefined()
    expect(simpleFrontMatter('---\ntitle: ' + 'x'.repeat(140_000) + '\n---\n')).toBeUndefined()
    expect(simpleFrontMatter('# no front matter\n')).toBeNull()
  })
})
