/**
 * What this process knows of the documents it writes back: the state each write left on disk
 * (to recognize that write's watcher event, its echo), the state each file was last handled in
 * (to drop a second report of one save), and the text each write replaced.
 *
 * Contract (files are absolute POSIX paths; a state is a file's mtime, size and a hash of its bytes):
 * - `wrote(file, state, depth)` records a write; call it synchronously before the written text
 *   can be seen at the path (write-back.ts's `beforeReplace`), so its echo can never be handled
 *   before the record exists (issue #14.2). `withdraw(file)` undoes it when the write did not
 *   happen after all, or was undone because an editor's save won (write-back.ts's 'restored').
 * - `classify(file, state)`, for a watcher event with the file's state as read now:
 *   'echo' (with the write's chain depth) when it is the state the last write left and that
 *   write's echo was not used up yet; 'seen' when it is the state the file was last handled in
 *   (a second report of the same save: the watcher's own event after the late re-check already
 *   reported it, or two events for one write); 'new' otherwise. The state becomes the file's
 *   handled state in every case, and an echo is used up: a later save of the same text has
 *   another mtime, so it is 'new' (an undo, a `git checkout`).
 * - `replaced(file, text)` / `replacedText(file, text)`: whether `text` (BOM aside) is what the
 *   last write of `file` replaced (a module Vite read just before the write is still Markdown).
 * - `forget(file)`: the file was deleted; nothing is known of it any more.
 */
import { hashText } from '../engine/dependency-fingerprints.js'

export interface DiskState {
  mtimeMs: number
  size: number
  /** `hashText` of the file's bytes. */
  hash: string
}

export type EventKind = { kind: 'echo'; depth: number } | { kind: 'seen' } | { kind: 'new' }

export class SelfWrites {
  private readonly pending = new Map<string, { state: DiskState; depth: number }>()
  private readonly handled = new Map<string, DiskState>()
  private readonly replacedTexts = new Map<string, string>()

  wrote(file: string, state: DiskState, depth: number): void {
    this.pending.set(file, { state, depth })
  }

  withdraw(file: string): void {
    this.pending.delete(file)
  }

  classify(file: string, state: DiskState): EventKind {
    const pending = this.pending.get(file)
    const handled = this.handled.get(file)
    this.handled.set(file, state)
    if (pending && sameState(pending.state, state)) {
      this.pending.delete(file)
      return { kind: 'echo', depth: pending.depth }
    }
    if (handled && sameState(handled, state)) return { kind: 'seen' }
    return { kind: 'new' }
  }

  replaced(file: string, text: string): void {
    this.replacedTexts.set(file, text)
  }

  replacedText(file: string, text: string): boolean {
    const source = this.replacedTexts.get(file)
    return source !== undefined && (source === text || (source.charCodeAt(0) === 0xfeff && source.slice(1) === text))
  }

  forget(file: string): void {
    this.pending.delete(file)
    this.handled.delete(file)
    this.replacedTexts.delete(file)
  }
}

/** The state of a file with these bytes and stat. */
export function diskState(stat: { mtimeMs: number; size: number }, bytes: string | Uint8Array): DiskState {
  return { mtimeMs: stat.mtimeMs, size: stat.size, hash: hashText(bytes) }
}

function sameState(a: DiskState, b: DiskState): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.hash === b.hash
}
