/**
 * insitu.toml: defaults, the SPEC §5 rules and exact messages, TOML syntax positions, walking up.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_EXCLUDE, findProjectConfig, loadProjectConfig, parseProjectConfig } from '../../src/host/config.js'
import { errorOf } from './thrown-error.js'
import { removeTempDirs, tempDir } from './temp-folders.js'

afterEach(removeTempDirs)
const messageOf = (text: string, file = 'insitu.toml') => errorOf(ConfigError, () => parseProjectConfig(text, file)).message

const SPEC_EXCLUDE = [
  '.git/**',
  '.insitu/**',
  '.venv/**',
  '.pytest_cache/**',
  '.ruff_cache/**',
  '.pyrefly/**',
  '**/__pycache__/**',
  'dist/**',
  'site/**',
  'node_modules/**',
]

describe('parseProjectConfig defaults', () => {
  it('fills every default for an empty file', () => {
    expect(parseProjectConfig('', '/x/proj/insitu.toml')).toEqual({
      version: 1,
      sources: { include: ['**/*.md'], respect_gitignore: true, exclude: SPEC_EXCLUDE },
      paths: { models: 'insitu/models', templates: 'insitu/templates', state: '.insitu/index.db' },
      watch: { debounce_ms: 25, step_ms: 5 },
      extensions: [],
      root: '/x/proj',
      file: '/x/proj/insitu.toml',
    })
    expect(DEFAULT_EXCLUDE).toEqual(SPEC_EXCLUDE)
  })

  it('fills defaults inside partially given tables and extension entries', () => {
    const text = [
      '[sources]',
      'exclude = ["build/**"]',
      '[watch]',
      'step_ms = 1',
      '[[extensions]]',
      'path = "tools/hello"',
      '[[extensions]]',
      'source = "github.com/acme/base"',
      'enabled = false',
      'allow_replace = ["hello"]',
    ].join('\n')
    expect(parseProjectConfig(text, '/p/insitu.toml')).toEqual({
      version: 1,
      sources: { include: ['**/*.md'], respect_gitignore: true, exclude: ['build/**'] },
      paths: { models: 'insitu/models', templates: 'insitu/templates', state: '.insitu/index.db' },
      watch: { debounce_ms: 25, step_ms: 1 },
      extensions: [
        { path: 'tools/hello', source: null, enabled: true, allow_replace: [] },
        { path: null, source: 'github.com/acme/base', enabled: false, allow_replace: ['hello'] },
      ],
      root: '/p',
      file: '/p/insitu.toml',
    })
  })

  it('accepts boundary values', () => {
    const config = parseProjectConfig('[watch]\ndebounce_ms = 0\nstep_ms = 10000', 'insitu.toml')
    expect(config.watch).toEqual({ debounce_ms: 0, step_ms: 10000 })
    expect(parseProjectConfig('[watch]\ndebounce_ms = 10000\nstep_ms = 1', 'insitu.toml').watch).toEqual({
      debounce_ms: 10000,
      step_ms: 1,
    })
  })

  it('resolves root and file of a relative path against the cwd', () => {
    const config = parseProjectConfig('', 'insitu.toml')
    expect(config.root).toBe(process.cwd().split(path.sep).join('/'))
    expect(config.file).toBe(`${config.root}/insitu.toml`)
  })
})

