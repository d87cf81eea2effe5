/**
 * Version ranges of `extension add --version SPEC` and of manifest `[[dependencies]] version`.
 *
 * The Python insitu tool checks them with `packaging`: `Version(v) in SpecifierSet(spec)`, PEP 440
 * specifier sets such as `>=1.2,<2`, `~=1.4`, `==1.*`, `!=1.3.0`. JavaScript users write npm
 * ranges (`^1.2.0`, `~1.4`, `1.x`, `>=1.2 <2`). Both are accepted: a spec whose every
 * comma-separated clause is a PEP 440 specifier is read as PEP 440 (so every range the Python
 * tool accepts means here exactly what it means there), anything else as an npm semver range.
 *
 * Contract:
 * - `versionSatisfies(version, spec)` → boolean. `*` and the empty spec accept every version.
 *   PEP 440: as `packaging` 26 answers for one candidate (pre-releases match when the
 *   specifiers do; `<V` excludes V's own pre-releases, `>V` its post-releases and local
 *   versions; `===` compares text). npm ranges: `semver.satisfies` with pre-releases included.
 * - Throws `VersionSpecError` for a spec that is neither (`invalid version range: <spec>`) and for
 *   a version the spec's kind cannot read (`version <v> is not a PEP 440 version (range <spec>)`,
 *   or `… not a semver version …`).
 * - `isPep440SpecifierSet(spec)` says which reading a spec gets.
 */
import { createRequire } from 'node:module'
import {
  comparePep440,
  formatPep440,
  isPostrelease,
  isPrerelease,
  parsePep440Version,
  type Pep440Version,
  publicVersion,
} from './pep440-version.js'

type Semver = typeof import('semver')
let loadedSemver: Semver | undefined

/**
 * The `semver` package, loaded the first time an npm range is checked: only extension
 * dependencies and `extension add --version` have ranges, and loading it with the plugin cost
 * every `vite` command about 5 ms (bench/RESULTS.md, "Startup"). Required from node_modules
 * (a dependency of the package), so the bundle does not inline it.
 */
function semverPackage(): Semver {
  loadedSemver ??= createRequire(import.meta.url)('semver') as Semver
  return loadedSemver
}

export class VersionSpecError extends Error {
  override name = 'VersionSpecError'
}

interface Specifier {
  operator: '~=' | '==' | '!=' | '<=' | '>=' | '<' | '>' | '==='
  version: string
}

const CLAUSE = /^\s*(~=|===|==|!=|<=|>=|<|>)\s*(\S+?)\s*$/
const WILDCARD_PREFIX = /^v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*$/i

export function versionSatisfies(version: string, spec: string): boolean {
  if (spec.trim() === '' || spec.trim() === '*') return true
  const specifiers = pep440Specifiers(spec)
  if (specifiers) {
    const candidate = parsePep440Version(version)
    if (!candidate) throw new VersionSpecError(`version ${version} is not a PEP 440 version (range ${spec})`)
    return specifiers.every((specifier) => matches(candidate, version, specifier))
  }
  const semver = semverPackage()
  if (semver.validRange(spec) === null) throw new VersionSpecError(`invalid version range: ${spec}`)
  if (semver.valid(version) === null) throw new VersionSpecError(`version ${version} is not a semver version (range ${spec})`)
  return semver.satisfies(version, spec, { includePrerelease: true })
}

export function isPep440SpecifierSet(spec: string): boolean {
  return pep440Specifiers(spec) !== null
}

/** The clauses of a PEP 440 specifier set, or null when `spec` is not one. */
function pep440Specifiers(spec: string): Specifier[] | null {
  const clauses = spec.split(',').filter((clause) => clause.trim() !== '')
  if (clauses.length === 0) return null
  const specifiers: Specifier[] = []
  for (const clause of clauses) {
    const match = CLAUSE.exec(clause)
    if (!match) return null
    const operator = match[1] as Specifier['operator']
    const text = match[2]!
    if (!validSpecifierVersion(operator, text)) return null
    specifiers.push({ operator, version: text })
  }
  return specifiers
}

