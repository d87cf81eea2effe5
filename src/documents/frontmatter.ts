/**
 * YAML front matter of managed Markdown (SPEC §7, §8, §11): split it off, read it as the Python
 * implementation's ruamel.yaml reads it, read the materialization jobs it declares, and write
 * generated values into it without touching the user's own bytes (issue #14).
 *
 * In:  document text (LF or CRLF; the caller takes off a BOM) and generated values by pointer.
 * Out: `FrontMatter` (data `null` when the document has none), `MaterializationJob`s, new text.
 * Pure: no I/O. Errors are `FrontMatterError`s carrying a 1-based document line.
 *
 * - Front matter: the text starts with `---\n` (or `---\r\n`) and ends at the next line matching
 *   `^---\s*$`; with no such line there is no front matter (as in Python). The body starts after
 *   that line and the whitespace-only lines right after it (as Python's offset does). Empty or
 *   comment-only YAML is `{}`. Anything but a mapping → `YAML front matter must be a mapping`; a YAML
 *   syntax error, or anything ruamel's round-trip loader rejects → `invalid YAML front matter at
 *   line <n>: <reason>` (n counted in the whole document). Values are read as ruamel reads them
 *   (yaml-read.ts: `1_000` → 1000, timestamps → ISO text, `2.0` a float, big ints exact, merge
 *   keys, duplicate keys rejected). Flat mappings of plain values take a fast path with the same
 *   result (`simple-yaml.ts`). Bounded (input-limits.ts): YAML larger than
 *   `MAX_FRONT_MATTER_BYTES` → `front matter is 1.5 MiB (… bytes), over the limit of 128 KiB`
 *   at line 1, unread; aliases expanding past `MAX_ALIAS_EXPANSION` values → `front matter expands
 *   YAML aliases to more than 100,000 values (line <n>): an alias bomb?`; collections nested past
 *   `MAX_FRONT_MATTER_DEPTH` → `front matter nests collections deeper than 128 levels (line <n>)`
 *   (n: the alias or collection that crossed the limit).
 * - Jobs: each mapping under `insitu.materializations` is one job (non-mappings at any of those
 *   three levels are skipped, as in Python). `target` is `frontmatter:<pointer>` or a mapping
 *   `{kind: frontmatter, pointer: <pointer>}`; anything else → `materialization <name> must have a
 *   frontmatter target`; no pointer → `frontmatter target requires pointer`; a pointer outside
 *   `/generated/` → `frontmatter targets must be under /generated/`; two jobs whose pointers are
 *   equal or one a path prefix of the other → `multiple materializations own <a> / <b>`.
 *   The job's transform is the entry's `kind`, else `sql` (the Python implementation's default);
 *   its options are the entry without `target` and `kind`; its id is the entry's `id`, else the
 *   entry's name; its line is the entry key's line (else the `insitu` key's, else 1).
 * - Writing (`writeGeneratedValues`): each value is spliced in at its pointer, in order, by
 *   frontmatter-write.ts: the generated subtree is written as ruamel's round-trip dumper writes it,
 *   every other byte of the document (comments, spacing, flow style, `1e3`, `017`, the body, the
 *   line after the fence) stays as it is; new text takes the document's line ends (CRLF stays
 *   CRLF). A document without front matter gets `---\n<yaml>---\n` + its body with its leading
 *   line breaks removed (SPEC §8). `generatedValuesEdit` is the same change as one text edit.
 * - Indexing: the keys `insitu` and `generated` are never indexed (`indexableFrontMatter`).
 */
import { isMap, isNode, isScalar, type Node, type YAMLMap } from 'yaml'
import { isObject } from '../protocol/object-guards.js'
import { PythonFloat } from '../values/python-float.js'
import { FrontMatterWriteError, pointerSegments, spliceGeneratedValue } from './frontmatter-write.js'
import { LineError } from './line-error.js'
import { isTruthyOption, namedOption, optionText } from './option-values.js'
import { lineEndingOf } from './regions.js'
import { locateFrontMatter } from './frontmatter-fence.js'
import { parseSimpleMapping } from './simple-yaml.js'
import { readYamlMapping, YamlReadError } from './yaml-read.js'
import { aliasExpansionMessage, frontMatterTooLargeMessage, MAX_FRONT_MATTER_BYTES, nestingDepthMessage, utf8BytesOver } from './input-limits.js'
import { DEFAULTS, yamlDocument } from './yaml-documents.js'

export interface FrontMatter {
  /** the parsed mapping; `null` when the document has no front matter */
  data: Record<string, unknown> | null
  /** the YAML text between the fences; `null` when there is no front matter */
  raw: string | null
  /** the text after the closing fence line and the blank lines after it (the whole text without front matter) */
  body: string
  /** 1-based line where `body` starts */
  bodyStartLine: number
  /** UTF-16 offset where `body` starts (pass to `parseRegions` to skip the front matter) */
  bodyOffset: number
}

