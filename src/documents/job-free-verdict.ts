/**
 * The job-free verdict of job-free.ts, before any front matter is parsed: dependency-free, so
 * that the plugin's entry can apply it to a build's modules without loading a YAML parser
 * (build-process.ts asks its build process only about documents it cannot decide here).
 *
 * Contract: `jobFreeVerdict(text, frontMatter)` is job-free.ts's verdict for `text` (a leading
 * BOM ignored): false when the text holds `insitu:`, true when it opens without a `---` fence,
 * else decided by `frontMatter()`, its parsed front matter (null: none; undefined: it does not
 * parse, or the caller cannot tell: not job-free).
 */

export function jobFreeVerdict(text: string, frontMatter: (body: string) => Record<string, unknown> | null | undefined): boolean {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (body.includes('insitu:')) return false
  // No front matter fence: nothing to parse.
  if (!body.startsWith('---')) return true
  const data = frontMatter(body)
  if (data === undefined) return false // the engine reports the error at its line
  return data === null || !Object.hasOwn(data, 'insitu')
}
