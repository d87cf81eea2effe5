import { describe, expect, it } from 'vitest'
import { errorOf as thrown } from './thrown-error.js'
import {
  FrontMatterError,
  FrontMatterWriteError,
  indexableFrontMatter,
  materializationJobs,
  ownershipConflicts,
  pointerSegments,
  setPointer,
  splitFrontMatter,
  targetsOverlap,
  writeGeneratedValues,
} from '../../src/documents/frontmatter.js'
import { PythonFloat } from '../../src/values/python-float.js'

const errorOf = (run: () => unknown): FrontMatterError => thrown(FrontMatterError, run)

describe('splitFrontMatter', () => {
  it('returns null data when there is no front matter', () => {
    for (const text of ['# Title\n', '\n---\na: 1\n---\n', '--- \na: 1\n---\n', '---\na: 1\n', '']) {
      expect(splitFrontMatter(text)).toEqual({ data: null, raw: null, body: text, bodyStartLine: 1, bodyOffset: 0 })
    }
  })

  it('splits YAML and body', () => {
    const text = '---\ntitle: Tasks\ntags: [a, b]\n---\n\n# Tasks\n'
    expect(splitFrontMatter(text)).toEqual({
      data: { title: 'Tasks', tags: ['a', 'b'] },
      raw: 'title: Tasks\ntags: [a, b]\n',
      body: '# Tasks\n',
      bodyStartLine: 6,
      bodyOffset: 35,
    })
  })

  it('starts the body after the blank lines that follow the closing fence, as Python does', () => {
    expect(splitFrontMatter('---\na: 1\n---\n\n  \t\n\n  indented\n').body).toBe('  indented\n')
    expect(splitFrontMatter('---\na: 1\n---\n\n  \t\n\n  indented\n').bodyStartLine).toBe(7)
    expect(splitFrontMatter('---\na: 1\n---\n\n   ').body).toBe('')
    expect(splitFrontMatter('---\r\na: 1\r\n---\r\n\r\nB').body).toBe('B')
  })

  it('closes at a line of --- followed only by whitespace', () => {
    const split = splitFrontMatter('---\na: "---"\n---  \t\nbody')
    expect(split.data).toEqual({ a: '---' })
    expect(split.body).toBe('body')
    expect(splitFrontMatter('---\na: 1\n---').body).toBe('')
  })

  it('reads CRLF front matter', () => {
    const split = splitFrontMatter('---\r\ntitle: X\r\nn: 2\r\n---\r\nBody\r\n')
    expect(split.data).toEqual({ title: 'X', n: 2 })
    expect(split.body).toBe('Body\r\n')
    expect(split.bodyStartLine).toBe(5)
  })

  it('treats empty and comment-only front matter as an empty mapping', () => {
    expect(splitFrontMatter('---\n---\nB').data).toEqual({})
    expect(splitFrontMatter('---\n# just a note\n---\nB').data).toEqual({})
  })

  it('uses the YAML 1.2 core schema', () => {
    expect(splitFrontMatter('---\nd: 2024-01-02\nb: yes\nn: ~\nf: 1.5\n---\n').data).toEqual({ d: '2024-01-02', b: 'yes', n: null, f: 1.5 })
  })

  // SPEC §11 "YAML front matter": read as ruamel.yaml's round-trip loader reads it (issue #15)
  const read = (yaml: string) => splitFrontMatter(`---\n${yaml}---\n`).data

  it('reads integers as ruamel does: underscores, leading zeros, 0o octal, any size', () => {
    expect(read('a: 1_000\nb: 017\nc: 0o17\nd: 0x1F\ne: 0b101\nf: -0\n')).toStrictEqual({ a: 1000, b: 17, c: 15, d: 31, e: 5, f: 0 })
    expect(read('big: 123456789012345678901234567890\nedge: 9007199254740992\n')).toStrictEqual({
      big: 123456789012345678901234567890n,
      edge: 9007199254740992n,
    })
  })

  it('keeps floats floats: 2.0 and 1e3 are Python floats', () => {
    expect(read('a: 2.0\nb: 1e3\nc: -0.0\nd: .5\ne: .inf\nf: .nan\n')).toStrictEqual({
      a: new PythonFloat(2),
      b: new PythonFloat(1000),
      c: new PythonFloat(-0),
      d: 0.5,
      e: Infinity,
      f: NaN,
    })
    expect(read('a: -.nan\nb: .5e3\n')).toStrictEqual({ a: '-.nan', b: '.5e3' })
  })

  it("reads timestamps as Python's str() of ruamel's values: the separator as written, dates as dates", () => {
    expect(
      read(
        'a: 2024-03-01T10:20:30Z\nb: 2024-03-01 10:20:30\nc: 2024-03-01t10:20:30.5-05:30\nd: 2024-03-01\ne: "2024-03-01T10:20:30Z"\n' +
          'f: 2024-03-01 10:20:30 Z\ng: 2024-03-01   1:02:03.25 +2\n',
      ),
    ).toStrictEqual({
      a: '2024-03-01T10:20:30+00:00',
      b: '2024-03-01 10:20:30',
      c: '2024-03-01T10:20:30.500000-05:30',
      d: '2024-03-01',
      e: '2024-03-01T10:20:30Z',
      f: '2024-03-01 10:20:30+00:00',
      g: '2024-03-01 01:02:03.250000+02:00',
    })
    expect(() => read('a: 2024-02-30\n')).toThrow('invalid YAML front matter at line 2: day is out of range for month')
  })

  it('merges merge keys and shares anchored values', () => {
    expect(read('base: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 5\ne: *b\n')).toStrictEqual({
      base: { x: 1, y: 2 },
      d: { x: 5, y: 2 },
      e: { x: 1, y: 2 },
    })
    expect(() => read('a: &a {x: 1}\nd:\n  <<: *a\n  <<: *a\n')).toThrow('found duplicate merge key')
  })

  it('rejects duplicate keys under Python equality', () => {
    // ruamel names the key as Python's str() writes it: "True"
    expect(() => read('1: a\ntrue: b\n')).toThrow('invalid YAML front matter at line 3: found duplicate key "True"')
    expect(() => read('a: 1\n01: x\n1: y\n')).toThrow('found duplicate key "1"')
    expect(read("1: a\n'2': b\nnull: c\n")).toStrictEqual({ 1: 'a', 2: 'b', None: 'c' })
  })

  it('rejects tabs where ruamel needs spaces', () => {
    expect(() => read('a:\tx\n')).toThrow("invalid YAML front matter at line 2: found character '\\t'")
    expect(read('a: "x\ty"\nb: [1,\t2]\n')).toStrictEqual({ a: 'x\ty', b: [1, 2] })
  })

  it('rejects front matter that is not a mapping', () => {
    for (const text of ['---\n- a\n---\n', '---\nplain\n---\n']) {
      const error = errorOf(() => splitFrontMatter(text))
      expect(error.message).toBe('YAML front matter must be a mapping')
      expect(error.line).toBe(1)
    }
  })

  it('rejects invalid YAML with its document line', () => {
    const duplicate = errorOf(() => splitFrontMatter('---\ntitle: X\ntitle: Y\n---\n'))
    expect(duplicate.message).toBe('invalid YAML front matter at line 3: found duplicate key "title"')
    expect(duplicate.line).toBe(3)
    expect(errorOf(() => splitFrontMatter('---\na: b: c\n---\n')).message).toBe(
      'invalid YAML front matter at line 2: Nested mappings are not allowed in compact mappings',
    )
  })
})

