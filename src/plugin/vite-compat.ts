/**
 * Vite 5–8 differences, in one place (the rest of the plugin speaks one dialect).
 *
 * Contract:
 * - `devModuleGraphs(server)` lists the dev server's module graphs with the way to reload a
 *   module in each: one per environment on Vite 6+ (`server.environments`), the single
 *   `server.moduleGraph` with `server.reloadModule` on Vite 5.
 * - `hasEnvironmentHotUpdate(server)`: Vite 6+ calls the `hotUpdate` hook for every file event
 *   (create, update, delete) and environment. Vite 5 only calls `handleHotUpdate`, and only for
 *   updates: `watchFileEvents(server, onEvent, ['create', 'delete'])` then reports creates and
 *   deletes from the server's watcher instead. A server without HMR (`server.hmr: false`: Astro's
 *   content sync, Astro under `NODE_ENV=test`) calls no hot-update hook at all, on any major:
 *   every event comes from the watcher, and modules are invalidated (`invalidateModule`), not
 *   reloaded (Vite's `reloadModule` does nothing without HMR).
 * - `reloadEveryPage(server)`: every module of every graph invalidated, then a full reload sent
 *   on every environment's hot channel (Vite 5: the server's), as Vite does for a changed
 *   `tsconfig.json`.
 * - `browserChannel(server)`: the channel to the browsers' Vite clients (Vite 6+: the client
 *   environment's hot channel; Vite 5: `server.hot`, else `server.ws`).
 * - How a server's close is noticed on each major lives in server-close.ts.
 */
import type { ModuleNode, ViteDevServer } from 'vite'

/** A module of any Vite major's graph (Vite 6+ environment modules, Vite 5's mixed modules). */
export interface DevModule {
  /** The resolved id (Vite 5: null until resolved). */
  id?: string | null
  file: string | null
  importers?: Set<DevModule>
}

export interface DevModuleGraph {
  getModulesByFile(file: string): Set<DevModule> | undefined
  reloadModule(module: DevModule): Promise<void>
  invalidateModule(module: DevModule): void
}

interface Vite5Server {
  moduleGraph: { getModulesByFile(file: string): Set<ModuleNode> | undefined; invalidateModule(module: ModuleNode): void; invalidateAll(): void }
  reloadModule(module: ModuleNode): Promise<void>
  ws: { send(payload: { type: 'full-reload'; path: string }): void }
}

export function hasEnvironmentHotUpdate(server: ViteDevServer): boolean {
  return (server as Partial<ViteDevServer>).environments !== undefined
}

export function devModuleGraphs(server: ViteDevServer): DevModuleGraph[] {
  if (hasEnvironmentHotUpdate(server)) {
    return Object.values(server.environments).map((environment) => ({
      getModulesByFile: (file) => environment.moduleGraph.getModulesByFile(file),
      reloadModule: (module) => environment.reloadModule(module as Parameters<typeof environment.reloadModule>[0]),
      invalidateModule: (module) =>
        environment.moduleGraph.invalidateModule(module as Parameters<typeof environment.moduleGraph.invalidateModule>[0]),
    }))
  }
  const legacy = server as unknown as Vite5Server
  return [
    {
      getModulesByFile: (file) => legacy.moduleGraph.getModulesByFile(file),
      reloadModule: (module) => legacy.reloadModule(module as ModuleNode),
      invalidateModule: (module) => legacy.moduleGraph.invalidateModule(module as ModuleNode),
    },
  ]
}

export function reloadEveryPage(server: ViteDevServer): void {
  if (hasEnvironmentHotUpdate(server)) {
    const environments = Object.values(server.environments)
    for (const environment of environments) environment.moduleGraph.invalidateAll()
    for (const environment of environments) environment.hot.send({ type: 'full-reload', path: '*' })
    return
  }
  const legacy = server as unknown as Vite5Server
  legacy.moduleGraph.invalidateAll()
  legacy.ws.send({ type: 'full-reload', path: '*' })
}

/**
 * The channel to the browsers' Vite clients: the client environment's (Vite 6+), else Vite 5's
 * `server.hot` (5.1+) or `server.ws`. Vite's own payloads and custom events both go through it.
 */
export function browserChannel(server: ViteDevServer): { send(payload: object): void } {
  if (hasEnvironmentHotUpdate(server)) return server.environments.client.hot as unknown as { send(payload: object): void }
  const legacy = server as unknown as { hot?: { send(payload: object): void }; ws: { send(payload: object): void } }
  return legacy.hot ?? legacy.ws
}

/** Whether the server calls hot-update hooks at all (not with `server.hmr: false`). */
export function hasHotUpdates(server: ViteDevServer): boolean {
  return server.config.server.hmr !== false
}

/** Report the watcher's events of the given types (Vite 5's creates and deletes; everything without HMR). */
export function watchFileEvents(
  server: ViteDevServer,
  onEvent: (type: 'create' | 'update' | 'delete', file: string) => void,
  types: readonly ('create' | 'update' | 'delete')[],
): void {
  if (types.includes('create')) server.watcher.on('add', (file: string) => onEvent('create', file))
  if (types.includes('update')) server.watcher.on('change', (file: string) => onEvent('update', file))
  if (types.includes('delete')) server.watcher.on('unlink', (file: string) => onEvent('delete', file))
}
