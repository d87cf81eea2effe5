/**
 * File URIs and editor positions for the language server.
 *
 * Contract: `pathOfUri(uri)` is the absolute file path of a `file:` URI (null for another
 * scheme: an untitled buffer, a diff view); `uriOfPath(file)` the URI an editor expects for an
 * absolute path. `lineRange(text, line)` is the range of 1-based `line` of `text` (its whole
 * text, without the line break; clamped to the last line), `pointRange(text, line, column)`
 * an empty range at 1-based line and column (column null: the line's first non-blank
 * character). Positions count UTF-16 code units, LSP's default encoding, as JavaScript strings do.
 */
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Range } from 'vscode-languageserver'

export function pathOfUri(uri: string): string | null {
  if (!uri.startsWith('file:')) return null
  try {
    return fileURLToPath(uri)
  } catch {
    return null
  }
}

export function uriOfPath(file: string): string {
  return pathToFileURL(file).href
}

/** The offsets of each line's start. */
export function lineStarts(text: string): number[] {
  const starts = [0]
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1)
  return starts
}

export function lineRange(text: string, line: number): Range {
  const starts = lineStarts(text)
  const index = Math.min(Math.max(line, 1), starts.length) - 1
  const start = starts[index]!
  let end = index + 1 < starts.length ? starts[index + 1]! - 1 : text.length
  if (end > start && text[end - 1] === '\r') end--
  return { start: { line: index, character: 0 }, end: { line: index, character: end - start } }
}

export function pointRange(text: string, line: number, column: number | null): Range {
  const whole = lineRange(text, line)
  const starts = lineStarts(text)
  const lineText = text.slice(starts[whole.start.line]!, starts[whole.start.line]! + whole.end.character)
  const character = column === null ? lineText.length - lineText.trimStart().length : Math.min(column - 1, lineText.length)
  return { start: { line: whole.start.line, character }, end: { line: whole.start.line, character } }
}

/** The 0-based position of an offset. */
export function positionOf(text: string, offset: number): { line: number; character: number } {
  let line = 0
  let start = 0
  for (let at = text.indexOf('\n'); at >= 0 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++
    start = at + 1
  }
  return { line, character: offset - start }
}

/** The offset of a 0-based position (a line past the end: the text's end; a character past its line: clamped to the text). */
export function offsetOf(text: string, position: { line: number; character: number }): number {
  let offset = 0
  for (let line = 0; line < position.line; line++) {
    const next = text.indexOf('\n', offset)
    if (next < 0) return text.length
    offset = next + 1
  }
  return Math.min(offset + position.character, text.length)
}

export function rangeOf(text: string, start: number, end: number): Range {
  return { start: positionOf(text, start), end: positionOf(text, end) }
}
