/**
 * insitu-extension.toml: defaults, SPEC §5 rules and exact messages, cwd containment (with real
 * symlinks), command tokens, and discovery of configured and installed extensions in temp projects.
 */
import fs from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, loadProjectConfig } from '../../src/host/config.js'
import {
  discoverExtensions,
  loadManifest,
  parseManifest,
  resolveCommand,
  resolveExtensionCwd,
} from '../../src/host/manifest.js'
import { errorOf } from './thrown-error.js'
import { removeTempDirs, tempDir } from './temp-folders.js'

afterEach(removeTempDirs)

const FILE = 'ext/insitu-extension.toml'
const HEAD = 'name = "acme/hello"\nversion = "1.0.0"\n[extension]\ncommand = ["{python}", "extension.py"]\n'
const messageOf = (text: string) => errorOf(ConfigError, () => parseManifest(text, FILE)).message
const capability = (lines: string) => `${HEAD}[[capabilities]]\n${lines}\n`

const SPEC_EXAMPLE = `
name = "acme/hello"          # required
version = "1.0.0"            # required
protocol = 1                 # only 1
permissions = ["fs:read:**/*.md", "resource:read:loop"]
[extension]
command = ["{python}", "extension.py"]
cwd = "."
[[capabilities]]
kind = "transform"
name = "hello"
mode = "decorate"
target = "x"
before = []
after = []
[capabilities.params_schema]
type = "object"
[capabilities.params_schema.properties.who]
type = "string"
[[dependencies]]
name = "acme/base"
version = "*"
capability = false
`

