/**
 * PEP 440 versions, as Python's `packaging.version.Version` parses, prints and orders them: the
 * Python insitu tool checks `--version` and dependency ranges with `packaging` (SPEC §12), so
 * the plugin reads those ranges the same way (see version-spec.ts).
 *
 * Contract:
 * - `parsePep440Version(text)` → a `Pep440Version` (epoch, release, pre, post, dev, local,
 *   normalized as `packaging` normalizes them: `alpha` → `a`, `c`/`pre`/`preview` → `rc`, `rev`/`r`
 *   → `post`, implicit numbers 0, local segments lowercased), or `null` when the text is not a
 *   PEP 440 version (surrounding whitespace and a leading `v` are allowed, case-insensitive).
 * - `comparePep440(a, b)` orders as `packaging`'s `_cmpkey` does: trailing release zeros do not
 *   count; a dev release sorts before its pre-releases, a pre-release before the release, a
 *   post-release after it; local versions after the public one (numeric local parts above
 *   textual ones).
 * - `formatPep440(v)` is `str(Version(...))`; `publicVersion`, `isPrerelease`,
 *   `isPostrelease` mirror the `packaging` properties of the same names.
 * Pure functions; nothing is recorded.
 */

export interface Pep440Version {
  epoch: number
  release: number[]
  pre: { letter: 'a' | 'b' | 'rc'; number: number } | null
  post: number | null
  dev: number | null
  /** Lowercased local segments, numbers as numbers (`+ubuntu.1` → `['ubuntu', 1]`). */
  local: (string | number)[] | null
}

// The pattern of packaging.version.VERSION_PATTERN, anchored.
const VERSION = new RegExp(
  '^\\s*v?' +
    '(?:(?<epoch>[0-9]+)!)?' +
    '(?<release>[0-9]+(?:\\.[0-9]+)*)' +
    '(?<pre>[-_.]?(?<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?<pre_n>[0-9]+)?)?' +
    '(?<post>(?:-(?<post_n1>[0-9]+))|(?:[-_.]?(?<post_l>post|rev|r)[-_.]?(?<post_n2>[0-9]+)?))?' +
    '(?<dev>[-_.]?(?<dev_l>dev)[-_.]?(?<dev_n>[0-9]+)?)?' +
    '(?:\\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?' +
    '\\s*$',
  'i',
)

export function parsePep440Version(text: string): Pep440Version | null {
  const match = VERSION.exec(text)
  if (!match?.groups) return null
  const g = match.groups
  let pre: Pep440Version['pre'] = null
  if (g.pre_l !== undefined) {
    const label = g.pre_l.toLowerCase()
    const letter = label === 'alpha' || label === 'a' ? 'a' : label === 'beta' || label === 'b' ? 'b' : 'rc'
    pre = { letter, number: Number(g.pre_n ?? 0) }
  }
  let post: number | null = null
  if (g.post !== undefined) post = Number(g.post_n1 ?? g.post_n2 ?? 0)
  return {
    epoch: Number(g.epoch ?? 0),
    release: g.release!.split('.').map(Number),
    pre,
    post,
    dev: g.dev !== undefined ? Number(g.dev_n ?? 0) : null,
    local:
      g.local === undefined
        ? null
        : g.local
            .toLowerCase()
            .split(/[-_.]/)
            .map((part) => (/^[0-9]+$/.test(part) ? Number(part) : part)),
  }
}

export function formatPep440(v: Pep440Version): string {
  let text = v.epoch !== 0 ? `${v.epoch}!` : ''
  text += v.release.join('.')
  if (v.pre) text += `${v.pre.letter}${v.pre.number}`
  if (v.post !== null) text += `.post${v.post}`
  if (v.dev !== null) text += `.dev${v.dev}`
  if (v.local) text += `+${v.local.join('.')}`
  return text
}

export function publicVersion(v: Pep440Version): Pep440Version {
  return v.local === null ? v : { ...v, local: null }
}

export function isPrerelease(v: Pep440Version): boolean {
  return v.pre !== null || v.dev !== null
}

export function isPostrelease(v: Pep440Version): boolean {
  return v.post !== null
}

/** -1, 0 or 1, as `packaging` orders versions. */
export function comparePep440(a: Pep440Version, b: Pep440Version): number {
  if (a.epoch !== b.epoch) return a.epoch < b.epoch ? -1 : 1
  const ra = trimZeros(a.release)
  const rb = trimZeros(b.release)
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    // A shorter release is a prefix of the longer one here: it sorts first (Python tuple order).
    if (i >= ra.length) return -1
    if (i >= rb.length) return 1
    if (ra[i] !== rb[i]) return ra[i]! < rb[i]! ? -1 : 1
  }
  return (
    compareKeys(preKey(a), preKey(b)) ||
    compareKeys(a.post === null ? [-Infinity] : [a.post], b.post === null ? [-Infinity] : [b.post]) ||
    compareKeys(a.dev === null ? [Infinity] : [a.dev], b.dev === null ? [Infinity] : [b.dev]) ||
    compareLocal(a.local, b.local)
  )
}

function trimZeros(release: readonly number[]): number[] {
  let end = release.length
  while (end > 0 && release[end - 1] === 0) end--
  return release.slice(0, end)
}

/** packaging's `_pre`: a dev-only release sorts before every pre-release; no pre-release after all. */
function preKey(v: Pep440Version): (number | string)[] {
  if (v.pre === null && v.post === null && v.dev !== null) return [-Infinity]
  if (v.pre === null) return [Infinity]
  return [v.pre.letter, v.pre.number]
}

function compareKeys(a: readonly (number | string)[], b: readonly (number | string)[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    if (x === y) continue
    // Infinity sentinels against a letter: packaging's Infinity/NegativeInfinity compare with anything.
    if (typeof x === 'number' && typeof y === 'string') return x === -Infinity ? -1 : 1
    if (typeof x === 'string' && typeof y === 'number') return y === -Infinity ? 1 : -1
    return x < y ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}

function compareLocal(a: Pep440Version['local'], b: Pep440Version['local']): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    if (x === y) continue
    // A numeric segment sorts above a textual one; like segments compare by value.
    if (typeof x !== typeof y) return typeof x === 'number' ? 1 : -1
    return x < y ? -1 : 1
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}
