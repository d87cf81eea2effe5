/**
 * `vite-plugin-insitu/engine`: the engine (build-tool agnostic), the sync and write-back steps
 * and the protocol v1 wire layer, for tools and tests. The plugin's own entry
 * (`vite-plugin-insitu`) exports the plugin only: importing it loads none of this (issue #38).
 * Extension authors import `vite-plugin-insitu/sdk`.
 */
export { InsituEngine, type EngineOptions, type AffectedResult } from './engine.js'
export type { DocumentResult, JobResult, TextEdit } from './render-document.js'
export { writeBack, isWriteBackTemporary, type WriteOutcome } from '../sync/write-back.js'
export { syncDocument, renderText, type DocumentSync, type StaleJob } from '../sync/sync-document.js'
export { syncProject, formatSyncReport, type ProjectSync } from '../sync/sync-project.js'
export * from '../protocol/index.js'
