/**
 * Where a schema issue points, for the messages of boundary errors (schemas.ts) and of config
 * errors (host/config.ts).
 *
 * - `issuePathText(path)`: `a.b[2].c` (keys joined with `.`, array indexes in brackets; `""`
 *   for the root).
 * - `valueAtPath(input, path)`: the value the path leads to in the input; undefined when it
 *   leads nowhere (a missing key, or a step through something that is not an object).
 * Internal helpers: not part of the protocol's public exports (index.ts).
 */

export function issuePathText(issuePath: readonly PropertyKey[]): string {
  let text = ''
  for (const key of issuePath) {
    text += typeof key === 'number' ? `[${key}]` : text ? `.${String(key)}` : String(key)
  }
  return text
}

export function valueAtPath(input: unknown, issuePath: readonly PropertyKey[]): unknown {
  let current = input
  for (const key of issuePath) {
    if (current === null || typeof current !== 'object') return undefined
    current = (current as Record<PropertyKey, unknown>)[key]
  }
  return current
}
