/**
 * Read a YAML front-matter mapping as ruamel.yaml's round-trip loader reads it (SPEC §11), into
 * the plain data the Python implementation indexes.
 *
 * Contract:
 * - `readYamlMapping(raw)` parses `raw` (the text between the fences) with `yaml` (YAML 1.2
 *   syntax, node ranges) and builds every value as ruamel would: plain scalars resolved and
 *   constructed by yaml-scalars.ts (`1_000` → 1000, `017` → 17, `0o17` → 15, `1e3` → float,
 *   `yes` a string, timestamps → Python's `str()` text with the separator as written:
 *   `2024-03-01 10:20:30`, `2024-03-01T10:20:30+00:00`; ints of any size exact); quoted and block
 *   scalars are strings; explicit `!!int`/`!!float`/`!!bool`/`!!null`/`!!timestamp`/`!!str` tags
 *   and the non-specific `!` construct as ruamel does, `!!binary` gives a Buffer (ruamel's bytes);
 *   tags on collections are ignored, `!!omap` gives a mapping. Aliases share the anchored value. Merge keys (`<<: *a`, `<<: [*a, *b]`, an
 *   inline mapping) add the sources' keys the mapping does not have, first source first, after
 *   its own keys. Keys become JSON object keys as the Python implementation's `_json_value`
 *   makes them, Python's `str(key)` (`1` → "1", `true` → "True", `null` → "None", `2.0` → "2.0",
 *   `.inf` → "inf", a timestamp its `str()` text as for values), at every level.
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
 * - Bounded (input-limits.ts): aliases may add at most `MAX_ALIAS_EXPANSION` values to the
 *   mapping when expanded (each alias counts the values of what it refers to, its nested
 *   aliases multiplied through: what writing the value out as JSON costs), and collections nest
 *   at most `MAX_FRONT_MATTER_DEPTH` levels, aliases' targets counted at the depth they are
 *   used. Past either the `YamlReadError` has `limit` set ('aliases' or 'depth') and the offset
 *   of the alias or collection that crossed it; so does the `yaml` package's own stack-overflow
 *   report (`RESOURCE_EXHAUSTION`, nesting far past the limit). Every alias is resolved in one
 *   pass over the document (the package's `resolve` walks the whole document per alias).
 */
import {
  CST,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  Parser,
  visit,
  type Alias,
  type Document,
  type Node,
  type Scalar,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml'
import { MAX_ALIAS_EXPANSION, MAX_FRONT_MATTER_DEPTH } from './input-limits.js'
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
    /** Set when an input limit was crossed (input-limits.ts), rather than the YAML being wrong. */
    readonly limit?: 'aliases' | 'depth',
  ) {
    super(reason)
  }
}

function aliasLimitError(offset: number): YamlReadError {
  return new YamlReadError(`YAML aliases expand to more than ${MAX_ALIAS_EXPANSION} values: an alias bomb?`, offset, false, 'aliases')
}

function depthLimitError(offset: number): YamlReadError {
  return new YamlReadError(`collections nest deeper than ${MAX_FRONT_MATTER_DEPTH} levels`, offset, false, 'depth')
}

const CORE = 'tag:yaml.org,2002:'

