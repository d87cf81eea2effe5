/**
 * Write generated values into YAML front matter, keeping every byte the user wrote (issue #14,
 * SPEC §10 "the user's own front-matter lines when a materialization writes").
 *
 * Contract:
 * - `spliceGeneratedValue(yaml, pointer, value, eol)` returns the YAML text (between the fences)
 *   with `value` at `pointer` (`/generated/...`, RFC 6901 segments), as the Python implementation
 *   assigns it (a missing or non-mapping parent becomes a mapping, an empty flow mapping `{}`
 *   included; the leaf is replaced whole) and as ruamel's round-trip dumper writes it
 *   (yaml-emit.ts). Only that subtree's text changes:
 *   - an existing leaf: the text from after its `key:` to the end of its value is replaced; an
 *     end-of-line comment on the key's line stays, at its column where the new text leaves room
 *     (else one space after it), as ruamel keeps a comment's column; comment lines and blank
 *     lines after the value stay. A string replacing a quoted or block string keeps its style
 *     (ruamel's `CommentedMap.__setitem__`);
 *   - a missing key: one `key: value` entry is added to the mapping, at its keys' column, after
 *     its last entry and the blank and comment lines that follow it — but before a comment line
 *     indented less than the mapping's keys (that comment introduces what follows; ruamel would
 *     put the key after it); a missing `generated` key is appended to the end of the front matter;
 *   - inside a flow mapping (`generated: {a: 1}`) entries are replaced or appended in flow style
 *     (`{a: 1, b: 2}`), keeping the user's spacing around them.
 * - New text is written with `eol` line ends. The YAML must be readable (yaml-read.ts accepted
 *   it); a pointer outside `/generated/` throws; a value with no YAML form throws a
 *   `FrontMatterWriteError` naming the pointer.
 */
import { isAlias, isMap, isScalar, type Node, type Pair, type YAMLMap } from 'yaml'
import { afterKey, blockEntry, flowEntry, flowValue, type ScalarStyle } from './yaml-emit.js'
import { resolvePlain } from './yaml-scalars.js'
import { WRITE_VALUES, yamlDocument } from './yaml-documents.js'

const GENERATED = '/generated/'

interface Edit {
  start: number
  end: number
  text: string
}

/** A value that has no YAML form (a Buffer, undefined, a class instance), named by its pointer. */
export class FrontMatterWriteError extends Error {
  override name = 'FrontMatterWriteError'
  constructor(
    readonly pointer: string,
    reason: string,
  ) {
    super(`cannot write ${pointer} into the front matter: ${reason}`)
  }
}

export function spliceGeneratedValue(yaml: string, pointer: string, value: unknown, eol: '\n' | '\r\n'): string {
  if (!pointer.startsWith(GENERATED)) throw new Error('frontmatter targets must be under /generated/')
  let edit: Edit
  try {
    edit = planEdit(yaml, pointerSegments(pointer), value)
  } catch (error) {
    if (error instanceof TypeError) throw new FrontMatterWriteError(pointer, error.message)
    throw error
  }
  const text = eol === '\n' ? edit.text : edit.text.replaceAll('\n', eol)
  return yaml.slice(0, edit.start) + text + yaml.slice(edit.end)
}

/** RFC 6901 pointer segments (`~1` → `/`, then `~0` → `~`). */
export function pointerSegments(pointer: string): string[] {
  if (!pointer.startsWith('/')) throw new Error(`front-matter pointer must start with '/': ${pointer}`)
  return pointer.slice(1).split('/').map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
}

function planEdit(yaml: string, segments: readonly string[], value: unknown): Edit {
  const document = yamlDocument(yaml, WRITE_VALUES)
  if (document.errors.length > 0) throw new Error(`front matter cannot be written: ${document.errors[0]!.message}`)
  const root = document.contents
  if (root === null) {
    // empty or comment-only front matter: ruamel loads None; the entry goes after what is there
    const separator = yaml === '' || yaml.endsWith('\n') ? '' : '\n'
    return { start: yaml.length, end: yaml.length, text: separator + blockEntry(segments[0]!, nested(segments.slice(1), value), 0) + '\n' }
  }
  if (!isMap(root)) throw new Error('YAML front matter must be a mapping')
  if (root.flow && root.items.length === 0) {
    // `{}`: ruamel writes an empty mapping in block style once it has keys
    const [start, end] = [root.range![0], root.range![1]]
    return { start, end, text: blockEntry(segments[0]!, nested(segments.slice(1), value), columnOf(yaml, start)) }
  }
  let map: YAMLMap = root
  for (let index = 0; index < segments.length; index++) {
    const segment = segments[index]!
    const rest = segments.slice(index + 1)
    const pair = findPair(map, segment)
    if (pair === undefined) return insertEntry(yaml, map, segment, nested(rest, value))
    if (rest.length === 0) return replaceValue(yaml, map, pair, value)
    const child = pair.value
    if (!isMap(child) || (child.flow && child.items.length === 0)) return replaceValue(yaml, map, pair, nested(rest, value))
    map = child
  }
  throw new Error('unreachable: a pointer has at least one segment')
}

