import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { errorOf as thrown } from './thrown-error.js'
import {
  RegionError,
  blankRegionBodies,
  fencedRanges,
  lineEndingOf,
  parseRegions,
  quotingHint,
  regionBodyText,
  scanRegions,
  strayEndLines,
  type Region,
} from '../../src/documents/regions.js'
import { applyEdits } from '../../src/engine/render-document.js'
import { InputLimitError, MAX_REGION_HEADER_BYTES, MAX_REGIONS } from '../../src/documents/input-limits.js'
import { PythonFloat } from '../../src/values/python-float.js'

const BASIC = [
  '# Title', //                                    1
  '', //                                           2
  '<!-- insitu:begin include', //                  3
  'path = "notes.txt"', //                         4
  'start = 2', //                                  5
  '-->', //                                        6
  'old body', //                                   7
  '<!-- insitu:end -->', //                        8
  '', //                                           9
  '<!-- insitu:begin', //                         10
  'id = "tasks"', //                              11
  'model = "open_tasks"', //                      12
  '-->', //                                       13
  '<!-- insitu:end -->', //                       14
  '', //                                          15
].join('\n')

/** The default id the rule gives: `<kind>-` and 6 hex digits of SHA-1 over the options' canonical JSON. */
function defaultId(kind: string, canonicalOptions: string): string {
  return `${kind}-${createHash('sha1').update(canonicalOptions).digest('hex').slice(0, 6)}`
}

const INCLUDE_ID = defaultId('include', '{"path":"notes.txt","start":2}')

function summary(regions: Region[]) {
  return regions.map(({ id, kind, line, options }) => ({ id, kind, line, options }))
}

/** Replaces region bodies by id the way the engine does: `regionBodyText` spliced into `[bodyStart, bodyEnd)`. */
function replaceBodies(text: string, contents: ReadonlyMap<string, string>): string {
  const eol = lineEndingOf(text)
  const edits = parseRegions(text).flatMap((region) => {
    const content = contents.get(region.id)
    return content === undefined ? [] : [{ start: region.bodyStart, end: region.bodyEnd, text: regionBodyText(content, eol) }]
  })
  return applyEdits(text, edits)
}

const errorOf = (run: () => unknown): RegionError => thrown(RegionError, run)

