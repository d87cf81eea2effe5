/**
 * Synchronous clean-up when this Node process ends, however it ends.
 *
 * Contract: `onProcessEnd(cleanup)` runs `cleanup` once when the process exits, and on
 * SIGINT/SIGTERM/SIGHUP (and the other fatal signals) through signal-exit, which then lets
 * the signal take its course. When something else handles a signal (Vite closes its server
 * on SIGTERM, Rollup's watch CLI uses signal-exit too) it decides, and the clean-ups run at the
 * exit that follows. One hook for the whole process: the set lives on `globalThis`, because
 * Vite bundles `vite.config` (and this module with it) anew on every restart. Returns a
 * function that unregisters `cleanup`.
 */
import { onExit } from 'signal-exit'

const CLEANUPS = Symbol.for('vite-plugin-insitu.process-end-cleanups')

export function onProcessEnd(cleanup: () => void): () => void {
  const global = globalThis as { [CLEANUPS]?: Set<() => void> }
  let cleanups = global[CLEANUPS]
  if (!cleanups) {
    const created = new Set<() => void>()
    cleanups = created
    global[CLEANUPS] = created
    onExit(
      () => {
        for (const run of created) {
          try {
            run()
          } catch {
            // a clean-up must never stop the others, nor the exit
          }
        }
      },
      { alwaysLast: true },
    )
  }
  cleanups.add(cleanup)
  const registered = cleanups
  return () => void registered.delete(cleanup)
}
