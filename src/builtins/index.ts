/**
 * The builtin capabilities of SPEC §8, bound to one project's document index, SQL models
 * and templates: resource `sql`, renderer `jinja`, transforms `sql`, `materialize`,
 * `include` and `tree`.
 */
import type { DocumentIndex } from '../documents/document-index.js'
import type { SqlModels } from '../documents/sql-models.js'
import type { BuiltinCapability } from '../host/host.js'
import type { ProcessPool } from '../sandbox/process-pool.js'
import { includeTransform } from './include.js'
import { jinjaRenderer } from './jinja-renderer.js'
import { materializeTransform } from './materialize.js'
import { sqlResource, sqlTransform } from './sql.js'
import { treeTransform } from './tree.js'

export interface BuiltinsContext {
  root: string
  templatesDir: string
  index: DocumentIndex
  models: () => SqlModels
  /** Milliseconds a template render may run (the index's query budget, `renderTimeoutMs`). */
  renderTimeoutMs: number
  /** Where a render that outruns its slice of this process goes (the index's sandbox). */
  sandbox: () => ProcessPool
}

export function createBuiltins(context: BuiltinsContext): BuiltinCapability[] {
  return [
    sqlResource(context.index, context.models),
    jinjaRenderer({ root: context.root, templatesDir: context.templatesDir, budgetMs: context.renderTimeoutMs, sandbox: context.sandbox }),
    sqlTransform,
    materializeTransform,
    includeTransform,
    treeTransform,
  ]
}
