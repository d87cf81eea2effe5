/**
 * Template source normalization so nunjucks' whitespace control matches Jinja's
 * (`trim_blocks`, `lstrip_blocks`; SPEC §8).
 *
 * Contract: `normalizeJinjaSource(source)` returns template text nunjucks renders like Jinja:
 * - line breaks (`\r\n`, `\r`) become `\n` (Jinja's `newline_sequence`);
 * - every comment `{# ... #}` becomes an empty `{% if false %}...{% endif %}` with the same
 *   line breaks inside, because Jinja applies lstrip/trim to comments and nunjucks does not
 *   (a comment on its own line vanishes with its line). `{#-` / `-#}` keep their meaning.
 *   Line numbers are preserved; columns after a comment on the same line shift.
 * - every `{% raw %}...{% endraw %}` block becomes
 *   `{% if true %}{{ "<its text>" }}{% endif %}`, because Jinja keeps the line break after
 *   `{% raw %}`, lstrips before `{% endraw %}` and trims after it, and nunjucks does the
 *   opposite on all three (`-` modifiers keep their meaning; line numbers are preserved).
 * Text inside `{{ }}` / `{% %}` tags (string literals included) is left alone. Pure.
 */

const RAW_START = /^\{%(-?)\s*(raw|verbatim)\s*(-?)%\}$/
const RAW_END: Record<string, RegExp> = {
  raw: /\{%(-?)\s*endraw\s*(-?)%\}/g,
  verbatim: /\{%(-?)\s*endverbatim\s*(-?)%\}/g,
}

export function normalizeJinjaSource(source: string): string {
  const text = source.replace(/\r\n?/g, '\n')
  let out = ''
  let index = 0
  while (index < text.length) {
    const brace = text.indexOf('{', index)
    if (brace < 0 || brace + 1 >= text.length) {
      out += text.slice(index)
      break
    }
    out += text.slice(index, brace)
    const opener = text.slice(brace, brace + 2)
    if (opener === '{#') {
      const end = text.indexOf('#}', brace + 2)
      if (end < 0) {
        // Unterminated: let nunjucks report it.
        out += text.slice(brace)
        break
      }
      out += commentAsEmptyBlock(text.slice(brace + 2, end))
      index = end + 2
    } else if (opener === '{%' || opener === '{{') {
      const end = findTagEnd(text, brace + 2, opener === '{%' ? '%}' : '}}')
      if (end < 0) {
        out += text.slice(brace)
        break
      }
      const tag = text.slice(brace, end + 2)
      index = end + 2
      const raw = opener === '{%' ? RAW_START.exec(tag) : null
      const closing = raw ? (RAW_END[raw[2] as string] as RegExp) : null
      if (raw && closing) {
        closing.lastIndex = index
        const found = closing.exec(text)
        if (!found) {
          // Unterminated: let nunjucks report it.
          out += text.slice(brace)
          break
        }
        out += rawAsOutput(text.slice(index, found.index), raw[1] === '-', raw[3] === '-', found[1] === '-', found[2] === '-')
        index = found.index + found[0].length
      } else {
        out += tag
      }
    } else {
      out += '{'
      index = brace + 1
    }
  }
  return out
}

function commentAsEmptyBlock(body: string): string {
  const trimBefore = body.startsWith('-')
  const trimAfter = body.length > (trimBefore ? 1 : 0) && body.endsWith('-')
  const lineBreaks = '\n'.repeat(body.split('\n').length - 1)
  return `{%${trimBefore ? '-' : ''} if false %}${lineBreaks}{% endif ${trimAfter ? '-' : ''}%}`
}

/** A raw block's text, with Jinja's whitespace handling, as a line-preserving output tag. */
function rawAsOutput(
  body: string,
  trimBeforeStart: boolean,
  trimAfterStart: boolean,
  trimBeforeEnd: boolean,
  trimAfterEnd: boolean,
): string {
  let content = trimAfterStart ? body.replace(/^\s+/, '') : body
  if (trimBeforeEnd) content = content.replace(/\s+$/, '')
  else content = content.replace(/\n[ \t]+$/, '\n') // lstrip_blocks before `{% endraw %}`
  // Keep the source's line breaks inside the tag (as whitespace) so line numbers still match.
  const lineBreaksLost = body.split('\n').length - content.split('\n').length
  const literal = content
    .split('\n')
    .map((line, i, lines) => {
      const text = line.replaceAll('\\', '\\\\').replaceAll('"', '\\"')
      return '"' + text + (i < lines.length - 1 ? '\\n' : '') + '"'
    })
    .join('\n~ ')
  return (
    `{%${trimBeforeStart ? '-' : ''} if true %}{{ ${literal}${'\n'.repeat(lineBreaksLost)} }}` +
    `{% endif ${trimAfterEnd ? '-' : ''}%}`
  )
}

/** Index of the closing delimiter of a tag, skipping quoted strings; -1 when missing. */
function findTagEnd(text: string, from: number, closing: string): number {
  let quote: string | null = null
  for (let i = from; i < text.length; i++) {
    const char = text[i]
    if (quote !== null) {
      if (char === '\\') i++
      else if (char === quote) quote = null
    } else if (char === '"' || char === "'") {
      quote = char
    } else if (text.startsWith(closing, i)) {
      return i
    }
  }
  return -1
}
