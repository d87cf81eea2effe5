/**
 * Extension permissions for `host.resource.get` (SPEC §6, "Permissions").
 *
 * Contract:
 * - `permissionFor(resource)` maps an identifier to the permission prefix that governs it and
 *   the value the permission patterns are matched against:
 *   `fs:file:` / `fs:glob:` → `fs:read:`, `sql:model:` → `sql:read:`, `resource:` → `resource:read:`,
 *   `git://` → `git:read:`. The value is the identifier after the scheme with any `?query`
 *   removed, except for `fs:glob:` whose value is the whole pattern text (`?` is a wildcard
 *   there). For `git://` leading slashes are dropped too, so `git:///status/x` and
 *   `git://status/x` both have the value `status/x`. An `fs:file:` path is normalized first
 *   (`docs/../secret.txt` is matched as `secret.txt`, the file that would be read), and one
 *   that is absolute or leaves the root is denied. Any other scheme (including the
 *   host-internal `fs:dir:`) maps to null and is therefore denied.
 * - `isPermitted` allows a read when some permission with that prefix matches the value with
 *   `fnmatch`; a pattern starting with `**\/` may also match with that prefix removed
 *   (so `fs:read:**\/*.md` covers `README.md`).
 * - `fnmatch` is Python's `fnmatch.fnmatchcase`: `*` matches any run of characters including `/`,
 *   `?` one character, `[...]` a class (`[!...]` negated, `]` first is literal, ranges `a-z`,
 *   reversed ranges match nothing, an unclosed `[` is a literal `[`); backslash is an ordinary
 *   character; matching is case-sensitive and by Unicode code point.
 * - `permissionDeniedMessage(extension, resource)` is `<extension> may not read resource <r>`, except
 *   for an `fs:` identifier that leaves the root lexically (`escapesRootLexically`: absolute, `..`):
 *   that is `resource escapes project root: <r>`, the resolver's own message, so the cause a user
 *   sees does not depend on the extension's permissions.
 * A permission is not filesystem isolation: a trusted process can still do its own I/O.
 */
import { fsPathOf, stripQuery } from './identifiers.js'

type Token =
  | { readonly kind: 'char'; readonly char: string }
  | { readonly kind: 'any' }
  | { readonly kind: 'star' }
  | {
      readonly kind: 'class'
      readonly negated: boolean
      readonly singles: ReadonlySet<number>
      readonly ranges: readonly (readonly [number, number])[]
    }

const compiledPatterns = new Map<string, readonly Token[]>()

/** Parses the class body between `[` and its closing `]` (both excluded). */
function parseClass(body: readonly string[]): Token {
  const negated = body[0] === '!'
  const items = negated ? body.slice(1) : body
  const singles = new Set<number>()
  const ranges: [number, number][] = []
  let k = 0
  while (k < items.length) {
    const first = items[k] as string
    const end = items[k + 2]
    if (items[k + 1] === '-' && end !== undefined) {
      const low = first.codePointAt(0) as number
      const high = end.codePointAt(0) as number
      // Python drops reversed ranges (`z-a`) entirely: they match nothing.
      if (low <= high) ranges.push([low, high])
      k += 3
    } else {
      singles.add(first.codePointAt(0) as number)
      k += 1
    }
  }
  return { kind: 'class', negated, singles, ranges }
}

function compile(pattern: string): readonly Token[] {
  const cached = compiledPatterns.get(pattern)
  if (cached) return cached
  const chars = Array.from(pattern)
  const tokens: Token[] = []
  let i = 0
  while (i < chars.length) {
    const c = chars[i] as string
    i += 1
    if (c === '*') {
      if (tokens[tokens.length - 1]?.kind !== 'star') tokens.push({ kind: 'star' })
    } else if (c === '?') {
      tokens.push({ kind: 'any' })
    } else if (c === '[') {
      let j = i
      if (chars[j] === '!') j += 1
      if (chars[j] === ']') j += 1
      while (j < chars.length && chars[j] !== ']') j += 1
      if (j >= chars.length) {
        tokens.push({ kind: 'char', char: '[' })
      } else {
        tokens.push(parseClass(chars.slice(i, j)))
        i = j + 1
      }
    } else {
      tokens.push({ kind: 'char', char: c })
    }
  }
  compiledPatterns.set(pattern, tokens)
  return tokens
}

