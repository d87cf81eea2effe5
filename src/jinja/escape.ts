/**
 * markupsafe's `escape`, `Markup.unescape` and `Markup.striptags` on text (Jinja's `e`, `escape`,
 * `forceescape`, `striptags`; markup.ts has the Markup methods).
 *
 * Contract: `escapeHtml(text)` writes `&` `<` `>` `'` `"` as `&amp;` `&lt;` `&gt;` `&#39;` `&#34;`
 * (markupsafe's exact entities: `'"'|e == '&#34;'`); `unescapeHtml(text)` is Python's
 * `html.unescape` for numeric references and the common named ones; `stripTags(text)` is
 * markupsafe 3's `striptags`: comments, then tags removed, whitespace runs (Python's) made one
 * space, the text unescaped.
 */
import { ticks } from './render-budget.js'
import { PY_SPACE } from './python-space.js'

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', "'": '&#39;', '"': '&#34;' }

export function escapeHtml(text: string): string {
  return /[&<>'"]/.test(text) ? text.replace(/[&<>'"]/g, (char) => ESCAPES[char]!) : text
}

const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '\u00a9',
  reg: '\u00ae',
  hellip: '\u2026',
  mdash: '\u2014',
  ndash: '\u2013',
  laquo: '\u00ab',
  raquo: '\u00bb',
  euro: '\u20ac',
}

export function unescapeHtml(text: string): string {
  if (!text.includes('&')) return text
  return text.replace(/&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)/g, (whole, body: string) => {
    if (body.startsWith('#')) {
      const hex = body[1] === 'x' || body[1] === 'X'
      const code = parseInt(body.slice(hex ? 2 : 1).replace(/;$/, ''), hex ? 16 : 10)
      if (!Number.isFinite(code) || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd'
      return code === 0 ? '\ufffd' : String.fromCodePoint(code)
    }
    const name = body.replace(/;$/, '')
    const char = NAMED[name]
    return char === undefined ? whole : char
  })
}

const SPACE_RUN = new RegExp(`[${PY_SPACE}]+`, 'u')

export function stripTags(input: string): string {
  let text = input
  for (let start = text.indexOf('<!--'); start !== -1; start = text.indexOf('<!--')) {
    ticks(text.length >> 6)
    const end = text.indexOf('-->', start)
    if (end === -1) break
    text = text.slice(0, start) + text.slice(end + 3)
  }
  for (let start = text.indexOf('<'); start !== -1; start = text.indexOf('<')) {
    ticks(text.length >> 6)
    const end = text.indexOf('>', start)
    if (end === -1) break
    text = text.slice(0, start) + text.slice(end + 1)
  }
  text = text.split(SPACE_RUN).filter(Boolean).join(' ')
  return unescapeHtml(text)
}