describe('parseManifest', () => {
  it('parses the SPEC example', () => {
    const manifest = parseManifest(SPEC_EXAMPLE, '/pkg/hello/insitu-extension.toml')
    expect(manifest).toEqual({
      name: 'acme/hello',
      version: '1.0.0',
      protocol: 1,
      permissions: ['fs:read:**/*.md', 'resource:read:loop'],
      extension: { command: ['{python}', 'extension.py'], cwd: '.' },
      capabilities: [
        {
          kind: 'transform',
          name: 'hello',
          mode: 'decorate',
          target: 'x',
          before: [],
          after: [],
          params_schema: { type: 'object', properties: { who: { type: 'string' } } },
          value_schema: null,
          result_schema: null,
        },
      ],
      dependencies: [{ name: 'acme/base', version: '*', capability: false, source: null }],
      dir: '/pkg/hello',
      file: '/pkg/hello/insitu-extension.toml',
    })
    // pinned schemas are plain JSON objects (smol-toml tables have a null prototype)
    expect(Object.getPrototypeOf(manifest.capabilities[0]!.params_schema)).toBe(Object.prototype)
  })

  it('fills defaults', () => {
    const text = `${HEAD}[[capabilities]]\nkind = "resource"\nname = "loop"\n[[dependencies]]\nname = "transform:hello"\ncapability = true\n`
    expect(parseManifest(text, '/p/insitu-extension.toml')).toEqual({
      name: 'acme/hello',
      version: '1.0.0',
      protocol: 1,
      permissions: [],
      extension: { command: ['{python}', 'extension.py'], cwd: '.' },
      capabilities: [
        {
          kind: 'resource',
          name: 'loop',
          mode: 'provide',
          target: null,
          before: [],
          after: [],
          params_schema: null,
          value_schema: null,
          result_schema: null,
        },
      ],
      dependencies: [{ name: 'transform:hello', version: '*', capability: true, source: null }],
      dir: '/p',
      file: '/p/insitu-extension.toml',
    })
  })

  it('requires name, version and [extension]', () => {
    expect(messageOf('')).toBe(`${FILE}: name: is required; version: is required; extension: is required`)
    expect(messageOf('name = "a"\nversion = 1\n[extension]\ncommand = ["x"]')).toBe(`${FILE}:2:1: version: must be a string`)
  })

  it('accepts only protocol 1', () => {
    expect(messageOf(`protocol = 2\n${HEAD}`)).toBe(`${FILE}:1:1: protocol: must be 1`)
  })

  it('rejects an empty command', () => {
    expect(messageOf('name = "a"\nversion = "1"\n[extension]\ncommand = []')).toBe(
      `${FILE}:4:1: extension command cannot be empty`,
    )
    expect(messageOf('name = "a"\nversion = "1"\n[extension]\ncommand = [""]')).toBe(
      `${FILE}:4:1: extension command cannot be empty`,
    )
    expect(messageOf('name = "a"\nversion = "1"\n[extension]\ncwd = "."')).toBe(`${FILE}:3:1: extension.command: is required`)
    expect(messageOf('name = "a"\nversion = "1"\n[extension]\ncommand = "python3 x.py"')).toBe(
      `${FILE}:4:1: extension.command: must be an array`,
    )
  })

  it('checks mode against target', () => {
    expect(messageOf(capability('kind = "transform"\nname = "a"\nmode = "decorate"'))).toBe(
      `${FILE}:5:1: decorate capability requires target`,
    )
    expect(messageOf(capability('kind = "resource"\nname = "a"\nmode = "replace"'))).toBe(
      `${FILE}:5:1: replace capability requires target`,
    )
    expect(messageOf(capability('kind = "transform"\nname = "a"\ntarget = "b"'))).toBe(
      `${FILE}:5:1: provide capability cannot define target`,
    )
    expect(messageOf(capability('kind = "transform"\nname = "a"\nmode = "contribute"\ntarget = "b"'))).toBe(
      `${FILE}:5:1: contribute capability cannot define target`,
    )
    expect(messageOf(capability('kind = "transform"\nname = "a"\nmode = "wrap"'))).toBe(
      `${FILE}:8:1: capabilities[0].mode: must be one of "provide", "contribute", "decorate", "replace"`,
    )
    expect(messageOf(capability('kind = "filter"\nname = "a"'))).toBe(
      `${FILE}:6:1: capabilities[0].kind: must be one of "resource", "transform", "renderer", "validator"`,
    )
  })

  it('rejects a name both before and after', () => {
    const text = capability('kind = "transform"\nname = "a"\nmode = "decorate"\ntarget = "t"\nbefore = ["x", "y"]\nafter = ["y"]')
    expect(messageOf(text)).toBe(`${FILE}:5:1: a decorator cannot be both before and after the same item`)
  })

  it('requires unique capabilities and dependencies', () => {
    const twice = `${HEAD}[[capabilities]]\nkind = "transform"\nname = "a"\n[[capabilities]]\nkind = "transform"\nname = "a"\nmode = "contribute"\n`
    expect(messageOf(twice)).toBe(`${FILE}: extension capabilities must be unique`)
    const kinds = `${HEAD}[[capabilities]]\nkind = "transform"\nname = "a"\n[[capabilities]]\nkind = "resource"\nname = "a"\n`
    expect(parseManifest(kinds, FILE).capabilities.map((c) => c.kind)).toEqual(['transform', 'resource'])

    const deps = `${HEAD}[[dependencies]]\nname = "acme/base"\n[[dependencies]]\nname = "acme/base"\nversion = ">=1"\n`
    expect(messageOf(deps)).toBe(`${FILE}: extension dependencies must be unique`)
    const mixed = `${HEAD}[[dependencies]]\nname = "base"\n[[dependencies]]\nname = "base"\ncapability = true\n`
    expect(parseManifest(mixed, FILE).dependencies).toEqual([
      { name: 'base', version: '*', capability: false, source: null },
      { name: 'base', version: '*', capability: true, source: null },
    ])
  })

  it('rejects unknown keys in every table', () => {
    expect(messageOf(`description = "x"\n${HEAD}`)).toBe(`${FILE}:1:1: unknown key description`)
    expect(messageOf(`${HEAD}env = {}\n`)).toBe(`${FILE}:5:1: extension: unknown key env`)
    expect(messageOf(capability('kind = "transform"\nname = "a"\norder = 1'))).toBe(
      `${FILE}:8:1: capabilities[0]: unknown key order`,
    )
    expect(messageOf(`${HEAD}[[dependencies]]\nname = "b"\noptional = true\n`)).toBe(
      `${FILE}:7:1: dependencies[0]: unknown key optional`,
    )
  })

  it('checks value types', () => {
    expect(messageOf(`permissions = "fs:read"\n${HEAD}`)).toBe(`${FILE}:1:1: permissions: must be an array`)
    expect(messageOf(`permissions = [1]\n${HEAD}`)).toBe(`${FILE}:1:16: permissions[0]: must be a string`)
    expect(messageOf(capability('kind = "transform"\nname = "a"\nparams_schema = "object"'))).toBe(
      `${FILE}:8:1: capabilities[0].params_schema: must be a table`,
    )
    expect(messageOf(capability('kind = "transform"\nname = "a"\n[capabilities.result_schema]\nd = 1979-05-27'))).toBe(
      `${FILE}:9:1: capabilities[0].result_schema.d: must be a JSON value (no dates, inf or nan)`,
    )
    expect(messageOf(capability('kind = "transform"\nname = "a"\n[capabilities.value_schema]\nmaximum = inf'))).toBe(
      `${FILE}:9:1: capabilities[0].value_schema.maximum: must be a JSON value (no dates, inf or nan)`,
    )
  })

  it('reports TOML syntax errors with line and column', () => {
    const error = errorOf(ConfigError, () => parseManifest('name = "a"\nversion = = "1"\n', FILE))
    expect([error.line, error.column]).toEqual([2, 11])
    expect(error.message).toMatch(/^ext\/insitu-extension\.toml:2:11: \S[^\n]*$/)
    expect(messageOf('name = "a"\n[constructor]\n')).toMatch(/^ext\/insitu-extension\.toml:2:\d+: document contains an unsafe property$/)
  })
})

