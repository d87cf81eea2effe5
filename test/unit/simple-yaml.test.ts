import { parseDocument } from 'yaml'
import { describe, expect, it } from 'vitest'
import { splitFrontMatter } from '../../src/documents/frontmatter.js'
import { parseSimpleMapping } from '../../src/documents/simple-yaml.js'

/** What `yaml` makes of `raw`, as `frontmatter.ts` parses it; `error` when it reports one. */
function slow(raw: string): unknown {
  const document = parseDocument(raw, { prettyErrors: false })
  if (document.errors.length > 0) return 'error'
  return document.toJS()
}

/** The fast path either declines or gives exactly `yaml`'s value (-0 and 0 told apart). */
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
  'date: 2024-01-02\nbad_date: 2024-13-45\n',
  'word: it\'s fine, really; (mostly) ok?\nsymbols: a+b=c & d*e % f @ g $ h ! i / j_k.l-m\n',
  'empty_list: []\nflow: [a, b c, 1, -2, 0.5, true, null, ~, 2024-01-02, "q", \'s\']\n',
  'quoted: "Fix: the # thing, [really] {now}"\nsingle: \'a "b" c: d\'\nempty_double: ""\nempty_single: \'\'\n',
  'unicode: Über straße\ncjk: 日本語のタイトル\nmark: é\n',
  '# leading comment\n\ntitle: X   \n   # indented comment\nlist:\n\n  - a\n  # between\n  - b\n\nnext: y\n',
  'spaced:     lots of   inner   spaces\n',
  '_private: 1\nkebab-key: 2\nsnake_key: 3\nCamelKey: 4\nyes: yes\nno: no\non: off\ny: n\n',
  'list_then_null:\nafter: 1\n',
  'trailing:\n',
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
  'a:\n  b: 1\n',
  'a:\n  - x\n    - y\n',
  'a:\n  - x\n - y\n',
  'a:\n  -\n',
  'a:\n  - a: b\n',
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
  it.each(TAKEN)('takes the fast path and agrees with yaml: %j', (raw) => {
    expect(expectParity(raw)).toBe(true)
  })

  it.each(DECLINED)('declines what is outside its subset: %j', (raw) => {
    expect(parseSimpleMapping(raw)).toBeUndefined()
  })

  it('agrees with yaml on generated front matter whenever it answers', () => {
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

describe('splitFrontMatter with the fast path', () => {
  it('gives the same data as yaml for a typical task document', () => {
    const text = '---\ntitle: Task 7\nstatus: open\npriority: 2\ntags:\n  - docs\n---\n\n# Task 7\n'
    expect(splitFrontMatter(text).data).toStrictEqual(slow('title: Task 7\nstatus: open\npriority: 2\ntags:\n  - docs\n'))
  })

  it('still reports yaml errors with their line (declined text goes to yaml)', () => {
    expect(() => splitFrontMatter('---\ntitle: X\ntitle: Y\n---\n')).toThrow(
      'invalid YAML front matter at line 3: Map keys must be unique',
    )
  })
})
