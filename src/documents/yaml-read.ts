/**
 * Read a YAML front-matter mapping as ruamel.yaml's round-trip loader reads it (SPEC §11), into
 * the plain data the Python implementation indexes.
 *
 * Contract:
 * - `readYamlMapping(raw)` parses `raw` (the text between the fences) with `yaml` (YAML 1.2
 *   syntax, node ranges) and builds every value as ruamel would: plain scalars resolved and
 *   constructed by yaml-scalars.ts (`1_000` → 1000, `017` → 17, `0o17` → 15, `1e3` → float,
 *   `yes` a string, timestamps → `isoformat()` text, ints of any size exact); quoted and block
 *   scalars are strings; explicit `!!int`/`!!float`/`!!bool`/`!!null`/`!!timestamp`/`!!str` tags
 *   and the non-specific `!` construct as ruamel does, `!!binary` gives a Buffer (ruamel's bytes);
 *   tags on collections are ignored, `!!omap` gives a mapping. Aliases share the anchored value. Merge keys (`<<: *a`, `<<: [*a, *b]`, an
 *   inline mapping) add the sources' keys the mapping does not have, first source first, after
 *   its own keys. Keys become JSON object keys as `json.dumps` writes them (`1` → "1", `true` →
 *   "true", `null` → "null", `2.0` → "2.0", a timestamp its isoformat text).
 * - Returns `null` for an empty or comment-only document, else the mapping as a plain object
 *   (`__proto__` an own key like any other).
 * - Throws a `YamlReadError` (a reason and a UTF-16 offset into `raw`) where ruamel fails or the
 *   value has no JSON form: a YAML syntax error, a tab where ruamel's scanner wants spaces (block
 *   context outside quoted or block scalars and comments), a duplicate key under Python's
 *   equality (`1` and `01`, `1` and `true`, two timestamps of one instant), a second merge key, a
 *   merge of a non-mapping, a constructor failure (`2024-02-30`, `-_`, `!!int 1.5`), a key that is
 *   a mapping or sequence, a scalar with another tag (`!foo`, `!!merge`), `!!set`, and a value
 *   that contains itself (ruamel builds `[None]` for `a: &x [*x]`; no Python program wrote it).
 *   A root that is not a mapping throws `YamlReadError` with `notMapping` set.
 */
import { CST, isAlias, isMap, isScalar, isSeq, Lexer, type Document, type Node, type Scalar, type YAMLMap, type YAMLSeq } from 'yaml'
import { pythonFloatRepr } from '../values/python-json.js'
import { READ_VALUES, yamlDocument } from './yaml-documents.js'
import { PythonFloat } from '../values/python-float.js'
import {
  constructBool,
  constructFloat,
  constructInt,
  constructTimestamp,
  resolvePlain,
  YamlScalarError,
  type YamlTimestamp,
} from './yaml-scalars.js'

export class YamlReadError extends Error {
  override name = 'YamlReadError'
  constructor(
    readonly reason: string,
    /** UTF-16 offset in the YAML text */
    readonly offset: number,
    readonly notMapping = false,
  ) {
    super(reason)
  }
}

const CORE = 'tag:yaml.org,2002:'

export function readYamlMapping(raw: string): Record<string, unknown> | null {
  const document = yamlDocument(raw, READ_VALUES)
  const error = document.errors[0]
  if (error !== undefined) throw new YamlReadError(error.message, error.pos[0])
  rejectBlockTabs(raw)
  const root = document.contents
  if (root === null) return null
  if (!isMap(root)) throw new YamlReadError('YAML front matter must be a mapping', 0, true)
  return new Builder(document).mapping(root)
}

/** Scalar values before they become data: timestamps keep their identity (for keys). */
type Built = unknown

class Timestamp {
  constructor(readonly stamp: YamlTimestamp) {}
}

class Builder {
  private readonly built = new Map<Node, unknown>()
  private readonly building = new Set<Node>()

  constructor(private readonly document: Document) {}

  value(node: unknown): unknown {
    const built = this.node(node)
    return built instanceof Timestamp ? built.stamp.text : built
  }