describe('loadManifest', () => {
  it('loads <dir>/insitu-extension.toml', () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, 'insitu-extension.toml'), HEAD)
    const manifest = loadManifest(dir)
    expect(manifest.dir).toBe(dir)
    expect(manifest.file).toBe(`${dir}/insitu-extension.toml`)
    expect(manifest.name).toBe('acme/hello')
  })

  it('names the missing manifest', () => {
    const dir = tempDir()
    const error = errorOf(ConfigError, () => loadManifest(dir))
    expect(error.message.startsWith(`${dir}/insitu-extension.toml: cannot read extension manifest: ENOENT`)).toBe(true)
  })
})

describe('resolveExtensionCwd', () => {
  function pkg(cwd: string): { root: string; dir: string; cwdOf: () => string } {
    const root = tempDir()
    const dir = path.join(root, 'pkg')
    fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, 'insitu-extension.toml'), `${HEAD}cwd = ${JSON.stringify(cwd)}\n`)
    return { root, dir, cwdOf: () => resolveExtensionCwd(loadManifest(dir)) }
  }

  it('resolves inside the package', () => {
    expect(pkg('.').cwdOf()).toMatch(/\/pkg$/)
    const sub = pkg('src/./py')
    fs.mkdirSync(path.join(sub.dir, 'src', 'py'), { recursive: true })
    expect(sub.cwdOf()).toBe(`${sub.dir}/src/py`)
    const up = pkg('src/..')
    expect(up.cwdOf()).toBe(up.dir)
  })

  it('rejects .. and absolute paths', () => {
    const a = pkg('..')
    expect(errorOf(ConfigError, a.cwdOf).message).toBe(`${a.dir}/insitu-extension.toml: extension cwd escapes package: ..`)
    const b = pkg('src/../../other')
    expect(errorOf(ConfigError, b.cwdOf).message).toBe(`${b.dir}/insitu-extension.toml: extension cwd escapes package: src/../../other`)
    const c = pkg('/tmp')
    expect(errorOf(ConfigError, c.cwdOf).message).toBe(`${c.dir}/insitu-extension.toml: extension cwd escapes package: /tmp`)
  })

  it('follows symlinks', () => {
    const out = pkg('link')
    fs.mkdirSync(path.join(out.root, 'outside'))
    fs.symlinkSync(path.join(out.root, 'outside'), path.join(out.dir, 'link'))
    expect(errorOf(ConfigError, out.cwdOf).message).toBe(`${out.dir}/insitu-extension.toml: extension cwd escapes package: link`)

    const deeper = pkg('link/below')
    fs.mkdirSync(path.join(deeper.root, 'outside'))
    fs.symlinkSync(path.join(deeper.root, 'outside'), path.join(deeper.dir, 'link'))
    expect(errorOf(ConfigError, deeper.cwdOf).message).toBe(
      `${deeper.dir}/insitu-extension.toml: extension cwd escapes package: link/below`,
    )

    const inside = pkg('link')
    fs.mkdirSync(path.join(inside.dir, 'real'))
    fs.symlinkSync(path.join(inside.dir, 'real'), path.join(inside.dir, 'link'))
    expect(inside.cwdOf()).toBe(`${inside.dir}/link`)
  })

  it('accepts a package reached through a symlink', () => {
    const p = pkg('sub')
    fs.mkdirSync(path.join(p.dir, 'sub'))
    fs.symlinkSync(p.dir, path.join(p.root, 'alias'))
    expect(resolveExtensionCwd(loadManifest(path.join(p.root, 'alias')))).toBe(`${p.root}/alias/sub`)
  })
})

