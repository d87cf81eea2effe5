/**
 * Python's `range` for templates: lazy, as Python's is, so `range(10**12) | length`, indexing,
 * slicing, `in`, `first`, `last`, `sum` and a `for` loop over it cost no list.
 *
 * Contract:
 * - `new PyRange(start, stop, step)` (ints: numbers, bigints beyond 2^53; step not zero) has
 *   Python's `len` (`length`, a bigint when past 2^53), items `at(i)` and
 *   `indexOf(n)` for ints, `equals` (Python's: same items), `slice(start, stop, step)`
 *   (Python's `range[a:b:c]`, itself a range), `reversed()` (a range), `sum(start)` (exact, in
 *   closed form) and `repr()` (`range(0, 3)`, `range(1, 10, 2)`).
 * - `list()` makes the items a list, refusing (limits.ts) a range longer than `MAX_LIST_LENGTH`
 *   with `<what> would make a list of <n> items, …`; it passes a check point (render-budget.ts)
 *   every 1024 items.
 * - `adjustSlice(length, start, stop, step)` is Python's `slice.indices(length)` on bigints.
 */
import { valueError } from './errors.js'
import { checkList } from './limits.js'
import { ticks } from './render-budget.js'

export type Int = number | bigint

const MAX_SAFE = 9007199254740991n

function normalize(value: bigint): Int {
  return value >= -MAX_SAFE && value <= MAX_SAFE ? Number(value) : value
}

export class PyRange {
  readonly start: Int
  readonly stop: Int
  readonly step: Int
  /** Python's `len()`: a number, or a bigint past 2^53. */
  readonly length: Int
  /** Start, step and every item are safe integers: items are computed with numbers. */
  private readonly fast: boolean

  constructor(start: Int, stop: Int, step: Int) {
    this.start = typeof start === 'bigint' ? normalize(start) : start
    this.stop = typeof stop === 'bigint' ? normalize(stop) : stop
    this.step = typeof step === 'bigint' ? normalize(step) : step
    const [a, b, c] = [this.start, this.stop, this.step]
    if (typeof a === 'number' && typeof b === 'number' && typeof c === 'number') {
      const span = c > 0 ? b - a : a - b
      // With an exact span below 2^53 the float quotient cannot round past an integer.
      if (Number.isSafeInteger(span)) {
        this.length = span > 0 ? Math.trunc((span - 1) / Math.abs(c)) + 1 : 0
        this.fast = true
        return
      }
    }
    const [x, y, z] = [BigInt(a), BigInt(b), BigInt(c)]
    const length = z > 0n ? (y > x ? (y - x - 1n) / z + 1n : 0n) : x > y ? (x - y - 1n) / -z + 1n : 0n
    this.length = normalize(length)
    this.fast = false
  }

  /** Item `index` (0 <= index < length). */
  at(index: Int): Int {
    if (this.fast && typeof index === 'number') return (this.start as number) + index * (this.step as number)
    return normalize(BigInt(this.start) + BigInt(index) * BigInt(this.step))
  }

  /** The items as a list (refused past `MAX_LIST_LENGTH`). */
  list(what: () => string = () => `list(${this.repr()})`): Int[] {
    checkList(this.length, what)
    const length = this.length as number
    const out = new Array<Int>(length)
    for (let i = 0; i < length; i++) {
      if ((i & 1023) === 1023) ticks(1024)
      out[i] = this.at(i)
    }
    return out
  }

  /** The index of the int `n`, or -1. */
  indexOf(n: Int): Int {
    if (this.fast && typeof n === 'number') {
      const start = this.start as number
      const step = this.step as number
      const offset = n - start
      if (!Number.isSafeInteger(offset) || offset % step !== 0) return -1
      const index = offset / step
      return index >= 0 && index < (this.length as number) ? index : -1
    }
    const offset = BigInt(n) - BigInt(this.start)
    const step = BigInt(this.step)
    if (offset % step !== 0n) return -1
    const index = offset / step
    return index >= 0n && index < BigInt(this.length) ? normalize(index) : -1
  }

  /** Python's `==` of two ranges: the same items. */
  equals(other: PyRange): boolean {
    if (BigInt(this.length) !== BigInt(other.length)) return false
    if (this.length === 0) return true
    if (BigInt(this.start) !== BigInt(other.start)) return false
    return this.length === 1 || BigInt(this.step) === BigInt(other.step)
  }

  /** `reversed(range)`: the same items backwards, as a range. */
  reversed(): PyRange {
    if (this.length === 0) return new PyRange(this.start, this.start, -1)
    const last = BigInt(this.at(typeof this.length === 'number' ? this.length - 1 : this.length - 1n))
    const step = BigInt(this.step)
    return new PyRange(normalize(last), normalize(BigInt(this.start) - step), normalize(-step))
  }

  /** `range[start:stop:step]` (Python's `compute_slice`). */
  slice(start: Int | null, stop: Int | null, step: Int | null): PyRange {
    const [from, to, by] = adjustSlice(BigInt(this.length), start, stop, step)
    const own = BigInt(this.step)
    const first = BigInt(this.start)
    return new PyRange(normalize(first + from * own), normalize(first + to * own), normalize(by * own))
  }

  /** `sum(range, start)` for an int start, exactly (n·a + d·n(n−1)/2). */
  sum(start: Int): Int {
    const n = BigInt(this.length)
    return normalize(BigInt(start) + n * BigInt(this.start) + (BigInt(this.step) * n * (n - 1n)) / 2n)
  }

  /** A key equal for equal ranges (Python hashes a range by its length, start and step). */
  hashKey(): string {
    if (this.length === 0) return 'r0'
    if (this.length === 1) return `r1,${this.start}`
    return `r${this.length},${this.start},${this.step}`
  }

  repr(): string {
    return this.step === 1 ? `range(${this.start}, ${this.stop})` : `range(${this.start}, ${this.stop}, ${this.step})`
  }
}

/** Python's `slice(start, stop, step).indices(length)`. */
export function adjustSlice(length: bigint, start: Int | null, stop: Int | null, step: Int | null): [bigint, bigint, bigint] {
  const by = step === null ? 1n : BigInt(step)
  if (by === 0n) throw valueError('slice step cannot be zero')
  const lower = by < 0n ? -1n : 0n
  const upper = by < 0n ? length - 1n : length
  const clamp = (bound: Int | null, fallback: bigint): bigint => {
    if (bound === null) return fallback
    let value = BigInt(bound)
    if (value < 0n) {
      value += length
      if (value < lower) value = lower
    } else if (value > upper) value = upper
    return value
  }
  return [clamp(start, by < 0n ? upper : lower), clamp(stop, by < 0n ? lower : upper), by]
}