  mapping(map: YAMLMap): Record<string, unknown> {
    const cached = this.built.get(map)
    if (cached !== undefined) return cached as Record<string, unknown>
    const result: Record<string, unknown> = {}
    this.built.set(map, result)
    this.building.add(map)
    const seen = new Set<string>()
    let merged: Array<Record<string, unknown>> | null = null
    for (const pair of map.items) {
      if (isMergeKey(pair.key)) {
        if (merged !== null) throw new YamlReadError('found duplicate merge key "<<"', offsetOf(pair.key))
        merged = this.mergeSources(pair.value, offsetOf(pair.key))
        continue
      }
      const key = this.key(pair.key, offsetOf(pair.key))
      if (seen.has(key.identity)) throw new YamlReadError(`found duplicate key "${key.text}"`, offsetOf(pair.key))
      seen.add(key.identity)
      defineOwn(result, key.text, this.value(pair.value))
    }
    for (const source of merged ?? []) {
      for (const key of Object.keys(source)) {
        if (!Object.hasOwn(result, key)) defineOwn(result, key, source[key])
      }
    }
    this.building.delete(map)
    return result
  }

  private node(node: unknown): Built {
    if (node === null || node === undefined) return null
    if (isAlias(node)) {
      const target = node.resolve(this.document)
      if (target === undefined) throw new YamlReadError(`found undefined alias '${node.source}'`, offsetOf(node))
      if (this.building.has(target)) throw new YamlReadError(`alias *${node.source} refers to a value that contains it`, offsetOf(node))
      return this.node(target)
    }
    if (isScalar(node)) return this.scalar(node)
    if (isMap(node)) {
      if (node.tag === `${CORE}set`) throw new YamlReadError('unsupported YAML tag !!set', offsetOf(node))
      return this.mapping(node)
    }
    if (isSeq(node)) return node.tag === `${CORE}omap` ? this.orderedMap(node) : this.sequence(node)
    throw new YamlReadError('unsupported YAML node', 0)
  }

  private sequence(seq: YAMLSeq): unknown[] {
    const cached = this.built.get(seq)
    if (cached !== undefined) return cached as unknown[]
    const result: unknown[] = []
    this.built.set(seq, result)
    this.building.add(seq)
    for (const item of seq.items) result.push(this.value(item))
    this.building.delete(seq)
    return result
  }

  /** `!!omap [a: 1, b: 2]`: a mapping of single-pair mappings, in order. */
  private orderedMap(seq: YAMLSeq): Record<string, unknown> {
    const result: Record<string, unknown> = {}
    for (const item of seq.items) {
      const entry = isAlias(item) ? item.resolve(this.document) : item
      if (!isMap(entry) || entry.items.length !== 1) {
        throw new YamlReadError('expected a single mapping item in !!omap', offsetOf(item))
      }
      const pair = entry.items[0]!
      const key = this.key(pair.key, offsetOf(entry))
      if (Object.hasOwn(result, key.text)) throw new YamlReadError(`found duplicate key "${key.text}"`, offsetOf(pair.key))
      defineOwn(result, key.text, this.value(pair.value))
    }
    return result
  }

  private mergeSources(value: unknown, offset: number): Array<Record<string, unknown>> {
    const target = isAlias(value) ? value.resolve(this.document) : value
    if (isMap(target)) return [this.mergeSource(target, offset)]
    if (isSeq(target)) {
      return target.items.map((item) => {
        const source = isAlias(item) ? item.resolve(this.document) : item
        if (!isMap(source)) throw new YamlReadError('expected a mapping for merging', offsetOf(item) || offset)
        return this.mergeSource(source, offset)
      })
    }
    throw new YamlReadError('expected a mapping or list of mappings for merging', offsetOf(value) || offset)
  }

  private mergeSource(map: YAMLMap, offset: number): Record<string, unknown> {
    if (this.building.has(map)) throw new YamlReadError('a mapping cannot merge itself', offset)
    return this.mapping(map)
  }

