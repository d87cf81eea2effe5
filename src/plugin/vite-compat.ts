/**
 * Vite 5–8 differences, in one place (the rest of the plugin speaks one dialect).
 *
 * Contract:
 * - `devModuleGraphs(server)` lists the dev server's module graphs with the way to reload a
 *   module in each: one per environment on Vite 6+ (`server.environments`), the single
 *   `server.moduleGraph` with `server.reloadModule` on Vite 5.
 * - `hasEnvironmentHotUpdate(server)`: Vite 6+ calls the `hotUpdate` hook for every file event
 *   (create, update, delete) and environment. Vite 5 only calls `handleHotUpdate`, and only for
 *   updates: `watchCreateAndDelete(server, onEvent)` then reports creates and deletes from the
 *   server's watcher instead.
 * - How a server's close is noticed on each major lives in server-close.ts.
 */
import type { ModuleNode, ViteDevServer } from 'vite'

/** A module of any Vite major's graph (Vite 6+ environment modules, Vite 5's mixed modules). */
export interface DevModule {
  file: string | null
}

export interface DevModuleGraph {
  getModulesByFile(file: string): Set<DevModule> | undefined
  reloadModule(module: DevModule): Promise<void>
}

interface Vite5Server {
  moduleGraph: { getModulesByFile(file: string): Set<ModuleNode> | undefined }
  reloadModule(module: ModuleNode): Promise<void>
}

export function hasEnvironmentHotUpdate(server: ViteDevServer): boolean {
  return (server as Partial<ViteDevServer>).environments !== undefined
}

export function devModuleGraphs(server: ViteDevServer): DevModuleGraph[] {
  if (hasEnvironmentHotUpdate(server)) {
    return Object.values(server.environments).map((environment) => ({
      getModulesByFile: (file) => environment.moduleGraph.getModulesByFile(file),
      reloadModule: (module) => environment.reloadModule(module as Parameters<typeof environment.reloadModule>[0]),
    }))
  }
  const legacy = server as unknown as Vite5Server
  return [
    {
      getModulesByFile: (file) => legacy.moduleGraph.getModulesByFile(file),
      reloadModule: (module) => legacy.reloadModule(module as ModuleNode),
    },
  ]
}

/** Vite 5: report the watcher's creates and deletes (its `handleHotUpdate` only sees updates). */
export function watchCreateAndDelete(server: ViteDevServer, onEvent: (type: 'create' | 'delete', file: string) => void): void {
  server.watcher.on('add', (file: string) => onEvent('create', file))
  server.watcher.on('unlink', (file: string) => onEvent('delete', file))
}
