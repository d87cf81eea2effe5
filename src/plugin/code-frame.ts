/**
 * The code frame shown under an error: the lines around a location, with a caret.
 *
 * Contract: `codeFrame(text, line, column)` (1-based line and column, as an editor counts; the
 * column of the line's first non-blank character when `column` is null) returns the frame and
 * the column it points at, or null when `line` is not in `text`:
 *
 *     3 | <!-- insitu:begin include
 *     4 | path = snippets/a.txt
 *       |        ^
 *     5 | -->
 *
 * Two lines before and after; tabs count as one column and print as two spaces in the caret
 * line. The lines look like Vite's own frames (`<n> | <text>`, then `  | ^`), so the dev
 * overlay recognises them as a frame. The plugin supplies every frame itself: Vite and Rolldown
 * would build one from `loc` treating its column as 0-based (see diagnostics.ts).
 */

/** Lines shown before and after the located one. */
const CONTEXT = 2
/** Longer lines are cut (a minified file must not flood the terminal). */
const MAX_WIDTH = 160

export function codeFrame(text: string, line: number, column: number | null): { frame: string; column: number } | null {
  const lines = text.split(/\r?\n/)
  if (!Number.isInteger(line) || line < 1 || line > lines.length) return null
  const target = lines[line - 1]!
  const firstText = target.search(/\S/)
  const at = column ?? (firstText === -1 ? 1 : firstText + 1)
  const first = Math.max(1, line - CONTEXT)
  const last = Math.min(lines.length, line + CONTEXT)
  const width = String(last).length
  const out: string[] = []
  for (let n = first; n <= last; n++) {
    const shown = lines[n - 1]!.replace(/\t/g, '  ').slice(0, MAX_WIDTH)
    out.push(`${String(n).padStart(width)} | ${shown}`.trimEnd())
    if (n === line) {
      const before = target.slice(0, Math.max(0, at - 1)).replace(/\t/g, '  ')
      out.push(`${' '.repeat(width)} | ${' '.repeat(Math.min(before.length, MAX_WIDTH))}^`)
    }
  }
  return { frame: out.join('\n'), column: at }
}
