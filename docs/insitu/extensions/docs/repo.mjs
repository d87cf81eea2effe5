/**
 * Reading the repository from the docs extension, and the Markdown helpers its transforms share.
 *
 * Contract:
 * - `repoRoot(ctx)`: the repository, the folder above the project root the host sent (docs/).
 * - `readRepo(ctx, rel)`: the text of a repository file; `rel` must stay inside the repository
 *   (`not a path inside the repository: <rel>`). Declares `repo:<rel>` as a
 *   dependency of the invocation (also when the read fails, so a missing file is named).
 * - `parseJsDoc(comment)`: `{ text, tags }` of a `/** … *\/` block: the description (lines without
 *   their ` * `) and the `@default` / `@deprecated` / `@example` / `@see` tags (a tag may start
 *   mid-line; it runs to the next tag).
 * - `interfaceMembers(source, name)`: the members of `interface <name> { … }` in a TypeScript
 *   source (one line per member's type), each `{ name, optional, type, doc }`; throws when the
 *   interface is missing or a member has no JSDoc.
 * - `protectMarkers(markdown)`: the text with no region marker the host would see: an inline code
 *   span holding `<!-- insitu:begin|end` becomes `<code v-pre>` with the text escaped (it renders
 *   the same), and such a comment outside code is dropped; fenced code blocks are left alone.
 */
import fs from 'node:fs'
import path from 'node:path'

export function repoRoot(ctx) {
  if (!ctx.root) throw new Error('the host has not sent the project root yet')
  return path.dirname(path.resolve(ctx.root))
}

export function readRepo(ctx, rel) {
  const root = repoRoot(ctx)
  const file = path.resolve(root, rel)
  if (path.isAbsolute(rel) || !file.startsWith(root + path.sep)) {
    throw new Error(`not a path inside the repository: ${rel}`)
  }
  const posix = path.relative(root, file).split(path.sep).join('/')
  ctx.dependOn(`repo:${posix}`)
  try {
    return fs.readFileSync(file, 'utf8').replace(/\r\n?/g, '\n')
  } catch (error) {
    throw new Error(`cannot read ${posix} (in the repository, ${root}): ${error.code ?? error.message}`)
  }
}

const TAGS = ['default', 'deprecated', 'example', 'see']

export function parseJsDoc(comment) {
  const body = comment
    .replace(/^\/\*\*/, '')
    .replace(/\*\/$/, '')
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, '').replace(/\s+$/, ''))
    .join('\n')
    .replace(/\*\\\//g, '*/')
    .trim()
  const parts = body.split(new RegExp(`(?:^|\\s)@(${TAGS.join('|')})\\b`))
  const tags = {}
  for (let i = 1; i < parts.length; i += 2) tags[parts[i]] = parts[i + 1].trim()
  return { text: parts[0].trim(), tags }
}

export function interfaceMembers(source, name) {
  const start = source.search(new RegExp(`^export (?:declare )?interface ${name}\\b[^{]*\\{`, 'm'))
  if (start < 0) throw new Error(`interface ${name} not found`)
  const open = source.indexOf('{', start)
  const close = source.indexOf('\n}', open)
  const body = source.slice(open + 1, close)
  const members = []
  const pattern = /(\/\*\*[\s\S]*?\*\/)\s*(?:readonly\s+)?(\w+)(\?)?:\s*([^\n]+?);?\s*$/gm
  for (const match of body.matchAll(pattern)) {
    members.push({ name: match[2], optional: match[3] === '?', type: match[4].trim(), doc: parseJsDoc(match[1]) })
  }
  const declared = [...body.matchAll(/^\s{2,4}(?:readonly\s+)?(\w+)\??:/gm)].map((m) => m[1])
  const missing = declared.filter((member) => !members.some((m) => m.name === member))
  if (missing.length > 0) throw new Error(`${name}: no JSDoc for ${missing.join(', ')}`)
  return members
}

/** Lines of a Markdown text, each with whether it is inside (or opens/closes) a fenced code block. */
export function fencedLines(markdown) {
  let fence = null
  return markdown.split('\n').map((line) => {
    const opener = /^ {0,3}(`{3,}|~{3,})/.exec(line)
    if (fence === null && opener && !(opener[1][0] === '`' && line.slice(opener[0].length).includes('`'))) {
      fence = opener[1]
      return { line, code: true }
    }
    if (fence !== null) {
      const closer = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)
      if (closer && closer[1][0] === fence[0] && closer[1].length >= fence.length) fence = null
      return { line, code: true }
    }
    return { line, code: false }
  })
}

const MARKER = /<!--\s*insitu:(?:begin|end)/
const escapeHtml = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

export function protectMarkers(markdown) {
  if (!MARKER.test(markdown)) return markdown
  return fencedLines(markdown)
    .map(({ line, code }) => {
      if (code || !MARKER.test(line)) return line
      return line
        .replace(/(`+)([^`][\s\S]*?)\1/g, (span, ticks, inner) =>
          MARKER.test(inner) ? `<code v-pre>${escapeHtml(inner.trim())}</code>` : span,
        )
        .replace(/<!--\s*insitu:(?:begin|end)[\s\S]*?-->/g, '')
    })
    .join('\n')
}

/** `text` in an inline code span (backticks longer than any run inside it). */
export function code(text) {
  const longest = Math.max(0, ...[...String(text).matchAll(/`+/g)].map((m) => m[0].length))
  const ticks = '`'.repeat(longest + 1)
  return longest > 0 ? `${ticks} ${text} ${ticks}` : `${ticks}${text}${ticks}`
}
