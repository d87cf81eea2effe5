/**
 * One managed document as the index stores it (SPEC §7 `_documents` row).
 *
 * Contract:
 * - `pathColumns(relPath)`: `parent` (dirname, `''` at the root), `name`, `stem` (name without
 *   its last suffix, like Python's `PurePath.stem`), `depth` (number of folders in the path:
 *   `a/b.md` → 1, the `documents` depth). `entryDepth(relPath)` is the number of path segments
 *   (`a/b.md` → 2), the `entries` depth: the Python implementation counts them so (SPEC §11).
 * - `readDocumentRecord(root, relPath)`: reads the file's bytes (through `readFileState`, which
 *   reads only from a descriptor verified to lie inside the real root). The text is read as
 *   Python's `read_text()` reads it: `\r\n` and a lone `\r` become `\n` (universal newlines), so
 *   `body` of a CRLF document holds LF line ends; a BOM is kept. `body` is the text after the
 *   front matter with every region body blanked (so generated output never becomes input);
 *   `frontmatter` is Python's `json.dumps(value, sort_keys=True)` of the indexable front matter
 *   (`insitu`/`generated` dropped; `", "`/`": "` separators, non-ASCII as `\uXXXX`, `2.0` for a
 *   `PythonFloat`), `{}` when there is none, so `json_extract` and `LIKE` see the text Python
 *   stores; `title` is Python's `str()` of any non-null front matter `title` (`1984` → `'1984'`,
 *   `true` → `'True'`, a list → its Python repr), else null; `content_hash` is the sha256 of the bytes
 *   (change detection); `source_hash` is the Python implementation's `content_hash`, the sha256 of
 *   the `frontmatter` text followed by `body` (UTF-8), which `documents` exposes as `content_hash`.
 *   A document whose front matter or regions cannot be parsed is still indexed, with what could
 *   be read (front matter `{}` and the whole text as body, or the body unblanked): the document's
 *   own rendering reports that error, the index must not fail a query over other documents.
 * - A document that is not text within the bounds of input-limits.ts (`documentBytesProblem`:
 *   larger than `MAX_DOCUMENT_BYTES`, not valid UTF-8, holding a NUL byte) is indexed by its
 *   path alone: its row keeps the path columns and the stat, with title null, body `''` and
 *   front matter `{}` (so a query listing pages still lists it, and nothing decoded with
 *   replacement characters reaches a query); `ParsedDocument.problem` says why (the index warns
 *   once). `readFileState` does not read a file over the size limit at all: it reports it
 *   `tooLarge`, with empty bytes, and its `content_hash` is `too-large:<size>` (no sha256 of
 *   bytes that were not read; a change of size or mtime still shows in the stat).
 * - `sameProjection(a, b)`: equal in everything queries can see (path, title, body, front matter).
 */
import { hash as oneShotHash } from 'node:crypto'
import path from 'node:path'
import { isPlainObject } from '../protocol/object-guards.js'
import { isPythonFloat } from '../values/python-float.js'
import { pythonJsonDumps } from '../values/python-json.js'
import { pythonStr } from '../values/python-str.js'
import { indexableFrontMatter, splitFrontMatter } from './frontmatter.js'
import { readConfinedFile } from './confined-files.js'
import { documentBytesProblem, documentTooLargeMessage, MAX_DOCUMENT_BYTES } from './input-limits.js'
import { blankRegionBodies } from './regions.js'
import { realPathSync } from './real-path.js'

export interface PathColumns {
  path: string
  parent: string
  name: string
  stem: string
  depth: number
}

export interface DocumentRecord extends PathColumns {
  title: string | null
  body: string
  /** Canonical JSON text of the indexable front matter. */
  frontmatter: string
  content_hash: string
  /** sha256 hex of `frontmatter + body` (the Python implementation's `content_hash`). */
  source_hash: string
  mtime_ns: bigint
  size: number
}

export type DocumentProjection = Pick<DocumentRecord, 'path' | 'title' | 'body' | 'frontmatter'>

export function pathColumns(relPath: string): PathColumns {
  const slash = relPath.lastIndexOf('/')
  const name = slash === -1 ? relPath : relPath.slice(slash + 1)
  const dot = name.lastIndexOf('.')
  return {
    path: relPath,
    parent: slash === -1 ? '' : relPath.slice(0, slash),
    name,
    stem: dot > 0 && dot < name.length - 1 ? name.slice(0, dot) : name,
    depth: countSlashes(relPath),
  }
}

/** The `entries` depth: the number of path segments (`a/b.md` → 2). */
export function entryDepth(relPath: string): number {
  return countSlashes(relPath) + 1
}

function countSlashes(relPath: string): number {
  let count = 0
  for (let i = relPath.indexOf('/'); i !== -1; i = relPath.indexOf('/', i + 1)) count++
  return count
}

export function hashContent(bytes: Buffer): string {
  return oneShotHash('sha256', bytes, 'hex')
}

/** A document file as read: its bytes (none when it is `tooLarge`: not read), mtime and size. */
export interface DocumentState {
  bytes: Buffer
  mtimeNs: bigint
  size: number
  /** Larger than `MAX_DOCUMENT_BYTES`: not read, `bytes` is empty. */
  tooLarge?: true
}

const NO_BYTES = Buffer.alloc(0)

/**
 * Reads the file at `absPath` from a descriptor verified to lie inside `realRoot` (the root's
 * real path); `null` when it no longer exists, is not a regular file, or lies outside the root.
 * A file larger than `MAX_DOCUMENT_BYTES` is not read (`tooLarge`).
 */
