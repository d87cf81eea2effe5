/**
 * tomlKeyPosition: where a key of a valid TOML document is written (for value errors).
 */
import { describe, expect, it } from 'vitest'
import { tomlKeyPosition } from '../../src/host/toml-positions.js'
import { ConfigError, parseProjectConfig } from '../../src/host/config.js'
import { parseManifest } from '../../src/host/manifest.js'
import { errorOf } from './thrown-error.js'

const DOC = [
  '# a comment with [brackets] and key = value',
  'version = 1',
  '[watch]',
  '  debounce_ms = 30 # trailing',
  '[[extensions]]',
  'path = "a"',
  '[[extensions]]',
  'path = """',
  'not_a_key = 1',
  '"""',
  "'quoted key' = 2",
  'enabled = false',
  '[extensions.inner]',
  'deep.dotted . key = 3',
  'inline = { a = 1, b = { c = [1, { d = 2 }] } }',
  'list = [',
  '  "x", # comment',
  '  "y",',
  ']',
].join('\n')

describe('tomlKeyPosition', () => {
  it('places keys of tables, arrays of tables, dotted and quoted keys', () => {
    expect(tomlKeyPosition(DOC, ['version'])).toEqual({ line: 2, column: 1 })
    expect(tomlKeyPosition(DOC, ['watch'])).toEqual({ line: 3, column: 1 })
    expect(tomlKeyPosition(DOC, ['watch', 'debounce_ms'])).toEqual({ line: 4, column: 3 })
    expect(tomlKeyPosition(DOC, ['extensions', 0])).toEqual({ line: 5, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 0, 'path'])).toEqual({ line: 6, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'path'])).toEqual({ line: 8, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'quoted key'])).toEqual({ line: 11, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'enabled'])).toEqual({ line: 12, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'inner'])).toEqual({ line: 13, column: 1 })
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'inner', 'deep', 'dotted', 'key'])).toEqual({ line: 14, column: 15 })
  })

  it('places keys inside inline tables and elements of arrays', () => {
    const inner = ['extensions', 1, 'inner']
    expect(tomlKeyPosition(DOC, [...inner, 'inline', 'b', 'c'])).toEqual({ line: 15, column: 25 })
    expect(tomlKeyPosition(DOC, [...inner, 'inline', 'b', 'c', 1, 'd'])).toEqual({ line: 15, column: 35 })
    expect(tomlKeyPosition(DOC, [...inner, 'list', 1])).toEqual({ line: 18, column: 3 })
  })

  it('falls back to the nearest written ancestor, and never to text inside strings', () => {
    expect(tomlKeyPosition(DOC, ['extensions', 1, 'not_a_key'])).toEqual({ line: 7, column: 1 })
    expect(tomlKeyPosition(DOC, ['watch', 'step_ms'])).toEqual({ line: 3, column: 1 })
    expect(tomlKeyPosition(DOC, ['paths', 'models'])).toBeNull()
    expect(tomlKeyPosition('', ['x'])).toBeNull()
  })
})

describe('value errors are placed at their key', () => {
  it('in insitu.toml', () => {
    const text = 'version = 1\n\n[watch]\nstep_ms = 5\n  debounce_ms = -1\n'
    const error = errorOf(ConfigError, () => parseProjectConfig(text, 'insitu.toml'))
    expect(error.message).toBe('insitu.toml:5:3: watch.debounce_ms: must be >= 0')
    expect([error.line, error.column]).toEqual([5, 3])
    expect(errorOf(ConfigError, () => parseProjectConfig('[[extensions]]\npath = "a"\n\n[[extensions]]\npath = "b"\nenabled = "no"\n', 'insitu.toml')).message).toBe(
      'insitu.toml:6:1: extensions[1].enabled: must be a boolean',
    )
    expect(errorOf(ConfigError, () => parseProjectConfig('watch = { debounce_ms = 1, poll = 2 }', 'insitu.toml')).message).toBe(
      'insitu.toml:1:28: watch: unknown key poll',
    )
  })

  it('in insitu-extension.toml', () => {
    const text = 'name = "a"\nversion = "1"\n[extension]\ncommand = ["x"]\n\n[[capabilities]]\nkind = "transform"\nname = "t"\n\n[[capabilities]]\nkind = "nope"\nname = "u"\n'
    const error = errorOf(ConfigError, () => parseManifest(text, 'insitu-extension.toml'))
    expect(error.message).toBe('insitu-extension.toml:11:1: capabilities[1].kind: must be one of "resource", "transform", "renderer", "validator"')
    expect([error.line, error.column]).toEqual([11, 1])
  })
})
