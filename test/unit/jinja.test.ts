import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorOf as thrown } from './thrown-error.js'
import {
  BUILTIN_TEMPLATES,
  JinjaTemplateError,
  createJinjaEnvironment,
  createJinjaRenderer,
  jinjaToJson,
  pythonJsonDumps,
  rowsOf,
} from '../../src/builtins/jinja.js'
import { encodePythonJson, pythonFloatRepr } from '../../src/values/python-json.js'
import type { Location } from '../../src/protocol/schemas.js'

/** The error `run` throws (fails the test when it does not throw). */
const errorOf = (run: () => unknown): JinjaTemplateError => thrown(JinjaTemplateError, run)

const location: Location = { path: 'docs/guide/a.md', directory: 'docs/guide', root: '../..', depth: 2 }

// Values the json/tojson filters are cross-checked on against python3's json module.
const TRICKY_VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  9007199254740991,
  -9007199254740991,
  2.5,
  -0.001,
  1e-7,
  0.1 + 0.2,
  123456.789,
  1e300,
  1.7976931348623157e308,
  5e-324,
  '',
  'plain',
  'quote " backslash \\ slash /',
  '\u0000\u0001\u001f\u007f',
  '\b\f\n\r\t',
  'é ü 日本',
  'emoji 😀 and 𝄞',
  'lone \ud800 surrogate',
  '\u2028\u2029',
  "<b>&'x'</b>",
  [],
  {},
  [[]],
  [{}],
  [1, 'two', null, [true, { z: 1, a: 2 }]],
  { b: 1, a: 2, B: 3, é: 4, '😀': 5, '\uffff': 6, _: 7, '10': 8, '9': 9, '': 10 },
  { z: [1, { y: null, x: [true, false] }], a: {}, m: { 'k<>': "it's" } },
  { nested: { deeper: { deepest: ['ü', 1.5, -2] } } },
]

const RELATIVE_PATHS: [string, string | undefined][] = [
  ['docs/guide/a.md', 'docs'],
  ['docs/x.md', 'docs/guide'],
  ['docs', 'docs'],
  ['a.md', ''],
  ['a.md', undefined],
  ['tasks/t1.md', 'docs/guide'],
  ['docs/./guide//b.md', 'docs/guide/'],
  ['../outside.md', 'docs'],
]
const RELATIVE_BASE = '/srv/project/templates'

interface PythonResults {
  dumps: string[]
  tojson: string[]
  floats: string[]
  relpaths: string[]
}

const PYTHON_SCRIPT = String.raw`
import json, os, sys
from pathlib import Path
data = json.load(sys.stdin)
def tojson(value, indent):
    # Jinja's htmlsafe_json_dumps with the default policy json.dumps_kwargs = {"sort_keys": True}
    kwargs = {"sort_keys": True}
    if indent is not None:
        kwargs["indent"] = indent
    return (json.dumps(value, **kwargs).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("'", "\\u0027"))
root = Path(data["root"])
print(json.dumps({
    "dumps": [json.dumps(v, sort_keys=True) for v in data["values"]],
    "tojson": [tojson(v, i) for v in data["values"] for i in (None, 0, 2)],
    "floats": [repr(float(s)) for s in data["floats"]],
    "relpaths": [Path(os.path.relpath(root / v, root / (d or ""))).as_posix() for v, d in data["relpaths"]],
}))
`

function floatText(n: number): string {
  return Object.is(n, -0) ? '-0.0' : String(n)
}

const FLOATS: number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  1e-4,
  1e-5,
  0.00012345,
  1e15,
  1e16,
  123456789012345680,
  1e21,
  1e22,
  2 ** 53,
  2 ** 53 + 2,
  1.5e300,
  -2.5e-300,
  5e-324,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  0.1 + 0.2,
  1 / 3,
  ...fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { numRuns: 400, seed: 20240607 }),
]

let python: PythonResults