export function readFileState(realRoot: string, absPath: string): DocumentState | null {
  const read = readConfinedFile(realRoot, absPath, MAX_DOCUMENT_BYTES)
  if (read.kind === 'too-large') return { bytes: NO_BYTES, mtimeNs: read.stat.mtimeNs, size: Number(read.stat.size), tooLarge: true }
  if (read.kind !== 'file') return null
  return { bytes: read.bytes, mtimeNs: read.stat.mtimeNs, size: read.bytes.length }
}

/** The `content_hash` of a document as read: the sha256 of its bytes, `too-large:<size>` when they were not read. */
export function documentContentHash(state: DocumentState): string {
  return state.tooLarge ? `too-large:${state.size}` : hashContent(state.bytes)
}

/** Why the document's bytes are not indexed as text (see the header), or null. */
export function documentStateProblem(state: DocumentState): string | null {
  return state.tooLarge ? documentTooLargeMessage(state.size) : (documentBytesProblem(state.bytes)?.message ?? null)
}

export function buildDocumentRecord(
  relPath: string,
  state: DocumentState,
  contentHash = documentContentHash(state),
): DocumentRecord {
  return parseDocument(relPath, state, contentHash).record
}

/** A document's text as read, and its front matter as parsed. */
export interface DocumentRead {
  /** The file's text as decoded (UTF-8, line ends and a BOM as in the file). */
  text: string
  /**
   * `splitFrontMatter(...).data` of the text with LF line ends: the front-matter mapping, null
   * when there is none, undefined when it does not parse.
   */
  frontMatter: Record<string, unknown> | null | undefined
}

/** A document as `parseDocument` read it: its record, and what reading it found on the way. */
export interface ParsedDocument extends DocumentRead {
  record: DocumentRecord
  /** The top-level keys of the indexed front matter (the `frontmatter` JSON object's keys). */
  frontMatterKeys: string[]
  /** Why it is indexed by its path alone (not text within the limits: see the header); null when it is text. */
  problem: string | null
}

/** The bytes as decoded, and as read with universal newlines (Python's read_text(): the body column holds LF, issue #15). */
function decodeDocument(bytes: Buffer): { decoded: string; text: string } {
  const decoded = bytes.toString('utf8')
  return { decoded, text: decoded.includes('\r') ? decoded.replace(/\r\n?/g, '\n') : decoded }
}

/** What `parseDocument` reads besides the record: for bytes whose record is stored already. */
export function readDocument(bytes: Buffer): DocumentRead {
  const { decoded, text } = decodeDocument(bytes)
  try {
    return { text: decoded, frontMatter: splitFrontMatter(text).data }
  } catch {
    return { text: decoded, frontMatter: undefined }
  }
}

/** `buildDocumentRecord`, keeping the decoded text and the parsed front matter (for the cheap path of builds). */
export function parseDocument(
  relPath: string,
  state: DocumentState,
  contentHash = documentContentHash(state),
): ParsedDocument {
  const problem = documentStateProblem(state)
  if (problem !== null) return pathOnlyDocument(relPath, state, contentHash, problem)
  const { decoded, text } = decodeDocument(state.bytes)
  let title: string | null = null
  let frontmatter = '{}'
  let body = text
  let frontMatter: Record<string, unknown> | null | undefined
  let frontMatterKeys: string[] = []
  try {
    const split = splitFrontMatter(text)
    body = split.body
    frontMatter = split.data
    if (split.data) {
      const data = indexableFrontMatter(split.data)
      frontmatter = pythonJsonDumps(jsonValue(data))
      frontMatterKeys = Object.keys(data)
      const rawTitle = data['title']
      title = rawTitle === null || rawTitle === undefined ? null : pythonStr(rawTitle)
    }
  } catch {
    // invalid front matter: indexed without it (see header)
  }
  try {
    body = blankRegionBodies(body)
  } catch {
    // unterminated region: body kept as written (see header)
  }
  const record = documentRow(relPath, state, contentHash, title, body, frontmatter)
  return { record, text: decoded, frontMatter, frontMatterKeys, problem: null }
}

/** The row of a document that is not text within the limits: its path and stat, nothing read from it. */
function pathOnlyDocument(relPath: string, state: DocumentState, contentHash: string, problem: string): ParsedDocument {
  const record = documentRow(relPath, state, contentHash, null, '', '{}')
  return { record, text: '', frontMatter: undefined, frontMatterKeys: [], problem }
}

/** A document's row from its path, stat and read columns. */
function documentRow(relPath: string, state: DocumentState, contentHash: string, title: string | null, body: string, frontmatter: string): DocumentRecord {
  // Built field by field (an object spread here cost more than the fields themselves, issue #17).
  const columns = pathColumns(relPath)
  return {
    path: columns.path,
    parent: columns.parent,
    name: columns.name,
    stem: columns.stem,
    depth: columns.depth,
    title,
    body,
    frontmatter,
    content_hash: contentHash,
    source_hash: oneShotHash('sha256', frontmatter + body, 'hex'),
    mtime_ns: state.mtimeNs,
    size: state.size,
  }
}

export function readDocumentRecord(root: string, relPath: string): DocumentRecord | null {
  const state = readFileState(realPathSync(root), path.join(root, relPath))
  return state ? buildDocumentRecord(relPath, state) : null
}

export function sameProjection(a: DocumentProjection, b: DocumentProjection): boolean {
  return a.path === b.path && a.title === b.title && a.body === b.body && a.frontmatter === b.frontmatter
}

/**
 * The front matter as the Python implementation's `_json_value` leaves it: JSON values kept,
 * anything else (a Date, a class instance) as its text, so `json.dumps` never fails on it.
 */
function jsonValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || isPythonFloat(value)) return value
  if (Array.isArray(value)) return value.map(jsonValue)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, jsonValue(item)]))
  return String(value)
}
