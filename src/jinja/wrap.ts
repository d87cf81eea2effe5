/**
 * Python's `textwrap.wrap` as Jinja's `wordwrap` filter calls it (`expand_tabs=False`,
 * `replace_whitespace=False`, `drop_whitespace=True`, no indents).
 *
 * Contract: `textWrap(line, width, breakLongWords, breakOnHyphens)` returns the wrapped lines of
 * one paragraph, chunked by CPython's `wordsep_re` (hyphenated words and em-dashes split when
 * `breakOnHyphens`) or on whitespace only, filled greedily, long words broken at `width`
 * (at a hyphen when possible); an empty or all-whitespace line gives no lines. A check point
 * of the render's time budget (render-budget.ts) per line and chunk.
 */
import { valueError } from './errors.js'
import { tick } from './render-budget.js'

const WS = '[\\t\\n\\x0b\\x0c\\r ]'
const NOWS = '[^\\t\\n\\x0b\\x0c\\r ]'
// Python's \w and [^\d\W] are Unicode classes; JavaScript's \w is ASCII only.
const WORD = '[\\p{L}\\p{N}_]'
const WORD_PUNCT = `[\\p{L}\\p{N}_!"'&.,?]`
const LETTER = '[\\p{L}\\p{Nl}\\p{No}_]'
const WORDSEP = new RegExp(
  `(${WS}+|(?<=${WORD_PUNCT})-{2,}(?=${WORD})|${NOWS}+?(?:-(?:(?<=${LETTER}{2}-)|(?<=${LETTER}-${LETTER}-))(?=${LETTER}-?${LETTER})|(?=${WS}|$)|(?<=${WORD_PUNCT})(?=-{2,}${WORD})))`,
  'u',
)
const WORDSEP_SIMPLE = new RegExp(`(${WS}+)`)

function split(text: string, breakOnHyphens: boolean): string[] {
  return text.split(breakOnHyphens ? WORDSEP : WORDSEP_SIMPLE).filter((chunk) => chunk !== '' && chunk !== undefined)
}

const length = (text: string): number => Array.from(text).length

export function textWrap(text: string, width: number, breakLongWords: boolean, breakOnHyphens: boolean): string[] {
  if (width <= 0) throw valueError(`invalid width ${width} (must be > 0)`)
  const chunks = split(text, breakOnHyphens).reverse()
  const lines: string[] = []
  while (chunks.length > 0) {
    tick()
    const line: string[] = []
    let size = 0
    if (chunks[chunks.length - 1]!.trim() === '' && lines.length > 0) chunks.pop()
    while (chunks.length > 0) {
      tick()
      const l = length(chunks[chunks.length - 1]!)
      if (size + l <= width) {
        line.push(chunks.pop()!)
        size += l
      } else break
    }
    if (chunks.length > 0 && length(chunks[chunks.length - 1]!) > width) {
      const spaceLeft = width < 1 ? 1 : width - size
      if (breakLongWords) {
        let end = spaceLeft
        const chunk = Array.from(chunks[chunks.length - 1]!)
        if (breakOnHyphens && chunk.length > spaceLeft) {
          const hyphen = chunk.slice(0, spaceLeft).lastIndexOf('-')
          if (hyphen > 0 && chunk.slice(0, hyphen).some((c) => c !== '-')) end = hyphen + 1
        }
        line.push(chunk.slice(0, end).join(''))
        chunks[chunks.length - 1] = chunk.slice(end).join('')
      } else if (line.length === 0) {
        line.push(chunks.pop()!)
      }
      size = line.reduce((sum, chunk) => sum + length(chunk), 0)
    }
    if (line.length > 0 && line[line.length - 1]!.trim() === '') {
      size -= length(line[line.length - 1]!)
      line.pop()
    }
    if (line.length > 0) lines.push(line.join(''))
  }
  return lines
}
