/**
 * Write-back against a racing editor (issue #14.1): a real second process saves the document
 * while `replaceDocument` writes it, at random moments spread over the write's own duration,
 * in both ways editors save (in place: `fs.writeFile`; and a temporary file renamed over it).
 *
 * The invariant, per cycle: once the editor's save is done and the write is settled, the file
 * holds exactly the editor's text. Whatever the order, the editor's save is the latest: a save
 * before the write's comparison makes it a conflict, one during the write must be detected and
 * restored, one after it simply replaces the write. A lost save leaves the plugin's text.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { replaceDocument } from '../../src/sync/write-back.js'

const EDITOR = path.resolve(import.meta.dirname, '../fixtures/node/racing-editor.mjs')
/** Cycles per writing style: a few seconds in all. */
const CYCLES = 400
/** The editor's delay is spread over about a write's duration (open, read, temporary file, fsync, swap). */
const MAX_DELAY_US = 1500

let editor: ChildProcessWithoutNullStreams
let replies: AsyncIterator<string>
let folder: string

beforeAll(() => {
  folder = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'insitu-race-'))
  editor = spawn(process.execPath, [EDITOR], { stdio: ['pipe', 'pipe', 'pipe'] })
  replies = readline.createInterface({ input: editor.stdout })[Symbol.asyncIterator]()
})

afterAll(() => {
  editor.kill()
  fs.rmSync(folder, { recursive: true, force: true })
})

async function save(file: string, text: string, style: 'in-place' | 'rename', delayUs: number): Promise<void> {
  editor.stdin.write(`${JSON.stringify({ file, text, style, delayUs })}\n`)
  const reply = await replies.next()
  if (reply.done || reply.value !== 'saved') throw new Error(`the editor did not save: ${reply.value}`)
}

describe.each(['in-place', 'rename'] as const)('writeBack racing an editor that saves %s', (style) => {
  it(`keeps every save over ${CYCLES} cycles`, { timeout: 60_000 }, async () => {
    const file = path.join(folder, `doc-${style}.md`)
    const outcomes = new Map<string, number>()
    const lost: number[] = []
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const original = `prose ${cycle}\n<!-- region -->\nold\n`
      const edited = `prose ${cycle}, edited by the user\n<!-- region -->\nold\n`
      const regenerated = `prose ${cycle}\n<!-- region -->\nnew ${'x'.repeat(cycle % 7)}\n`
      fs.writeFileSync(file, original)
      const saved = save(file, edited, style, Math.random() * MAX_DELAY_US)
      const result = await replaceDocument(file, original, regenerated)
      await saved
      const settled = result.outcome === 'written' ? `written, ${result.written.settle()}` : result.outcome
      outcomes.set(settled, (outcomes.get(settled) ?? 0) + 1)
      if (fs.readFileSync(file, 'utf8') !== edited) lost.push(cycle)
    }
    expect({ lost, leftovers: fs.readdirSync(folder).filter((name) => name.startsWith('.')) }, JSON.stringify([...outcomes])).toEqual({
      lost: [],
      leftovers: [],
    })
  })
})