export function readYamlMapping(raw: string): Record<string, unknown> | null {
  rejectDeepNesting(raw)
  const document = yamlDocument(raw, READ_VALUES)
  const error = document.errors[0]
  if (error !== undefined) {
    // The package's composer recursed until the stack overflowed: collections nested far too deep.
    const exhausted = document.errors.find((e) => e.code === 'RESOURCE_EXHAUSTION')
    if (exhausted !== undefined) throw depthLimitError(exhausted.pos[0])
    throw new YamlReadError(error.message, error.pos[0])
  }
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

/** A node's expanded size (values, aliases expanded) and height (collection levels, a scalar 0). */
interface Measure {
  size: number
  height: number
}

class Builder {
  private readonly built = new Map<Node, unknown>()
  private readonly building = new Set<Node>()
  /** Every alias's target, resolved in one pass when the first alias is met (undefined: none). */
  private targets: Map<Alias, Node | undefined> | undefined
  /** Memoized `measure` of alias targets (absent until an alias refers to them). */
  private readonly measures = new Map<Node, Measure | null>()
  /** Values the aliases met so far add when expanded. */
  private expanded = 0
  /** Collection level being built (the root mapping is 1). */
  private depth = 0

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
    this.enter(map)
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
    this.depth--
    return result
  }

  /** One collection level deeper (undone by the builder of the collection when it is done). */
  private enter(node: Node): void {
    if (++this.depth > MAX_FRONT_MATTER_DEPTH) throw depthLimitError(offsetOf(node))
  }

  /** The node an alias refers to, without counting its expansion (`follow` counts it). */
  private lookup(alias: Alias): Node | undefined {
    if (this.targets === undefined) this.targets = resolveAliases(this.document)
    return this.targets.get(alias)
  }

  /**
   * The node an alias refers to, its expansion counted: the values it adds, and the levels its
   * target nests below the collection being built (the alias's value sits one level below it).
   */
  private follow(alias: Alias): Node {
    const target = this.lookup(alias)
    if (target === undefined) throw new YamlReadError(`found undefined alias '${alias.source}'`, offsetOf(alias))
    if (this.building.has(target)) throw new YamlReadError(`alias *${alias.source} refers to a value that contains it`, offsetOf(alias))
    const { size, height } = this.measure(target, alias)
    this.expanded += size
    if (this.expanded > MAX_ALIAS_EXPANSION) throw aliasLimitError(offsetOf(alias))
    if (this.depth + height > MAX_FRONT_MATTER_DEPTH) throw depthLimitError(offsetOf(alias))
    return target
  }

  /** `node`'s expanded size and height, memoized (aliases inside count their targets). */
  private measure(node: unknown, alias: Alias): Measure {
    if (isAlias(node)) {
      const target = this.lookup(node)
      return target === undefined ? { size: 1, height: 0 } : this.measure(target, alias)
    }
    if (isPair(node)) {
      const key = this.measure(node.key, alias)
      const value = this.measure(node.value, alias)
      return { size: key.size + value.size, height: Math.max(key.height, value.height) }
    }
    if (!isMap(node) && !isSeq(node)) return { size: 1, height: 0 }
    const known = this.measures.get(node)
    if (known === null) throw new YamlReadError(`alias *${alias.source} refers to a value that contains it`, offsetOf(alias))
    if (known !== undefined) return known
    this.measures.set(node, null)
    let size = 1
    let height = 0
    for (const item of node.items) {
      const inner = this.measure(item, alias)
      size += inner.size
      if (inner.height > height) height = inner.height
    }
    const measured = { size, height: height + 1 }
    this.measures.set(node, measured)
    return measured
  }

  private node(node: unknown): Built {
    if (node === null || node === undefined) return null
    if (isAlias(node)) return this.node(this.follow(node))
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
    this.enter(seq)
    for (const item of seq.items) result.push(this.value(item))
    this.building.delete(seq)
    this.depth--
    return result
  }

  /** `!!omap [a: 1, b: 2]`: a mapping of single-pair mappings, in order. */
  private orderedMap(seq: YAMLSeq): Record<string, unknown> {
    const result: Record<string, unknown> = {}
    this.enter(seq)
    for (const item of seq.items) {
      const entry = isAlias(item) ? this.follow(item) : item
      if (!isMap(entry) || entry.items.length !== 1) {
        throw new YamlReadError('expected a single mapping item in !!omap', offsetOf(item))
      }
      const pair = entry.items[0]!
      const key = this.key(pair.key, offsetOf(entry))
      if (Object.hasOwn(result, key.text)) throw new YamlReadError(`found duplicate key "${key.text}"`, offsetOf(pair.key))
      defineOwn(result, key.text, this.value(pair.value))
    }
    this.depth--
    return result
  }

  private mergeSources(value: unknown, offset: number): Array<Record<string, unknown>> {
    const target = isAlias(value) ? this.follow(value) : value
    if (isMap(target)) return [this.mergeSource(target, offset)]
    if (isSeq(target)) {
      return target.items.map((item) => {
        const source = isAlias(item) ? this.follow(item) : item
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

  /** A mapping key: its text (Python's `str(key)`) and Python's equality of keys. */
  private key(node: unknown, offset: number): { text: string; identity: string } {
    const target = isAlias(node) ? this.lookup(node) : node
    if (isMap(target) || isSeq(target)) throw new YamlReadError('a mapping key must be a scalar', offset)
    const key = this.node(node)
    if (key instanceof Timestamp) return { text: key.stamp.text, identity: key.stamp.identity }
    if (typeof key === 'string') return { text: key, identity: `s:${key}` }
    if (key === null) return { text: 'None', identity: 'null' }
    if (typeof key === 'boolean') return { text: key ? 'True' : 'False', identity: `n:${key ? 1 : 0}` }
    if (typeof key === 'bigint') return { text: String(key), identity: `n:${key}` }
    const float = key instanceof PythonFloat ? key.value : (key as number)
    const isFloat = key instanceof PythonFloat || !Number.isInteger(float)
    // Python's str() of a float: its repr, `inf`/`-inf`/`nan` where JSON would write `Infinity`
    const text = Number.isNaN(float) ? 'nan' : !Number.isFinite(float) ? (float > 0 ? 'inf' : '-inf') : isFloat ? pythonFloatRepr(float) : String(float)
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

/**
 * Each alias's target as the `yaml` package's `Alias.resolve` finds it (the last node before the
 * alias, in document order, with that anchor), for every alias in one walk of the document.
 */
function resolveAliases(document: Document): Map<Alias, Node | undefined> {
  const anchors = new Map<string, Node>()
  const targets = new Map<Alias, Node | undefined>()
  visit(document, {
    Node: (_key, node) => {
      if (isAlias(node)) targets.set(node, anchors.get(node.source))
      else if (node.anchor) anchors.set(node.anchor, node)
    },
  })
  return targets
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

/**
 * Collections nested far past `MAX_FRONT_MATTER_DEPTH` (`[[[[…]]]]`, `- - - - …`) are refused
 * before the `yaml` package composes them: it builds every level (half a million levels in 1 MiB
 * cost it seconds and hundreds of MiB before its composer overflows the stack). A cheap bound
 * first (see `mayNestDeep`); only past it is the text parsed to its concrete syntax tree, whose
 * parser keeps the open collections on a stack, and only up to the one that crosses the limit.
 * (The value builder checks the exact depth; this only has to stop what it could not reach.)
 */
function rejectDeepNesting(raw: string): void {
  if (!mayNestDeep(raw)) return
  const parser = new Parser()
  for (const lexeme of new Lexer().lex(raw)) {
    for (const _token of parser.next(lexeme)) {
      // finished top-level tokens: only the stack of open ones is of interest
    }
    // The stack holds the document, each open collection and the nodes being read.
    if (parser.stack.length > MAX_FRONT_MATTER_DEPTH) {
      const open = parser.stack.filter((token) => token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection')
      if (open.length > MAX_FRONT_MATTER_DEPTH) throw depthLimitError(open[MAX_FRONT_MATTER_DEPTH]!.offset)
    }
  }
}

/**
 * An upper bound of the nesting passes the limit: open flow brackets (counted naively) plus, on
 * the current line, twice its indentation (a block collection nests in its parent indented, or
 * a sequence at its key's indentation) and its indicator characters (`- - x`, `? a: b`).
 */
function mayNestDeep(raw: string): boolean {
  let flow = 0
  let indent = 0
  let indicators = 0
  let atIndent = true
  for (let index = 0; index < raw.length; index++) {
    const code = raw.charCodeAt(index)
    if (code === 0x0a) {
      indent = 0
      indicators = 0
      atIndent = true
      continue
    }
    if (atIndent && code === 0x20) {
      indent++
      continue
    }
    atIndent = false
    if (code === 0x5b || code === 0x7b) flow++ // [ {
    else if (code === 0x5d || code === 0x7d) flow = flow > 0 ? flow - 1 : 0 // ] }
    else if (code === 0x2d || code === 0x3f || code === 0x3a) indicators++ // - ? :
    else continue
    if (flow + 2 * indent + indicators > MAX_FRONT_MATTER_DEPTH) return true
  }
  return false
}

function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}
