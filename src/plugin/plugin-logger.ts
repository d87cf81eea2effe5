/**
 * Where the plugin's messages go: Vite's logger once a config is resolved (timestamped, as
 * Vite's own lines), the console before that and under plain Rollup.
 *
 * Contract: `viteLogger(logger)` and `consoleLogger` are `PluginLogger`s; `error`'s second
 * argument is the error the message reports, when there is one (a dev server prints each user
 * error once: diagnostics.ts `printErrorsOnce`). Dependency-free, for the plugin's entry.
 */
import type { Logger } from 'vite'

export interface PluginLogger {
  info(message: string): void
  warn(message: string): void
  /** `error`: what the message reports, when it is one of the user errors (printed once). */
  error(message: string, error?: Error): void
}

export function viteLogger(vite: Logger): PluginLogger {
  return {
    info: (m) => vite.info(m, { timestamp: true }),
    warn: (m) => vite.warn(m, { timestamp: true }),
    error: (m, error) => vite.error(m, { timestamp: true, error }),
  }
}

export const consoleLogger: PluginLogger = {
  info: (m) => console.info(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
}
