import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { splitFrontMatter } from '../../src/documents/frontmatter.js'
import { parseSimpleMapping } from '../../src/documents/simple-yaml.js'
import { readYamlMapping } from '../../src/documents/yaml-read.js'
import { PythonFloat } from '../../src/values/python-float.js'

/** What the full reader (ruamel's reading, yaml-read.ts) makes of `raw`; `error` when it rejects it. */
function slow(raw: string): unknown {
  try {
    return readYamlMapping(raw) ?? {}
  } catch {
    return 'error'
  }
}

/** The fast path either declines or gives exactly the full reader's value (-0 and 0, 2 and 2.0 told apart). */
function expectParity(raw: string): boolean {
  const fast = parseSimpleMapping(raw)
  if (fast === undefined) return false
  expect({ raw, value: fast }).toStrictEqual({ raw, value: slow(raw) })
  expect(Object.getPrototypeOf(fast)).toBe(Object.prototype)
  return true
}

const TAKEN: string[] = [
  'title: Task 1\nstatus: open\npriority: 2\ntags:\n  - backend\n  - docs\n',
  'title: Task 1\r\nstatus: open\r\ntags:\r\n- a\r\n- b\r\n',
  'a: ~\nb: null\nc: Null\nd: NULL\ne:\nf: true\ng: True\nh: TRUE\ni: false\nj: False\nk: FALSE\n',
  'n: 0\nm: -0\no: 42\np: -17\nq: 1.5\nr: -0.25\ns: 100000000000000\nt: 0.000000000000001\n',
  'float: 2.0\nzero: 0.0\nnegative_zero: -0.0\nlong: 123456789012345.000000000000000\n',
  'date: 2024-01-02\nleap: 2024-02-29\nlast: 9999-12-31\n',
  'word: it\'s fine, really; (mostly) ok?\nsymbols: a+b=c & d*e % f @ g $ h ! i / j_k.l-m\n',
  'empty_list: []\nflow: [a, b c, 1, -2, 0.5, true, null, ~, 2024-01-02, "q", \'s\']\n',
  'quoted: "Fix: the # thing, [really] {now}"\nsingle: \'a "b" c: d\'\nempty_double: ""\nempty_single: \'\'\n',
  'unicode: Über straße\ncjk: 日本語のタイトル\nmark: é\n',
  '# leading comment\n\ntitle: X   \n   # indented comment\nlist:\n\n  - a\n  # between\n  - b\n\nnext: y\n',
  'spaced:     lots of   inner   spaces\n',
  '_private: 1\nkebab-key: 2\nsnake_key: 3\nCamelKey: 4\nyes: yes\nno: no\non: off\ny: n\n',
  'list_then_null:\nafter: 1\n',
  'trailing:\n',
  'layout: ../../layouts/Page.astro\nhere: ./a b/c.md\nroot: /docs/x_y-z.html\nlist:\n  - ../a\n  - /b\n',
  // Nested mappings.
  'a:\n  b: 1\n',
  'a:\n  b: 1\n  c: x\nd: 2\n',
  'title: Project tasks\ninsitu:\n  materializations:\n    counts:\n      model: counts\n      target: frontmatter:/generated/counts\n',
  'title: Intro\nsidebar:\n  order: 2\n  label: Getting started\n  badge:\n    text: New\n    variant: tip\n',
  'a:\n  b:\n  - x\n  - y\n  c: 1\n',
  'a:\n  b:\n    - x\n  c:\n',
  'a:\n    b:\n      c:\n        d: [1, 2.0]\n    e: ~\nf: 2024-02-29\n',
  'a:\n  # c\n\n  b: 1\n   # deeper comment\nc: 1\n',
  'a:\r\n  b: 1\r\n  c:\r\n  - x\r\n',
  'a:\n  x: 1\nb:\n  x: 2\n',
  'a:\n  b:\n   c: 1\n  d: 2\n',
  `${Array.from({ length: 16 }, (_, i) => `${' '.repeat(2 * i)}k${i}:`).join('\n')}\n${' '.repeat(32)}deep: 1\n`,
  // `:` inside a word.
  'a: x:y\nb: http://x.y/z\nc: a::b\nd: é:x\ne: a :b\nf: a:b c\ng: True:x\nh: null:x\ni: a:/\nj: on:off\nk: sql:model:x\n',
  'list:\n  - x:y\n  - frontmatter:/a/b\n',
]