/** `{a: {b: value}}` for segments `a`, `b`. */
function nested(segments: readonly string[], value: unknown): unknown {
  let result = value
  for (const segment of [...segments].reverse()) {
    const level: Record<string, unknown> = {}
    Object.defineProperty(level, segment, { value: result, enumerable: true, writable: true, configurable: true })
    result = level
  }
  return result
}

/** The pair whose key is the string `segment` (a key that reads as another type, like `1`, is not). */
function findPair(map: YAMLMap, segment: string): Pair<unknown, unknown> | undefined {
  return (map.items as Array<Pair<unknown, unknown>>).find((pair) => {
    const key = pair.key
    if (!isScalar(key) || String(key.value) !== segment) return false
    if (key.tag !== undefined) return key.tag === 'tag:yaml.org,2002:str'
    return key.type !== 'PLAIN' || resolvePlain(segment) === 'str'
  })
}

function replaceValue(yaml: string, map: YAMLMap, pair: Pair<unknown, unknown>, value: unknown): Edit {
  const key = pair.key as Node
  // `key:` with nothing after it holds an empty plain scalar (placed at a comment that follows)
  const node = isEmptyValue(pair.value) ? null : (pair.value as Node)
  if (map.flow) {
    if (node === null || node.range == null) {
      const end = key.range![1]
      return { start: end, end, text: ': ' + flowValue(value) }
    }
    return { start: node.range[0], end: node.range[1], text: flowValue(value) }
  }
  const keyColumn = columnOf(yaml, key.range![0])
  const colonEnd = colonAfter(yaml, key.range![1]) + 1
  const style = typeof value === 'string' ? stringStyle(node) : undefined
  const inline = node !== null && startsOnLine(yaml, colonEnd, node) && !isBlockScalar(node) && !isBlockCollection(node)
  let end = node === null ? colonEnd : Math.max(colonEnd, contentEnd(yaml, node))
  let text = afterKey(value, keyColumn, style)
  if (node !== null && isBlockScalar(node)) {
    // a comment after a block scalar's header belongs to the scalar: ruamel keeps it, with its
    // spacing, after the header of a block string that replaces it
    const header = /^[|>][0-9+-]*([ \t]+#.*?)[ \t]*(?:\r?\n|$)/.exec(yaml.slice(node.range![0]))
    if (header !== null && /^ [|>]/.test(text)) text = text.replace(/^( [|>][0-9+-]*)/, `$1${header[1]}`)
    return { start: colonEnd, end, text }
  }
  // the comment on the key's line: after an inline value, or between `key:` and a block value
  const comment = inline ? trailingComment(yaml, end) : trailingComment(yaml, colonEnd)
  if (comment !== null) end = Math.max(end, comment.end)
  if (comment !== null) {
    const firstBreak = text.indexOf('\n')
    const firstLine = firstBreak === -1 ? text : text.slice(0, firstBreak)
    const rest = firstBreak === -1 ? '' : text.slice(firstBreak)
    const column = columnOf(yaml, colonEnd) + Array.from(firstLine).length
    text = firstLine + ' '.repeat(Math.max(1, comment.column - column)) + comment.text + rest
  }
  return { start: colonEnd, end, text }
}

function insertEntry(yaml: string, map: YAMLMap, key: string, value: unknown): Edit {
  const last = map.items[map.items.length - 1] as Pair<unknown, unknown> | undefined
  if (map.flow) {
    const lastNode = (last?.value ?? last?.key) as Node | null | undefined
    const at = lastNode?.range ? lastNode.range[1] : map.range![0] + 1
    return { start: at, end: at, text: (last ? ', ' : '') + flowEntry(key, value) }
  }
  const column = columnOf(yaml, (map.items[0]!.key as Node).range![0])
  const lastNode = (last!.value ?? last!.key) as Node
  let at = lineEndAfter(yaml, contentEnd(yaml, lastNode))
  // the blank lines and comments that belong to the mapping (ruamel hangs them on its last key)
  let scan = at
  let keptUpTo = at
  while (scan < yaml.length) {
    const next = lineEndAfter(yaml, scan)
    const line = yaml.slice(scan, next).replace(/\r?\n$/, '')
    if (line.trim() === '') {
      scan = next
      continue
    }
    const hash = /^( *)#/.exec(line)
    if (hash === null || Array.from(hash[1]!).length < column) break
    scan = next
    keptUpTo = next
  }
  at = scan >= yaml.length ? yaml.length : keptUpTo
  const separator = at > 0 && yaml[at - 1] !== '\n' ? '\n' : ''
  return { start: at, end: at, text: separator + ' '.repeat(column) + blockEntry(key, value, column) + '\n' }
}

/** The style a string value was written in (ruamel keeps it for a new string). */
function stringStyle(node: Node | null): ScalarStyle | undefined {
  if (node === null || !isScalar(node) || node.tag !== undefined) return undefined
  switch (node.type) {
    case 'QUOTE_DOUBLE':
      return 'double'
    case 'QUOTE_SINGLE':
      return 'single'
    case 'BLOCK_LITERAL':
      return 'literal'
    case 'BLOCK_FOLDED':
      return 'folded'
    default:
      return undefined
  }
}

function isBlockScalar(node: Node): boolean {
  return isScalar(node) && (node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED')
}

function isBlockCollection(node: Node): boolean {
  return (isMap(node) || (node as { items?: unknown }).items !== undefined) && !(node as { flow?: boolean }).flow && !isAlias(node)
}

function startsOnLine(yaml: string, from: number, node: Node): boolean {
  const start = node.range?.[0] ?? from
  return !yaml.slice(from, start).includes('\n')
}

/** Where a value's own text ends (its trailing comments and blank lines excluded). */
function contentEnd(yaml: string, node: Node): number {
  const items = (node as { items?: unknown[] }).items
  if (items !== undefined && !(node as { flow?: boolean }).flow && items.length > 0) {
    const last = items[items.length - 1]
    if (last !== null && typeof last === 'object' && 'key' in last) {
      const pair = last as Pair<Node | null, Node | null>
      const valueNode = pair.value
      if (valueNode?.range && valueNode.range[1] > valueNode.range[0]) return contentEnd(yaml, valueNode)
      return colonAfter(yaml, pair.key!.range![1]) + 1
    }
    return contentEnd(yaml, last as Node)
  }
  const end = node.range![1]
  if (isBlockScalar(node)) {
    // its last line break (a `|+` scalar's blank lines are its own content; others' are not in range)
    return yaml.endsWith('\r\n', end) ? end - 2 : yaml[end - 1] === '\n' ? end - 1 : end
  }
  return end
}

function isEmptyValue(node: unknown): boolean {
  return isScalar(node) && node.type === 'PLAIN' && node.value === '' && node.tag === undefined && node.source === ''
}

/** The offset of the `:` that ends a block mapping key. */
function colonAfter(yaml: string, from: number): number {
  const colon = yaml.indexOf(':', from)
  if (colon === -1) throw new Error('front matter cannot be written: a key without `:`')
  return colon
}

/** A `# comment` after `from` on the same line: its text, column and end (before the line end). */
function trailingComment(yaml: string, from: number): { text: string; column: number; end: number } | null {
  const lineEnd = lineEndAfter(yaml, from)
  const rest = yaml.slice(from, lineEnd).replace(/\r?\n$/, '')
  const match = /^([ \t]*)(#.*?)[ \t]*$/.exec(rest)
  if (match === null || match[1] === '') return null
  const start = from + match[1]!.length
  return { text: match[2]!, column: columnOf(yaml, start), end: start + match[2]!.length }
}

/** The offset after the line break that ends the line holding `offset` (or the text's end). */
function lineEndAfter(yaml: string, offset: number): number {
  const newline = yaml.indexOf('\n', offset)
  return newline === -1 ? yaml.length : newline + 1
}

/** The column of an offset, in code points (ruamel counts characters). */
function columnOf(yaml: string, offset: number): number {
  return Array.from(yaml.slice(yaml.lastIndexOf('\n', offset - 1) + 1, offset)).length
}