beforeAll(() => {
  const input = JSON.stringify({
    values: TRICKY_VALUES,
    floats: FLOATS.map(floatText),
    relpaths: RELATIVE_PATHS,
    root: RELATIVE_BASE,
  })
  python = JSON.parse(execFileSync('python3', ['-c', PYTHON_SCRIPT], { input, encoding: 'utf8' }))
})

describe('json filter = Python json.dumps(v, sort_keys=True)', () => {
  it('matches python3 byte for byte on tricky values', () => {
    expect(TRICKY_VALUES.map(pythonJsonDumps)).toEqual(python.dumps)
  })

  it('is the `json` filter of the environment', () => {
    const env = createJinjaEnvironment()
    const rendered = TRICKY_VALUES.map((v) => env.renderString('{{ v | json }}', { v }))
    expect(rendered).toEqual(python.dumps)
  })

  it('writes front-matter shapes directly exactly as the general encoder does', () => {
    // pythonJsonDumps writes plain values itself (issue #17) and leaves the rest to encodePythonJson.
    const general = (v: unknown) =>
      encodePythonJson(v, { sortKeys: true, ensureAscii: true, indent: null, itemSeparator: ', ', keySeparator: ': ' })
    const scalar = fc.oneof(fc.string({ unit: 'binary' }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null))
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('node')), fc.dictionary(fc.string({ unit: 'binary' }), tie('node'))),
    })).node
    fc.assert(fc.property(value, (v) => pythonJsonDumps(v) === general(v)), { numRuns: 2000 })
  })

  it('writes literal expectations for a few values', () => {
    expect(pythonJsonDumps({ b: [1, 'é'], a: '😀' })).toBe('{"a": "\\ud83d\\ude00", "b": [1, "\\u00e9"]}')
    expect(pythonJsonDumps([NaN, Infinity, -Infinity])).toBe('[NaN, Infinity, -Infinity]')
    expect(pythonJsonDumps(1e16)).toBe('1e+16')
    expect(pythonJsonDumps(10n ** 20n)).toBe('100000000000000000000')
  })

  it('rejects values that are not JSON like Python does', () => {
    expect(() => pythonJsonDumps(undefined)).toThrow('Object of type undefined is not JSON serializable')
    expect(() => pythonJsonDumps({ when: new Date(0) })).toThrow('Object of type Date is not JSON serializable')
    const loop: Record<string, unknown> = {}
    loop.self = loop
    expect(() => pythonJsonDumps(loop)).toThrow('Circular reference detected')
  })
})

describe('float repr', () => {
  it('matches Python repr(float) for edge cases and 400 random doubles', () => {
    expect(FLOATS.map(pythonFloatRepr)).toEqual(python.floats)
  })
})

describe("tojson filter = Jinja's htmlsafe_json_dumps", () => {
  it('matches python3 for indent None, 0 and 2', () => {
    const ours = TRICKY_VALUES.flatMap((v) => [jinjaToJson(v), jinjaToJson(v, 0), jinjaToJson(v, 2)])
    expect(ours).toEqual(python.tojson)
  })

  it('accepts tojson, tojson(2) and tojson(indent=2) in templates', () => {
    const env = createJinjaEnvironment()
    const value = { b: "<i>'&'</i>", a: [1, { é: null }] }
    expect(env.renderString('{{ v | tojson }}', { v: value })).toBe(
      '{"a": [1, {"\\u00e9": null}], "b": "\\u003ci\\u003e\\u0027\\u0026\\u0027\\u003c/i\\u003e"}',
    )
    const indented =
      '{\n  "a": [\n    1,\n    {\n      "\\u00e9": null\n    }\n  ],\n' +
      '  "b": "\\u003ci\\u003e\\u0027\\u0026\\u0027\\u003c/i\\u003e"\n}'
    expect(env.renderString('{{ v | tojson(indent=2) }}', { v: value })).toBe(indented)
    expect(env.renderString('{{ v | tojson(2) }}', { v: value })).toBe(indented)
    expect(() => env.renderString('{{ v | tojson(width=2) }}', { v: value })).toThrow(
      "tojson() got an unexpected keyword argument 'width'",
    )
  })
})

