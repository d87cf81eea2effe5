/**
 * A managed document as the page shows it.
 *
 * `parseDocument(path, text)` splits the YAML front matter from the Markdown body, and
 * `labelRegions(body)` turns every insitu region into an HTML `<section class="region">`
 * (attributes `data-kind` and `data-id`, a header naming the kind and listing the region's
 * options) around its generated body, so marked renders the body as Markdown inside it.
 * Region comments inside fenced code blocks are left alone.
 */
import { parse as parseYaml } from 'yaml'

export interface PageDocument {
  path: string
  title: string
  /** The front matter without `insitu` (the materialization declarations) and `generated`. */
  frontMatter: Record<string, unknown>
  /** `insitu.materializations`: name → entry (target, model, ...). */
  materializations: Record<string, Record<string, unknown>>
  /** The `generated` front-matter block written by the materializations. */
  generated: Record<string, unknown>
  body: string
}

export interface RegionInfo {
  kind: string
  id: string
  options: [key: string, value: string][]
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/
const BEGIN = /^<!--\s*insitu:begin(?:[ \t]+([\w.-]+))?[ \t]*$/
const END = /^<!--\s*insitu:end\s*-->\s*$/
const FENCE = /^ {0,3}(`{3,}|~{3,})/

export function parseDocument(path: string, text: string): PageDocument {
  const match = FRONT_MATTER.exec(text)
  const data = match ? asRecord(parseYaml(match[1] ?? '')) : {}
  const { insitu, generated, ...frontMatter } = data
  const body = match ? text.slice(match[0].length) : text
  return {
    path,
    title: typeof data.title === 'string' ? data.title : path,
    frontMatter,
    materializations: asRecord(asRecord(insitu).materializations) as Record<string, Record<string, unknown>>,
    generated: asRecord(generated),
    body,
  }
}

/** The body with each region wrapped in a `<section>` whose first child is `describe(region)` (HTML). */
export function labelRegions(body: string, describe: (region: RegionInfo) => string): string {
  const lines = body.split('\n')
  const out: string[] = []
  let fence: string | null = null
  let ordinal = 0
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    const fenceMark = FENCE.exec(line)?.[1]
    if (fence !== null) {
      if (fenceMark && fenceMark[0] === fence[0] && fenceMark.length >= fence.length) fence = null
      out.push(line)
      continue
    }
    if (fenceMark) {
      fence = fenceMark
      out.push(line)
      continue
    }
    const begin = BEGIN.exec(line)
    if (begin) {
      const header: string[] = []
      while (i + 1 < lines.length && !(lines[i + 1] ?? '').includes('-->')) header.push(lines[++i] ?? '')
      i++ // the `-->` line
      ordinal++
      const options = header
        .map((entry) => /^\s*([\w.-]+)\s*=\s*(.+?)\s*$/.exec(entry))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m): [string, string] => [m[1] ?? '', m[2] ?? ''])
      const id = options.find(([key]) => key === 'id')?.[1].replace(/^"|"$/g, '') ?? `region-${ordinal}`
      const kind = begin[1] ?? options.find(([key]) => key === 'kind')?.[1].replace(/^"|"$/g, '') ?? 'sql'
      const region = { kind, id, options: options.filter(([key]) => key !== 'id' && key !== 'kind') }
      out.push(
        `<section class="region" data-kind="${escapeHtml(kind)}" data-id="${escapeHtml(id)}">${describe(region)}`,
        '',
      )
      continue
    }
    if (END.test(line)) {
      out.push('', '</section>', '')
      continue
    }
    out.push(line)
  }
  return out.join('\n')
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
}