function matchesOne(token: Token, char: string): boolean {
  switch (token.kind) {
    case 'char':
      return token.char === char
    case 'any':
      return true
    case 'star':
      return false
    case 'class': {
      const code = char.codePointAt(0) as number
      const inClass = token.singles.has(code) || token.ranges.some(([low, high]) => code >= low && code <= high)
      return inClass !== token.negated
    }
  }
}

/** Python `fnmatch.fnmatchcase(value, pattern)`. */
export function fnmatch(pattern: string, value: string): boolean {
  const tokens = compile(pattern)
  const chars = Array.from(value)
  // Every non-star token consumes exactly one character, so backtracking to the most recent
  // star is complete (the classic linear-space wildcard algorithm).
  let p = 0
  let v = 0
  let starToken = -1
  let starValue = 0
  while (v < chars.length) {
    const token = tokens[p]
    if (token?.kind === 'star') {
      starToken = p
      starValue = v
      p += 1
    } else if (token !== undefined && matchesOne(token, chars[v] as string)) {
      p += 1
      v += 1
    } else if (starToken >= 0) {
      p = starToken + 1
      starValue += 1
      v = starValue
    } else {
      return false
    }
  }
  while (tokens[p]?.kind === 'star') p += 1
  return p === tokens.length
}

const SCHEME_PERMISSIONS: readonly { scheme: string; prefix: string; stripQuery: boolean }[] = [
  { scheme: 'fs:file:', prefix: 'fs:read:', stripQuery: true },
  { scheme: 'fs:glob:', prefix: 'fs:read:', stripQuery: false },
  { scheme: 'sql:model:', prefix: 'sql:read:', stripQuery: true },
  { scheme: 'resource:', prefix: 'resource:read:', stripQuery: true },
  { scheme: 'git://', prefix: 'git:read:', stripQuery: true },
]

/** The permission prefix governing `resource` and the value its patterns match, or null (denied). */
export function permissionFor(resource: string): { prefix: string; value: string } | null {
  for (const { scheme, prefix, stripQuery: strip } of SCHEME_PERMISSIONS) {
    if (!resource.startsWith(scheme)) continue
    let value = resource.slice(scheme.length)
    if (strip) value = stripQuery(value)
    if (scheme === 'git://') value = value.replace(/^\/+/, '')
    if (scheme === 'fs:file:') {
      // Match the path that will be read: `docs/../secret` must not pass for `docs/*`.
      const normalized = fsPathOf(value)
      if (normalized === null) return null
      value = normalized
    }
    return { prefix, value }
  }
  return null
}

/** Whether an extension holding `permissions` may read `resource`. */
export function isPermitted(permissions: readonly string[], resource: string): boolean {
  const target = permissionFor(resource)
  if (target === null) return false
  return permissions.some((permission) => {
    if (!permission.startsWith(target.prefix)) return false
    const pattern = permission.slice(target.prefix.length)
    if (fnmatch(pattern, target.value)) return true
    return pattern.startsWith('**/') && fnmatch(pattern.slice(3), target.value)
  })
}

/**
 * Whether `resource` is an `fs:` identifier whose path (lexically) leaves the project root: an
 * absolute or `..`-climbing `fs:file:`/`fs:dir:` path, or an `fs:glob:` pattern with a `..` segment.
 */
export function escapesRootLexically(resource: string): boolean {
  if (resource.startsWith('fs:file:')) return fsPathOf(resource.slice('fs:file:'.length)) === null
  if (resource.startsWith('fs:dir:')) return fsPathOf(resource.slice('fs:dir:'.length)) === null
  if (resource.startsWith('fs:glob:')) return resource.slice('fs:glob:'.length).split('/').includes('..')
  return false
}

/**
 * The error message for a denied read (SPEC §6). Confinement wins over permissions: an `fs:`
 * path leaving the project root is reported as `resource escapes project root: <resource>`
 * whatever the permissions say, exactly as the resolver reports it for a permitted read.
 */
export function permissionDeniedMessage(extension: string, resource: string): string {
  if (escapesRootLexically(resource)) return `resource escapes project root: ${resource}`
  return `${extension} may not read resource ${resource}`
}