describe('relative_to filter', () => {
  it('matches Python os.path.relpath(base/path, base/dir) as POSIX', () => {
    const env = createJinjaEnvironment(RELATIVE_BASE)
    const ours = RELATIVE_PATHS.map(([p, d]) =>
      d === undefined
        ? env.renderString('{{ p | relative_to }}', { p })
        : env.renderString('{{ p | relative_to(d) }}', { p, d }),
    )
    expect(ours).toEqual(python.relpaths)
    expect(ours.slice(0, 4)).toEqual(['guide/a.md', '../x.md', '.', 'a.md'])
  })

  it('gives the resolved answer for normalized paths too (the loop fast path)', () => {
    const env = createJinjaEnvironment(RELATIVE_BASE)
    const segment = fc.constantFrom('a', 'b', 'docs', 'a.md', 'ab')
    const relPath = fc.array(segment, { minLength: 0, maxLength: 4 }).map((parts) => parts.join('/'))
    fc.assert(
      fc.property(relPath.filter((p) => p !== ''), relPath, (value, directory) => {
        const expected = path.posix.relative(path.posix.resolve(RELATIVE_BASE, directory || '.'), path.posix.resolve(RELATIVE_BASE, value)) || '.'
        expect(env.renderString('{{ p | relative_to(d) }}', { p: value, d: directory })).toBe(expected)
      }),
      { numRuns: 300, seed: 15 },
    )
  })
})

describe('rowsOf', () => {
  it('gives each value shape its rows', () => {
    expect(rowsOf([{ a: 1 }, { b: 2 }])).toEqual([{ a: 1 }, { b: 2 }])
    expect(rowsOf(['x', 2, null, [3]])).toEqual([{ value: 'x' }, { value: 2 }, { value: null }, { value: [3] }])
    expect(rowsOf([{ a: 1 }, 'b'])).toEqual([{ a: 1 }, { value: 'b' }])
    expect(rowsOf({ a: 1 })).toEqual([{ a: 1 }])
    expect(rowsOf('s')).toEqual([{ value: 's' }])
    expect(rowsOf(3.5)).toEqual([{ value: 3.5 }])
    expect(rowsOf(false)).toEqual([{ value: false }])
    expect(rowsOf(null)).toEqual([{ value: null }])
    expect(rowsOf([])).toEqual([])
  })
})

