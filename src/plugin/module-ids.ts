/**
 * Module ids as Vite and Rollup hand them to the plugin, and the module files it builds.
 *
 * Contract: `cleanId(id)` drops the query; `isSkippedId(id)` is true for ids that are never
 * the plugin's (virtual `\0` modules, dependencies under `node_modules/`; `SKIPPED_IDS` is
 * also the hooks' `filter`, `TRANSFORM_SKIPPED_IDS` the transform's, which lets Vite's client through); `RAW_QUERY` / `NON_TEXT_QUERY` classify queries. Vite names
 * module files with POSIX separators (`C:/…` on Windows) and Rollup with native ones:
 * `moduleFile(root, owner)` is the absolute POSIX file of a project-relative owner, and
 * `moduleKey(id)` the absolute POSIX file of an id, so the two compare on every platform.
 */
import path from 'node:path'
import { toPosixPath } from '../documents/project-paths.js'

export const RAW_QUERY = /[?&]raw(?:&|=|$)/
/** Queries under which a module is not Markdown text (Vite turns it into JS or a URL). */
export const NON_TEXT_QUERY = /[?&](?:raw|url|inline|worker|sharedworker)(?:&|=|$)/
/** Ids never ours: virtual modules (`\0`) and dependencies. A hook filter, re-checked in the handlers. */
export const SKIPPED_IDS = [/\0/, /[\\/]node_modules[\\/]/]

/** The path of Vite's own HMR client module (`/@vite/client`), whatever the package manager's layout. */
const VITE_CLIENT_PATH = /[\\/]vite[\\/]dist[\\/]client[\\/]client\.mjs/.source
export const VITE_CLIENT_MODULE = new RegExp(`${VITE_CLIENT_PATH}$`)

/**
 * The transform hook's filter: `SKIPPED_IDS`, except Vite's own client module (a dev server
 * appends the insitu browser client to it: browser-diagnostics.ts `withInsituClient`).
 */
export const TRANSFORM_SKIPPED_IDS = [/\0/, new RegExp(`^(?![^?]*${VITE_CLIENT_PATH}(?:\\?|$))[^?]*[\\\\/]node_modules[\\\\/]`)]

export function isSkippedId(id: string): boolean {
  return SKIPPED_IDS.some((pattern) => pattern.test(id))
}

export function cleanId(id: string): string {
  const query = id.indexOf('?')
  return query < 0 ? id : id.slice(0, query)
}

/** The absolute POSIX module file of an owner (project-relative POSIX) under `root` (absolute POSIX). */
export function moduleFile(root: string, owner: string): string {
  return path.posix.join(root, owner)
}

/** The absolute POSIX file of a module id (query dropped, separators turned into `/`). */
export function moduleKey(id: string): string {
  return toPosixPath(cleanId(id))
}