describe('parseProjectConfig errors', () => {
  it('names file and key path for range errors', () => {
    expect(messageOf('[watch]\ndebounce_ms = 10001')).toBe('insitu.toml:2:1: watch.debounce_ms: must be <= 10000')
    expect(messageOf('[watch]\ndebounce_ms = -1')).toBe('insitu.toml:2:1: watch.debounce_ms: must be >= 0')
    expect(messageOf('[watch]\nstep_ms = 0')).toBe('insitu.toml:2:1: watch.step_ms: must be >= 1')
    expect(messageOf('[watch]\nstep_ms = 10001')).toBe('insitu.toml:2:1: watch.step_ms: must be <= 10000')
    expect(messageOf('[watch]\nstep_ms = 2.5')).toBe('insitu.toml:2:1: watch.step_ms: must be an integer')
  })

  it('uses the file path as given', () => {
    expect(messageOf('[watch]\ndebounce_ms = 10001', '/abs/insitu.toml')).toBe(
      '/abs/insitu.toml:2:1: watch.debounce_ms: must be <= 10000',
    )
    const error = errorOf(ConfigError, () => parseProjectConfig('version = 2', 'sub/insitu.toml'))
    expect(error.message).toBe('sub/insitu.toml:1:1: version: must be 1')
    expect(error.file).toBe('sub/insitu.toml')
    expect([error.line, error.column]).toEqual([1, 1])
  })

  it('rejects unknown keys in every table', () => {
    expect(messageOf('foo = 1')).toBe('insitu.toml:1:1: unknown key foo')
    expect(messageOf('[sources]\nincludes = []')).toBe('insitu.toml:2:1: sources: unknown key includes')
    expect(messageOf('[paths]\nmodel = "m"')).toBe('insitu.toml:2:1: paths: unknown key model')
    expect(messageOf('[watch]\ndebounce = 1\npoll = 2')).toBe('insitu.toml:2:1: watch: unknown keys debounce, poll')
    expect(messageOf('[[extensions]]\npath = "a"\nenable = true')).toBe('insitu.toml:3:1: extensions[0]: unknown key enable')
  })

  it('reports wrong types', () => {
    expect(messageOf('[sources]\ninclude = [1]')).toBe('insitu.toml:2:12: sources.include[0]: must be a string')
    expect(messageOf('[sources]\ninclude = "**/*.md"')).toBe('insitu.toml:2:1: sources.include: must be an array')
    expect(messageOf('[sources]\nrespect_gitignore = "yes"')).toBe(
      'insitu.toml:2:1: sources.respect_gitignore: must be a boolean',
    )
    expect(messageOf('watch = 1')).toBe('insitu.toml:1:1: watch: must be a table')
    expect(messageOf('[paths]\nstate = ""')).toBe('insitu.toml:2:1: paths.state: must not be empty')
  })

  it('keeps [paths] inside the project', () => {
    expect(messageOf('[paths]\nmodels = "../models"')).toBe('insitu.toml:2:1: path must remain inside the project: ../models')
    expect(messageOf('[paths]\ntemplates = "/etc/templates"')).toBe(
      'insitu.toml:2:1: path must remain inside the project: /etc/templates',
    )
    expect(messageOf('[paths]\nstate = "a/../../b.db"')).toBe('insitu.toml:2:1: path must remain inside the project: a/../../b.db')
    expect(messageOf('[paths]\nstate = "a\\\\..\\\\b.db"')).toBe('insitu.toml:2:1: path must remain inside the project: a\\..\\b.db')
    expect(messageOf('[paths]\nstate = "C:/state.db"')).toBe('insitu.toml:2:1: path must remain inside the project: C:/state.db')
    expect(parseProjectConfig('[paths]\nmodels = "./docs/models..v2"', 'insitu.toml').paths.models).toBe(
      './docs/models..v2',
    )
  })

  it('requires exactly one of path or source per extension', () => {
    expect(messageOf('[[extensions]]\nenabled = true')).toBe(
      'insitu.toml:1:1: extension requires exactly one of path or source',
    )
    expect(messageOf('[[extensions]]\npath = "a"\nsource = "b"')).toBe(
      'insitu.toml:1:1: extension requires exactly one of path or source',
    )
  })

  it('reports TOML syntax errors with line and column', () => {
    const error = errorOf(ConfigError, () => parseProjectConfig('version = 1\n[watch]\ndebounce_ms = = 3\n', '/x/insitu.toml'))
    expect(error.line).toBe(3)
    expect(error.column).toBe(15)
    expect(error.file).toBe('/x/insitu.toml')
    expect(error.message).toMatch(/^\/x\/insitu\.toml:3:15: \S/)
    expect(error.message).not.toContain('\n')
  })

  it('rejects unsafe keys as syntax errors', () => {
    const proto = errorOf(ConfigError, () => parseProjectConfig('[watch]\n__proto__ = 1\n', 'insitu.toml'))
    expect(proto.message).toBe('insitu.toml:2:1: document contains an unsafe property')
    expect([proto.line, proto.column]).toEqual([2, 1])
    expect(messageOf('[constructor]\nx = 1')).toMatch(/^insitu\.toml:1:\d+: /)
  })
})

describe('loadProjectConfig', () => {
  it('reads the file and records root and file', () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, 'insitu.toml'), '[watch]\ndebounce_ms = 50\n')
    const config = loadProjectConfig(path.join(dir, 'insitu.toml'))
    expect(config.watch).toEqual({ debounce_ms: 50, step_ms: 5 })
    expect(config.root).toBe(dir)
    expect(config.file).toBe(`${dir}/insitu.toml`)
  })

  it('names the file it cannot read', () => {
    const dir = tempDir()
    const file = path.join(dir, 'insitu.toml')
    const error = errorOf(ConfigError, () => loadProjectConfig(file))
    expect(error.message.startsWith(`${file}: cannot read project config: ENOENT`)).toBe(true)
    expect(error.file).toBe(file)
  })
})

describe('findProjectConfig', () => {
  it('walks up to the nearest insitu.toml', () => {
    const dir = tempDir()
    const deep = path.join(dir, 'a', 'b', 'c')
    fs.mkdirSync(deep, { recursive: true })
    fs.writeFileSync(path.join(dir, 'insitu.toml'), '')
    expect(findProjectConfig(deep)).toBe(`${dir}/insitu.toml`)
    fs.writeFileSync(path.join(dir, 'a', 'insitu.toml'), '')
    expect(findProjectConfig(deep)).toBe(`${dir}/a/insitu.toml`)
    expect(findProjectConfig(path.join(dir, 'a'))).toBe(`${dir}/a/insitu.toml`)
  })

  it('skips a folder named insitu.toml and resolves a relative start', () => {
    const dir = tempDir()
    fs.mkdirSync(path.join(dir, 'a', 'insitu.toml'), { recursive: true })
    fs.writeFileSync(path.join(dir, 'insitu.toml'), '')
    expect(findProjectConfig(path.relative(process.cwd(), path.join(dir, 'a')))).toBe(`${dir}/insitu.toml`)
  })

  it('returns null when no ancestor has one', () => {
    const dir = tempDir()
    fs.mkdirSync(path.join(dir, 'x'))
    const ancestorsHaveOne = (() => {
      for (let d = path.dirname(dir); ; d = path.dirname(d)) {
        if (fs.existsSync(path.join(d, 'insitu.toml'))) return true
        if (path.dirname(d) === d) return false
      }
    })()
    expect(ancestorsHaveOne).toBe(false)
    expect(findProjectConfig(path.join(dir, 'x'))).toBeNull()
  })
})
