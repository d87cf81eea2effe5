/**
 * The ledger of this process's own writes (src/sync/self-writes.ts), on real files: the states
 * compared are what `fs.stat` and the bytes on disk give.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { diskState, SelfWrites } from '../../src/sync/self-writes.js'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

function tempFile(text: string): string {
  const folder = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'insitu-self-writes-'))
  folders.push(folder)
  const file = path.join(folder, 'doc.md')
  fs.writeFileSync(file, text)
  return file
}

function stateOf(file: string) {
  return diskState(fs.statSync(file), fs.readFileSync(file))
}

/** Write `text` with an mtime distinct from the last one (a coarse clock could repeat it). */
function save(file: string, text: string, seconds: number): void {
  fs.writeFileSync(file, text)
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, seconds))
  fs.utimesSync(file, at, at)
}

describe('SelfWrites', () => {
  it('recognizes the echo of a write once, then reports the same state as seen', () => {
    const file = tempFile('old\n')
    const ledger = new SelfWrites()
    save(file, 'written\n', 1)
    ledger.wrote(file, stateOf(file), 2)
    expect(ledger.classify(file, stateOf(file))).toEqual({ kind: 'echo', depth: 2 })
    expect(ledger.classify(file, stateOf(file))).toEqual({ kind: 'seen' })
  })

  it("a later save of the very text written is the user's (another mtime): new", () => {
    const file = tempFile('old\n')
    const ledger = new SelfWrites()
    save(file, 'written\n', 1)
    ledger.wrote(file, stateOf(file), 0)
    expect(ledger.classify(file, stateOf(file)).kind).toBe('echo')
    save(file, 'written\n', 2)
    expect(ledger.classify(file, stateOf(file)).kind).toBe('new')
  })

  it('a save that replaced the write before its echo was handled is new, though mtime and size are the write\'s', () => {
    const file = tempFile('old\n')
    const ledger = new SelfWrites()
    save(file, 'written\n', 1)
    ledger.wrote(file, stateOf(file), 0)
    save(file, 'by user\n', 1) // same mtime, same size: only the bytes differ
    expect(ledger.classify(file, stateOf(file)).kind).toBe('new')
    expect(ledger.classify(file, stateOf(file)).kind).toBe('seen')
  })

  it('withdraw() forgets a write that did not happen', () => {
    const file = tempFile('old\n')
    const ledger = new SelfWrites()
    save(file, 'written\n', 1)
    ledger.wrote(file, stateOf(file), 0)
    ledger.withdraw(file)
    expect(ledger.classify(file, stateOf(file)).kind).toBe('new')
  })

  it('remembers what a write replaced, BOM aside, until the file is forgotten', () => {
    const file = tempFile('\uFEFFsource\n')
    const ledger = new SelfWrites()
    ledger.replaced(file, '\uFEFFsource\n')
    expect(ledger.replacedText(file, 'source\n')).toBe(true)
    expect(ledger.replacedText(file, 'other\n')).toBe(false)
    ledger.forget(file)
    expect(ledger.replacedText(file, 'source\n')).toBe(false)
  })
})
