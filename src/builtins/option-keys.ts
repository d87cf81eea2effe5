/**
 * The option keys each builtin transform reads (SPEC §8), to point out a misspelt one
 * (issue #18: `pth = "a.txt"` in an include region was silently ignored).
 *
 * Contract: `unknownOptionKeys(kind, options)` lists, in the options' order, the keys of a
 * region's options that the builtin transform `kind` does not read (besides `id` and `kind`,
 * which every region may set), each with the nearest known key when one is close
 * (`closestName`). Kinds without a fixed set (`materialize` hands every option to its source
 * and renderer; extensions define their own) give []. The Python implementation ignores unknown
 * keys, so the engine reports them as warnings (or beside the job's own error), never as errors.
 * `describeUnknownKeys(kind, unknown)` is the text: `unknown include option: pth; did you mean
 * path?`; several: `unknown tree options: dpth (did you mean depth?), colour`.
 */
import { closestName } from '../values/did-you-mean.js'

export const BUILTIN_OPTION_KEYS: Readonly<Record<string, readonly string[]>> = {
  include: ['path', 'start', 'end', 'raw', 'language'],
  tree: ['depth', 'directories_only', 'exclude'],
  sql: ['model', 'params', 'template'],
}

/** Keys every region may set, whatever its kind. */
const REGION_KEYS = ['id', 'kind']

export interface UnknownKey {
  key: string
  /** The known key it probably means, when one is close. */
  suggestion: string | undefined
}

export function unknownOptionKeys(kind: string, options: Record<string, unknown>): UnknownKey[] {
  const known = BUILTIN_OPTION_KEYS[kind]
  if (!known) return []
  return Object.keys(options)
    .filter((key) => !known.includes(key) && !REGION_KEYS.includes(key))
    .map((key) => ({ key, suggestion: closestName(key, known) }))
}

export function describeUnknownKeys(kind: string, unknown: readonly UnknownKey[]): string {
  if (unknown.length === 1) {
    const [only] = unknown as [UnknownKey]
    return `unknown ${kind} option: ${only.key}${only.suggestion ? `; did you mean ${only.suggestion}?` : ''}`
  }
  const keys = unknown.map((u) => (u.suggestion ? `${u.key} (did you mean ${u.suggestion}?)` : u.key))
  return `unknown ${kind} options: ${keys.join(', ')}`
}
