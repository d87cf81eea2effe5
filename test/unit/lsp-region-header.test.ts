/**
 * The language server's reading of region headers as typed (src/lsp/region-header.ts) and of
 * did-you-mean messages (src/lsp/code-actions.ts `suggestions`): pure functions on text.
 */
import { describe, expect, it } from 'vitest'
import { suggestions } from '../../src/lsp/code-actions.js'
import { entryAt, headerEntries, openHeaderAt } from '../../src/lsp/region-header.js'

const TEXT = ['# Doc', '', '<!-- insitu:begin include', 'path = "snippets/a.txt"', "start = 2", "id = 'x'", '-->', 'body', '<!-- insitu:end -->', ''].join('\n')

describe('region headers as typed', () => {
  it('finds the begin comment around an offset, its kind token and its lines', () => {
    const inside = TEXT.indexOf('snippets')
    const header = openHeaderAt(TEXT, inside)!
    expect(TEXT.slice(header.start, header.start + 17)).toBe('<!-- insitu:begin')
    expect(header.kind).toEqual({ name: 'include', start: TEXT.indexOf('include'), end: TEXT.indexOf('include') + 7 })
    expect(TEXT.slice(header.end, header.end + 3)).toBe('-->')
    expect(TEXT.slice(header.linesStart).startsWith('path =')).toBe(true)
    expect(openHeaderAt(TEXT, TEXT.indexOf('body'))).toBeNull()
    expect(openHeaderAt(TEXT, 2)).toBeNull()
  })

  it('reads key = value lines: quoted values unquoted with offsets inside the quotes, bare ones as typed', () => {
    const header = openHeaderAt(TEXT, TEXT.indexOf('start'))!
    const entries = headerEntries(TEXT, header)
    expect(entries.map(({ key, value, quoted }) => ({ key, value, quoted }))).toEqual([
      { key: 'path', value: 'snippets/a.txt', quoted: true },
      { key: 'start', value: '2', quoted: false },
      { key: 'id', value: 'x', quoted: true },
    ])
    const path = entries[0]!
    expect(TEXT.slice(path.valueStart, path.valueEnd)).toBe('snippets/a.txt')
    expect(entryAt(entries, TEXT.indexOf('a.txt'))?.key).toBe('path')
    expect(entryAt(entries, TEXT.indexOf('start') + 2)?.key).toBe('start')
  })

  it('a header still being typed (no --> yet) runs to the end of the text; an empty value is an entry', () => {
    const typing = '<!-- insitu:begin tree\ndepth = \n'
    const header = openHeaderAt(typing, typing.length - 1)!
    expect(header.kind?.name).toBe('tree')
    expect(header.end).toBe(typing.length)
    const [depth] = headerEntries(typing, header)
    expect(depth).toMatchObject({ key: 'depth', value: '', quoted: false, valueStart: typing.length - 1 })
  })

  it('the begin line with no kind yet has an empty kind token to complete', () => {
    const typing = '<!-- insitu:begin \n-->'
    expect(openHeaderAt(typing, 18)?.kind).toEqual({ name: '', start: 18, end: 18 })
  })
})

describe('did-you-mean in messages', () => {
  it('reads each suggestion of the engine and the builtins', () => {
    expect(suggestions('transform includ failed in includ-1: unknown transform: includ; did you mean include?')).toEqual([{ wrong: 'includ', right: 'include' }])
    expect(suggestions('unknown tree options: dpth (did you mean depth?), colour')).toEqual([{ wrong: 'dpth', right: 'depth' }])
    expect(suggestions('template not found: tasks.md; did you mean tasks.md.j2?')).toEqual([{ wrong: 'tasks.md', right: 'tasks.md.j2' }])
    expect(suggestions('unknown include option: pth; did you mean path?')).toEqual([{ wrong: 'pth', right: 'path' }])
    expect(suggestions('near "bye": syntax error')).toEqual([])
  })
})