describe('whitespace control (expected strings rendered by Jinja 3.1.6, trim/lstrip blocks)', () => {
  let dir: string
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  const cases: [string, string, Record<string, unknown>, string][] = [
    ['for loop joins lines', '{% for x in xs %}\n- {{ x }}\n{% endfor %}\nend\n', { xs: [1, 2] }, '- 1\n- 2\nend\n'],
    ['newline after endfor is removed', '{% for x in xs %}{{ x }}{% endfor %}\nz\n', { xs: [1, 2] }, '12z\n'],
    ['indented block tags vanish', 'a\n  {% if true %}\n  b\n  {% endif %}\nc', {}, 'a\n  b\nc'],
    ['mid-line tags keep spaces', 'x  {% if true %}y{% endif %}  \n', {}, 'x  y  \n'],
    [
      'comments on their own lines vanish',
      '{# header #}\n{% for x in xs %}\n  {# per item #}\n  * {{ x }}\n{% endfor %}\n',
      { xs: [1, 2] },
      '  * 1\n  * 2\n',
    ],
    ['newline after a comment is removed', 'a {# c #}\nb\n', {}, 'a b\n'],
    ['multi-line comment', 'a\n{# multi\nline\ncomment #}\nb\n', {}, 'a\nb\n'],
    ['comment with - modifiers', 'a   {#- x -#}   \n\n  b\n', {}, 'ab\n'],
    ['CRLF and CR become LF', '  \t{% if true %}\r\nq\r\n{% endif %}\r\nr\rs\n', {}, 'q\nr\ns\n'],
    ['comment syntax in strings and raw', '{{ "{# not a comment #}" }}\n{% raw %}{# kept #}{% endraw %}\n', {}, '{# not a comment #}\n{# kept #}'],
    ['macros', '{% macro m(x) %}\n<{{x}}>\n{% endmacro %}\n{{ m(1) }}{{ m(2) }}', {}, '<1>\n<2>\n'],
    [
      'nested loops',
      '{% for r in rows %}\n  {% for k in r %}\n    {{ k }};\n  {% endfor %}\n{% endfor %}\n',
      { rows: [['a', 'b'], ['c']] },
      '    a;\n    b;\n    c;\n',
    ],
    ['raw keeps its first newline', '{% raw %}\n{{x}}\n{% endraw %}\nr', {}, '\n{{x}}\nr'],
    ['raw lstrip and trim', 'a\n  {% raw %}\n  {{x}}\n  {% endraw %}\nr\n', {}, 'a\n\n  {{x}}\nr\n'],
    ['raw with - modifiers', '{%- raw -%}\n  x  \n{%- endraw -%}\n\n y\n', {}, 'xy\n'],
  ]

  it.each(cases)('%s', (_title, source, context, expected) => {
    const name = `case-${cases.findIndex((c) => c[1] === source)}.j2`
    fs.writeFileSync(path.join(dir, name), source)
    expect(createJinjaEnvironment(dir).render(name, context)).toBe(expected)
  })

  it("a template that changes `this` or `params` changes only its own copies, never the job's location and options", () => {
    // A key a plain object cannot hold in Python's order makes it a template dict in place.
    const source = "{% set _ = this.update({'2024': 1}) %}{% set _ = params.setdefault(0, 'x') %}{% set _ = params.nested.update({'__proto__': 1}) %}{{ this.path }} {{ params|length }}"
    fs.writeFileSync(path.join(dir, 'mutates.j2'), source)
    const renderer = createJinjaRenderer({ templatesDir: dir, root: dir })
    const own = { ...location }
    const params = { limit: 3, nested: { a: 1 } }
    expect(renderer.render({ template: 'mutates.j2', value: [], params, location: own }).content).toBe('docs/guide/a.md 3')
    expect(own).toEqual(location)
    expect(Object.getPrototypeOf(own)).toBe(Object.prototype)
    expect(params).toEqual({ limit: 3, nested: { a: 1 } })
    expect(Object.getPrototypeOf(params.nested)).toBe(Object.prototype)
    expect(JSON.stringify(own)).toBe(JSON.stringify(location))
  })

  it('the plugin filters take dicts and Markup a template made', () => {
    const source = "{{ [{1: 'a', 'b': none}]|insitu_item }}|{{ {'value': 'only'}|insitu_item }}|{{ {'k': 1, 2: 'x'}|insitu_keys|list }}|{{ {'k': 'v|w'}|insitu_cells(['k', 'z'])|join(',') }}|{{ ('docs/a.md '|safe).strip()|relative_to('docs') }}"
    fs.writeFileSync(path.join(dir, 'filters.j2'), source)
    const renderer = createJinjaRenderer({ templatesDir: dir, root: dir })
    expect(renderer.render({ template: 'filters.j2', value: [], location }).content).toBe(`[{"1": "a", "b": null}]|only|['k', 2]|v\\|w,|a.md`)
  })

  it('keeps line numbers after comments and raw blocks', () => {
    const source = '{# a\nb #}\n{% raw %}\nx\n{% endraw %}\n{{ missing }}\n'
    fs.writeFileSync(path.join(dir, 'lines.j2'), source)
    const renderer = createJinjaRenderer({ templatesDir: dir, root: dir })
    expect(() => renderer.render({ template: 'lines.j2', value: [], location })).toThrow(
      "template lines.j2: 'missing' is undefined (line 6, column 1)",
    )
  })
})

