/**
 * src/jinja/ is a self-contained engine whose files point one way (DESIGN.md): every import of
 * its files, `import type` and `export … from` included, names another file of src/jinja/, and
 * the graph those imports make has no cycle. The imports are read with Rolldown's parser (the
 * bundler's own), so multi-line imports, type-only imports, dynamic `import()` and
 * `import('…').T` types all count, and comments or strings that look like imports do not.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseAst } from 'rolldown/parseAst'
import { describe, expect, it } from 'vitest'

const JINJA = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/jinja')

interface Edge {
  readonly specifier: string
  /** The file of src/jinja/ it names (`compiler.ts`), or undefined when it leaves the folder. */
  readonly target: string | undefined
}

/** Every module specifier a file names: static imports and re-exports, `import()` and `import('…')` types. */
function specifiersOf(file: string): string[] {
  const ast = parseAst(fs.readFileSync(path.join(JINJA, file), 'utf8'), { lang: 'ts' }, file)
  const found: string[] = []
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item)
      return
    }
    if (typeof node !== 'object' || node === null) return
    const record = node as Record<string, unknown>
    const type = record['type']
    if (type === 'ImportDeclaration' || type === 'ExportNamedDeclaration' || type === 'ExportAllDeclaration' || type === 'ImportExpression') {
      const source = record['source'] as { value?: unknown } | null | undefined
      if (source && typeof source.value === 'string') found.push(source.value)
      else if (type === 'ImportExpression') found.push('<a computed import()>')
    } else if (type === 'TSImportType') {
      const argument = record['argument'] as { literal?: { value?: unknown }; value?: unknown } | undefined
      const value = argument?.literal?.value ?? argument?.value
      found.push(typeof value === 'string' ? value : '<an import() type>')
    } else if (type === 'TSExternalModuleReference') {
      const expression = record['expression'] as { value?: unknown } | undefined
      found.push(typeof expression?.value === 'string' ? expression.value : '<a require()>')
    }
    for (const [key, value] of Object.entries(record)) if (key !== 'parent') visit(value)
  }
  visit(ast.body)
  return found
}

function edgeOf(specifier: string, files: ReadonlySet<string>): Edge {
  const match = /^\.\/([^/]+)\.js$/.exec(specifier)
  const file = match ? `${match[1]}.ts` : undefined
  return { specifier, target: file !== undefined && files.has(file) ? file : undefined }
}

function importGraph(): Map<string, Edge[]> {
  const files = fs.readdirSync(JINJA).filter((name) => name.endsWith('.ts')).sort()
  const known = new Set(files)
  return new Map(files.map((file) => [file, specifiersOf(file).map((specifier) => edgeOf(specifier, known))]))
}

/**
 * The cycles of the graph, one per strongly connected component: `cycle` a shortest path from the
 * component's first file back to it, `files` every file of the component (all in one circle).
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): { cycle: string[]; files: string[] }[] {
  // Tarjan's strongly connected components; a component of more than one file (or a file that
  // imports itself) holds a cycle, named by a shortest path from its first file back to it.
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const components: string[][] = []
  const connect = (file: string): void => {
    index.set(file, counter)
    low.set(file, counter)
    counter++
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        connect(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!))
      }
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member)
      component.push(member)
      if (member === file) break
    }
    components.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) connect(file)

  const cycles: { cycle: string[]; files: string[] }[] = []
  for (const component of components) {
    const members = new Set(component)
    const start = component[0]!
    if (component.length === 1 && !(graph.get(start) ?? []).includes(start)) continue
    // Breadth-first from start, inside the component, until an edge leads back to start.
    const previous = new Map<string, string>()
    const queue = [start]
    let last: string | undefined
    while (queue.length > 0 && last === undefined) {
      const file = queue.shift()!
      for (const next of graph.get(file) ?? []) {
        if (next === start) {
          last = file
          break
        }
        if (members.has(next) && !previous.has(next)) {
          previous.set(next, file)
          queue.push(next)
        }
      }
    }
    const cycle = [start]
    for (let file = last!; file !== start; file = previous.get(file)!) cycle.splice(1, 0, file)
    cycles.push({ cycle: [...cycle, start], files: component })
  }
  return cycles
}

describe('src/jinja/ as a module of its own', () => {
  const graph = importGraph()

  it('reads every file of the folder, type imports and multi-line imports included', () => {
    expect(graph.size).toBeGreaterThan(20)
    // engine.ts imports types from compiler.ts and re-exports from limits.ts over several lines.
    expect(graph.get('engine.ts')!.map((edge) => edge.specifier)).toEqual(expect.arrayContaining(['./compiler.js', './limits.js']))
  })

  it('imports nothing from outside src/jinja/', () => {
    const leaving = [...graph].flatMap(([file, edges]) =>
      edges.filter((edge) => edge.target === undefined).map((edge) => `${file} imports '${edge.specifier}'`),
    )
    expect(leaving, `src/jinja/ must import only its own files:\n${leaving.join('\n')}`).toEqual([])
  })

  it('has files that point one way (no import cycle, type imports included)', () => {
    const targets = new Map([...graph].map(([file, edges]) => [file, [...new Set(edges.flatMap((edge) => (edge.target ? [edge.target] : [])))]]))
    const cycles = cyclesOf(targets).map(
      ({ cycle, files }) => cycle.join(' → ') + (files.length + 1 > cycle.length ? ` (one circle with ${files.join(', ')})` : ''),
    )
    expect(cycles, `src/jinja/ has import cycles:\n${cycles.join('\n')}`).toEqual([])
  })

  it('names a cycle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ])
    expect(cyclesOf(graph)).toEqual(
      expect.arrayContaining([
        { cycle: ['a.ts', 'b.ts', 'c.ts', 'a.ts'], files: ['a.ts', 'b.ts', 'c.ts'] },
        { cycle: ['e.ts', 'e.ts'], files: ['e.ts'] },
      ]),
    )
    expect(cyclesOf(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([])
  })
})