const JOBS_DOC = [
  '---', //                                                1
  'title: Board', //                                       2
  'insitu:', //                                            3
  '  materializations:', //                                4
  '    counts:', //                                        5
  '      model: counts', //                                6
  '      target: frontmatter:/generated/counts', //        7
  '    owners:', //                                        8
  '      id: owner-list', //                               9
  '      kind: include', //                               10
  '      path: OWNERS', //                                11
  '      target: {kind: frontmatter, pointer: /generated/owners}', // 12
  '    ignored: just a string', //                        13
  '---', //                                               14
  'Body', //                                              15
  '',
].join('\n')

function jobsOf(text: string) {
  return materializationJobs(splitFrontMatter(text).data, text)
}

function withEntries(...entries: string[]): string {
  return ['---', 'insitu:', '  materializations:', ...entries, '---', ''].join('\n')
}

describe('materializationJobs', () => {
  it('reads one job per mapping entry', () => {
    expect(jobsOf(JOBS_DOC)).toEqual([
      { name: 'counts', id: 'counts', kind: 'sql', options: { model: 'counts' }, pointer: '/generated/counts', line: 5 },
      {
        name: 'owners',
        id: 'owner-list',
        kind: 'include',
        options: { id: 'owner-list', path: 'OWNERS' },
        pointer: '/generated/owners',
        line: 8,
      },
    ])
  })

  it('returns no jobs without an insitu.materializations mapping', () => {
    expect(materializationJobs(null, '')).toEqual([])
    expect(jobsOf('---\ntitle: X\n---\n')).toEqual([])
    expect(jobsOf('---\ninsitu: 3\n---\n')).toEqual([])
    expect(jobsOf('---\ninsitu:\n  materializations: [a]\n---\n')).toEqual([])
  })

  it('falls back to the insitu key line, then line 1', () => {
    const data = { insitu: { materializations: { x: { target: 'frontmatter:/generated/x' } } } }
    expect(materializationJobs(data, '---\na: 1\ninsitu: {}\n---\n')[0]!.line).toBe(3)
    expect(materializationJobs(data, 'no front matter')[0]!.line).toBe(1)
  })

  it('requires a frontmatter target with a pointer under /generated/', () => {
    const cases: Array<[string[], string, number]> = [
      [['    a:', '      model: m'], 'materialization a must have a frontmatter target', 4],
      [['    a:', '      target: {pointer: /generated/a}'], 'materialization a must have a frontmatter target', 4],
      [['    a:', '      target: region:x'], 'materialization a must have a frontmatter target', 4],
      [['    a:', '      target: {kind: frontmatter}'], 'frontmatter target requires pointer', 4],
      [['    a:', '      target: "frontmatter:"'], 'frontmatter target requires pointer', 4],
      [['    a: {target: "frontmatter:/title"}'], 'frontmatter targets must be under /generated/', 4],
      [['    ok: {target: "frontmatter:/generated/ok"}', '    b: {target: "frontmatter:/generatedx"}'], 'frontmatter targets must be under /generated/', 5],
    ]
    for (const [entries, message, line] of cases) {
      const error = errorOf(() => jobsOf(withEntries(...entries)))
      expect([error.message, error.line]).toEqual([message, line])
    }
  })

  it('rejects overlapping pointers in one document', () => {
    const cases: Array<[string, string, string]> = [
      ['/generated/a', '/generated/a', 'multiple materializations own /generated/a / /generated/a'],
      ['/generated/a', '/generated/a/b', 'multiple materializations own /generated/a / /generated/a/b'],
      ['/generated/a/b/c', '/generated/a/', 'multiple materializations own /generated/a/b/c / /generated/a/'],
    ]
    for (const [first, second, message] of cases) {
      const text = withEntries(`    one: {target: "frontmatter:${first}"}`, `    two: {target: {kind: frontmatter, pointer: "${second}"}}`)
      const error = errorOf(() => jobsOf(text))
      expect([error.message, error.line]).toEqual([message, 5])
    }
    const siblings = withEntries('    one: {target: "frontmatter:/generated/a"}', '    two: {target: "frontmatter:/generated/ab"}')
    expect(jobsOf(siblings).map((job) => job.pointer)).toEqual(['/generated/a', '/generated/ab'])
  })
})