describe('resolveCommand', () => {
  const manifest = parseManifest(
    'name = "a"\nversion = "1"\n[extension]\ncommand = ["{python}", "-X", "{python}:{node}", "--node={node}", "x.py"]',
    FILE,
  )
  it('substitutes {python} (default python3) and {node} in any argument', () => {
    expect(resolveCommand(manifest)).toEqual([
      'python3',
      '-X',
      `python3:${process.execPath}`,
      `--node=${process.execPath}`,
      'x.py',
    ])
    expect(resolveCommand(manifest, { python: '/venv/bin/python' })[0]).toBe('/venv/bin/python')
    expect(manifest.extension.command[0]).toBe('{python}')
  })

  it('takes a relative interpreter path from the project root, a bare name from PATH', () => {
    const root = path.join(path.sep, 'site')
    expect(resolveCommand(manifest, { python: '.venv/bin/python', root })[0]).toBe(path.join(root, '.venv', 'bin', 'python'))
    expect(resolveCommand(manifest, { python: './py', root })[2]).toBe(`${path.join(root, 'py')}:${process.execPath}`)
    expect(resolveCommand(manifest, { python: 'python3.12', root })[0]).toBe('python3.12')
    expect(resolveCommand(manifest, { python: '/usr/bin/python3', root })[0]).toBe('/usr/bin/python3')
  })
})

