/**
 * Where a key of a (syntactically valid) TOML document is written, for value errors that
 * smol-toml cannot place (it reports positions of syntax errors only).
 *
 * Contract: `tomlKeyPosition(source, keyPath)` returns the 1-based `{ line, column }` of the key
 * `keyPath` names (`['watch', 'debounce_ms']`, `['extensions', 0, 'path']`), or, when that key is
 * not written (a missing required key), of the nearest written ancestor: the table header,
 * the `[[array]]` header of that element, the dotted key or inline table holding it. Array
 * indexes count `[[array]]` headers (and elements of inline arrays) in order. `null` when
 * nothing on the path is written (or the text is not TOML this scanner understands: it never
 * throws). It understands `[table]` and `[[array]]` headers (also below an array of tables),
 * dotted and quoted keys, inline tables, arrays (of inline tables too), every string form
 * (multi-line included) and comments.
 */

export interface TomlPosition {
  line: number
  column: number
}

type KeyPath = readonly (string | number)[]

export function tomlKeyPosition(source: string, keyPath: KeyPath): TomlPosition | null {
  let positions: Map<string, number>
  try {
    positions = new TomlKeyScanner(source).scan()
  } catch {
    return null
  }
  for (let length = keyPath.length; length > 0; length--) {
    const offset = positions.get(pathKey(keyPath.slice(0, length)))
    if (offset !== undefined) return positionOf(source, offset)
  }
  return null
}

function pathKey(keyPath: KeyPath): string {
  return JSON.stringify(keyPath)
}

