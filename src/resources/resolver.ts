/**
 * The host's resource resolver: every identifier scheme of SPEC §6 except `resource:`
 * (which the host serves through its registry).
 *
 * Contract: `createResourceResolver(context)` returns a function that resolves `fs:file:`,
 * `fs:glob:`, `fs:dir:`, `sql:model:<name>[?k=v…]` and every `git://` form to
 * `{ value, dependencies }`; anything else fails with `unsupported host resource: <r>`.
 * `sql:model:` reports `[r, "index:documents", "fs:file:<each compiled model>"]`; the
 * others report `[r]`. Confinement and permission checks live in the called resolvers and
 * in the host respectively.
 */
import type { DocumentIndex } from '../documents/document-index.js'
import { runSqlModel, type SqlModels } from '../documents/sql-models.js'
import type { Location, ResourceRead } from '../protocol/schemas.js'
import { type FsResolveContext, resolveFsDir, resolveFsFile, resolveFsGlob } from './fs.js'
import { resolveGitResource } from './git.js'
import { splitQuery } from './identifiers.js'

export interface ResourceResolverContext {
  root: string
  exclude: readonly string[]
  respectGitignore: boolean
  index: DocumentIndex
  models: SqlModels
}

/**
 * Resolves one identifier read at `location`. The host calls it for every scheme but `resource:`
 * and passes the read's `trace`; `createResourceResolver`'s resolver does not need it.
 */
export type ResolveResource = (identifier: string, location: Location, trace: readonly string[]) => Promise<ResourceRead>

export function unsupportedResource(identifier: string): Error {
  return new Error(`unsupported host resource: ${identifier}`)
}

export function createResourceResolver(context: ResourceResolverContext): ResolveResource {
  const fsContext: FsResolveContext = {
    root: context.root,
    exclude: context.exclude,
    respectGitignore: context.respectGitignore,
    isManagedDocument: (relPath) => context.index.isDocument(relPath),
  }
  return async (identifier, location) => {
    if (identifier.startsWith('fs:file:')) return resolveFsFile(identifier, fsContext)
    if (identifier.startsWith('fs:glob:')) return resolveFsGlob(identifier, fsContext)
    if (identifier.startsWith('fs:dir:')) return resolveFsDir(identifier, fsContext)
    if (identifier.startsWith('git://')) return resolveGitResource(identifier, { root: context.root })
    if (identifier.startsWith('sql:model:')) {
      const { name, query } = splitQuery(identifier.slice('sql:model:'.length))
      const { rows, dependencies } = await runSqlModel(context.index, context.models, name, query, location)
      return { value: rows, dependencies: [...new Set([identifier, ...dependencies])] }
    }
    throw unsupportedResource(identifier)
  }
}