describe('builtin templates', () => {
  const renderer = createJinjaRenderer({ templatesDir: '/nonexistent-templates', root: '/nonexistent' })
  const render = (template: string | undefined, value: unknown) =>
    renderer.render(template === undefined ? { value, location } : { template, value, location })

  it('lists the three builtins', () => {
    expect(Object.keys(BUILTIN_TEMPLATES)).toEqual(['@insitu/table', '@insitu/list', '@insitu/json'])
  })

  it('@insitu/table is the default: one line per row, escaped cells', () => {
    const rows = [
      { name: 'a|b', note: 'line1\nline2\r\nline3', done: true, n: 1.5 },
      { name: 'c', note: null, done: false, n: 0 },
      { name: 'd', done: null, n: [1, 'é'], extra: 'dropped' },
    ]
    expect(render(undefined, rows)).toEqual({
      content:
        '| name | note | done | n |\n' +
        '| --- | --- | --- | --- |\n' +
        '| a\\|b | line1 line2 line3 | true | 1.5 |\n' +
        '| c |  | false | 0 |\n' +
        '| d |  |  | [1, "é"] |',
      dependencies: [],
    })
  })

  it('@insitu/table escapes header keys and renders scalars and objects', () => {
    expect(render('@insitu/table', { 'a|b': 'x' }).content).toBe('| a\\|b |\n| --- |\n| x |')
    expect(render('@insitu/table', ['x', 'y']).content).toBe('| value |\n| --- |\n| x |\n| y |')
    expect(render('@insitu/table', null).content).toBe('| value |\n| --- |\n|  |')
  })

  it('@insitu/table says _No rows._ for no rows', () => {
    expect(render('@insitu/table', []).content).toBe('_No rows._')
  })

  it('@insitu/list shows values of {value} rows and JSON text of other rows', () => {
    expect(render('@insitu/list', ['a', 2, null, 'two\nlines', { k: 'é', n: 1 }, [1, 2]]).content).toBe(
      '- a\n- 2\n- \n- two lines\n- {"k": "é", "n": 1}\n- [1, 2]',
    )
    expect(render('@insitu/list', []).content).toBe('_No rows._')
  })

  it('@insitu/json is a json block of value with indent 2', () => {
    expect(render('@insitu/json', { b: '<x>', a: [1, 'é'] }).content).toBe(
      '```json\n{\n  "a": [\n    1,\n    "\\u00e9"\n  ],\n  "b": "\\u003cx\\u003e"\n}\n```',
    )
    expect(render('@insitu/json', null).content).toBe('```json\nnull\n```')
    expect(render('@insitu/json', []).content).toBe('```json\n[]\n```')
  })

  it('@insitu/table prints an SQL BLOB as Python prints bytes (issue #15)', () => {
    // Python: repr(b'\x00\xffA') == "b'\\x00\\xffA'", repr(bytes([39])) == 'b"\'"'
    expect(render('@insitu/table', [{ blob: Buffer.from([0, 255, 65]), quote: Buffer.from([39]) }]).content).toBe(
      "| blob | quote |\n| --- | --- |\n| b'\\x00\\xffA' | b\"'\" |",
    )
  })

  it('rejects unknown builtins', () => {
    expect(errorOf(() => render('@insitu/nope', [])).message).toBe('unknown builtin template: @insitu/nope')
  })
})

