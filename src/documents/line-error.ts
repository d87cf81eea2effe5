/**
 * An error found at a line of a managed Markdown document.
 *
 * `LineError` carries the message and the 1-based line it is about (counted in the whole
 * document, front matter included). The parsers throw their own subclasses, `FrontMatterError`
 * (frontmatter.ts) and `RegionError` (regions.ts), so callers can tell them apart with
 * `instanceof`, or catch either as a `LineError` and report `message` at `line`.
 */
export class LineError extends Error {
  /** 1-based document line the message is about */
  readonly line: number
  constructor(message: string, line: number) {
    super(message)
    this.name = 'LineError'
    this.line = line
  }
}