const DECLINED: string[] = [
  '',
  '# only a comment\n',
  'a: b: c\n',
  'title: X\ntitle: Y\n',
  'a: 1 # comment\n',
  'a: "esc\\"aped"\n',
  'a: "line\\nbreak"\n',
  "a: 'it''s'\n",
  'a: 007\n',
  'a: +1\n',
  'a: 1e3\n',
  'a: 0x1F\n',
  'a: 0o17\n',
  'a: .5\n',
  'a: 1.\n',
  'a: .inf\n',
  'a: -.inf\n',
  'a: .nan\n',
  'a: 1_000\n',
  'a: 12:30\n',
  'a: 9999999999999999\n',
  'a: 2024-13-45\n',
  'a: 2023-02-29\n',
  'a: 2024-04-31\n',
  'a: 0000-01-01\n',
  'a: [2024-02-30]\n',
  'a: &anchor x\nb: *anchor\n',
  'a: !!str 1\n',
  'a: |\n  block\n',
  'a: >-\n  folded\n',
  'a: {b: 1}\n',
  'a: [a, [b]]\n',
  'a: [a, b,]\n',
  'a: [a, , b]\n',
  'a: [ ]\n',
  'a: @x\n',
  'a: `x`\n',
  'a: %x\n',
  'a: -x\n',
  'a: ?x\n',
  'a: plain\n  continued\n',
  'a:\n  b: 1\n c: 2\n',
  'a:\n    b: 1\n  c: 2\n',
  'a:\n  b: 1\n  b: 2\n',
  'a:\n  - x\n  b: 1\n',
  'a:\n  b:\n    - x\n   c: 1\n',
  'a:\n  b:\n    - x\n  - y\n',
  'a:\n  __proto__: 1\n',
  'a:\n  true: 1\n',
  'a:\n  b: 1\n    c: 2\n',
  'k: a:\n',
  'k: a: b\n',
  'k: [x:y]\n',
  'k: a:b # c\n',
  'k: 1:2\n',
  'k: :a\n',
  'k:\n  - a: b\n',
  `${Array.from({ length: 18 }, (_, i) => `${' '.repeat(2 * i)}k${i}:`).join('\n')}\n${' '.repeat(36)}deep: 1\n`,
  'a:\n  - x\n    - y\n',
  'a:\n  - x\n - y\n',
  'a:\n  -\n',
  'a:\n  - a: b\n',
  'a: ../x # c\n',
  'a: /x: y\n',
  'a: [../x]\n',
  'a: .../x\n',
  'a: ./\u{1F600}\n',
  'a:\n  - - x\n',
  'a:\n\t- x\n',
  'a: tab\there\n',
  'a: x\r\rb\n',
  '- a\n',
  'plain\n',
  'a:b\n',
  ' a: 1\n',
  'true: 1\n',
  'null: 1\n',
  '__proto__: 1\n',
  '"a": 1\n',
  '? a\n: 1\n',
  '%YAML 1.2\n',
  'a: 1\n...\n',
  'a: x\u2028y\n',
  '\ufeffa: 1\n',
  'a: \u{1F600}\n',
  'a: 1\nb:\n- x\nc: 2\n- y\n',
]

describe('parseSimpleMapping', () => {
  it.each(TAKEN)('takes the fast path and agrees with the full reader: %j', (raw) => {
    expect(expectParity(raw)).toBe(true)
  })

  it.each(DECLINED)('declines what is outside its subset: %j', (raw) => {
    expect(parseSimpleMapping(raw)).toBeUndefined()
  })

  it('reads numbers and dates as ruamel does', () => {
    expect(parseSimpleMapping('a: 2.0\nb: -0\nc: -0.0\nd: 2024-02-29\ne: [1.0, 2]\n')).toStrictEqual({
      a: new PythonFloat(2),
      b: 0,
      c: new PythonFloat(-0),
      d: '2024-02-29',
      e: [new PythonFloat(1), 2],
    })
  })

  it('agrees with the full reader on generated front matter whenever it answers', () => {
    // A seeded generator of lines from tricky fragments; the fast path must agree or decline.
    let seed = 20261201
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    }
    const pick = <T>(list: readonly T[]): T => list[random(list.length)]!
    const keys = ['title', 'status', 'tags', 'a', 'b', 'B', 'x-y', '_k', 'true', 'Null', 'key2', '__proto__', 'on']
    const values = [
      '', 'open', 'Task 1', '1', '-1', '0', '-0', '01', '+1', '1.5', '1.', '.5', '1e3', '0x10', '0o7', '1_0',
      '~', 'null', 'NULL', 'nUll', 'true', 'True', 'tRUE', 'yes', 'No', 'off', '2024-01-02', '2024-1-2', '12:30',
      '"q"', '"a: b"', '"a\\"b"', "'s'", "'it''s'", "'a, b'", '[]', '[ ]', '[a]', '[a, b]', '[a,b,]', '[a, [b]]',
      '[a: b]', '{}', '{a: 1}', '&x a', '*x', '!!str 1', '|', '>-', 'a # c', 'a#b', 'a: b', 'a:b', '@x', '`x`',
      '%x', '-x', '- x', '?x', 'x y  z', 'é', '日本', 'Über', "don't", 'a, b', 'a;b', '(a)', 'a=b', '.inf', '.NaN',
      '9007199254740993', '123456789012345', '1.123456789012345', 'x ', ' x', '"', "'", '[', ']', '#',
      '2.0', '-0.0', '10.000', '2023-02-29', '2024-02-29', '0000-01-01', '2024-00-10', '[1.0, 2024-02-30]',
      '../../layouts/Page.astro', './a', '/', '/x y', '../', '.../x', './.inf', '/.nan', '.5/x', '/a#b', '/a # b', '/a: b', './a,b', '[./a]',
    ]
    const line = (): string => {
      switch (random(7)) {
        case 0:
          return `${pick(['', ' ', '  ', '\t'])}- ${pick(values)}`
        case 1:
          return pick(['', '# note', '  # note', '   ', '---x', '...'])
        case 2:
          return `${pick(keys)}:`
        case 3:
          return `${pick(['', ' '])}${pick(keys)}:${pick(['', ' ', '  '])}${pick(values)}`
        default:
          return `${pick(keys)}: ${pick(values)}`
      }
    }
    let answered = 0
    for (let doc = 0; doc < 4000; doc++) {
      const lines = Array.from({ length: 1 + random(6) }, line)
      const eol = random(5) === 0 ? '\r\n' : '\n'
      if (expectParity(lines.join(eol) + eol)) answered++
    }
    // Enough generated documents are inside the subset for the comparison to mean something.
    expect(answered).toBeGreaterThan(400)
  })
})