describe('parseRegions', () => {
  it('reads ids, kinds, lines and options in document order', () => {
    expect(summary(parseRegions(BASIC))).toEqual([
      { id: INCLUDE_ID, kind: 'include', line: 3, options: { path: 'notes.txt', start: 2 } },
      { id: 'tasks', kind: 'sql', line: 10, options: { id: 'tasks', model: 'open_tasks' } },
    ])
  })

  it('gives every parse of a repeated header options of its own, equal to the first', () => {
    const text = '<!-- insitu:begin sql\nmodel = "m"\nlimits = { rows = 2, when = 1979-05-27 }\ntags = ["a"]\n-->\n<!-- insitu:end -->\n'
    const first = parseRegions(text)[0]!.options as { limits: { rows: unknown }; tags: string[] }
    const expected = { model: 'm', limits: { rows: 2, when: '1979-05-27' }, tags: ['a'] }
    expect(first).toEqual(expected)
    first.limits.rows = 99
    first.tags.push('b')
    expect(parseRegions(text)[0]!.options).toEqual(expected)
    expect(parseRegions(`notes\n${text}`)[0]!.options).toEqual(expected)
  })

  it('reports offsets of the directives and the body', () => {
    const [first, second] = parseRegions(BASIC)
    expect(BASIC.slice(first!.start, first!.bodyStart)).toBe('<!-- insitu:begin include\npath = "notes.txt"\nstart = 2\n-->')
    expect(BASIC.slice(first!.bodyStart, first!.bodyEnd)).toBe('\nold body\n')
    expect(BASIC.slice(first!.bodyEnd, first!.end)).toBe('<!-- insitu:end -->')
    expect(BASIC.slice(second!.bodyStart, second!.bodyEnd)).toBe('\n')
    expect(second!.end).toBe(BASIC.length - 1)
  })

  it('takes the kind from the inline token, then options.kind, then sql', () => {
    const text = [
      '<!-- insitu:begin tree\nkind = "include"\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin\nkind = "my-ext.render_v2"\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin\n-->\n<!-- insitu:end -->',
      '<!--insitu:begin x.y-z_1   \n-->\n<!--insitu:end-->',
    ].join('\n')
    expect(parseRegions(text).map((region) => region.kind)).toEqual(['tree', 'my-ext.render_v2', 'sql', 'x.y-z_1'])
  })

  it('gives unnamed regions ids from their kind and options, not their position', () => {
    const text = [
      '<!-- insitu:begin\nid = "named"\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin\nid = ""\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin\nid = 7\n-->\n<!-- insitu:end -->',
      '<!-- insitu:begin tree\nexclude = ["b", "a"]\n  depth = 2 # two levels\n-->\n<!-- insitu:end -->',
    ].join('\n')
    expect(parseRegions(text).map((region) => region.id)).toEqual([
      'named',
      defaultId('sql', '{}'),
      defaultId('sql', '{"id":""}'),
      '7',
      // keys sorted, arrays kept in order; spacing and comments do not count
      defaultId('tree', '{"depth":2,"exclude":["b","a"]}'),
    ])
  })

  it('keeps every other default id when a region is inserted above, and numbers identical regions', () => {
    const tree = '<!-- insitu:begin tree\n-->\n<!-- insitu:end -->'
    const snippet = '<!-- insitu:begin include\npath = "a.txt"\n-->\n<!-- insitu:end -->'
    const before = ['# Doc', tree, 'prose', snippet, tree, ''].join('\n')
    const after = ['# Doc', snippet.replace('a.txt', 'b.txt'), '<!-- insitu:begin tree\ndepth = 3\n-->\n<!-- insitu:end -->', tree, 'more prose', snippet, tree, ''].join('\n')
    const ids = parseRegions(before).map((r) => r.id)
    expect(ids).toEqual([defaultId('tree', '{}'), defaultId('include', '{"path":"a.txt"}'), `${defaultId('tree', '{}')}-2`])
    const inserted = parseRegions(after).map((r) => r.id)
    expect(inserted.slice(2)).toEqual(ids)
    expect(new Set(inserted).size).toBe(inserted.length)
  })

  it('accepts the one-line begin comment with an empty header', () => {
    const text = 'a\n<!-- insitu:begin include -->\nbody\n<!-- insitu:end -->\n<!-- insitu:begin -->x<!-- insitu:end -->\n'
    expect(summary(parseRegions(text))).toEqual([
      { id: defaultId('include', '{}'), kind: 'include', line: 2, options: {} },
      { id: defaultId('sql', '{}'), kind: 'sql', line: 5, options: {} },
    ])
  })

  it('ignores begin-looking comments that are neither form, and ends without a begin', () => {
    const text = [
      '<!-- insitu:end -->',
      '<!-- insitu:begin include path="x" -->',
      '<!-- insitu:beginning',
      '-->',
      '<!-- insitu:end -->',
      '<!-- insitu:begin tree',
      '-->',
      '<!-- insitu:end -->',
      '<!-- insitu:end -->',
    ].join('\n')
    expect(summary(parseRegions(text))).toEqual([{ id: defaultId('tree', '{}'), kind: 'tree', line: 6, options: {} }])
  })

  it('does not nest: the first end closes the region and an inner begin is body text', () => {
    const text = '<!-- insitu:begin\nid = "outer"\n-->\n<!-- insitu:begin\nid = "inner"\n-->\nx\n<!-- insitu:end -->\ny\n<!-- insitu:end -->\n'
    const regions = parseRegions(text)
    expect(regions.map((region) => region.id)).toEqual(['outer'])
    expect(text.slice(regions[0]!.bodyStart, regions[0]!.bodyEnd)).toBe('\n<!-- insitu:begin\nid = "inner"\n-->\nx\n')
  })

  it('ends the header at the first -->', () => {
    const text = '<!-- insitu:begin\nnote = "a"-->\n<!-- insitu:end -->'
    expect(parseRegions(text)[0]!.options).toEqual({ note: 'a' })
  })

  it('returns no regions for a document without any', () => {
    expect(parseRegions('# Nothing here\n\n<!-- a comment -->\n')).toEqual([])
    expect(parseRegions('')).toEqual([])
  })

  it('rejects an unterminated region with its line', () => {
    const error = errorOf(() => parseRegions('x\n\n<!-- insitu:begin tree\n-->\nbody\n'))
    expect(error.message).toBe('unterminated Insitu region at line 3')
    expect(error.line).toBe(3)
  })

  it('rejects an unterminated region after a complete one', () => {
    const text = '<!-- insitu:begin\n-->\n<!-- insitu:end -->\n<!-- insitu:begin -->\n'
    expect(errorOf(() => parseRegions(text)).message).toBe('unterminated Insitu region at line 4')
  })

  it('rejects invalid TOML naming the region line and the error position', () => {
    const text = '# T\n<!-- insitu:begin\nid = "x"\nmodel = \n-->\n<!-- insitu:end -->\n'
    const error = errorOf(() => parseRegions(text))
    expect(error.message).toBe('invalid TOML in Insitu region at line 2: invalid value (line 4, column 9)')
    expect(error.line).toBe(2)
  })

  it('rejects duplicate and unsafe TOML keys', () => {
    expect(errorOf(() => parseRegions('<!-- insitu:begin\nid = 1\nid = 2\n-->\n<!-- insitu:end -->')).message).toBe(
      'invalid TOML in Insitu region at line 1: trying to redefine an already defined table or value (line 3, column 1)',
    )
    expect(errorOf(() => parseRegions('\n<!-- insitu:begin\n__proto__ = 1\n-->\n<!-- insitu:end -->')).message).toBe(
      'invalid TOML in Insitu region at line 2: document contains an unsafe property (line 3, column 1)',
    )
  })

  it('keeps nested tables and arrays, and turns TOML dates into strings', () => {
    const text = '<!-- insitu:begin\nexclude = ["a", "b"]\nparams = { limit = 3, on = true }\nsince = 2024-01-02\n-->\n<!-- insitu:end -->'
    expect(parseRegions(text)[0]!.options).toEqual({ exclude: ['a', 'b'], params: { limit: 3, on: true }, since: '2024-01-02' })
  })

  it("turns TOML datetimes and times into the text Python's str() gives what tomllib reads (issue #15)", () => {
    // Python: str() of tomllib's datetime.datetime / datetime.time values
    const header = 'at = 2024-01-02T10:20:30Z\nlocal = 2024-01-02 10:20:30\noffset = 2024-01-02T10:20:30.5+02:00\ntime = 10:20:30\nms = 07:08:09.25'
    expect(parseRegions(`<!-- insitu:begin\n${header}\n-->\n<!-- insitu:end -->`)[0]!.options).toEqual({
      at: '2024-01-02 10:20:30+00:00',
      local: '2024-01-02 10:20:30',
      offset: '2024-01-02 10:20:30.500000+02:00',
      time: '10:20:30',
      ms: '07:08:09.250000',
    })
  })

  it("reads numbers as Python's tomllib does: 2.0 and -0.0 floats, integers of any size exact (issue #15)", () => {
    // tomllib: {'n': 2, 'f': 2.0, 'z': -0.0, 'half': 0.5, 'big': 9007199254740993, 'neg': -12345678901234567890, 'list': [1, 3.0]}
    const header = 'params = { n = 2, f = 2.0, z = -0.0, half = 0.5, big = 9007199254740993, neg = -12345678901234567890, list = [1, 3.0] }'
    const [region] = parseRegions(`<!-- insitu:begin\n${header}\n-->\n<!-- insitu:end -->`)
    expect(region!.options.params).toEqual({
      n: 2,
      f: new PythonFloat(2),
      z: new PythonFloat(-0),
      half: 0.5,
      big: 9007199254740993n,
      neg: -12345678901234567890n,
      list: [1, new PythonFloat(3)],
    })
  })

  it('gives a region with an integral float option the default id it had before floats were boxed', () => {
    const [region] = parseRegions('<!-- insitu:begin\nmodel = "m"\nn = 2.0\nbig = 12345678901234567890\n-->\n<!-- insitu:end -->')
    expect(region!.id).toBe(defaultId('sql', '{"big":12345678901234567890,"model":"m","n":2}'))
  })

  it('starts scanning at the given offset (e.g. past front matter) but counts lines from the top', () => {
    const text = '---\nx: "<!-- insitu:begin -->"\n---\n<!-- insitu:begin tree -->\n<!-- insitu:end -->\n'
    expect(summary(parseRegions(text))).toEqual([{ id: defaultId('sql', '{}'), kind: 'sql', line: 2, options: {} }])
    const regions = parseRegions(text, text.indexOf('---\n<!--') + 4)
    expect(summary(regions)).toEqual([{ id: defaultId('tree', '{}'), kind: 'tree', line: 4, options: {} }])
  })
})