describe('ownership conflicts', () => {
  it('compares pointers by path and region targets by equality', () => {
    expect(targetsOverlap('/generated/a', '/generated/a/b')).toBe(true)
    expect(targetsOverlap('/generated/a', '/generated/ab')).toBe(false)
    expect(targetsOverlap('region:a', 'region:a')).toBe(true)
    expect(targetsOverlap('region:a', 'region:a/b')).toBe(false)
    expect(ownershipConflicts(['region:x', '/generated/a', 'region:y', '/generated/a/b', 'region:x'])).toEqual([
      'multiple materializations own /generated/a / /generated/a/b',
      'multiple materializations own region:x / region:x',
    ])
    expect(ownershipConflicts(['region:x', '/generated/x'])).toEqual([])
  })
})

describe('setPointer', () => {
  it('creates objects along the way and unescapes ~1 and ~0', () => {
    const data: Record<string, unknown> = { title: 'X' }
    setPointer(data, '/generated/a~1b/c~0d/~01', [1, 2])
    setPointer(data, '/generated/other', 'v')
    expect(data).toEqual({ title: 'X', generated: { 'a/b': { 'c~d': { '~1': [1, 2] } }, other: 'v' } })
    expect(pointerSegments('/generated/a~1b/~0~1')).toEqual(['generated', 'a/b', '~/'])
  })

  it('replaces non-mapping parents and existing values', () => {
    const data: Record<string, unknown> = { generated: { counts: 'stale', keep: 1 } }
    setPointer(data, '/generated/counts/total', 2)
    setPointer(data, '/generated/keep', null)
    expect(data).toEqual({ generated: { counts: { total: 2 }, keep: null } })
  })

  it('refuses pointers outside /generated/', () => {
    expect(() => setPointer({}, '/title', 'x')).toThrow('frontmatter targets must be under /generated/')
    expect(() => setPointer({}, 'generated/x', 'x')).toThrow('frontmatter targets must be under /generated/')
    expect(() => pointerSegments('x')).toThrow("front-matter pointer must start with '/': x")
  })

  it('never touches prototypes', () => {
    const data: Record<string, unknown> = {}
    setPointer(data, '/generated/__proto__/polluted', true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype)
    expect(Object.keys(data.generated as object)).toEqual(['__proto__'])
  })
})

