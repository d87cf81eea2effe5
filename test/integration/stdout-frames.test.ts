/**
 * stdout carries protocol frames only (SPEC §1, issue #34 item 4), seen where a user sees it: a
 * region of a real project run by `check` and `sync` (the command line in this process), with
 * real extensions that print to stdout — a standard-library Python one whose transform does
 * `print("DEBUG: counting words", flush=True)` (test/fixtures/python/failures/debug_print), one
 * that prints before its first frame (failures/startup_print), a Node one without the SDK whose
 * transform `console.log`s (test/fixtures/node/console_log) — and one whose frames carry a
 * `Content-Type` header (test/fixtures/python/content_type), which works. The failing region
 * names the extension and quotes the line; the document is left as it was; no extension
 * process outlives the command.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { liveExtensionPids } from '../../src/host/process.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'
import { cli } from './extension-projects.js'
import { NODE_FIXTURES, PYTHON_FIXTURES } from './host-project.js'

afterEach(() => {
  expect(liveExtensionPids()).toEqual([])
  removeTempDirs()
})

const DOC = ['# Words', '', '<!-- insitu:begin count_words', 'id = "words"', 'text = "one two three four"', '-->', '<!-- insitu:end -->', ''].join(
  '\n',
)

/** A project whose docs/index.md has one `count_words` region, served by the extension in `fixture`. */
function project(fixture: string): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), `version = 1\n\n[[extensions]]\npath = ${JSON.stringify(fixture)}\n`)
  fs.mkdirSync(path.join(root, 'docs'))
  fs.writeFileSync(path.join(root, 'docs/index.md'), DOC)
  return root
}

const regionError = (extension: string, wrote: string): string =>
  `docs/index.md:3: error: transform count_words (extension ${extension}) failed in words: ` +
  `stdout must carry only protocol frames; ${extension} wrote "${wrote}" (log to stderr)\n`

describe('an extension that prints to stdout fails its region with the line it printed', () => {
  it.each([
    ['a standard-library Python extension: print("DEBUG: …", flush=True)', path.join(PYTHON_FIXTURES, 'failures/debug_print'), 'probe/junk'],
    ['a Node extension without the SDK: console.log("DEBUG: …")', path.join(NODE_FIXTURES, 'console_log'), 'probe/node-junk'],
  ])('%s', async (_, fixture, extension) => {
    const root = project(fixture)
    const check = await cli(['check'], root)
    expect(check.code).toBe(1)
    expect(check.stdout).toBe(`${regionError(extension, 'DEBUG: counting words')}1 document failed\n`)
    expect(check.stderr).not.toContain('DEBUG')

    const sync = await cli(['sync'], root)
    expect(sync.code).toBe(1)
    expect(sync.stdout).toBe(`${regionError(extension, 'DEBUG: counting words')}wrote 0 of 1 document, 1 failed\n`)
    expect(fs.readFileSync(path.join(root, 'docs/index.md'), 'utf8')).toBe(DOC)
  })

  it('a Python extension that prints before its first frame fails to start, and its region with it', async () => {
    const root = project(path.join(PYTHON_FIXTURES, 'failures/startup_print'))
    const run = await cli(['sync'], root)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe(`${regionError('probe/startup', 'DEBUG: loading the word list')}wrote 0 of 1 document, 1 failed\n`)
    expect(run.stderr).toBe(
      'extension probe/startup failed to start: stdout must carry only protocol frames; probe/startup wrote "DEBUG: loading the word list" (log to stderr)\n',
    )
    expect(fs.readFileSync(path.join(root, 'docs/index.md'), 'utf8')).toBe(DOC)
  })
})

describe('frames with a Content-Type header', () => {
  it('are read: the region renders and is current afterwards', async () => {
    const root = project(path.join(PYTHON_FIXTURES, 'content_type'))
    const sync = await cli(['sync'], root)
    expect({ code: sync.code, stdout: sync.stdout }).toEqual({ code: 0, stdout: 'wrote docs/index.md\nwrote 1 of 1 document\n' })
    expect(fs.readFileSync(path.join(root, 'docs/index.md'), 'utf8')).toBe(DOC.replace('-->\n', '-->\n\n4 words\n\n'))
    const check = await cli(['check', '--no-cache'], root)
    expect({ code: check.code, stdout: check.stdout }).toEqual({ code: 0, stdout: '1 document current\n' })
  })
})