describe('template files', () => {
  let root: string
  let templatesDir: string
  let renderer: ReturnType<typeof createJinjaRenderer>

  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
    templatesDir = path.join(root, 'templates')
    fs.mkdirSync(path.join(templatesDir, 'partials'), { recursive: true })
    fs.writeFileSync(path.join(root, 'secret.j2'), 'outside\n')
    fs.symlinkSync(path.join(root, 'secret.j2'), path.join(templatesDir, 'link.j2'))
    renderer = createJinjaRenderer({ templatesDir, root })
  })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  const write = (name: string, text: string) => fs.writeFileSync(path.join(templatesDir, name), text)

  it('renders the context (rows, params, this, value), right-trimmed, with its dependency', () => {
    write(
      'tasks.md.j2',
      '# {{ params.title }} ({{ this.path }}, depth {{ this.depth }})\n' +
        '{% for row in rows %}\n' +
        '- [{{ "x" if row.done else " " }}] {{ row.path | relative_to(this.directory) }}\n' +
        '{% endfor %}\n' +
        'count: {{ value | length }}\n\n\n',
    )
    const output = renderer.render({
      template: 'tasks.md.j2',
      params: { title: 'Tasks' },
      value: [
        { path: 'docs/guide/t1.md', done: true },
        { path: 'docs/t2.md', done: false },
      ],
      location,
    })
    expect(output).toEqual({
      content: '# Tasks (docs/guide/a.md, depth 2)\n- [x] t1.md\n- [ ] ../t2.md\ncount: 2',
      dependencies: ['fs:file:templates/tasks.md.j2'],
    })
  })

  // Jinja2 3.1.6 prints None, True, False and lists and dicts as Python's str() writes them
  // (issue #36: no finalize; the old expectations were SPEC §10's retired rule, and before it
  // nunjucks' JSON text).
  it('stringifies null, booleans and containers as Jinja prints them (Python str)', () => {
    write('strings.j2', '[{{ value.n }}] {{ value.t }} {{ value.f }} {{ value.o }} {{ value.a }}')
    const value = { n: null, t: true, f: false, o: { b: 1, a: 'é' }, a: [1, null] }
    const output = renderer.render({ template: 'strings.j2', params: {}, value, location })
    expect(output.content).toBe("[None] True False {'b': 1, 'a': 'é'} [1, None]")
  })

  it('records included files and re-reads edited files', () => {
    write('partials/row.j2', '* {{ row.value }}\n')
    write('main.j2', '{% for row in rows %}\n{% include "partials/row.j2" %}\n{% endfor %}\n')
    const first = renderer.render({ template: 'main.j2', value: ['a', 'b'], location })
    expect(first).toEqual({
      content: '* a\n* b',
      dependencies: ['fs:file:templates/main.j2', 'fs:file:templates/partials/row.j2'],
    })
    write('partials/row.j2', '+ {{ row.value }}!\n')
    expect(renderer.render({ template: 'main.j2', value: ['a'], location }).content).toBe('+ a!')
  })

  it('reuses a file read only while its stat shows the same file unchanged', async () => {
    // An mtime and ctime older than the racy window (2 s) let the loader keep the text it read (issue #17).
    const old = new Date(Date.now() - 60_000)
    const file = path.join(templatesDir, 'kept.j2')
    const age = () => fs.utimesSync(file, old, old)
    const render = () => renderer.render({ template: 'kept.j2', value: [], location })
    write('kept.j2', 'one')
    age()
    await new Promise((resolve) => setTimeout(resolve, 2_100)) // the ctime (set by utimes) ages too
    expect(render()).toEqual({ content: 'one', dependencies: ['fs:file:templates/kept.j2'] })
    expect(render()).toEqual({ content: 'one', dependencies: ['fs:file:templates/kept.j2'] })
    // The same size, and the very same mtime put back: only the ctime tells the edit.
    write('kept.j2', 'two')
    age()
    expect(render().content).toBe('two')
    // Replaced by another file (another inode) with the same size and mtime.
    fs.writeFileSync(`${file}.new`, 'six')
    fs.utimesSync(`${file}.new`, old, old)
    fs.renameSync(`${file}.new`, file)
    expect(render().content).toBe('six')
    // Replaced by a symlink leading outside: refused, not served from the kept read.
    fs.rmSync(file)
    fs.symlinkSync(path.join(root, 'secret.j2'), file)
    expect(errorOf(render).message).toBe('template escapes templates directory: kept.j2')
    fs.rmSync(file)
    expect(errorOf(render).message).toMatch(/^template not found: kept\.j2/)
  })

  it('normalizes the dependency of a name with dot segments', () => {
    write('plain.j2', 'plain')
    expect(renderer.render({ template: 'partials/../plain.j2', value: null, location }).dependencies).toEqual([
      'fs:file:templates/plain.j2',
    ])
  })

  // Reasons are Jinja2's; under StrictUndefined `{% if missing %}` raises too (Jinja2 3.1.6),
  // where nunjucks let it pass.
  it('errors on undefined variables and attributes, naming the template and line', () => {
    write('undefined.j2', 'ok\n  {{ missing }}\n')
    expect(errorOf(() => renderer.render({ template: 'undefined.j2', value: [], location })).message).toBe(
      "template undefined.j2: 'missing' is undefined (line 2, column 3)",
    )
    write('attribute.j2', '{% for row in rows %}{{ row.nope }}{% endfor %}')
    expect(errorOf(() => renderer.render({ template: 'attribute.j2', value: [{ a: 1 }], location })).message).toBe(
      "template attribute.j2: 'dict object' has no attribute 'nope' (line 1, column 22)",
    )
    write('defaulted.j2', '{{ missing | default("d") }}{% if missing is defined %}x{% endif %}')
    expect(renderer.render({ template: 'defaulted.j2', value: [], location }).content).toBe('d')
    write('tested.j2', '{% if missing %}x{% endif %}')
    expect(errorOf(() => renderer.render({ template: 'tested.j2', value: [], location })).message).toBe(
      "template tested.j2: 'missing' is undefined (line 1, column 1)",
    )
  })

  it('reports syntax errors and errors in included files with their position', () => {
    write('syntax.j2', 'a\n{% for x in %}\n')
    expect(errorOf(() => renderer.render({ template: 'syntax.j2', value: [], location })).message).toBe(
      "template syntax.j2: Expected an expression, got 'end of statement block' (line 2, column 13)",
    )
    write('partials/bad.j2', 'x\n{{ nope }}\n')
    write('includes-bad.j2', '{% include "partials/bad.j2" %}')
    const caught = errorOf(() => renderer.render({ template: 'includes-bad.j2', value: [], location }))
    expect(caught.message).toBe(
      "template includes-bad.j2: 'nope' is undefined (partials/bad.j2 line 2, column 1)",
    )
    expect(caught.dependencies).toEqual([
      'fs:file:templates/includes-bad.j2',
      'fs:file:templates/partials/bad.j2',
    ])
  })

  it('confines names to the templates directory', () => {
    for (const name of ['../secret.j2', 'partials/../../secret.j2', path.join(root, 'secret.j2'), 'link.j2']) {
      const error = errorOf(() => renderer.render({ template: name, value: [], location }))
      expect(error.message).toBe(`template escapes templates directory: ${name}`)
      expect(error.dependencies).toEqual(name === 'link.j2' ? ['fs:file:templates/link.j2'] : [])
    }
    write('inner.j2', 'inner')
    expect(renderer.render({ template: path.join(templatesDir, 'inner.j2'), value: [], location }).content).toBe(
      'inner',
    )
  })

  it('reports missing templates with the file to watch', () => {
    const caught = errorOf(() => renderer.render({ template: 'missing.j2', value: [], location }))
    expect(caught.message).toBe('template not found: missing.j2')
    expect(caught.dependencies).toEqual(['fs:file:templates/missing.j2'])
    expect(errorOf(() => renderer.render({ template: 'partials', value: [], location })).message).toBe(
      'template not found: partials',
    )
  })
})

