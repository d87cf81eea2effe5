/**
 * The bodies of the plugin's hooks, behind the hook table of plugin.ts: what runs them is a
 * runtime, chosen per run (plugin.ts). Types only.
 *
 * Contract: every hook of the table has its method here, the hook's plugin context first where
 * it has one. Two runtimes implement it:
 * - in-process.ts: the whole plugin in the process that loaded it (dev servers, build watch,
 *   Rollup watch; the build process of build-process.ts runs it too);
 * - build-process.ts: a build that does not watch, whose engine runs in a process of its own.
 *   It answers the hooks such a build calls; the others (dev server, watch) are never called there.
 */
import type { ConfigEnv, HotUpdateOptions, HtmlTagDescriptor, ResolvedConfig, UserConfig, ViteDevServer } from 'vite'
import type { DevServerSession } from './dev-server.js'
import type { ReportingContext } from './diagnostics.js'

/** What the build hooks use of Rollup's and Vite's plugin context. */
export interface HookContext extends ReportingContext {
  addWatchFile(id: string): void
  meta: { watchMode: boolean }
}

/** A module's served code: text and source map (null: left to the other plugins). */
export type ServedModule = { code: string; map: unknown } | null

export interface PluginRuntime {
  config(config: UserConfig, env: ConfigEnv): UserConfig | null
  configResolved(config: ResolvedConfig): void
  configureServer(server: ViteDevServer): void
  transformIndexHtml(): HtmlTagDescriptor[] | undefined
  buildStart(context: HookContext): Promise<void>
  load(context: HookContext, id: string): Promise<ServedModule>
  transform(context: HookContext, code: string, id: string, options: { ssr?: boolean } | undefined): Promise<ServedModule> | ServedModule | string | null
  hotUpdate(environment: Parameters<DevServerSession['hotUpdate']>[0], update: HotUpdateOptions): ReturnType<DevServerSession['hotUpdate']> | undefined
  handleHotUpdate(context: Parameters<DevServerSession['handleHotUpdate']>[0]): ReturnType<DevServerSession['handleHotUpdate']> | undefined
  watchChange(id: string, event: 'create' | 'update' | 'delete'): void
  buildEnd(context: HookContext, error: Error | undefined): Promise<void>
  renderStart(outputDir: string | undefined): void
  shouldTransformCachedModule(id: string): true | null
  closeServer(): Promise<void>
  closeBundle(context: HookContext): Promise<void> | undefined
  closeWatcher(): Promise<void>
}