function positionOf(source: string, offset: number): TomlPosition {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset; i++) {
    if (source[i] === '\n') {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

const BARE_KEY = /[A-Za-z0-9_-]/

/** Records the offset of the first place each key path is written. */
class TomlKeyScanner {
  private i = 0
  private readonly positions = new Map<string, number>()
  /** Arrays of tables (by resolved path) and how many `[[...]]` elements each has so far. */
  private readonly arrayTables = new Map<string, number>()

  constructor(private readonly source: string) {}

  scan(): Map<string, number> {
    let table: (string | number)[] = []
    for (;;) {
      this.skipBlank(true)
      if (this.i >= this.source.length) return this.positions
      if (this.source.startsWith('[[', this.i)) {
        const at = this.i
        this.i += 2
        const keys = this.readKey()
        const parent = this.resolveHeader(keys.slice(0, -1), at)
        const array = [...parent, keys[keys.length - 1]!.name]
        const count = this.arrayTables.get(pathKey(array)) ?? 0
        this.arrayTables.set(pathKey(array), count + 1)
        this.record(array, at)
        table = [...array, count]
        this.record(table, at)
        this.expect(']]')
      } else if (this.source[this.i] === '[') {
        const at = this.i
        this.i += 1
        const keys = this.readKey()
        table = this.resolveHeader(keys, at)
        this.expect(']')
      } else {
        this.readKeyValue(table)
      }
      this.skipToLineEnd()
    }
  }

  /** A header's keys, with the last element of every array of tables on the way (placed at `at`). */
  private resolveHeader(keys: { name: string; at: number }[], at: number): (string | number)[] {
    const resolved: (string | number)[] = []
    for (const key of keys) {
      resolved.push(key.name)
      this.record(resolved, at)
      const count = this.arrayTables.get(pathKey(resolved))
      if (count !== undefined) resolved.push(count - 1)
    }
    return resolved
  }

  private readKeyValue(table: readonly (string | number)[]): void {
    const keys = this.readKey()
    const keyPath = [...table]
    for (const key of keys) {
      keyPath.push(key.name)
      this.record(keyPath, key.at)
    }
    this.skipBlank(false)
    this.expect('=')
    this.readValue(keyPath)
  }

  private readValue(keyPath: (string | number)[]): void {
    this.skipBlank(false)
    const c = this.source[this.i]
    if (c === '"' || c === "'") {
      this.readString()
    } else if (c === '{') {
      this.i++
      for (;;) {
        this.skipBlank(true)
        if (this.source[this.i] === '}') break
        this.readKeyValue(keyPath)
        this.skipBlank(true)
        if (this.source[this.i] === ',') this.i++
      }
      this.i++
    } else if (c === '[') {
      this.i++
      for (let index = 0; ; index++) {
        this.skipBlank(true)
        if (this.source[this.i] === ']') break
        const element = [...keyPath, index]
        this.record(element, this.i)
        this.readValue(element)
        this.skipBlank(true)
        if (this.source[this.i] === ',') this.i++
      }
      this.i++
    } else {
      // number, boolean, date: up to a delimiter
      while (this.i < this.source.length && !/[,\]}\s#]/.test(this.source[this.i]!)) this.i++
    }
  }

  /** A dotted key: its segments with their offsets. */
  private readKey(): { name: string; at: number }[] {
    const keys: { name: string; at: number }[] = []
    for (;;) {
      this.skipBlank(false)
      const at = this.i
      const c = this.source[this.i]
      let name: string
      if (c === '"' || c === "'") {
        name = this.readString()
      } else {
        const start = this.i
        while (this.i < this.source.length && BARE_KEY.test(this.source[this.i]!)) this.i++
        if (this.i === start) throw new Error(`not a key at ${start}`)
        name = this.source.slice(start, this.i)
      }
      keys.push({ name, at })
      this.skipBlank(false)
      if (this.source[this.i] !== '.') return keys
      this.i++
    }
  }

  /** A string of any of the four forms; its value (escapes decoded well enough for key names). */
  private readString(): string {
    const quote = this.source[this.i]!
    const triple = quote.repeat(3)
    if (this.source.startsWith(triple, this.i)) {
      let end = this.source.indexOf(triple, this.i + 3)
      while (quote === '"' && end !== -1 && isEscaped(this.source, end)) end = this.source.indexOf(triple, end + 1)
      if (end === -1) throw new Error('unterminated string')
      // Up to two more quotes may close the string (`""""` ends with a quote in the value).
      let close = end + 3
      while (this.source[close] === quote && close < end + 5) close++
      const value = this.source.slice(this.i + 3, close - 3)
      this.i = close
      return value
    }
    let j = this.i + 1
    let value = ''
    while (j < this.source.length && this.source[j] !== quote) {
      if (quote === '"' && this.source[j] === '\\') {
        value += decodeEscape(this.source, j)
        j += escapeLength(this.source, j)
      } else {
        value += this.source[j]
        j++
      }
    }
    if (j >= this.source.length) throw new Error('unterminated string')
    this.i = j + 1
    return value
  }

  private record(keyPath: KeyPath, offset: number): void {
    const key = pathKey(keyPath)
    if (!this.positions.has(key)) this.positions.set(key, offset)
  }

  private expect(text: string): void {
    this.skipBlank(false)
    if (!this.source.startsWith(text, this.i)) throw new Error(`expected ${text} at ${this.i}`)
    this.i += text.length
  }

  /** Whitespace and comments; newlines too when `newlines`. */
  private skipBlank(newlines: boolean): void {
    for (;;) {
      const c = this.source[this.i]
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) this.i++
      else if (c === '#') this.skipComment()
      else return
    }
  }

  private skipComment(): void {
    while (this.i < this.source.length && this.source[this.i] !== '\n') this.i++
  }

  private skipToLineEnd(): void {
    this.skipBlank(false)
    while (this.i < this.source.length && this.source[this.i] !== '\n') this.i++
  }
}

function isEscaped(source: string, at: number): boolean {
  let backslashes = 0
  for (let j = at - 1; j >= 0 && source[j] === '\\'; j--) backslashes++
  return backslashes % 2 === 1
}

const SIMPLE_ESCAPES: Record<string, string> = { b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\u001b', '"': '"', '\\': '\\' }

function escapeLength(source: string, at: number): number {
  const kind = source[at + 1]
  if (kind === 'u') return 6
  if (kind === 'U') return 10
  if (kind === 'x') return 4
  return 2
}

function decodeEscape(source: string, at: number): string {
  const kind = source[at + 1] ?? ''
  if (kind === 'u' || kind === 'U' || kind === 'x') {
    const hex = source.slice(at + 2, at + escapeLength(source, at))
    return String.fromCodePoint(Number.parseInt(hex, 16))
  }
  return SIMPLE_ESCAPES[kind] ?? kind
}