describe('stringification holds in extended, imported and included templates (Jinja2 3.1.6 outputs)', () => {
  let root: string
  beforeAll(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
    const write = (name: string, text: string) => fs.writeFileSync(path.join(root, name), text)
    write('base.j2', 'base[{{ n }}|{{ a }}]{% block body %}{% endblock %}')
    write('macros.j2', '{% macro show(v) %}macro[{{ v }}]{% endmacro %}')
    write('part.j2', 'include[{{ n }}|{{ a }}]')
    write(
      'page.j2',
      '{% extends "base.j2" %}{% import "macros.j2" as m %}' +
        '{% block body %} block[{{ n }}|{{ a }}] {{ m.show(n) }}{{ m.show(a) }} {% include "part.j2" %}{% endblock %}',
    )
  })
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

  it('prints None and containers as Python str() everywhere', () => {
    const ours = createJinjaEnvironment(root)
    expect(ours.renderString('[{{ x }}] {{ a }}', { x: null, a: [1, 'b'] })).toBe("[None] [1, 'b']")
    expect(ours.render('page.j2', { n: null, a: [null, 'x'] })).toBe(
      "base[None|[None, 'x']] block[None|[None, 'x']] macro[None]macro[[None, 'x']] include[None|[None, 'x']]",
    )
    expect(ours.render('page.j2', { n: null, a: [1] })).toBe('base[None|[1]] block[None|[1]] macro[None]macro[[1]] include[None|[1]]')
    expect(ours.renderString('{% from "macros.j2" import show %}{{ show(n) }}{{ show(a) }}', { n: null, a: [2] })).toBe(
      'macro[None]macro[[2]]',
    )
    expect(() => ours.render('part.j2', { a: [] })).toThrow("'n' is undefined")
    expect(() => ours.renderString('{{ o.missing }}', { o: {} })).toThrow("'dict object' has no attribute 'missing'")
  })
})

