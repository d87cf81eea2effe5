/**
 * The job-free verdict of job-free.ts, and the front matter it can read without a YAML parser,
 * so that the plugin's entry can apply it to a build's modules without loading one
 * (build-process.ts asks its build process only about documents it cannot decide here).
 *
 * Contract: `jobFreeVerdict(text, frontMatter)` is job-free.ts's verdict for `text` (a leading
 * BOM ignored): false when the text holds `insitu:`, true when it opens without a `---` fence,
 * else decided by `frontMatter()`, its parsed front matter (null: none; undefined: it does not
 * parse, or the caller cannot tell: not job-free).
 * `simpleFrontMatter(body)` is such a `frontMatter` without a YAML parser: null without front
 * matter, the mapping when it is in simple-yaml.ts's subset (exactly what the full reader gives),
 * undefined otherwise (over the size limit, or not in the subset: the caller cannot tell).
 */
import { locateFrontMatter } from './frontmatter-fence.js'
import { MAX_FRONT_MATTER_BYTES, utf8BytesOver } from './input-limits.js'
import { parseSimpleMapping } from './simple-yaml.js'

export function jobFreeVerdict(text: string, frontMatter: (body: string) => Record<string, unknown> | null | undefined): boolean {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (body.includes('insitu:')) return false
  // No front matter fence: nothing to parse.
  if (!body.startsWith('---')) return true
  const data = frontMatter(body)
  if (data === undefined) return false // the engine reports the error at its line
  return data === null || !Object.hasOwn(data, 'insitu')
}

export function simpleFrontMatter(body: string): Record<string, unknown> | null | undefined {
  const fence = locateFrontMatter(body)
  if (fence === null) return null
  if (utf8BytesOver(fence.raw, MAX_FRONT_MATTER_BYTES) !== null) return undefined
  return parseSimpleMapping(fence.raw)
}