describe('strayEndLines', () => {
  it('lists the lines of end comments that close no region, outside fences', () => {
    const text = [
      '<!-- insitu:end -->', //                      1 stray: before any begin
      '<!-- insitu:begin tree', //                   2
      '-->', //                                      3
      'body', //                                     4
      '<!-- insitu:end -->', //                      5 closes the region
      '<!--insitu:end-->', //                        6 stray: after the region
      '```', //                                      7
      '<!-- insitu:end -->', //                      8 inside a fence: text
      '```', //                                      9
      '<!-- insitu:begin tree -->', //              10
      '<!-- insitu:end -->', //                     11 closes the one-line region
      'text <!-- insitu:end --> text', //           12 stray
    ].join('\n')
    expect(parseRegions(text).map((r) => r.line)).toEqual([2, 10])
    expect(strayEndLines(text)).toEqual([1, 6, 12])
    expect(strayEndLines(BASIC)).toEqual([])
    expect(strayEndLines('no regions at all\n')).toEqual([])
  })

  it('starts at `from`, keeping lines relative to the whole text', () => {
    const text = '---\nx: <!-- insitu:end -->\n---\n<!-- insitu:end -->\n'
    expect(strayEndLines(text, text.indexOf('---\n<!--') + 4)).toEqual([4])
  })
})

