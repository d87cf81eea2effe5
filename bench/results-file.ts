/**
 * bench/RESULTS.md as named sections, so that each benchmark (and each size of it) rewrites
 * only its own numbers: a 1,000-document run keeps the 10,000-document table of an earlier run.
 *
 * Contract: `writeSection(id, markdown)` replaces the text between `<!-- bench:<id> -->` and
 * `<!-- /bench:<id> -->` in RESULTS.md with `markdown` (trimmed, one blank line around it), or,
 * when the markers are missing, appends the section at the end of the file. Everything outside
 * the markers (headings, explanations written by hand) is kept byte for byte. `runSizes(name,
 * defaultRuns, benchSize, layouts)` is a benchmark's command line: one section per `--sizes` and
 * `--layouts` entry (`<name>@<size>` for the flat layout, `<name>-<layout>@<size>` for the others:
 * `-nested`, `-readme`).
 */
import fs from 'node:fs'
import { fileURLToPath } from 'node:url'
import { benchArgs } from './measurements.js'
import { LAYOUTS, type ProjectLayout } from './project-generator.js'

export const RESULTS_FILE = fileURLToPath(new URL('./RESULTS.md', import.meta.url))

export function writeSection(id: string, markdown: string, file = RESULTS_FILE): void {
  const begin = `<!-- bench:${id} -->`
  const end = `<!-- /bench:${id} -->`
  const block = `${begin}\n\n${markdown.trim()}\n\n${end}`
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  const start = text.indexOf(begin)
  const stop = start < 0 ? -1 : text.indexOf(end, start)
  const next =
    start >= 0 && stop >= 0
      ? text.slice(0, start) + block + text.slice(stop + end.length)
      : `${text.replace(/\n*$/, '')}${text ? '\n\n' : ''}${block}\n`
  fs.writeFileSync(file, next)
}

/**
 * A project benchmark's command line: for each `--layouts` entry the benchmark supports
 * (`supported`, default every one of `LAYOUTS`) and each `--sizes` entry, run `benchSize` (with `--runs`, default
 * `defaultRuns`, and `--keep`), write its section and print it.
 */
export async function runSizes(
  name: string,
  defaultRuns: number,
  benchSize: (documents: number, runs: number, keep: boolean, layout: ProjectLayout) => Promise<string>,
  supported: readonly ProjectLayout[] = LAYOUTS,
): Promise<void> {
  const args = benchArgs(process.argv.slice(2), defaultRuns)
  for (const layout of args.layouts.filter((l) => supported.includes(l))) {
    for (const documents of args.sizes) {
      const markdown = await benchSize(documents, args.runs, args.keep, layout)
      writeSection(`${name}${layout === 'flat' ? '' : `-${layout}`}@${documents}`, markdown)
      console.log(markdown)
    }
  }
}
