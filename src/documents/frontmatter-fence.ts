/**
 * Where a document's front matter is: the text between an opening `---` line (the document's
 * first) and the next `---` line, and where the body begins. Dependency-free, shared by
 * frontmatter.ts and the job-free verdict the plugin's entry applies (job-free-verdict.ts).
 *
 * Contract: `locateFrontMatter(text)` is null when the text does not open with a fence line or the
 * fence is never closed (no front matter); else the raw YAML, its offset, the body's offset and
 * first line (after the closing fence and the blank lines after it) and the opener's line end.
 */

const OPENER = /^---\r?\n/
const CLOSER = /^---\s*$/

export interface FrontMatterFence {
  raw: string
  rawOffset: number
  bodyOffset: number
  bodyStartLine: number
  eol: '\n' | '\r\n'
}

export function locateFrontMatter(text: string): FrontMatterFence | null {
  const opener = OPENER.exec(text)
  if (opener === null) return null
  const rawOffset = opener[0].length
  let offset = rawOffset
  let line = 2
  while (offset < text.length) {
    const newline = text.indexOf('\n', offset)
    const next = newline === -1 ? text.length : newline + 1
    if (CLOSER.test(text.slice(offset, newline === -1 ? text.length : newline))) {
      const raw = text.slice(rawOffset, offset)
      let bodyOffset = next
      let bodyStartLine = line + 1
      for (;;) {
        const blankEnd = text.indexOf('\n', bodyOffset)
        if (!/^\s*$/.test(text.slice(bodyOffset, blankEnd === -1 ? text.length : blankEnd))) break
        bodyOffset = blankEnd === -1 ? text.length : blankEnd + 1
        if (blankEnd === -1) break
        bodyStartLine++
      }
      return { raw, rawOffset, bodyOffset, bodyStartLine, eol: opener[0] === '---\r\n' ? '\r\n' : '\n' }
    }
    offset = next
    line++
  }
  return null
}