describe('fenced code blocks', () => {
  const region = '<!-- insitu:begin tree -->\n<!-- insitu:end -->'

  it('ignores regions inside backtick and tilde fences', () => {
    const text = ['```md', region, '```', '~~~', region, '~~~', region, ''].join('\n')
    expect(parseRegions(text).map((r) => r.line)).toEqual([9])
  })

  it('needs a closer of the same character at least as long, with nothing after it', () => {
    const text = ['````md', '```', '~~~~', '``` not a closer', region, '`````  ', region, ''].join('\n')
    expect(parseRegions(text).map((r) => r.line)).toEqual([8])
    expect(fencedRanges(text)).toEqual([[0, text.indexOf('`````  ') + '`````  \n'.length]])
  })

  it('accepts up to three spaces of indentation, and four spaces are not a fence', () => {
    const three = ['   ```', region, '   ```', ''].join('\n')
    expect(parseRegions(three)).toEqual([])
    const four = ['    ```', region, '    ```', ''].join('\n')
    expect(parseRegions(four).map((r) => r.line)).toEqual([2])
  })

  it('needs at least three fence characters', () => {
    expect(parseRegions(['``', region, '``', ''].join('\n')).map((r) => r.line)).toEqual([2])
  })

  it('does not open a backtick fence whose info string holds a backtick', () => {
    expect(parseRegions(['```js ` x', region, ''].join('\n')).map((r) => r.line)).toEqual([2])
  })

  it('runs an unclosed fence to the end of the document', () => {
    const text = [region, '```', region, ''].join('\n')
    expect(parseRegions(text).map((r) => r.line)).toEqual([1])
    expect(fencedRanges(text)).toEqual([[text.indexOf('```'), text.length]])
  })

  it('skips an end comment inside a fence within a region body', () => {
    const text = ['<!-- insitu:begin include -->', '```md', '<!-- insitu:end -->', '```', '<!-- insitu:end -->', ''].join('\n')
    const [only] = parseRegions(text)
    expect(text.slice(only!.bodyStart, only!.bodyEnd)).toBe('\n```md\n<!-- insitu:end -->\n```\n')
  })

  it('swallows the end comment when a region body opens a fence it never closes', () => {
    const text = ['<!-- insitu:begin include -->', '```', '<!-- insitu:end -->', ''].join('\n')
    expect(() => parseRegions(text)).toThrow('unterminated Insitu region at line 1')
  })
})

