/**
 * Transform `repo-file`: a repository file's Markdown, whole or one section, headings shifted.
 *
 * Options: `path` (required, repository-relative: `CHANGELOG.md`), `section` (optional: the text
 * of a heading; the lines after that heading up to the next heading of the same or a higher
 * level, the heading line itself left out), `shift` (optional integer added to every heading's
 * level; a level that leaves 1..6 fails), `code` (optional: the whole file verbatim in a fenced
 * block of that language, `""` for none, fenced with more backticks than any run in the file; not
 * with `section` or `shift`). Headings inside fenced code blocks are not headings.
 * Leading and trailing blank lines are dropped; region markers in the text are neutralised
 * (repo.mjs `protectMarkers`), so a file that mentions them cannot open or close a region here.
 * Dependency: `repo:<path>`.
 */
import { fencedLines, protectMarkers, readRepo } from './repo.mjs'

const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/

export function repoFile(params, ctx) {
  const text = readRepo(ctx, params.path)
  if (params.code !== undefined) {
    if (params.section !== undefined || params.shift) throw new Error('repo-file: code shows the whole file: no section or shift')
    const fence = '`'.repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((run) => run[0].length + 1)))
    return `${fence}${params.code}\n${text.replace(/\s+$/, '')}\n${fence}`
  }
  let lines = fencedLines(text)
  if (params.section !== undefined) lines = section(lines, params.section, params.path)
  if (params.shift) lines = lines.map((entry) => (entry.code ? entry : { ...entry, line: shifted(entry.line, params.shift, params.path) }))
  const out = joinCodeSpans(lines)
  while (out.length > 0 && out[0].trim() === '') out.shift()
  while (out.length > 0 && out.at(-1).trim() === '') out.pop()
  const result = protectMarkers(out.join('\n'))
  const left = fencedLines(result).find(({ line, code }) => !code && /<!--\s*insitu:(?:begin|end)/.test(line))
  if (left) throw new Error(`${params.path}: a region marker that cannot be shown safely: ${left.line.trim()}`)
  return result
}

/**
 * Lines outside fences with an inline code span still open at their end are joined with the next
 * (a code span's line break renders as a space anyway): VitePress's Markdown would otherwise read
 * `<name>` at the start of the next line as HTML.
 */
function joinCodeSpans(entries) {
  const out = []
  let open = 0
  for (const { line, code } of entries) {
    if (code || line.trim() === '') {
      open = 0
      out.push(line)
      continue
    }
    if (open > 0) out[out.length - 1] += ` ${line.trim()}`
    else out.push(line)
    for (const run of line.matchAll(/`+/g)) {
      if (open === 0) open = run[0].length
      else if (run[0].length === open) open = 0
    }
  }
  return out
}

function section(lines, wanted, file) {
  const headings = []
  lines.forEach(({ line, code }, index) => {
    const match = !code && HEADING.exec(line)
    if (match) headings.push({ index, level: match[1].length, text: match[2].trim() })
  })
  const at = headings.findIndex((heading) => heading.text === wanted)
  if (at < 0) {
    const names = headings.map((heading) => JSON.stringify(heading.text)).join(', ')
    throw new Error(`${file} has no heading ${JSON.stringify(wanted)} (its headings: ${names})`)
  }
  const { index, level } = headings[at]
  const next = headings.slice(at + 1).find((heading) => heading.level <= level)
  return lines.slice(index + 1, next ? next.index : lines.length)
}

function shifted(line, shift, file) {
  const match = HEADING.exec(line)
  if (!match) return line
  const level = match[1].length + shift
  if (level < 1 || level > 6) throw new Error(`${file}: shift ${shift} makes heading ${JSON.stringify(match[2])} level ${level} (1 to 6)`)
  return line.replace(/^( {0,3})#{1,6}/, (_, indent) => `${indent}${'#'.repeat(level)}`)
}