describe('writeGeneratedValues', () => {
  const write = (text: string, ...values: Array<[string, unknown]>) =>
    writeGeneratedValues(text, values.map(([pointer, value]) => ({ pointer, value })))

  it('appends a generated block and keeps the body and the blank line after the fence', () => {
    expect(write('---\ntitle: X\n---\n\n\nBody\n', ['/generated/counts/total', 2])).toBe(
      '---\ntitle: X\ngenerated:\n  counts:\n    total: 2\n---\n\n\nBody\n',
    )
  })

  it('adds front matter to a document without any (SPEC §8)', () => {
    expect(write('\n# Hi\n', ['/generated/n', 1])).toBe('---\ngenerated:\n  n: 1\n---\n# Hi\n')
    expect(write('# Hi\r\n', ['/generated/n', 1])).toBe('---\r\ngenerated:\r\n  n: 1\r\n---\r\n# Hi\r\n')
  })

  // issue #14: a materialization rewrote `tags: [a, b]` as `[ a, b ]`, `{a: 1}` as `{ a: 1 }`,
  // `1e3` as `1e+3`, `017` as `17` and lost the spacing before a comment
  it("keeps every byte of the user's own lines", () => {
    const user = [
      '---',
      'title: "X"  # note',
      'tags: [a, b]',
      'meta: {a: 1}',
      'ratio: 1e3',
      'lead: 017',
      'date: 2024-03-01',
      "quoted: '2024-03-01'",
      'text: |',
      '  block',
      '     kept',
      'list:',
      '- a',
      'spaced:    value',
      '#   comment   with   spaces',
      'generated:',
      '  keep: 0x1F    # mine',
      '  counts: {}',
      '---',
      '',
    ].join('\n')
    const written = write(user, ['/generated/counts/total', 5])
    expect(written).toBe(user.replace('  counts: {}', '  counts:\n    total: 5'))
  })

  it('replaces only the span of the generated value, keeping its comment column', () => {
    const text = '---\ngenerated:\n  total: 1      # was one\n  rows:\n    - a: 1\n  # after rows\n  other: x\n---\nBody\n'
    expect(write(text, ['/generated/total', 12], ['/generated/rows', [{ a: 2, b: null }, { a: 3, b: 'x y' }]])).toBe(
      '---\ngenerated:\n  total: 12     # was one\n  rows:\n    - a: 2\n      b:\n    - a: 3\n      b: x y\n  # after rows\n  other: x\n---\nBody\n',
    )
  })

  it('writes values as ruamel does: quoting only where YAML needs it, multi-line strings quoted with \\n', () => {
    expect(write('---\n---\n', ['/generated/v', ['yes', 'null', '', 'a: b', "it's", 'two\nlines', 1.5, new PythonFloat(2), 10n ** 20n, true]])).toBe(
      "---\ngenerated:\n  v:\n    - yes\n    - 'null'\n    - ''\n    - 'a: b'\n    - it's\n    - \"two\\nlines\"\n    - 1.5\n    - 2.0\n    - 100000000000000000000\n    - true\n---\n",
    )
  })

  it('keeps a quoted string quoted when a new string replaces it', () => {
    expect(write("---\ngenerated:\n  a: \"old\"\n  b: 'old'\n---\n", ['/generated/a', 'new'], ['/generated/b', 'new'])).toBe(
      "---\ngenerated:\n  a: \"new\"\n  b: 'new'\n---\n",
    )
  })

  it('writes into a flow mapping in flow style', () => {
    expect(write('---\ngenerated: { a: 1 }\n---\n', ['/generated/b', [{ x: 1 }]])).toBe('---\ngenerated: { a: 1, b: [x: 1] }\n---\n')
  })

  it('keeps CRLF documents CRLF', () => {
    const text = '---\r\ntitle: X\r\n---\r\n\r\nBody\r\n'
    expect(write(text, ['/generated/n', [1]])).toBe('---\r\ntitle: X\r\ngenerated:\r\n  n:\r\n    - 1\r\n---\r\n\r\nBody\r\n')
  })

  it('never folds long lines', () => {
    const long = 'word '.repeat(40).trim()
    expect(write('B', ['/generated/text', long])).toBe(`---\ngenerated:\n  text: ${long}\n---\nB`)
  })

  it('is stable: writing the values it reads back changes nothing', () => {
    const once = write('---\ntitle: X\n---\nBody\n', ['/generated/a', { b: [1, { c: 2 }] }])
    expect(write(once, ['/generated/a', (splitFrontMatter(once).data!.generated as Record<string, unknown>).a])).toBe(once)
    expect(splitFrontMatter(once).data).toEqual({ title: 'X', generated: { a: { b: [1, { c: 2 }] } } })
  })

  it('refuses pointers outside /generated/', () => {
    expect(() => write('---\na: 1\n---\n', ['/title', 'x'])).toThrow('frontmatter targets must be under /generated/')
  })

  it('names the pointer of a value that has no YAML form; writes bytes as ruamel writes them', () => {
    const error = thrown(FrontMatterWriteError, () => write('---\na: 1\n---\n', ['/generated/when', new Date(0)]))
    expect([error.pointer, error.message]).toEqual(['/generated/when', 'cannot write /generated/when into the front matter: a value of type Date has no YAML form'])
    expect(write('---\na: 1\n---\n', ['/generated/blob', Buffer.from('hi')])).toBe('---\na: 1\ngenerated:\n  blob: !!binary |\n    aGk=\n---\n')
  })
})

describe('indexableFrontMatter', () => {
  it('drops the keys Insitu owns', () => {
    const data = splitFrontMatter(JOBS_DOC).data
    expect(indexableFrontMatter(data)).toEqual({ title: 'Board' })
    expect(indexableFrontMatter({ generated: {}, insitu: {}, status: 'open' })).toEqual({ status: 'open' })
    expect(indexableFrontMatter(null)).toEqual({})
  })
})
