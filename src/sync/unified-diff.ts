/**
 * A small line diff for stale-region reports.
 *
 * Contract: `diffLines(before, after)` is the shortest edit script between the two line lists
 * (LCS by dynamic programming: O(n·m), meant for region-sized text), as `' '`/`'-'`/`'+'` lines
 * in order (within a change, removals before additions). `unifiedDiff(before, after, options)`
 * splits both texts into lines (LF or CRLF; one trailing line break ignored) and returns the
 * changed lines with `context` unchanged lines around each change (default 2), hunks separated
 * by `@@ -a,b +c,d @@` headers, without file headers; at most `maxLines` lines (default 20) and then
 * `… N more lines`. Equal texts give `[]`.
 */

export interface DiffLine {
  op: ' ' | '-' | '+'
  text: string
}

export function diffLines(before: readonly string[], after: readonly string[]): DiffLine[] {
  // Trim the common prefix and suffix: most region changes are small.
  let head = 0
  while (head < before.length && head < after.length && before[head] === after[head]) head++
  let tail = 0
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) tail++
  const a = before.slice(head, before.length - tail)
  const b = after.slice(head, after.length - tail)
  // lcs[i][j]: length of the LCS of a[i..] and b[j..].
  const width = b.length + 1
  const lcs = new Uint32Array((a.length + 1) * width)
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!)
    }
  }
  const middle: DiffLine[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      middle.push({ op: ' ', text: a[i++]! })
      j++
    } else if (j >= b.length || (i < a.length && lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!)) {
      middle.push({ op: '-', text: a[i++]! })
    } else {
      middle.push({ op: '+', text: b[j++]! })
    }
  }
  return [
    ...before.slice(0, head).map((text) => ({ op: ' ' as const, text })),
    ...middle,
    ...before.slice(before.length - tail).map((text) => ({ op: ' ' as const, text })),
  ]
}

/** Lines of a text: LF or CRLF, one trailing line break ignored; `""` has no lines. */
export function splitLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split(/\r?\n/)
  if (lines[lines.length - 1] === '') lines.pop()
  return lines
}

export function unifiedDiff(before: string, after: string, options: { context?: number; maxLines?: number } = {}): string[] {
  const context = options.context ?? 2
  const maxLines = options.maxLines ?? 20
  const lines = diffLines(splitLines(before), splitLines(after))
  const changed = lines.map((line, index) => (line.op === ' ' ? -1 : index)).filter((index) => index >= 0)
  if (changed.length === 0) return []
  // Hunks: runs of changes closer than 2·context lines, with their context.
  const hunks: { start: number; end: number }[] = []
  for (const index of changed) {
    const start = Math.max(0, index - context)
    const end = Math.min(lines.length, index + context + 1)
    const last = hunks[hunks.length - 1]
    if (last && start <= last.end) last.end = end
    else hunks.push({ start, end })
  }
  const output: string[] = []
  for (const hunk of hunks) {
    let oldLine = 1
    let newLine = 1
    for (const line of lines.slice(0, hunk.start)) {
      if (line.op !== '+') oldLine++
      if (line.op !== '-') newLine++
    }
    const body = lines.slice(hunk.start, hunk.end)
    const oldCount = body.filter((line) => line.op !== '+').length
    const newCount = body.filter((line) => line.op !== '-').length
    // As GNU diff: an empty side names the line before it.
    output.push(`@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`)
    for (const line of body) output.push(`${line.op}${line.text}`)
  }
  if (output.length <= maxLines) return output
  const more = output.length - maxLines
  return [...output.slice(0, maxLines), `… ${more} more line${more === 1 ? '' : 's'}`]
}
