/**
 * SOURCE parsing and dependency-source resolution of `extension add` (src/extensions/sources.ts);
 * the pathlib joins against Python's own answers (test/fixtures/pathlib-join, from generate.py).
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { dependencySource, gitSource, pathlibJoin } from '../../src/extensions/sources.js'
import { removeTempDirs, tempDir } from './temp-folders.js'

const cases = (
  JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../fixtures/pathlib-join/cases.json'), 'utf8')) as { cases: [string, string, string][] }
).cases

afterEach(() => removeTempDirs())

describe('extension sources', () => {
  it('parses github:, git: and plain git URLs', () => {
    expect(gitSource('github:acme/words')).toEqual({ url: 'https://github.com/acme/words.git', revision: null })
    expect(gitSource('github:acme/words@v1.2.0')).toEqual({ url: 'https://github.com/acme/words.git', revision: 'v1.2.0' })
    expect(gitSource('github:acme/words@a@b')).toEqual({ url: 'https://github.com/acme/words.git', revision: 'a@b' })
    expect(gitSource('git:https://host/x.git#main')).toEqual({ url: 'https://host/x.git', revision: 'main' })
    expect(gitSource('git:https://host/x#y.git#v2')).toEqual({ url: 'https://host/x#y.git', revision: 'v2' })
    expect(gitSource('git:ssh://git@host/x.git')).toEqual({ url: 'ssh://git@host/x.git', revision: null })
    expect(gitSource('https://host/x.git#main')).toEqual({ url: 'https://host/x.git#main', revision: null })
  })

  it('joins paths as Python pathlib does', () => {
    for (const [base, source, joined] of cases) expect(pathlibJoin(base, source), `${base} / ${source}`).toBe(joined)
  })

  it('resolves a dependency source against the checkout only when that path exists', () => {
    const root = tempDir()
    fs.mkdirSync(path.join(root, 'base'))
    const checkout = path.join(root, 'app')
    fs.mkdirSync(checkout)
    expect(dependencySource(checkout, '../base')).toBe(`${checkout}/../base`)
    expect(dependencySource(checkout, '../missing')).toBe('../missing')
    for (const url of ['git:../base', 'github:acme/x', 'https://h/x.git', 'http://h/x', 'ssh://h/x']) expect(dependencySource(checkout, url)).toBe(url)
  })
})