function validSpecifierVersion(operator: Specifier['operator'], text: string): boolean {
  if (operator === '===') return true
  if ((operator === '==' || operator === '!=') && text.endsWith('.*')) return WILDCARD_PREFIX.test(text.slice(0, -2))
  const version = parsePep440Version(text)
  if (!version) return false
  if (operator === '==' || operator === '!=') return true
  if (version.local !== null) return false
  return operator !== '~=' || version.release.length >= 2
}

function matches(candidate: Pep440Version, text: string, specifier: Specifier): boolean {
  switch (specifier.operator) {
    case '===':
      return text.trim().toLowerCase() === specifier.version.toLowerCase()
    case '==':
      return equal(candidate, specifier.version)
    case '!=':
      return !equal(candidate, specifier.version)
    case '<=':
      return comparePep440(publicVersion(candidate), version(specifier.version)) <= 0
    case '>=':
      return comparePep440(publicVersion(candidate), version(specifier.version)) >= 0
    case '<':
      return lessThan(candidate, version(specifier.version))
    case '>':
      return greaterThan(candidate, version(specifier.version))
    case '~=':
      return compatible(candidate, specifier.version)
  }
}

function version(text: string): Pep440Version {
  return parsePep440Version(text)!
}

function equal(candidate: Pep440Version, spec: string): boolean {
  if (spec.endsWith('.*')) {
    const split = versionSplit(formatPep440(version(spec.slice(0, -2))))
    const prospective = leftPad(versionSplit(formatPep440(publicVersion(candidate))), numericPrefixLength(split))
    const shortened = prospective.slice(0, split.length)
    return shortened.length === split.length && shortened.every((part, i) => part === split[i])
  }
  const wanted = version(spec)
  return comparePep440(wanted.local === null ? publicVersion(candidate) : candidate, wanted) === 0
}

function lessThan(candidate: Pep440Version, spec: Pep440Version): boolean {
  if (comparePep440(candidate, spec) >= 0) return false
  // "<V MUST NOT allow a pre-release of the specified version unless V is itself one" (PEP 440).
  const earliest: Pep440Version = { ...spec, dev: 0, local: null }
  return !(!isPrerelease(spec) && isPrerelease(candidate) && comparePep440(candidate, earliest) >= 0)
}

function greaterThan(candidate: Pep440Version, spec: Pep440Version): boolean {
  if (comparePep440(candidate, spec) <= 0) return false
  const postBase: Pep440Version = { ...candidate, post: null, dev: null, local: null }
  if (!isPostrelease(spec) && isPostrelease(candidate) && comparePep440(postBase, spec) === 0) return false
  return !(candidate.local !== null && comparePep440(publicVersion(candidate), spec) === 0)
}

/** `~=V` is `>=V, ==<V without its last release part>.*`. */
function compatible(candidate: Pep440Version, spec: string): boolean {
  const prefix = versionSplit(formatPep440(version(spec)))
  const numeric: string[] = []
  for (const part of prefix) {
    if (['dev', 'a', 'b', 'rc', 'post'].some((suffix) => part.startsWith(suffix))) break
    numeric.push(part)
  }
  const [epoch, ...release] = numeric.slice(0, -1)
  return comparePep440(publicVersion(candidate), version(spec)) >= 0 && equal(candidate, `${epoch}!${release.join('.')}.*`)
}

/** packaging's `_version_split`: epoch, then dot-separated parts, `1rc1` split into `1`, `rc1`. */
function versionSplit(text: string): string[] {
  const bang = text.lastIndexOf('!')
  const result = [bang === -1 ? '0' : text.slice(0, bang) || '0']
  for (const item of text.slice(bang + 1).split('.')) {
    const match = /^([0-9]+)((?:a|b|c|rc)[0-9]+)$/.exec(item)
    if (match) result.push(match[1]!, match[2]!)
    else result.push(item)
  }
  return result
}

function numericPrefixLength(split: readonly string[]): number {
  let length = 0
  while (length < split.length && /^[0-9]+$/.test(split[length]!)) length++
  return length
}

function leftPad(split: readonly string[], target: number): string[] {
  const numeric = numericPrefixLength(split)
  if (target <= numeric) return [...split]
  return [...split.slice(0, numeric), ...Array<string>(target - numeric).fill('0'), ...split.slice(numeric)]
}