describe('parseSimpleMapping as a property of the full reader', () => {
  const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,6}$/)
  const scalar = fc.oneof(
    fc.constantFrom('~', 'null', 'Null', 'true', 'FALSE', 'yes', 'no', 'on', 'open', 'Task 1', '', '"q"', "'s'", 'é', 'x:y', 'http://a.b/c', 'a:', 'a: b', 'a::b', 'frontmatter:/x'),
    fc.integer({ min: -1e15 + 1, max: 1e15 - 1 }).map(String),
    fc.tuple(fc.integer({ min: -99999, max: 99999 }), fc.stringMatching(/^[0-9]{1,6}$/)).map(([whole, fraction]) => `${whole}.${fraction}`),
    fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 })).map(
      ([y, m, d]) => `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
    ),
    fc.stringMatching(/^[a-z0-9 .:#'"[\],{}!&*|>%@`-]{1,8}$/),
  )
  const entry = fc.oneof(
    fc.tuple(key, scalar).map(([k, v]) => `${k}: ${v}`),
    fc.tuple(key, fc.array(scalar, { maxLength: 3 })).map(([k, items]) => `${k}: [${items.join(', ')}]`),
    fc.tuple(key, fc.array(scalar, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '  ')).map(
      ([k, items, indent]) => [`${k}:`, ...items.map((item) => `${indent}- ${item}`)].join('\n'),
    ),
    fc.constantFrom('# comment', '', '  # indented'),
  )

  /** Lines of a block mapping, nested up to `depth` levels, each level indented by 1, 2 or 4 more spaces; a line shifted by one column now and then. */
  const block = (depth: number): fc.Arbitrary<string[]> =>
    fc
      .array(
        fc.oneof(
          entry.map((text) => text.split('\n')),
          ...(depth > 0 ? [fc.tuple(key, block(depth - 1), fc.constantFrom(1, 2, 4)).map(([k, inner, n]) => [`${k}:`, ...inner.map((line) => `${' '.repeat(n)}${line}`)])] : []),
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((entries) => entries.flat())

  it('gives the full reader\'s value for nested mappings whenever it answers', () => {
    let answered = 0
    fc.assert(
      fc.property(block(3), fc.boolean(), fc.nat(40), fc.constantFrom(-1, 0, 0, 0, 1), (lines, crlf, at, shift) => {
        const shifted = lines.map((line, i) => (i === at % lines.length && shift !== 0 ? (shift > 0 ? ` ${line}` : line.replace(/^ /, '')) : line))
        const eol = crlf ? '\r\n' : '\n'
        if (expectParity(shifted.join(eol) + eol)) answered++
      }),
      { numRuns: 4000, seed: 20261207 },
    )
    expect(answered).toBeGreaterThan(400)
  })

  it('gives the full reader\'s value whenever it answers', () => {
    let answered = 0
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), fc.boolean(), (entries, crlf) => {
        const eol = crlf ? '\r\n' : '\n'
        if (expectParity(entries.join(eol) + eol)) answered++
      }),
      { numRuns: 3000, seed: 20260315 },
    )
    expect(answered).toBeGreaterThan(300)
  })
})

describe('splitFrontMatter with the fast path', () => {
  it('gives the same data as the full reader for a typical task document', () => {
    const text = '---\ntitle: Task 7\nstatus: open\npriority: 2\ntags:\n  - docs\n---\n\n# Task 7\n'
    expect(splitFrontMatter(text).data).toStrictEqual(slow('title: Task 7\nstatus: open\npriority: 2\ntags:\n  - docs\n'))
  })

  it('still reports errors with their line (declined text goes to the full reader)', () => {
    expect(() => splitFrontMatter('---\ntitle: X\ntitle: Y\n---\n')).toThrow(
      'invalid YAML front matter at line 3: found duplicate key "title"',
    )
    expect(() => splitFrontMatter('---\ntitle: X\nwhen: 2023-02-29\n---\n')).toThrow(
      'invalid YAML front matter at line 3: day is out of range for month',
    )
  })
})
