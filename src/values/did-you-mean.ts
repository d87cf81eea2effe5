/**
 * "Did you mean …?" for a name the project does not know (issue #18: a newcomer's misspelt
 * capability, option, model or template should point at the name they meant).
 *
 * Contract:
 * - `closestName(name, candidates)` is the candidate nearest to `name` by edit distance
 *   (optimal string alignment: insertions, deletions, substitutions and swaps of two neighbours
 *   cost 1; letter case is ignored), or undefined when none is near enough: at most
 *   `max(1, floor(n / 3))` edits, where n is the length of `name` after the prefix it shares
 *   with the candidate (`includ` → `include`, `open_taks` → `open_tasks`, `pth` → `path`;
 *   `nope` finds nothing in `sql, tree`, nor `@insitu/nope` in `@insitu/json`: a shared
 *   namespace does not make two names alike). Ties go to the candidate listed first; `name`
 *   itself is never suggested.
 * - `didYouMean(name, candidates)` is the text appended to a message: `; did you mean <x>?`, or
 *   `''` when there is nothing to suggest, so a message keeps its exact prefix
 *   (`unknown transform: includ; did you mean include?`).
 * Pure: no I/O.
 */

export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase()
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    if (candidate === name) continue
    const other = candidate.toLowerCase()
    const limit = Math.max(1, Math.floor((name.length - sharedPrefix(wanted, other)) / 3))
    if (Math.abs(candidate.length - name.length) > limit) continue
    const distance = editDistance(wanted, other, Math.min(limit + 1, bestDistance))
    if (distance <= limit && distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

function sharedPrefix(a: string, b: string): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

export function didYouMean(name: string, candidates: Iterable<string>): string {
  const closest = closestName(name, candidates)
  return closest === undefined ? '' : `; did you mean ${closest}?`
}

/** Optimal string alignment distance; stops early (returns `bound`) once it cannot be below `bound`. */
function editDistance(a: string, b: string, bound: number): number {
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    let rowMinimum = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1)
      current.push(value)
      rowMinimum = Math.min(rowMinimum, value)
    }
    if (rowMinimum >= bound) return bound
    before = previous
    previous = current
  }
  return previous[b.length]!
}