describe('discoverExtensions', () => {
  function project(toml: string): string {
    const root = tempDir()
    fs.writeFileSync(path.join(root, 'insitu.toml'), toml)
    return root
  }
  function extension(dir: string, name: string): void {
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(
      path.join(dir, 'insitu-extension.toml'),
      `name = ${JSON.stringify(name)}\nversion = "1.0.0"\n[extension]\ncommand = ["{node}", "ext.js"]\n`,
    )
  }
  const discover = (root: string) => discoverExtensions(loadProjectConfig(path.join(root, 'insitu.toml')))
  const summary = (root: string) =>
    discover(root).map((e) => ({ name: e.manifest.name, dir: e.manifest.dir, by: e.configuredBy, allow: e.allowReplace }))

  it('lists configured paths first, then installed extensions by folder name', () => {
    const root = project('[[extensions]]\npath = "tools/hello"\nallow_replace = ["table"]\n')
    extension(path.join(root, 'tools', 'hello'), 'acme/hello')
    extension(path.join(root, '.insitu', 'extensions', 'zeta'), 'acme/zeta')
    extension(path.join(root, '.insitu', 'extensions', 'alpha'), 'acme/alpha')
    fs.mkdirSync(path.join(root, '.insitu', 'extensions', 'no-manifest'))
    fs.writeFileSync(path.join(root, '.insitu', 'extensions', 'README'), 'not a folder')
    expect(summary(root)).toEqual([
      { name: 'acme/hello', dir: `${root}/tools/hello`, by: 'path', allow: ['table'] },
      { name: 'acme/alpha', dir: `${root}/.insitu/extensions/alpha`, by: 'discovered', allow: [] },
      { name: 'acme/zeta', dir: `${root}/.insitu/extensions/zeta`, by: 'discovered', allow: [] },
    ])
  })

  it('returns nothing for a project without extensions', () => {
    expect(discover(project(''))).toEqual([])
  })

  it('does not count a path into .insitu/extensions twice', () => {
    const root = project('[[extensions]]\npath = ".insitu/extensions/hello"\nallow_replace = ["x"]\n')
    extension(path.join(root, '.insitu', 'extensions', 'hello'), 'acme/hello')
    expect(summary(root)).toEqual([
      { name: 'acme/hello', dir: `${root}/.insitu/extensions/hello`, by: 'path', allow: ['x'] },
    ])
  })

  it('rejects the same manifest name at two paths', () => {
    const root = project('[[extensions]]\npath = "tools/hello"\n')
    extension(path.join(root, 'tools', 'hello'), 'acme/hello')
    extension(path.join(root, '.insitu', 'extensions', 'copy'), 'acme/hello')
    expect(errorOf(ConfigError, () => discover(root)).message).toBe(`${root}/insitu.toml: extension configured twice: acme/hello`)

    const twice = project('[[extensions]]\npath = "a"\n[[extensions]]\npath = "b"\n')
    extension(path.join(twice, 'a'), 'acme/same')
    extension(path.join(twice, 'b'), 'acme/same')
    expect(errorOf(ConfigError, () => discover(twice)).message).toBe(`${twice}/insitu.toml:3:1: extension configured twice: acme/same`)
  })

  it('skips disabled entries, which also hide the installed extension they name', () => {
    const root = project(
      [
        '[[extensions]]',
        'path = "tools/off"',
        'enabled = false',
        '[[extensions]]',
        'path = "tools/missing"',
        'enabled = false',
        '[[extensions]]',
        'path = ".insitu/extensions/hidden"',
        'enabled = false',
        '[[extensions]]',
        'source = "github.com/acme/muted"',
        'enabled = false',
        '[[extensions]]',
        'source = "github.com/acme/not-installed"',
        'enabled = false',
      ].join('\n'),
    )
    extension(path.join(root, 'tools', 'off'), 'acme/off')
    extension(path.join(root, '.insitu', 'extensions', 'hidden'), 'acme/hidden')
    extension(path.join(root, '.insitu', 'extensions', 'muted'), 'acme/muted')
    extension(path.join(root, '.insitu', 'extensions', 'kept'), 'acme/kept')
    expect(summary(root)).toEqual([
      { name: 'acme/kept', dir: `${root}/.insitu/extensions/kept`, by: 'discovered', allow: [] },
    ])
  })

  it('lets an override turn extensions on or off by name, over insitu.toml', () => {
    const root = project(
      [
        '[[extensions]]',
        'path = "tools/off"',
        'enabled = false',
        '[[extensions]]',
        'path = "tools/on"',
        '[[extensions]]',
        'path = "tools/broken"',
        'enabled = false',
        '[[extensions]]',
        'source = "github.com/acme/muted"',
        'enabled = false',
      ].join('\n'),
    )
    extension(path.join(root, 'tools', 'off'), 'acme/off')
    extension(path.join(root, 'tools', 'on'), 'acme/on')
    fs.mkdirSync(path.join(root, 'tools', 'broken'), { recursive: true })
    fs.writeFileSync(path.join(root, 'tools', 'broken', 'insitu-extension.toml'), 'not = [valid')
    extension(path.join(root, '.insitu', 'extensions', 'muted'), 'acme/muted')
    extension(path.join(root, '.insitu', 'extensions', 'kept'), 'acme/kept')
    const overrides: Record<string, boolean> = { 'acme/off': true, 'acme/on': false, 'acme/muted': true, 'acme/kept': false }
    const names = discoverExtensions(loadProjectConfig(path.join(root, 'insitu.toml')), { enabled: (name) => overrides[name] }).map(
      (e) => e.manifest.name,
    )
    expect(names).toEqual(['acme/off', 'acme/muted'])
    // Without overrides insitu.toml decides (and a broken manifest of a disabled entry is never read).
    expect(summary(root).map((e) => e.name)).toEqual(['acme/on', 'acme/kept'])
  })

  it('finds an installed source by folder name or manifest name', () => {
    const root = project(
      [
        '[[extensions]]',
        'source = "https://github.com/acme/table.git"',
        'allow_replace = ["table"]',
        '[[extensions]]',
        'source = "acme/loop"',
      ].join('\n'),
    )
    extension(path.join(root, '.insitu', 'extensions', 'table'), 'acme/table')
    extension(path.join(root, '.insitu', 'extensions', 'loop-1.2.0'), 'acme/loop')
    expect(summary(root)).toEqual([
      { name: 'acme/table', dir: `${root}/.insitu/extensions/table`, by: 'source', allow: ['table'] },
      { name: 'acme/loop', dir: `${root}/.insitu/extensions/loop-1.2.0`, by: 'source', allow: [] },
    ])
  })

  it('tells the user to install a missing source', () => {
    const root = project('[[extensions]]\nsource = "github.com/acme/remote"\n')
    expect(errorOf(ConfigError, () => discover(root)).message).toBe(
      `${root}/insitu.toml:2:1: extension source github.com/acme/remote is not installed: ` +
        'run `vite-plugin-insitu extension add github.com/acme/remote` (or use path = "...")',
    )
  })

  it('names a configured path that is missing or has no manifest', () => {
    const missing = project('[[extensions]]\npath = "tools/nope"\n')
    expect(errorOf(ConfigError, () => discover(missing)).message).toBe(`${missing}/insitu.toml:2:1: extension path not found: tools/nope`)

    const empty = project('[[extensions]]\npath = "tools/empty"\n')
    fs.mkdirSync(path.join(empty, 'tools', 'empty'), { recursive: true })
    expect(errorOf(ConfigError, () => discover(empty)).message).toBe(
      `${empty}/insitu.toml:2:1: extension path has no insitu-extension.toml: tools/empty`,
    )

    const file = project('[[extensions]]\npath = "tools/file"\n')
    fs.mkdirSync(path.join(file, 'tools'))
    fs.writeFileSync(path.join(file, 'tools', 'file'), '')
    expect(errorOf(ConfigError, () => discover(file)).message).toBe(`${file}/insitu.toml:2:1: extension path not found: tools/file`)
  })

  it('propagates an invalid installed manifest', () => {
    const root = project('')
    const dir = path.join(root, '.insitu', 'extensions', 'bad')
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'insitu-extension.toml'), 'name = "bad"\nversion = "1"\n[extension]\ncommand = []\n')
    expect(errorOf(ConfigError, () => discover(root)).message).toBe(`${dir}/insitu-extension.toml:4:1: extension command cannot be empty`)
  })
})
