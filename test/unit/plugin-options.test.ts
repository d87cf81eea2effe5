/**
 * `insitu(options)` validates its options when it is called (in vite.config), with messages
 * naming the option; `resolveOptions` fills every default. Also what the plugin decides
 * without the engine: the project scope (`loadProjectScope`, on real temp folders) and which
 * file changes restart the dev server (`isRestartTrigger`).
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, test } from 'vitest'
import insitu, { type InsituOptions, type ModuleRule } from '../../src/index.js'
import { resolveOptions } from '../../src/plugin/options.js'
import { loadProjectScope } from '../../src/plugin/project-scope.js'
import { isRestartTrigger, ServerRestarts } from '../../src/sync/restart-triggers.js'
import { ConfigError } from '../../src/host/config.js'
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
    ['renderTimeout 0', { renderTimeout: 0 }, 'vite-plugin-insitu: option "renderTimeout" must be a positive integer (milliseconds) (got 0)'],
    ['renderTimeout "1s"', { renderTimeout: '1s' }, 'vite-plugin-insitu: option "renderTimeout" must be a positive integer (milliseconds) (got "1s")'],
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
    ['cache 0', { cache: 0 }, 'vite-plugin-insitu: option "cache" must be a boolean (got 0)'],
    ['check 1', { check: 1 }, 'vite-plugin-insitu: option "check" must be a boolean (got 1)'],
    ['write "yes"', { write: 'yes' }, 'vite-plugin-insitu: option "write" must be a boolean (got "yes")'],
    ['buildProcess "no"', { buildProcess: 'no' }, 'vite-plugin-insitu: option "buildProcess" must be a boolean (got "no")'],
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

  test('a module rule\'s options hold what a region\'s can, and say which value does not', () => {
    const rule = (options: Record<string, unknown>) => untyped({ modules: [{ include: '*.csv', transform: 'csv' }, { include: '*.tsv', transform: 'tsv', options }] })
    const must = 'must be a string, number, boolean, null, Date, array or plain object of them'
    class Format {}
    const cycle: Record<string, unknown> = { a: 1 }
    cycle.self = cycle
    for (const [options, option, got] of [
      [{ format: () => 1 }, 'modules[1].options.format', 'a function'],
      [{ columns: ['a', Symbol('b')] }, 'modules[1].options.columns[1]', 'a symbol'],
      [{ lookup: new Map() }, 'modules[1].options.lookup', 'a Map'],
      [{ nested: { pattern: /x/ } }, 'modules[1].options.nested.pattern', 'a RegExp'],
      [{ 'a.b': { 'my key': () => 1 } }, 'modules[1].options["a.b"]["my key"]', 'a function'],
      [{ base: new URL('https://example.com/') }, 'modules[1].options.base', 'a URL'],
      [{ format: new Format() }, 'modules[1].options.format', 'a Format'],
      [{ bytes: Buffer.from('x') }, 'modules[1].options.bytes', 'a Buffer'],
      [cycle, 'modules[1].options.self', 'a circular reference'],
    ] as const) {
      expect(() => insitu(rule(options))).toThrow(new Error(`vite-plugin-insitu: option "${option}" ${must} (got ${got})`))
    }
    // What a region's options can hold passes as it is; the same object twice is not a cycle.
    const shared = { sep: ';' }
    const valid = {
      text: 'x', count: 2, ratio: 0.5, big: 10n ** 20n, on: true, none: null, absent: undefined,
      since: new Date('2026-12-08T00:00:00Z'), list: [1, 'a', [true], { deep: null }],
      bare: Object.assign(Object.create(null) as object, { k: 'v' }), a: shared, b: shared,
    }
    expect(resolveOptions(rule(valid)).modules[1]?.options).toBe(valid)
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
      renderTimeout: 30_000,
      python: 'python3',
      extensions: {},
      cache: true,
      check: false,
      write: false,
      buildProcess: true,
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
        cache: false,
        check: true,
        write: true,
        buildProcess: false,
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
      renderTimeout: 500,
      python: '/usr/bin/python3.11',
      extensions: { 'acme/slow': false },
      cache: false,
      check: true,
      write: true,
      buildProcess: false,
    })
    // The render budget follows the extension timeout unless set itself.
    expect(resolveOptions({ timeout: 500, renderTimeout: 2000 })).toMatchObject({ timeout: 500, renderTimeout: 2000 })
  })

  test('takes the deprecated persistIndex as an alias of cache, cache winning', () => {
    expect(resolveOptions({ persistIndex: false }).cache).toBe(false)
    expect(resolveOptions({ persistIndex: true }).cache).toBe(true)
    expect(resolveOptions({ cache: true, persistIndex: false }).cache).toBe(true)
    expect(resolveOptions({ cache: false, persistIndex: true }).cache).toBe(false)
    expect(resolveOptions({ cache: false })).not.toHaveProperty('persistIndex')
  })

  test('insitu() with valid options builds the plugin without starting anything', () => {
    const plugin = insitu({ timeout: 1000, modules: [{ include: '*.csv', transform: 'csv' }] })
    expect(plugin.name).toBe('vite-plugin-insitu')
    expect(plugin.enforce).toBe('pre')
    expect(liveExtensionPids()).toEqual([])
  })
})

describe('loadProjectScope', () => {
  const folders: string[] = []
  afterEach(() => {
    for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
  })

  /** A temp project: insitu.toml (given text) at the top, and an empty app/ folder below it. */
  function project(toml: string): string {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-scope-')))
    folders.push(root)
    fs.writeFileSync(path.join(root, 'insitu.toml'), toml)
    fs.mkdirSync(path.join(root, 'app'))
    return root
  }

  test('without root, walks up to the nearest insitu.toml; with root, uses exactly that folder', () => {
    const root = project('version = 1\n[sources]\ninclude = ["docs/**/*.md"]\n')
    const walked = loadProjectScope(resolveOptions({}), path.join(root, 'app'))
    expect(walked.error).toBeUndefined()
    expect(walked.root).toBe(root)
    expect(walked.configFile).toBe(path.join(root, 'insitu.toml'))
    expect(walked.config?.sources.include).toEqual(['docs/**/*.md'])

    const exact = loadProjectScope(resolveOptions({ root: 'app' }), root)
    expect(exact.error).toBeUndefined()
    expect(exact.root).toBe(path.join(root, 'app'))
    expect(exact.configFile).toBe(path.join(root, 'app/insitu.toml'))
    expect(exact.config?.sources.include).toEqual(['**/*.md'])
  })

  test('managed documents follow [sources], or the include/exclude options when given', () => {
    const root = project('[sources]\ninclude = ["docs/**/*.md"]\nexclude = ["docs/drafts/"]\n')
    const scope = loadProjectScope(resolveOptions({}), root)
    expect(scope.isManaged(path.join(root, 'docs/a.md'))).toBe(true)
    expect(scope.isManaged(path.join(root, 'docs/deep/b.md'))).toBe(true)
    expect(scope.isManaged(path.join(root, 'docs/drafts/c.md'))).toBe(false)
    expect(scope.isManaged(path.join(root, 'README.md'))).toBe(false)
    expect(scope.isManaged(path.join(root, 'main.js'))).toBe(false)
    expect(scope.isManaged(path.join(path.dirname(root), 'docs/a.md'))).toBe(false)

    const overridden = loadProjectScope(resolveOptions({ include: '*.md', exclude: 'node_modules/' }), root)
    expect(overridden.isManaged(path.join(root, 'README.md'))).toBe(true)
    expect(overridden.isManaged(path.join(root, 'docs/drafts/c.md'))).toBe(true)
    expect(overridden.isManaged(path.join(root, 'node_modules/x/README.md'))).toBe(false)
  })

  test('module rules match by their own patterns, first rule first', () => {
    const root = project('')
    const scope = loadProjectScope(
      resolveOptions({
        modules: [
          { include: 'data/*.csv', exclude: 'data/big.csv', transform: 'csv' },
          { include: '*.csv', transform: 'any_csv' },
        ],
      }),
      root,
    )
    expect(scope.moduleRule(path.join(root, 'data/a.csv'))?.transform).toBe('csv')
    expect(scope.moduleRule(path.join(root, 'data/big.csv'))?.transform).toBe('any_csv')
    expect(scope.moduleRule(path.join(root, 'data/a.tsv'))).toBeUndefined()
    expect(scope.moduleRule(path.join(root, 'docs/a.md'))).toBeUndefined()
  })

  test('a bad insitu.toml is kept as the error, not thrown, and the default [sources] still tell documents apart', () => {
    const root = project('version = 1\n[sources\n')
    const file = path.join(root, 'insitu.toml')
    const scope = loadProjectScope(resolveOptions({}), path.join(root, 'app'))
    expect(scope.config).toBeUndefined()
    expect(scope.error).toBeInstanceOf(ConfigError)
    expect(scope.error?.message).toBe(`${file}:2:9: illegal character in key`)
    expect(scope.configFile).toBe(file)
    expect(scope.root).toBe(root)
    expect(scope.isManaged(path.join(root, 'app/a.md'))).toBe(true)
    expect(scope.isManaged(path.join(root, 'node_modules/x/a.md'))).toBe(false)
    expect(scope.isManaged(path.join(root, 'app/main.js'))).toBe(false)
  })
})

