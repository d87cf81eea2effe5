/**
 * Template inheritance at run time: rendering a template as the main template of a context
 * (`renderTemplate`), `{% extends %}` chains and block lookup (`renderBlock`, `super()`).
 *
 * Contract:
 * - `renderTemplate(template, scope, render)` gives the template its own block chains (each
 *   block name → the most derived definition first), renders its top level, and when it
 *   extended a parent (the `extends` statement set `render.parent` and appended the parent's
 *   blocks), renders the parent with the same context, up the chain (the child's text after
 *   `{% extends %}` was not rendered: compiler.ts). The render's previous chains are restored afterwards
 *   (includes and imports render this way inside another template). `render.templates` holds the
 *   templates rendering now (nested includes and imports), `render.inheritance` the chain of the
 *   one rendering now, for the depth bounds of limits.ts.
 * - `renderBlock(render, name, index, scope?)` renders definition `index` of block `name` in a
 *   child of its context: `scope` for `scoped` blocks, else the context of the block it is
 *   nested in (`render.blockContext`), else the template context; with `super()` bound to
 *   the next definition (rendered in the same context: a scoped block's locals stay visible);
 *   undefined when there is none; its chunks count in the buffer around it (chunks.ts).
 *   `self.<block>()` renders index 0; it and `super()` render into a buffer of their own, joined.
 */
import type { CompiledTemplate, RenderState } from './compiled-template.js'
import { closeBuffer, openBuffer, restoreBuffer } from './chunks.js'
import { TemplateRuntimeError, stampPosition } from './errors.js'
import { TemplateReference, type Scope } from './runtime.js'
import { PyFunction } from './values.js'

/** Renders `template` as the main template of a render (its own context and block chains). */
export function renderTemplate(template: CompiledTemplate, scope: Scope, render: RenderState): void {
  const savedBlocks = render.blocks
  const savedContext = render.context
  const savedParent = render.parent
  const savedChain = render.inheritance
  const savedBlockContext = render.blockContext
  render.blockContext = null
  render.templates.push(template.name)
  render.inheritance = [template.name]
  render.blocks = new Map([...template.blocks].map(([blockName, entry]) => [blockName, [entry]]))
  render.context = scope
  render.parent = null
  scope.self = new TemplateReference((blockName) => joinedBlock(render, blockName, 0, scope))
  let current: CompiledTemplate | null = template
  while (current) {
    const position = current.rootPosition
    if (position) {
      try {
        current.root(scope, render)
      } catch (error) {
        stampPosition(error, current.name, position.line, position.column)
        throw error
      }
    } else current.root(scope, render)
    if (render.parent === null) break
    // The child's output after `{% extends %}` was not rendered (compiler.ts); the parent renders now.
    current = render.parent
    render.parent = null
  }
  render.blocks = savedBlocks
  render.context = savedContext
  render.parent = savedParent
  render.inheritance = savedChain
  render.blockContext = savedBlockContext
  render.templates.pop()
}

export function renderBlock(render: RenderState, blockName: string, index: number, scope?: Scope): string | undefined {
  const chain = render.blocks.get(blockName)
  const entry = chain?.[index]
  if (!entry) return undefined
  // Jinja passes a block its context: a scoped block's (with the caller's locals), else the one
  // the enclosing block got, else the template context. `super()` and nested blocks get it too.
  const context = scope ?? render.blockContext ?? render.context
  const blockScope = Object.create(context) as Scope
  blockScope.super = new PyFunction('super', () => {
    const text = joinedBlock(render, blockName, index + 1, context)
    if (text === undefined) throw new TemplateRuntimeError(`there is no parent block called '${blockName}'.`)
    return text
  })
  const saved = render.out
  const savedContext = render.blockContext
  render.out = ''
  render.blockContext = context
  try {
    entry.run(blockScope, render)
    return render.out
  } finally {
    render.out = saved
    render.blockContext = savedContext
  }
}


/**
 * A block rendered as `self.b()` or `super()` renders it: a buffer of its own, joined (Jinja's
 * `BlockReference.__call__` is `concat(block(context))`); a `{% block %}` tag instead yields the
 * block's chunks into the buffer around it (`renderBlock`).
 */
function joinedBlock(render: RenderState, blockName: string, index: number, scope?: Scope): string | undefined {
  const saved = openBuffer(render)
  let text: string | undefined
  try {
    text = renderBlock(render, blockName, index, scope)
  } catch (error) {
    restoreBuffer(render, saved)
    throw error
  }
  // renderBlock captured the text; the join fails on a chunk that is no str.
  closeBuffer(render, saved)
  return text
}
