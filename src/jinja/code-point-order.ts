/**
 * Python's string order, for output that must sort exactly as the Python implementation's
 * `sorted()` does (index view columns, canonical JSON keys, `json.dumps(sort_keys=True)`, git paths).
 *
 * `compareCodePoints(a, b)` compares by Unicode code point, not by UTF-16 code unit (the two
 * differ above U+D7FF); a lone surrogate counts as its own code point. Negative, zero or
 * positive, as `Array.prototype.sort` expects.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0
  // UTF-16 order is code point order unless a surrogate is involved (a pair sorts after U+E000–
  // U+FFFF by code point, before them by code unit): the engine's own comparison otherwise.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i) as number
    const y = b.codePointAt(j) as number
    if (x !== y) return x - y
    i += x > 0xffff ? 2 : 1
    j += y > 0xffff ? 2 : 1
  }
  return a.length - i - (b.length - j)
}

const SURROGATE = /[\ud800-\udfff]/