describe('replacing region bodies', () => {
  it('formats a body as SPEC says', () => {
    expect(regionBodyText('a\nb  \n\n')).toBe('\n\na\nb\n\n')
    expect(regionBodyText('  \n\t')).toBe('\n\n')
    expect(regionBodyText('')).toBe('\n\n')
    expect(regionBodyText('a\r\nb', '\r\n')).toBe('\r\n\r\na\r\nb\r\n\r\n')
    expect(regionBodyText('a\r\nb')).toBe('\n\na\nb\n\n')
  })

  it('replaces one region and keeps its directives', () => {
    const updated = replaceBodies(BASIC, new Map([[INCLUDE_ID, '| a |\n| --- |\n\n\n']]))
    expect(updated).toBe(
      BASIC.replace('-->\nold body\n<!-- insitu:end -->', '-->\n\n| a |\n| --- |\n\n<!-- insitu:end -->'),
    )
  })

  it('replaces bodies by id and leaves other regions untouched', () => {
    const updated = replaceBodies(BASIC, new Map([['tasks', '- one'], ['missing', 'x']]))
    expect(updated).toBe(BASIC.replace('model = "open_tasks"\n-->\n<!-- insitu:end -->', 'model = "open_tasks"\n-->\n\n- one\n\n<!-- insitu:end -->'))
    expect(replaceBodies(BASIC, new Map([[INCLUDE_ID, '']]))).toBe(BASIC.replace('-->\nold body\n', '-->\n\n'))
  })

  it('blanks every body to one line break', () => {
    const updated = replaceBodies(BASIC, new Map([['tasks', '- one']]))
    expect(blankRegionBodies(updated)).toBe(BASIC.replace('-->\nold body\n', '-->\n'))
    expect(blankRegionBodies(blankRegionBodies(BASIC))).toBe(blankRegionBodies(BASIC))
    expect(blankRegionBodies('no regions\n')).toBe('no regions\n')
  })

  it('blanks regions whose header is not valid TOML, and keeps the text after an unterminated begin', () => {
    const text = '<!-- insitu:begin\npath = a.txt\n-->\nold\n<!-- insitu:end -->\n<!-- insitu:begin tree -->\nold\n<!-- insitu:end -->\n'
    expect(blankRegionBodies(text)).toBe(text.replaceAll('-->\nold\n<!-- insitu:end', '-->\n<!-- insitu:end'))
    const open = '<!-- insitu:begin tree -->\nold\n<!-- insitu:end -->\n<!-- insitu:begin -->\nrest\n'
    expect(blankRegionBodies(open)).toBe(open.replace('-->\nold\n', '-->\n'))
  })
})

