/**
 * Notice the moment a Vite dev server starts closing (a close or a restart).
 *
 * Contract: `onServerClosing(server, callback)` calls `callback(reason)` once, synchronously,
 * when `server` starts closing, before Vite waits for the requests in flight (it waits for
 * every pending transform before any plugin hook such as `closeServer` runs, and Vite 5–7 have
 * no such hook at all). Vite 5–7 close through `server.close()`, also on restart; Vite 8
 * closes through its internal `_closeServer(reason)` on both paths: both are wrapped on this
 * server object, once. The wrapped close resolves only after the promise the callback returns
 * has settled (so a closed server has no extension left). `reason` is
 * `vite-plugin-insitu is closing` with Vite's `ERR_CLOSED_SERVER` code, which Vite's
 * middlewares treat as an outdated request (answered 504, not logged). A callback that throws
 * or rejects never stops the close.
 */
import type { ViteDevServer } from 'vite'

export const CLOSING_MESSAGE = 'vite-plugin-insitu is closing'

/** An error that Vite drops silently: the request is outdated because the server is closing. */
export function closingError(): Error & { code: string } {
  return Object.assign(new Error(CLOSING_MESSAGE), { code: 'ERR_CLOSED_SERVER' })
}

type Closable = Record<'close' | '_closeServer', ((...args: unknown[]) => Promise<void>) | undefined>

const wrapped = new WeakSet<object>()

export function onServerClosing(server: ViteDevServer, callback: (reason: Error) => Promise<void> | void): void {
  if (wrapped.has(server)) return
  wrapped.add(server)
  let closing: Promise<void> | undefined
  const notify = (): Promise<void> => {
    closing ??= (async () => callback(closingError()))().catch(() => undefined) // the close goes on
    return closing
  }
  const target = server as unknown as Closable
  for (const method of ['close', '_closeServer'] as const) {
    const original = target[method]
    if (typeof original !== 'function') continue
    target[method] = async function (this: unknown, ...args: unknown[]) {
      const settled = notify()
      try {
        await original.apply(this, args)
      } finally {
        await settled
      }
    }
  }
}