describe('error positions for the overlay', () => {
  it('carry the template file and line of a render error, the included file when it is there', async () => {
    const { errorPosition } = await import('../../src/documents/error-positions.js')
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-'))
    try {
      fs.mkdirSync(path.join(root, 'templates/partials'), { recursive: true })
      fs.writeFileSync(path.join(root, 'templates/partials/bad.j2'), 'x\n{{ nope }}\n')
      fs.writeFileSync(path.join(root, 'templates/main.j2'), 'a\n{% include "partials/bad.j2" %}')
      fs.writeFileSync(path.join(root, 'templates/syntax.j2'), 'a\n\n{% if %}')
      const renderer = createJinjaRenderer({ templatesDir: path.join(root, 'templates'), root })
      const included = errorOf(() => renderer.render({ template: 'main.j2', value: [], location }))
      expect(errorPosition(included)).toEqual({ path: 'templates/partials/bad.j2', line: 2, column: 1 })
      const syntax = errorOf(() => renderer.render({ template: 'syntax.j2', value: [], location }))
      expect(errorPosition(syntax)).toEqual({ path: 'templates/syntax.j2', line: 3, column: 7 })
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})

describe('bytes (an SQL BLOB, a Buffer) behave as Python bytes (issue #15)', () => {
  // Expected values from Python 3.11: repr, len, bool, iteration and == of bytes.
  it('prints, measures, iterates and compares them', () => {
    const env = createJinjaEnvironment()
    const context = { b: Buffer.from([0, 255, 65]), quotes: Buffer.from([39, 34]), odd: Buffer.from('\\\t\n\r\x7f~', 'latin1'), empty: Buffer.alloc(0) }
    expect(env.renderString('{{ b }} {{ quotes }} {{ odd }} {{ b | length }} {{ b | list }}', context)).toBe(
      "b'\\x00\\xffA' b'\\'\"' b'\\\\\\t\\n\\r\\x7f~' 3 [0, 255, 65]",
    )
    expect(env.renderString("{{ 'yes' if empty else 'no' }} {{ b == b }} {{ b == quotes }} {{ [b, b] | unique | list | length }}", context)).toBe('no True False 1')
  })
})
