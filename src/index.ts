/**
 * Public API of vite-plugin-insitu: the default export is the Vite/Rollup plugin.
 *
 * ```ts
 * import insitu from 'vite-plugin-insitu'
 * export default defineConfig({ plugins: [insitu()] })
 * ```
 *
 * Importing it loads the plugin's entry only (plugin/plugin.ts): the engine loads when a run
 * needs it, in this process or in a build's own. The engine and the protocol v1 wire layer are
 * exported by `vite-plugin-insitu/engine` (src/engine/index.ts); extension authors import
 * `vite-plugin-insitu/sdk`.
 */
import { insitu } from './plugin/plugin.js'

export default insitu
export { insitu }
export type { InsituOptions, ModuleRule } from './plugin/options.js'
