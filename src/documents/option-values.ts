/**
 * How Insitu reads a scalar option that names something (a region's `id`/`kind`, a
 * materialization's `id`/`kind`): the Python implementation writes `str(options.get(k) or default)`,
 * so "absent" means Python-falsy and a present value is stringified.
 * Pure; used by regions.ts and frontmatter.ts.
 */
import { PythonFloat } from '../values/python-float.js'

/** Python truthiness of a JSON/TOML/YAML value: null, false, 0, "", [] and {} are false. */
export function isTruthyOption(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false
  if (value instanceof PythonFloat) return value.value !== 0
  if (Array.isArray(value)) return value.length > 0
  if (typeof value === 'object') return Object.keys(value).length > 0
  return true
}

/** A string option as is; numbers and booleans via `String` (a float `2.0` as Python's `str`); anything else as JSON. */
export function optionText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value instanceof PythonFloat) return String(value)
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/** `value.option` when truthy (stringified), else `fallback`. */
export function namedOption(value: unknown, fallback: string): string {
  return isTruthyOption(value) ? optionText(value) : fallback
}