describe('isRestartTrigger', () => {
  const triggers = {
    configFiles: ['/p/insitu.toml'],
    root: '/p',
    extensions: [
      { file: '/p/tools/notes/insitu-extension.toml', dir: '/p/tools/notes' },
      { file: '/elsewhere/ext/insitu-extension.toml', dir: '/elsewhere/ext' },
    ],
  }

  test.each([
    ['/p/insitu.toml', true],
    ['/p/tools/notes/insitu-extension.toml', true],
    ['/p/tools/notes/extension.py', true],
    ['/p/tools/notes/lib/helpers.py', true],
    ['/elsewhere/ext/main.ts', true],
    ['/p/tools/notes/__pycache__/helpers.cpython-312.pyc', false],
    ['/p/tools/notes/helpers.pyc', false],
    ['/p/tools/notes/node_modules/x/index.js', false],
    ['/p/tools/notes/.venv/lib/site.py', false],
    // editors' swap, backup and lock files, and vim's write probe
    ['/p/tools/notes/.extension.py.swp', false],
    ['/p/tools/notes/extension.py~', false],
    ['/p/tools/notes/.#extension.py', false],
    ['/p/tools/notes/#extension.py#', false],
    ['/p/tools/notes/4913', false],
    ['/p/tools/notes/sedx3ajcv', true], // a temporary file is a trigger; ServerRestarts decides whether to name it
    ['/p/tools/notes-other/extension.py', false],
    ['/p/tools/insitu.toml', false],
    ['/p/docs/a.md', false],
    ['/p/tools/notes', false],
  ])('%s → %s', (file, expected) => {
    expect(isRestartTrigger(file, triggers)).toBe(expected)
  })

  test('an extension whose folder holds the project root restarts on its manifest only', () => {
    const atRoot = { configFiles: ['/p/insitu.toml'], root: '/p', extensions: [{ file: '/p/insitu-extension.toml', dir: '/p' }] }
    expect(isRestartTrigger('/p/insitu-extension.toml', atRoot)).toBe(true)
    expect(isRestartTrigger('/p/extension.py', atRoot)).toBe(false)
    expect(isRestartTrigger('/p/docs/a.md', atRoot)).toBe(false)
  })
})

