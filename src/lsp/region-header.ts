/**
 * Where the cursor is in a region's begin comment, from the text alone (a header being typed
 * need not parse): the inline kind token and the header's `key = value` lines.
 *
 * Contract:
 * - `openHeaderAt(text, offset)`: the begin comment the offset is inside (from `<!--` up to its
 *   `-->`, or to the end of the text while `-->` is not typed yet), or null. Its `kind` is the
 *   inline kind token (with offsets) when there is one.
 * - `headerEntries(text, header)`: each line `key = value` of the header, with the key's and the
 *   value's offsets; a value in double or single quotes gives `text` unquoted (escapes kept as
 *   typed) and offsets inside the quotes; another value its text as typed.
 * - `entryAt(entries, offset)` the entry whose key or value holds `offset` (its end included).
 */
export interface HeaderSpan {
  /** Offset of `<!--`. */
  start: number
  /** Offset of `-->` (or the text's end). */
  end: number
  kind: { name: string; start: number; end: number } | null
  /** Offset where the header's lines begin (after the begin line). */
  linesStart: number
}

export interface HeaderEntry {
  key: string
  keyStart: number
  keyEnd: number
  value: string
  valueStart: number
  valueEnd: number
  quoted: boolean
}

const BEGIN = /<!--\s*insitu:begin/g

export function openHeaderAt(text: string, offset: number): HeaderSpan | null {
  let found: HeaderSpan | null = null
  BEGIN.lastIndex = 0
  for (let match = BEGIN.exec(text); match !== null && match.index < offset; match = BEGIN.exec(text)) {
    const close = text.indexOf('-->', match.index)
    const end = close < 0 ? text.length : close
    if (offset > end) continue
    const afterWord = match.index + match[0].length
    const lineEnd = (() => {
      const at = text.indexOf('\n', afterWord)
      return at < 0 || at > end ? end : at
    })()
    const kindMatch = /^[ \t]+([\p{L}\p{N}_.-]*)/u.exec(text.slice(afterWord, lineEnd))
    const kind = kindMatch ? { name: kindMatch[1]!, start: afterWord + kindMatch[0].length - kindMatch[1]!.length, end: afterWord + kindMatch[0].length } : null
    found = { start: match.index, end, kind, linesStart: lineEnd < end ? lineEnd + 1 : end }
  }
  return found
}

export function headerEntries(text: string, header: HeaderSpan): HeaderEntry[] {
  const entries: HeaderEntry[] = []
  const body = text.slice(header.linesStart, header.end)
  let lineStart = header.linesStart
  for (const line of body.split('\n')) {
    const match = /^(\s*)([A-Za-z0-9_-]+)(\s*=\s*)(.*?)\s*$/.exec(line.replace(/\r$/, ''))
    if (match) {
      const keyStart = lineStart + match[1]!.length
      const keyEnd = keyStart + match[2]!.length
      const rawStart = keyEnd + match[3]!.length
      const raw = match[4]!
      const quote = raw[0] === '"' || raw[0] === "'" ? raw[0] : null
      if (quote) {
        const close = raw.indexOf(quote, 1)
        const inner = close < 0 ? raw.slice(1) : raw.slice(1, close)
        entries.push({ key: match[2]!, keyStart, keyEnd, value: inner, valueStart: rawStart + 1, valueEnd: rawStart + 1 + inner.length, quoted: true })
      } else {
        entries.push({ key: match[2]!, keyStart, keyEnd, value: raw, valueStart: rawStart, valueEnd: rawStart + raw.length, quoted: false })
      }
    }
    lineStart += line.length + 1
  }
  return entries
}

export function entryAt(entries: readonly HeaderEntry[], offset: number): HeaderEntry | undefined {
  return entries.find((entry) => (offset >= entry.keyStart && offset <= entry.keyEnd) || (offset >= entry.valueStart && offset <= entry.valueEnd))
}
