/**
 * Builtin resource `sql` and transform `sql` (SPEC §8).
 *
 * - resource `sql`: options `model` (required: `SQL materialization requires model`) and
 *   `params` (a table of named SQL parameters); value: the model's rows. Dependencies:
 *   `index:documents` and `fs:file:` of every compiled model file.
 * - transform `sql`: `materialize` with `source = "sql"` and `renderer = "jinja"`.
 */
import type { DocumentIndex } from '../documents/document-index.js'
import { runSqlModel, type SqlModels } from '../documents/sql-models.js'
import type { BuiltinCapability } from '../host/host.js'
import { materializeWith } from './materialize.js'
import { optionalTable, requiredString } from './options.js'

export const MODEL_REQUIRED = 'SQL materialization requires model'

export function sqlResource(index: DocumentIndex, models: () => SqlModels): BuiltinCapability {
  return {
    kind: 'resource',
    name: 'sql',
    async invoke({ options, location }) {
      const model = requiredString(options, 'model', MODEL_REQUIRED)
      const params = optionalTable(options, 'params', 'sql')
      const { rows, dependencies } = await runSqlModel(index, models(), model, params, location)
      return { value: rows, dependencies }
    },
  }
}

export const sqlTransform: BuiltinCapability = {
  kind: 'transform',
  name: 'sql',
  invoke(request, context) {
    requiredString(request.options, 'model', MODEL_REQUIRED)
    return materializeWith({ ...request.options, source: 'sql', renderer: 'jinja' }, context)
  },
}
