/**
 * Builtin transform `include` (SPEC §8): a file's lines, raw or as a fenced code block.
 *
 * Options: `path` (required, relative to the document's directory: `include transform
 * requires path`; an absolute one, `/x` or `C:\x`, → `include path must be relative to the
 * document: <path>`), `start` / `end` (1-based, inclusive), `raw` (bool: the lines as they
 * are), `language` (the fence's info string; unset or `""`: the file suffix without its dot).
 * As the Python implementation includes (SPEC §11): the file's text as it is on disk, read
 * through the host as `fs:file:<project-relative path>?raw` (that file is the dependency; a
 * managed Markdown file comes with its region bodies, NOT blanked), its BOM kept, `\r\n` and a
 * lone `\r` read as line breaks (Python's universal newlines), then split into lines as
 * `str.splitlines()` splits (`\n`, `\v`, `\f`, `\x1c`-`\x1e`, `\x85`, U+2028, U+2029 end a line)
 * and the selected lines joined with `\n`.
 * Fence: three backticks, as the Python implementation writes it, and longer only when a line of
 * the text could close that fence (a line starting, after up to three spaces, with three or
 * more backticks: CommonMark's rule), then one longer than the longest such run (SPEC §10: the
 * Python implementation keeps three and the document then no longer parses). A backtick run
 * elsewhere in a line (an inline code span) is no reason.
 */
import path from 'node:path/posix'
import type { BuiltinCapability, BuiltinContext } from '../host/host.js'
import { isRootedPath } from '../documents/project-paths.js'
import { optionalBoolean, optionalInteger, optionalString, requiredString } from './options.js'

export const includeTransform: BuiltinCapability = {
  kind: 'transform',
  name: 'include',
  async invoke({ options, location }, context) {
    const target = requiredString(options, 'path', 'include transform requires path')
    const start = optionalInteger(options, 'start', 'include', 1)
    const end = optionalInteger(options, 'end', 'include', 1)
    const raw = optionalBoolean(options, 'raw', 'include') ?? false
    if (isRootedPath(target)) throw new Error(`include path must be relative to the document: ${target}`)
    const relative = path.normalize(path.join(location.directory || '.', target))
    const text = String(await readRaw(context, relative))
    const lines = pythonSplitLines(text.replace(/\r\n?/g, '\n'))
    if (start !== undefined && end !== undefined && end < start) {
      throw new Error(`include end (${end}) is before start (${start})`)
    }
    const selected = lines.slice((start ?? 1) - 1, end ?? lines.length).join('\n')
    if (raw) return { content: selected }
    // `language = ""` is the suffix too (Python: `options.get("language") or suffix`).
    const language = optionalString(options, 'language', 'include') || path.extname(relative).slice(1)
    return { content: fenced(selected, language) }
  },
}

/**
 * The file as it is on disk (`fs:file:<rel>?raw`, the dependency); a failure names the file as
 * `fs:file:<rel>` does (`?raw` is the host's own detail).
 */
async function readRaw(context: BuiltinContext, relative: string): Promise<unknown> {
  const identifier = `fs:file:${relative}?raw`
  try {
    return await context.read(identifier)
  } catch (error) {
    if (error instanceof Error) error.message = error.message.replaceAll(identifier, `fs:file:${relative}`)
    throw error
  }
}

/** A fenced block: three backticks unless a line could close them (see the header). */
export function fenced(text: string, language: string): string {
  let longest = 2
  for (const match of text.matchAll(/^ {0,3}(`{3,})/gm)) longest = Math.max(longest, (match[1] as string).length)
  const fence = '`'.repeat(longest + 1)
  return `${fence}${language}\n${text}\n${fence}`
}

// What Python's str.splitlines() ends a line at (\r\n and \r were read as \n already).
const LINE_BREAK = /[\n\v\f\x1c-\x1e\x85\u2028\u2029]/

/** Python's `text.splitlines()` of a text without `\r`: no empty last line for a final break. */
export function pythonSplitLines(text: string): string[] {
  const lines = text.split(LINE_BREAK)
  if (lines.at(-1) === '') lines.pop()
  return lines
}