describe('scanRegions: one problem per region', () => {
  it('keeps a region whose header is not valid TOML, with its problem, and every region around it', () => {
    const text = [
      '# Doc', //                                           1
      '<!-- insitu:begin includ', //                        2
      'path = "a.txt"', //                                  3
      '-->', //                                             4
      '<!-- insitu:end -->', //                             5
      '<!-- insitu:begin include', //                       6
      'path = snippets/a.txt', //                           7
      '-->', //                                             8
      'kept body', //                                       9
      '<!-- insitu:end -->', //                            10
      '<!-- insitu:begin tree -->', //                     11
      '<!-- insitu:end -->', //                            12
      '',
    ].join('\n')
    const { regions, unterminated } = scanRegions(text)
    expect(unterminated).toBeNull()
    expect(regions.map((r) => [r.kind, r.line, r.problem?.message ?? null])).toEqual([
      ['includ', 2, null],
      [
        'include',
        6,
        'invalid TOML in Insitu region at line 6: invalid value (line 7, column 8); strings need quotes: path = "snippets/a.txt"',
      ],
      ['tree', 11, null],
    ])
    expect(regions[1]!.problem).toMatchObject({ line: 7, column: 8 })
    expect(regions[1]!.options).toEqual({})
    expect(text.slice(regions[1]!.bodyStart, regions[1]!.bodyEnd)).toBe('\nkept body\n')
    expect(regions[1]!.id).toMatch(/^include-[0-9a-f]{6}$/)
    // the strict form reports the first problem
    expect(errorOf(() => parseRegions(text)).line).toBe(6)
  })

  it('finds the regions before an unterminated begin, and none after it', () => {
    const text = '<!-- insitu:begin tree -->\n<!-- insitu:end -->\nprose\n<!-- insitu:begin include\npath = "a"\n-->\n<!-- insitu:begin tree -->\n'
    const { regions, unterminated } = scanRegions(text)
    expect(regions.map((r) => r.line)).toEqual([1])
    expect(unterminated).toEqual({ message: 'unterminated Insitu region at line 4', line: 4, column: 1 })
  })

  it('hints at quotes for a bare string value, and at lower case for booleans', () => {
    expect(quotingHint('path = snippets/a.txt')).toBe('; strings need quotes: path = "snippets/a.txt"')
    expect(quotingHint('  model = open_tasks   # the open ones')).toBe('; strings need quotes: model = "open_tasks"')
    expect(quotingHint('"odd key" = a b')).toBe('; strings need quotes: "odd key" = "a b"')
    expect(quotingHint('raw = True')).toBe('; booleans are lowercase: raw = true')
    expect(quotingHint('id = 2')).toBe('') // a valid value: the problem is elsewhere
    expect(quotingHint('exclude = ["a", b]')).toBe('')
    expect(quotingHint('no assignment here')).toBe('')
    const duplicate = '<!-- insitu:begin\nid = 1\nid = 2\n-->\n<!-- insitu:end -->'
    expect(scanRegions(duplicate).regions[0]!.problem!.message).toBe(
      'invalid TOML in Insitu region at line 1: trying to redefine an already defined table or value (line 3, column 1)',
    )
  })
})

describe('CRLF documents', () => {
  const crlf = BASIC.replaceAll('\n', '\r\n')

  it('parses regions, headers and lines', () => {
    expect(summary(parseRegions(crlf))).toEqual(summary(parseRegions(BASIC)))
    expect(lineEndingOf(crlf)).toBe('\r\n')
    expect(lineEndingOf(BASIC)).toBe('\n')
    expect(lineEndingOf('one line')).toBe('\n')
  })

  it('writes replacements and blanks with CRLF', () => {
    const replaced = replaceBodies(crlf, new Map([['tasks', 'a\nb\n']]))
    expect(replaced).toBe(replaceBodies(BASIC, new Map([['tasks', 'a\nb\n']])).replaceAll('\n', '\r\n'))
    expect(blankRegionBodies(crlf)).toBe(blankRegionBodies(BASIC).replaceAll('\n', '\r\n'))
  })

  it('recognises CRLF fences', () => {
    const text = ['```', '<!-- insitu:begin -->', '```', '<!-- insitu:begin tree -->', '<!-- insitu:end -->', ''].join('\r\n')
    expect(parseRegions(text).map((r) => r.line)).toEqual([4])
  })
})

describe('idempotence (property)', () => {
  // Content that cannot open a fence or spell a directive, as generated Markdown normally is.
  const content = fc
    .array(fc.constantFrom('a', 'Z', 'é', '1', ' ', '\t', '\n', '\r\n', '|', '-', '#', '*', '<', '>', '!', '<!-- note -->', '| x | y |'), {
      maxLength: 40,
    })
    .map((parts) => parts.join(''))
  const documents = [BASIC, BASIC.replaceAll('\n', '\r\n'), '<!-- insitu:begin include -->\n<!-- insitu:end -->']

  it('replacing twice equals replacing once, and parsing is stable', () => {
    fc.assert(
      fc.property(fc.constantFrom(...documents), content, content, (text, first, second) => {
        const regions = parseRegions(text)
        const contents = new Map(regions.map((region, index) => [region.id, index % 2 === 0 ? first : second]))
        const once = replaceBodies(text, contents)
        expect(replaceBodies(once, contents)).toBe(once)
        const reparsed = parseRegions(once)
        const identity = (list: Region[]) => list.map(({ id, kind, options }) => ({ id, kind, options }))
        expect(identity(reparsed)).toEqual(identity(regions))
        expect(parseRegions(replaceBodies(once, contents))).toEqual(reparsed)
        const eol = lineEndingOf(text)
        reparsed.forEach((region, index) => {
          const original = regions[index]!
          expect(once.slice(region.bodyStart, region.bodyEnd)).toBe(regionBodyText(contents.get(region.id)!, eol))
          expect(once.slice(region.start, region.bodyStart)).toBe(text.slice(original.start, original.bodyStart))
          expect(once.slice(region.bodyEnd, region.end)).toBe(text.slice(original.bodyEnd, original.end))
        })
        expect(blankRegionBodies(once)).toBe(blankRegionBodies(text))
      }),
    )
  })
})