export interface MaterializationJob {
  /** the key under `insitu.materializations` */
  name: string
  /** the entry's `id`, else `name` */
  id: string
  /** the transform to invoke: the entry's `kind`, else `sql` */
  kind: string
  /** the entry without `target` and `kind` */
  options: Record<string, unknown>
  /** JSON pointer under `/generated/` */
  pointer: string
  /** 1-based line of the entry's key in the document */
  line: number
}

/** A front-matter problem at a 1-based document line. */
export class FrontMatterError extends LineError {
  override name = 'FrontMatterError'
}

const GENERATED = '/generated/'

export { FrontMatterWriteError, pointerSegments }

export function splitFrontMatter(text: string): FrontMatter {
  const fence = locateFrontMatter(text)
  if (fence === null) return { data: null, raw: null, body: text, bodyStartLine: 1, bodyOffset: 0 }
  checkFrontMatterSize(fence.raw)
  const data = parseSimpleMapping(fence.raw) ?? parseMapping(fence.raw)
  return {
    data,
    raw: fence.raw,
    body: text.slice(fence.bodyOffset),
    bodyStartLine: fence.bodyStartLine,
    bodyOffset: fence.bodyOffset,
  }
}

export function materializationJobs(data: Record<string, unknown> | null, text: string): MaterializationJob[] {
  const config = data?.insitu
  if (!isMapping(config)) return []
  const entries = config.materializations
  if (!isMapping(entries)) return []
  const lines = entryLines(text)
  const jobs: MaterializationJob[] = []
  for (const [name, entry] of Object.entries(entries)) {
    if (!isMapping(entry)) continue
    const line = lines.entries.get(name) ?? lines.insitu
    const pointer = targetPointer(entry.target, name, line)
    const { target: _target, kind, ...options } = entry
    jobs.push({
      name,
      id: namedOption(entry.id, name),
      kind: namedOption(kind, 'sql'),
      options,
      pointer,
      line,
    })
  }
  for (let later = 1; later < jobs.length; later++) {
    const job = jobs[later]!
    for (const earlier of jobs.slice(0, later)) {
      if (targetsOverlap(earlier.pointer, job.pointer)) {
        throw new FrontMatterError(`multiple materializations own ${earlier.pointer} / ${job.pointer}`, job.line)
      }
    }
  }
  return jobs
}

/**
 * Whether two targets of one document are owned twice: equal, or both JSON pointers with one a
 * path prefix of the other (trailing `/` ignored). Region targets (`region:<id>`) only clash when equal.
 */
export function targetsOverlap(a: string, b: string): boolean {
  if (a === b) return true
  if (!a.startsWith('/') || !b.startsWith('/')) return false
  const left = a.replace(/\/+$/, '')
  const right = b.replace(/\/+$/, '')
  return left === right || left.startsWith(`${right}/`) || right.startsWith(`${left}/`)
}

/** `multiple materializations own <a> / <b>` for every clashing pair, in document order. */
export function ownershipConflicts(targets: readonly string[]): string[] {
  const messages: string[] = []
  targets.forEach((right, index) => {
    for (const left of targets.slice(0, index)) {
      if (targetsOverlap(left, right)) messages.push(`multiple materializations own ${left} / ${right}`)
    }
  })
  return messages
}

/** Set `value` at `pointer` (under `/generated/`), creating or replacing non-mapping parents. */
export function setPointer(data: Record<string, unknown>, pointer: string, value: unknown): void {
  if (!pointer.startsWith(GENERATED)) throw new Error('frontmatter targets must be under /generated/')
  const segments = pointerSegments(pointer)
  const last = segments.pop()!
  let cursor = data
  for (const segment of segments) {
    const child = Object.hasOwn(cursor, segment) ? cursor[segment] : undefined
    if (isMapping(child)) {
      cursor = child
    } else {
      const created: Record<string, unknown> = {}
      defineOwn(cursor, segment, created)
      cursor = created
    }
  }
  defineOwn(cursor, last, value)
}

/** A generated value and the pointer (under `/generated/`) it is written at. */
export interface GeneratedValue {
  pointer: string
  value: unknown
}

/** The document with each value written at its pointer, every other byte kept (see header). */
export function writeGeneratedValues(text: string, values: readonly GeneratedValue[]): string {
  const fence = locateFrontMatter(text)
  const eol = fence === null ? lineEndingOf(text) : fence.eol
  const raw = values.reduce((yaml, { pointer, value }) => spliceGeneratedValue(yaml, pointer, value, eol), fence?.raw ?? '')
  if (fence !== null) return text.slice(0, fence.rawOffset) + raw + text.slice(fence.rawOffset + fence.raw.length)
  return `---${eol}${raw}---${eol}` + text.replace(/^(?:\r?\n)+/, '')
}

