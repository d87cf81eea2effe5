/**
 * Default ids of regions that do not set `id` (issue #18: positional `region-<n>` ids shifted
 * whenever a region was added above, so errors, logs and `/__insitu/` named another region).
 *
 * Contract:
 * - `defaultRegionIds(regions)` gives, per region in document order, its default id:
 *   `<kind>-<hash>`, where `<hash>` is 6 hex digits of SHA-1 over what the region's header says
 *   (its options as canonical JSON, keys sorted by code point, or the header text itself when it
 *   is not valid TOML). Regions with the same kind and header (identical jobs) are numbered in
 *   document order from the second on: `tree-1a2b3c`, `tree-1a2b3c-2`.
 * - So a default id stays the same when anything else in the document changes (prose, other
 *   regions added, moved or removed); it changes with the region's own kind or options (it is
 *   then another job: the job memo keys on the options too), and comments or spacing in the
 *   header do not change it. The Python implementation uses `region-<ordinal>` instead (docs/guide/
 *   compatibility.md).
 * Pure: no I/O.
 */
import { hash as oneShotHash } from 'node:crypto'
import { isObject } from '../protocol/object-guards.js'
import { compareCodePoints } from '../values/code-point-order.js'
import { PythonFloat } from '../values/python-float.js'

export interface RegionHeader {
  kind: string
  /** The parsed options, or null when the header is not valid TOML. */
  options: Record<string, unknown> | null
  /** The header text as written (used when it could not be parsed). */
  header: string
}

/** Hex digits of the hash in a default id. */
const HASH_LENGTH = 6

export function defaultRegionIds(regions: readonly RegionHeader[]): string[] {
  const seen = new Map<string, number>()
  return regions.map((region) => {
    const said = region.options === null ? `\u0000${region.header}` : canonicalText(region.options)
    const base = `${region.kind}-${oneShotHash('sha1', said, 'hex').slice(0, HASH_LENGTH)}`
    const count = (seen.get(base) ?? 0) + 1
    seen.set(base, count)
    return count === 1 ? base : `${base}-${count}`
  })
}

/**
 * JSON with object keys sorted by code point (TOML values are JSON-safe once dates are strings).
 * A float box is written as its number and a bigint as its digits, so `n = 2.0` keeps the id it
 * had before TOML floats were boxed (issue #15).
 */
function canonicalText(value: unknown): string {
  if (value instanceof PythonFloat) return JSON.stringify(value.value)
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return `[${value.map(canonicalText).join(',')}]`
  if (isObject(value)) {
    const keys = Object.keys(value).sort(compareCodePoints)
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalText(value[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}
