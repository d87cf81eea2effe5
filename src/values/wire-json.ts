/**
 * JSON text for the wire to extensions (SPEC §1: compact, non-ASCII unescaped) that keeps the
 * value model of python-float.ts, as the Python implementation's host sends it: a `PythonFloat`
 * is written as Python writes the float (`2.0`, `1e+16`), a `bigint` as its digits (JSON has no
 * size limit; Python's json writes any int). Everything else is exactly `JSON.stringify`
 * (undefined members dropped, `toJSON` honoured, NaN as null).
 *
 * Contract: `wireJson(value)` → the text. The plain `JSON.stringify` runs first; only a value
 * holding a box or a bigint (seen by the box's `toJSON` count, or the bigint's TypeError) is
 * written again with a replacer, whose number placeholders (a per-process random tag no text
 * can guess) are then put back as number tokens.
 */
import { PythonFloat, pythonFloatRepr, pythonFloatsSerialized } from './python-float.js'

const NONCE = Math.random().toString(36).slice(2)
const TAG = `\u0000insitu-number-${NONCE}:`
// JSON.stringify writes the NUL of a placeholder as `\u0000`.
const PLACEHOLDER = new RegExp(`"\\\\u0000insitu-number-${NONCE}:([^"\\\\]+)"`, 'g')

export function wireJson(value: unknown): string {
  const before = pythonFloatsSerialized()
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (error) {
    if (!(error instanceof TypeError) || !/BigInt/i.test(error.message)) throw error
  }
  if (text !== undefined && pythonFloatsSerialized() === before) return text
  return JSON.stringify(value, function (this: Record<string, unknown>, key, current: unknown) {
    const original = this[key]
    if (original instanceof PythonFloat) return TAG + pythonFloatRepr(original.value)
    if (typeof current === 'bigint') return TAG + current.toString()
    return current
  }).replace(PLACEHOLDER, '$1')
}
