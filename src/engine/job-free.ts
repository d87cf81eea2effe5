/**
 * Documents that hold no job: the cheap path of builds (issue #17). Most documents of a project
 * have no region and no front-matter materialization; rendering one of them runs nothing and
 * changes nothing, so a build can serve its text as read without the engine.
 *
 * Contract: `isJobFree(text)` is true only when `renderDocument` (render-document.ts) of `text`
 * would return it unchanged with no job and no diagnostic: the text (a leading BOM aside, as
 * `renderText` takes it off) contains no `insitu:` (region markers are literal
 * `<!-- insitu:begin` / `<!-- insitu:end` comments: without the word there are no regions and no
 * stray ends), and its front matter is absent or parses into a mapping without an `insitu` key
 * (which is where materializations are declared; the key is tested on the parsed mapping, so a
 * key spelled with YAML escapes counts too). Front matter that does not parse is not job-free:
 * the engine reports its error as before. Pure, no I/O.
 * `isJobFreeRead(read)`: the same verdict for a text the document index has read and parsed
 * already (document-record.ts `parseDocument`), without parsing its front matter again: the
 * index parsed the text with LF line ends, so a text with a `\r` (or a BOM) is parsed again.
 * The verdict's steps before the front matter: job-free-verdict.ts.
 */
import { splitFrontMatter } from '../documents/frontmatter.js'
import { jobFreeVerdict } from '../documents/job-free-verdict.js'

export function isJobFree(text: string): boolean {
  return jobFreeVerdict(text, (body) => {
    try {
      return splitFrontMatter(body).data
    } catch {
      return undefined
    }
  })
}

/** `isJobFree(read.text)`, from the front matter the document index parsed (see the header). */
export function isJobFreeRead(read: { text: string; frontMatter: Record<string, unknown> | null | undefined }): boolean {
  const { text } = read
  if (text.charCodeAt(0) === 0xfeff || text.includes('\r')) return isJobFree(text)
  return jobFreeVerdict(text, () => read.frontMatter)
}
