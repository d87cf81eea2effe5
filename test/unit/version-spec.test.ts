/**
 * Version ranges against the real `packaging` answers (test/fixtures/version-specs/cases.json,
 * written by generate.py beside it): every spec the Python tool accepts means the same here;
 * specs it rejects are npm ranges here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { isPep440SpecifierSet, versionSatisfies, VersionSpecError } from '../../src/host/version-spec.js'

const fixture = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/version-specs/cases.json'), 'utf8')) as {
  cases: [string, string, boolean | 'invalid-spec' | 'invalid-version'][]
}

describe('version ranges', () => {
  it('answers every PEP 440 case as packaging does', () => {
    const wrong: string[] = []
    for (const [version, spec, expected] of fixture.cases) {
      if (expected === 'invalid-spec') continue
      expect(isPep440SpecifierSet(spec), spec).toBe(true)
      let got: boolean | string
      try {
        got = versionSatisfies(version, spec)
      } catch (error) {
        got = (error as Error).message
      }
      if (got !== expected) wrong.push(`${version} in ${spec}: packaging ${String(expected)}, ours ${String(got)}`)
    }
    expect(wrong).toEqual([])
  })

  it('reads what packaging rejects as an npm range', () => {
    const rejected = new Set(fixture.cases.filter((c) => c[2] === 'invalid-spec').map((c) => c[1]))
    expect([...rejected].sort()).toEqual(['1.2.3', '1.x', '<=1.0+local', '==1.0a1.*', '>=1.2 <2', '^1.0.0', 'latest', '~1.4', '~=1'].sort())
    for (const spec of rejected) expect(isPep440SpecifierSet(spec), spec).toBe(false)
    expect(versionSatisfies('1.4.2', '^1.0.0')).toBe(true)
    expect(versionSatisfies('2.0.0', '^1.0.0')).toBe(false)
    expect(versionSatisfies('1.4.9', '~1.4')).toBe(true)
    expect(versionSatisfies('1.2.5', '>=1.2 <2')).toBe(true)
    expect(versionSatisfies('2.0.0-alpha.1', '^2.0.0-0')).toBe(true)
    expect(versionSatisfies('1.0.0', '*')).toBe(true)
    expect(() => versionSatisfies('1.0.0', 'latest')).toThrow(new VersionSpecError('invalid version range: latest'))
    expect(() => versionSatisfies('1.0', '^1.0.0')).toThrow('version 1.0 is not a semver version (range ^1.0.0)')
    expect(() => versionSatisfies('banana', '>=1')).toThrow('version banana is not a PEP 440 version (range >=1)')
  })
})