describe('ServerRestarts', () => {
  const folders: string[] = []
  afterEach(() => {
    for (const folder of folders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
  })

  function setup() {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-restarts-')))
    folders.push(root)
    const logs: string[] = []
    let restarts = 0
    const restarter = new ServerRestarts({
      root,
      settleMs: 20,
      restart: async () => {
        restarts++
      },
      log: (message) => logs.push(message),
      error: (message) => logs.push(`error: ${message}`),
    })
    return { root, logs, restarter, restarts: () => restarts }
  }

  test('a temporary file renamed over the program: one restart, naming the program only', async () => {
    const { root, logs, restarter, restarts } = setup()
    const program = path.join(root, 'extension.py')
    const temporary = path.join(root, 'sedx3ajcv')
    fs.writeFileSync(program, 'old\n')
    fs.writeFileSync(temporary, 'new\n')
    restarter.note('create', temporary)
    fs.renameSync(temporary, program) // what `sed -i` does next
    restarter.note('delete', temporary)
    restarter.note('update', program)
    await expect.poll(() => restarts()).toBe(1)
    expect(logs).toEqual(['insitu: extension.py changed, restarting server'])
  })

  test('a file that appears and vanishes again restarts nothing; a deleted program and a new file do', async () => {
    const { root, logs, restarter, restarts } = setup()
    const swap = path.join(root, 'scratch.tmp')
    restarter.note('create', swap) // gone before the events settle
    const created = path.join(root, 'lib/helper.py')
    const deleted = path.join(root, 'old.py')
    expect(restarter.settling).toBe(true)
    await expect.poll(() => restarter.settling).toBe(false)
    expect(restarts()).toBe(0)
    expect(logs).toEqual([])
    fs.mkdirSync(path.dirname(created))
    fs.writeFileSync(created, 'x\n')
    restarter.note('create', created)
    restarter.note('delete', deleted)
    await expect.poll(() => restarts()).toBe(1)
    expect(logs).toEqual(['insitu: lib/helper.py, old.py changed, restarting server'])
  })

  test('cancel drops what is pending', async () => {
    const { root, logs, restarter, restarts } = setup()
    fs.writeFileSync(path.join(root, 'a.py'), 'x\n')
    restarter.note('update', path.join(root, 'a.py'))
    restarter.cancel()
    expect(restarter.settling).toBe(false)
    // A later event settles on its own: the cancelled one is not part of it.
    fs.writeFileSync(path.join(root, 'b.py'), 'x\n')
    restarter.note('update', path.join(root, 'b.py'))
    await expect.poll(() => restarts()).toBe(1)
    expect(logs).toEqual(['insitu: b.py changed, restarting server'])
  })
})
