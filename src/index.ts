/**
 * Public API of vite-plugin-insitu: the default export is the Vite/Rollup plugin.
 *
 * ```ts
 * import insitu from 'vite-plugin-insitu'
 * export default defineConfig({ plugins: [insitu()] })
 * ```
 *
 * The engine (build-tool agnostic) and the protocol v1 wire layer are exported for tools
 * and tests; extension authors import `vite-plugin-insitu/sdk`.
 */
import { insitu } from './plugin/plugin.js'

export default insitu
export { insitu }
export type { InsituOptions, ModuleRule } from './plugin/options.js'
export { InsituEngine, type EngineOptions, type AffectedResult } from './engine/engine.js'
export type { DocumentResult, JobResult, TextEdit } from './engine/render-document.js'
export { writeBack, isWriteBackTemporary, type WriteOutcome } from './sync/write-back.js'
export { syncDocument, renderText, type DocumentSync, type StaleJob } from './sync/sync-document.js'
export { syncProject, formatSyncReport, type ProjectSync } from './sync/sync-project.js'
export * from './protocol/index.js'
