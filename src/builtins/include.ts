/**
 * Builtin transform `include` (SPEC §8): a file's lines, raw or as a fenced code block.
 *
 * Options: `path` (required, relative to the document's directory: `include transform
 * requires path`; an absolute one, `/x` or `C:\x`, → `include path must be relative to the
 * document: <path>`), `start` / `end` (1-based, inclusive), `raw` (bool: the lines as they
 * are), `language` (the fence's info string; default the file suffix without its dot).
 * Reads `fs:file:<project-relative path>` through the host, so that file is the
 * dependency (and a managed Markdown file comes with its region bodies blanked).
 */
import path from 'node:path/posix'
import type { BuiltinCapability } from '../host/host.js'
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
    const text = String(await context.read(`fs:file:${relative}`))
    const lines = text.replace(/\r\n/g, '\n').split('\n')
    if (lines.at(-1) === '') lines.pop()
    if (start !== undefined && end !== undefined && end < start) {
      throw new Error(`include end (${end}) is before start (${start})`)
    }
    const selected = lines.slice((start ?? 1) - 1, end ?? lines.length).join('\n')
    if (raw) return { content: selected }
    const language = optionalString(options, 'language', 'include') ?? path.extname(relative).slice(1)
    return { content: fenced(selected, language) }
  },
}

/** A fenced block whose fence is longer than any backtick run inside the text. */
export function fenced(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(longest + 1)
  return `${fence}${language}\n${text}\n${fence}`
}