describe('bounded regions (issue #34)', () => {
  const region = (n: number) => `<!-- insitu:begin include\npath = "a${n}.txt"\n-->\nold\n<!-- insitu:end -->\n`

  it('reads 1,000 regions and refuses 1,001 at the first region past the limit, quickly', () => {
    const atLimit = Array.from({ length: MAX_REGIONS }, (_, i) => region(i)).join('')
    expect(scanRegions(atLimit).regions).toHaveLength(MAX_REGIONS)
    const many = `# Many\n${Array.from({ length: 10_000 }, (_, i) => region(i)).join('')}`
    const started = performance.now()
    const error = thrown(InputLimitError, () => scanRegions(many))
    expect(performance.now() - started).toBeLessThan(500)
    // each region is 5 lines after the title: region 1,001 begins at line 2 + 1,000 × 5
    expect(error).toMatchObject({ line: 5002, message: 'document has more than 1,000 Insitu regions (region 1,001 begins at line 5002)' })
    expect(thrown(InputLimitError, () => parseRegions(many))).toMatchObject({ line: 5002 })
    // Blanking (the index's body) has no limit, and takes time linear in the text.
    const blankStarted = performance.now()
    expect(blankRegionBodies(many)).toBe(`# Many\n${Array.from({ length: 10_000 }, (_, i) => `<!-- insitu:begin include\npath = "a${i}.txt"\n-->\n<!-- insitu:end -->\n`).join('')}`)
    expect(performance.now() - blankStarted).toBeLessThan(500)
  })

  it('fails a header past 64 KiB alone, unparsed, at its line', () => {
    const fits = `path = "${'x'.repeat(MAX_REGION_HEADER_BYTES - 10)}"\n`
    expect(Buffer.byteLength(fits)).toBe(MAX_REGION_HEADER_BYTES)
    const over = `path = "${'é'.repeat(MAX_REGION_HEADER_BYTES / 2)}"\n`
    const text = `# T\n<!-- insitu:begin include\n${fits}-->\n<!-- insitu:end -->\n<!-- insitu:begin include\n${over}-->\n<!-- insitu:end -->\n${region(1)}`
    const { regions } = scanRegions(text)
    expect(regions.map((r) => r.problem)).toEqual([
      null,
      { message: 'Insitu region header at line 6 is 64 KiB (65,546 bytes), over the limit of 64 KiB', line: 7, column: 1 },
      null,
    ])
    expect(regions[0]!.options).toEqual({ path: 'x'.repeat(MAX_REGION_HEADER_BYTES - 10) })
    expect(regions[1]!.options).toEqual({})
  })

  it('never searches a begin comment past the last `-->`: unclosed begins cost linear time', () => {
    const opens = `-->\n${'<!-- insitu:begin\n'.repeat(100_000)}`
    const started = performance.now()
    expect(scanRegions(opens)).toEqual({ regions: [], unterminated: null })
    expect(strayEndLines(opens)).toEqual([])
    expect(blankRegionBodies(opens)).toBe(opens)
    expect(performance.now() - started).toBeLessThan(500)
    // the last `-->` still closes the begin comment before it
    expect(scanRegions(`${'<!-- insitu:begin\n'.repeat(3)}-->\nbody\n<!-- insitu:end -->\n`).regions).toHaveLength(1)
  })
})
