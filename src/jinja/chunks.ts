/**
 * Jinja's output as a list of chunks. A compiled Jinja template yields (or appends to a buffer)
 * one chunk per group of constant text and one per `{{ }}` evaluated at run time, and Python
 * joins them with `''.join`: at the end of the render for the top level (blocks, includes and
 * `for`/`if`/`with` bodies yield into it), at the end of a block `set`, a `{% filter %}` body, a
 * macro or call body, a recursive loop, `self.b()`/`super()`, and when a module is printed.
 * A `{% filter %}` block or a `{% call %}` yields its value as it is: a value that is not a str
 * (`{% filter wordcount %}` gives an int) makes that join fail with
 * `sequence item N: expected str instance, int found`, N counting the chunks before it.
 *
 * Contract: `RenderState`/runtime `Output` carry `out` (the text), `chunks` (chunks so far in the
 * buffer being filled) and `stray` (its first chunk that is not a str, or null).
 * `openBuffer(state)` starts a buffer of its own and returns what it replaced;
 * `closeBuffer(state, saved)` restores it and returns the buffer's text, or throws the join's
 * TypeError when the buffer holds a stray chunk (`strayError`). `writeChunk(state, value, write)`
 * writes a filter or call block's value as one chunk (its text, or nothing for a stray).
 */
import { typeError } from './errors.js'
import { isString, textOf, typeName } from './values.js'

/** The first chunk of a buffer that is not a str: its index and Python type name. */
export interface StrayChunk {
  index: number
  type: string
}

export interface ChunkBuffer {
  out: string
  chunks: number
  stray: StrayChunk | null
}

export type SavedBuffer = Readonly<ChunkBuffer>

export function openBuffer(state: ChunkBuffer): SavedBuffer {
  const saved = { out: state.out, chunks: state.chunks, stray: state.stray }
  state.out = ''
  state.chunks = 0
  state.stray = null
  return saved
}

/** Restores the buffer `openBuffer` replaced, without joining (an exception is leaving). */
export function restoreBuffer(state: ChunkBuffer, saved: SavedBuffer): void {
  state.out = saved.out
  state.chunks = saved.chunks
  state.stray = saved.stray
}

/** Restores the buffer `openBuffer` replaced and returns the joined text (throws the join's TypeError for a stray chunk). */
export function closeBuffer(state: ChunkBuffer, saved: SavedBuffer): string {
  const text = state.out
  const stray = state.stray
  restoreBuffer(state, saved)
  if (stray !== null) throw strayError(stray)
  return text
}

/** Python's `''.join` failing at a chunk that is not a str. */
export function strayError(stray: StrayChunk): Error {
  return typeError(`sequence item ${stray.index}: expected str instance, ${stray.type} found`)
}

/** Writes a `{% filter %}` or `{% call %}` block's value as one chunk, as Jinja yields it (unconverted). */
export function writeChunk(state: ChunkBuffer, value: unknown, write: (text: string) => void): void {
  if (isString(value)) write(textOf(value))
  else if (state.stray === null) state.stray = { index: state.chunks, type: typeName(value) }
  state.chunks++
}