  /** A mapping key: its JSON text and Python's equality of keys. */
  private key(node: unknown, offset: number): { text: string; identity: string } {
    const target = isAlias(node) ? node.resolve(this.document) : node
    if (isMap(target) || isSeq(target)) throw new YamlReadError('a mapping key must be a scalar', offset)
    const key = this.node(node)
    if (key instanceof Timestamp) return { text: key.stamp.text, identity: key.stamp.identity }
    if (typeof key === 'string') return { text: key, identity: `s:${key}` }
    if (key === null) return { text: 'null', identity: 'null' }
    if (typeof key === 'boolean') return { text: String(key), identity: `n:${key ? 1 : 0}` }
    if (typeof key === 'bigint') return { text: String(key), identity: `n:${key}` }
    const float = key instanceof PythonFloat ? key.value : (key as number)
    const isFloat = key instanceof PythonFloat || !Number.isInteger(float)
    const text = isFloat ? pythonFloatRepr(float) : String(float)
    // Python: 1 == 1.0 == True; nan equals nothing, not even itself
    if (Number.isNaN(float)) return { text, identity: `nan:${offset}` }
    return { text, identity: Number.isInteger(float) ? `n:${BigInt(float)}` : `f:${float}` }
  }

  private scalar(node: Scalar): Built {
    const text = String(node.value ?? '')
    const tag = node.tag
    const resolved = tag === undefined ? (node.type === 'PLAIN' ? resolvePlain(text) : 'str') : tag === '!' ? resolvePlain(text) : explicitTag(tag)
    try {
      switch (resolved) {
        case 'null':
          return null
        case 'bool':
          return constructBool(text)
        case 'int':
          return constructInt(text)
        case 'float':
          return constructFloat(text)
        case 'timestamp':
          return new Timestamp(constructTimestamp(text))
        case 'str':
        case 'value':
          return text
        case 'binary':
          // base64.decodebytes: bytes (a Buffer); they have no JSON form, so the index leaves them out
          return Buffer.from(text.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64')
        default:
          throw new YamlReadError(`unsupported YAML tag ${tagName(tag ?? `${CORE}merge`)}`, offsetOf(node))
      }
    } catch (error) {
      if (error instanceof YamlScalarError) throw new YamlReadError(error.message, offsetOf(node))
      throw error
    }
  }
}

function explicitTag(tag: string): string {
  return tag.startsWith(CORE) ? tag.slice(CORE.length) : tag
}

function tagName(tag: string): string {
  return tag.startsWith(CORE) ? `!!${tag.slice(CORE.length)}` : tag
}

/** `<<` as ruamel's resolver reads it: a plain, untagged scalar (or one tagged `!!merge`). */
function isMergeKey(key: unknown): boolean {
  if (!isScalar(key) || key.value !== '<<') return false
  return key.tag === `${CORE}merge` || (key.tag === undefined && key.type === 'PLAIN')
}

function offsetOf(node: unknown): number {
  const range = (node as { range?: [number, number, number] | null } | null)?.range
  return range ? range[0] : 0
}

/**
 * ruamel's scanner takes no tab in block context outside quoted and block scalars and comments
 * (`a:\tx`, `a: x\ty`, a tab-indented line); the YAML spec and `yaml` allow some of them.
 */
function rejectBlockTabs(raw: string): void {
  if (!raw.includes('\t')) return
  let offset = 0
  let flow = 0
  let afterBlockHeader = false
  /** The token after a scalar marker is the scalar's text: `plain` or a block scalar's body. */
  let scalar: 'plain' | 'block' | null = null
  for (const token of new Lexer().lex(raw)) {
    if (token === CST.SCALAR) {
      scalar = afterBlockHeader ? 'block' : 'plain'
      afterBlockHeader = false
      continue
    }
    if (token === CST.DOCUMENT || token === CST.FLOW_END) continue // markers, not source text
    const type = scalar === null ? CST.tokenType(token) : null
    if (type === 'flow-map-start' || type === 'flow-seq-start') flow++
    else if (type === 'flow-map-end' || type === 'flow-seq-end') flow = Math.max(0, flow - 1)
    else if (type === 'block-scalar-header') afterBlockHeader = true
    const checked = scalar === 'plain' || type === 'space' || type === 'newline'
    if (flow === 0 && checked && token.includes('\t')) {
      throw new YamlReadError("found character '\\t' that cannot start any token (indent and separate with spaces)", offset + token.indexOf('\t'))
    }
    scalar = null
    offset += token.length
  }
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}
