/**
 * `insitu(options)` validates its options when it is called (in vite.config), with messages
 * naming the option; `resolveOptions` fills every default.
 */
import { describe, expect, test } from 'vitest'
import insitu, { type InsituOptions, type ModuleRule } from '../../src/index.js'
import { resolveOptions } from '../../src/plugin/options.js'
import { liveExtensionPids } from '../../src/host/process.js'

/** Options a JavaScript config could pass, whatever TypeScript says. */
function untyped(options: Record<string, unknown>): InsituOptions {
  return options as InsituOptions
}

describe('insitu(options) rejects invalid options at once', () => {
  test.each([
    ['timeout -1', { timeout: -1 }, 'vite-plugin-insitu: option "timeout" must be a positive integer (milliseconds) (got -1)'],
    ['timeout 0', { timeout: 0 }, 'vite-plugin-insitu: option "timeout" must be a positive integer (milliseconds) (got 0)'],
    ['timeout 1.5', { timeout: 1.5 }, 'vite-plugin-insitu: option "timeout" must be a positive integer (milliseconds) (got 1.5)'],
    ['timeout "10"', { timeout: '10' }, 'vite-plugin-insitu: option "timeout" must be a positive integer (milliseconds) (got "10")'],
    ['python ""', { python: '' }, 'vite-plugin-insitu: option "python" must be a non-empty string (got "")'],
    ['python 3', { python: 3 }, 'vite-plugin-insitu: option "python" must be a non-empty string (got 3)'],
    [
      'include 3',
      { include: 3 },
      'vite-plugin-insitu: option "include" must be a non-empty string or an array of non-empty strings (got 3)',
    ],
    [
      'include [""]',
      { include: [''] },
      'vite-plugin-insitu: option "include" must be a non-empty string or an array of non-empty strings (got [""])',
    ],
    [
      'exclude [1]',
      { exclude: [1] },
      'vite-plugin-insitu: option "exclude" must be a non-empty string or an array of non-empty strings (got [1])',
    ],
    ['root ""', { root: '' }, 'vite-plugin-insitu: option "root" must be a folder path (got "")'],
    ['persistIndex "yes"', { persistIndex: 'yes' }, 'vite-plugin-insitu: option "persistIndex" must be a boolean (got "yes")'],
    [
      'extensions { a: 1 }',
      { extensions: { 'acme/a': 1 } },
      'vite-plugin-insitu: option "extensions" must be an object mapping extension names to true or false (got {"acme/a":1})',
    ],
    ['modules {}', { modules: {} }, 'vite-plugin-insitu: option "modules" must be an array of rules (got {})'],
    [
      'modules[0].transform missing',
      { modules: [{ include: '*.csv' }] },
      'vite-plugin-insitu: option "modules[0].transform" must be a transform name (got undefined)',
    ],
    [
      'modules[1].include missing',
      { modules: [{ include: '*.csv', transform: 'csv' }, { transform: 'csv' }] },
      'vite-plugin-insitu: option "modules[1].include" must be a non-empty string or an array of non-empty strings (got undefined)',
    ],
    [
      'modules[0].options []',
      { modules: [{ include: '*.csv', transform: 'csv', options: [] }] },
      'vite-plugin-insitu: option "modules[0].options" must be an object (got [])',
    ],
    [
      'modules[0] unknown key',
      { modules: [{ include: '*.csv', transform: 'csv', transfrom: 'x' }] },
      'vite-plugin-insitu: unknown option "modules[0].transfrom"',
    ],
    ['unknown option key', { timout: 5 }, 'vite-plugin-insitu: unknown option "timout"'],
  ])('%s', (_name, options, message) => {
    expect(() => insitu(untyped(options))).toThrow(new Error(message))
  })

  test('options that are not an object', () => {
    expect(() => insitu(null as unknown as InsituOptions)).toThrow(
      new Error('vite-plugin-insitu: option "options" must be an object (got null)'),
    )
    expect(() => insitu(['a'] as unknown as InsituOptions)).toThrow(
      new Error('vite-plugin-insitu: option "options" must be an object (got ["a"])'),
    )
  })
})

describe('resolveOptions', () => {
  test('fills every default', () => {
    expect(resolveOptions({})).toEqual({
      root: undefined,
      include: undefined,
      exclude: undefined,
      modules: [],
      timeout: 30_000,
      python: 'python3',
      extensions: {},
      persistIndex: false,
    })
    expect(resolveOptions()).toEqual(resolveOptions({}))
  })

  test('keeps valid options, turning single patterns into lists', () => {
    const rule: ModuleRule = { include: 'data/*.csv', transform: 'csv' }
    expect(
      resolveOptions({
        root: 'docs',
        include: '**/*.md',
        exclude: ['drafts/**'],
        modules: [rule, { include: ['*.tsv'], exclude: 'big.tsv', transform: 'tsv', options: { sep: '\t' } }],
        timeout: 500,
        python: '/usr/bin/python3.11',
        extensions: { 'acme/slow': false },
        persistIndex: true,
      }),
    ).toEqual({
      root: 'docs',
      include: ['**/*.md'],
      exclude: ['drafts/**'],
      modules: [
        { include: ['data/*.csv'], exclude: [], transform: 'csv', options: {} },
        { include: ['*.tsv'], exclude: ['big.tsv'], transform: 'tsv', options: { sep: '\t' } },
      ],
      timeout: 500,
      python: '/usr/bin/python3.11',
      extensions: { 'acme/slow': false },
      persistIndex: true,
    })
  })

  test('insitu() with valid options builds the plugin without starting anything', () => {
    const plugin = insitu({ timeout: 1000, modules: [{ include: '*.csv', transform: 'csv' }] })
    expect(plugin.name).toBe('vite-plugin-insitu')
    expect(plugin.enforce).toBe('pre')
    expect(liveExtensionPids()).toEqual([])
  })
})
