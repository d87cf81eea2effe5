/**
 * The shapes compiled templates run with: what compiler.ts makes, what inheritance.ts and
 * engine.ts run, and what every filter and test is called with. Types only: this file holds
 * no code, so the files that share these shapes need not import each other.
 *
 * Contract:
 * - `CompiledTemplate`: `root(scope, render)` runs a template's top level, appending to
 *   `render.out`; `blocks` holds each `{% block %}` by name (a `BlockEntry`).
 * - `RenderState`: one render (its output buffer, block chains, template context and the
 *   macros, templates and inheritance chain running now, for the bounds of limits.ts).
 * - `CompileHost`: the environment a template compiles and renders against: its filters and
 *   tests, its loader (`getTemplate`) and its globals (`newRootScope`).
 * - `FilterFunction` / `TestFunction`: `value | name(*args, **kwargs)` and `value is name(*args)`,
 *   called with the host.
 */
import type { StrayChunk } from './chunks.js'
import type { Scope } from './runtime.js'

/** A filter: `value | name(*args, **kwargs)`. */
export type FilterFunction = (host: CompileHost, value: unknown, args: unknown[], kwargs: Record<string, unknown>) => unknown
/** A test: `value is name(*args)`. */
export type TestFunction = (host: CompileHost, value: unknown, args: unknown[], kwargs: Record<string, unknown>) => boolean

export interface CompileHost {
  filters: Record<string, FilterFunction>
  tests: Record<string, TestFunction>
  /** Loads and compiles a template by name (include, import, extends). */
  getTemplate(name: string): CompiledTemplate
  /** A fresh root scope (the globals only). */
  newRootScope(): Scope
}

export interface BlockEntry {
  run: (scope: Scope, render: RenderState) => void
}

/** One render: the output buffer and the block chains of the template context being rendered. */
export interface RenderState {
  out: string
  /** Chunks Jinja would have yielded into the buffer being filled, and its first one that is no str (chunks.ts). */
  chunks: number
  stray: StrayChunk | null
  host: CompileHost
  blocks: Map<string, BlockEntry[]>
  /** The template context (root scope) of the template being rendered. */
  context: Scope
  /**
   * While a block renders: the context it was given (a scoped block's, with the locals where
   * it was called; else the template context). Blocks nested in it and `super()` get it too.
   */
  blockContext: Scope | null
  /** Names of the macros running now, outermost first (limits.ts `MAX_MACRO_DEPTH`). */
  macros: string[]
  /** Names of the templates rendering now: the main one, then includes and imports inside it (`MAX_TEMPLATE_DEPTH`). */
  templates: string[]
  /** The inheritance chain of the template rendering now: it, then each template it extends (`MAX_TEMPLATE_DEPTH`). */
  inheritance: string[]
  parent: CompiledTemplate | null
}

export interface CompiledTemplate {
  name: string
  root: (scope: Scope, render: RenderState) => void
  blocks: Map<string, BlockEntry>
  /** When the top level is one statement, `root` is that statement and this its position (renderTemplate stamps errors with it). */
  rootPosition?: { line: number; column: number | undefined }
}