/** `writeGeneratedValues` as one edit of `text` (the smallest span that changes), or null. */
export function generatedValuesEdit(text: string, values: readonly GeneratedValue[]): { start: number; end: number; text: string } | null {
  const written = writeGeneratedValues(text, values)
  if (written === text) return null
  let head = 0
  const limit = Math.min(text.length, written.length)
  while (head < limit && text.charCodeAt(head) === written.charCodeAt(head)) head++
  let tail = 0
  while (
    tail < limit - head &&
    text.charCodeAt(text.length - 1 - tail) === written.charCodeAt(written.length - 1 - tail)
  ) tail++
  return { start: head, end: text.length - tail, text: written.slice(head, written.length - tail) }
}

/** Front matter without the keys Insitu owns (`insitu`, `generated`). */
export function indexableFrontMatter(data: Record<string, unknown> | null): Record<string, unknown> {
  const indexable: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(data ?? {})) {
    if (key !== 'insitu' && key !== 'generated') defineOwn(indexable, key, value)
  }
  return indexable
}

/** Where the body begins (after the front matter's closing fence), whether or not the front matter parses. */
export function bodyOffsetOf(text: string): number {
  return locateFrontMatter(text)?.bodyOffset ?? 0
}

/** The front matter's mapping, read as ruamel reads it (what `parseSimpleMapping` declines). */
function parseMapping(raw: string): Record<string, unknown> {
  try {
    return readYamlMapping(raw) ?? {}
  } catch (error) {
    if (!(error instanceof YamlReadError)) throw error
    if (error.notMapping) throw new FrontMatterError('YAML front matter must be a mapping', 1)
    const line = 2 + countNewlines(raw, error.offset)
    if (error.limit === 'aliases') throw new FrontMatterError(aliasExpansionMessage(line), line)
    if (error.limit === 'depth') throw new FrontMatterError(nestingDepthMessage(line), line)
    throw new FrontMatterError(`invalid YAML front matter at line ${line}: ${error.reason}`, line)
  }
}

/** YAML past `MAX_FRONT_MATTER_BYTES` is not read. */
function checkFrontMatterSize(raw: string): void {
  const bytes = utf8BytesOver(raw, MAX_FRONT_MATTER_BYTES)
  if (bytes !== null) throw new FrontMatterError(frontMatterTooLargeMessage(bytes), 1)
}

/** Lines of `insitu:` and of each key under `insitu.materializations`, from the YAML source. */
function entryLines(text: string): { insitu: number; entries: Map<string, number> } {
  const lines = { insitu: 1, entries: new Map<string, number>() }
  const fence = locateFrontMatter(text)
  if (fence === null) return lines
  const document = yamlDocument(fence.raw, DEFAULTS)
  const lineOf = (node: unknown): number | undefined =>
    isNode(node) && node.range ? 2 + countNewlines(fence.raw, node.range[0]) : undefined
  const insitu = isMap(document.contents) ? findPair(document.contents, 'insitu') : undefined
  if (insitu === undefined) return lines
  lines.insitu = lineOf(insitu.key) ?? 1
  const materializations = isMap(insitu.value) ? findPair(insitu.value, 'materializations') : undefined
  if (materializations === undefined || !isMap(materializations.value)) return lines
  for (const pair of materializations.value.items) {
    const line = lineOf(pair.key)
    if (line !== undefined) lines.entries.set(keyText(pair.key), line)
  }
  return lines
}

function targetPointer(target: unknown, name: string, line: number): string {
  let kind: string
  let pointer: string | null
  if (typeof target === 'string' && target.startsWith('frontmatter:')) {
    kind = 'frontmatter'
    pointer = target.slice('frontmatter:'.length) || null
  } else if (isMapping(target)) {
    kind = target.kind === undefined ? 'markdown' : optionText(target.kind)
    pointer = isTruthyOption(target.pointer) ? optionText(target.pointer) : null
  } else {
    kind = 'markdown'
    pointer = null
  }
  if (kind !== 'frontmatter') throw new FrontMatterError(`materialization ${name} must have a frontmatter target`, line)
  if (pointer === null) throw new FrontMatterError('frontmatter target requires pointer', line)
  if (!pointer.startsWith(GENERATED)) throw new FrontMatterError('frontmatter targets must be under /generated/', line)
  return pointer
}

function findPair(map: YAMLMap, key: string): { key: unknown; value: unknown } | undefined {
  return (map.items as Array<{ key: unknown; value: unknown }>).find((pair) => keyText(pair.key) === key)
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value)
  return isNode(key) ? String((key as Node).toJSON()) : String(key)
}

/** A YAML mapping's JS value: an object that is not an array, a Date or a boxed float. */
function isMapping(value: unknown): value is Record<string, unknown> {
  return isObject(value) && !(value instanceof Date) && !(value instanceof PythonFloat)
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  // Only `__proto__` is an accessor of Object.prototype: any other key is an own data property
  // when assigned (defineProperty costs several times more, on every key of every document).
  if (key === '__proto__') Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
  else target[key] = value
}

function countNewlines(text: string, end: number): number {
  let count = 0
  for (let index = text.indexOf('\n'); index !== -1 && index < end; index = text.indexOf('\n', index + 1)) count++
  return count
}
