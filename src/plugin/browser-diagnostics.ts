/**
 * Warnings and info diagnostics in the browser console (dev only).
 *
 * Contract:
 * - The client is a small module the dev server serves at `CLIENT_PATH`
 *   (`/__insitu/client.js`, whatever Vite's `base`); it takes its HMR channel from Vite's own
 *   client (`createHotContext` of `<base>@vite/client`). `clientScriptTag()` is the script tag
 *   the plugin injects into served HTML (`transformIndexHtml`; pages that do not go through
 *   it can carry the same tag themselves). Nothing of it is in a build.
 * - The client prints each diagnostic once per page, `console.warn` for warnings and
 *   `console.info` for info: `[insitu] README.md:12 <message>` (the project-relative file and
 *   line; `[insitu] README.md <message>` without a line). Errors come as `insitu:failures`
 *   (dev-failures.ts): each printed once with `console.error`; once none is left, the overlay
 *   showing an insitu error (Vite's `vite:error` event names the plugin) is closed, before the
 *   update that follows the fix (Vite's client would reload a page showing an overlay at its
 *   first update). While a failure is shown, insitu's overlay is taken out of the page around
 *   every update (`vite:beforeUpdate` … `vite:afterUpdate`): an update (of the edited page
 *   itself, whose failure was told before Vite's update came, or of any other module) neither
 *   reloads the page nor clears the overlay. The client is loaded by every page that loads Vite's own client
 *   (`withInsituClient` appends its import to that module: frameworks that serve no
 *   `index.html`, such as Astro, included) and by the tag `transformIndexHtml` injects.
 * - `connectBrowserDiagnostics(channel, engine)` sends the custom HMR event
 *   `insitu:diagnostics` (`{ owners: [{ owner, diagnostics: [{ severity, text }] }] }`) after
 *   each run of an owner with warnings or info, and after a run of an owner that had some
 *   before (an empty list: fixed). A client announces itself with `insitu:ready` once loaded
 *   and is then sent every owner's current warnings and info (modules transformed before its
 *   socket opened are not missed). The client prints, per owner, what it has not printed for
 *   that owner in the previous message. Everything comes from `engine.runRecords`.
 */
import type { InsituEngine } from '../engine/engine.js'
import type { OwnerRecord } from '../engine/run-records.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { FAILURES_EVENT } from './dev-failures.js'
import { PLUGIN_NAME } from './options.js'

import type { IncomingMessage, ServerResponse } from 'node:http'

export const CLIENT_PATH = '/__insitu/client.js'
export const DIAGNOSTICS_EVENT = 'insitu:diagnostics'
export const READY_EVENT = 'insitu:ready'

export interface BrowserDiagnostic {
  severity: 'warning' | 'info'
  text: string
}

export interface DiagnosticsMessage {
  owners: { owner: string; diagnostics: BrowserDiagnostic[] }[]
}

/** One client of a hot channel: custom events, or any of Vite's payloads. */
export interface HotClientLike {
  send(event: string, payload?: unknown): void
  send(payload: { type: string }): void
}

/** A hot channel as Vite 5–8 offer it on `server.ws`. */
export interface HotChannelLike {
  send(event: string, payload?: unknown): void
  on(event: string, listener: (data: unknown, client: HotClientLike) => void): void
}

/** `[insitu] README.md:12 message` */
export function formatBrowserDiagnostic(diagnostic: Diagnostic, file: string): string {
  const where = `${diagnostic.path ?? file}${typeof diagnostic.line === 'number' ? `:${diagnostic.line}` : ''}`
  return `[insitu] ${where} ${diagnostic.message}`
}

/** An owner's warnings and info, as the client prints them. */
export function browserDiagnostics(record: OwnerRecord): BrowserDiagnostic[] {
  const shown: BrowserDiagnostic[] = []
  for (const d of record.lastRun.diagnostics) {
    if (d.severity === 'warning' || d.severity === 'info') shown.push({ severity: d.severity, text: formatBrowserDiagnostic(d, record.file) })
  }
  return shown
}

/** The client module's code, for a dev server with this `base`. */
export function clientCode(base: string): string {
  return `// insitu: warnings, info and failures of managed documents, in the browser console; the
// overlay of an insitu failure closed once no failure is left (dev-failures.ts).
import { createHotContext } from ${JSON.stringify(`${withSlash(base)}@vite/client`)}
const hot = createHotContext(${JSON.stringify(CLIENT_PATH)})
const printed = new Map()
hot.on(${JSON.stringify(DIAGNOSTICS_EVENT)}, (message) => {
  for (const { owner, diagnostics } of message.owners) {
    const before = printed.get(owner) ?? new Set()
    const now = new Set()
    for (const { severity, text } of diagnostics) {
      const key = severity + '\\u0000' + text
      now.add(key)
      if (before.has(key)) continue
      if (severity === 'warning') console.warn(text)
      else console.info(text)
    }
    printed.set(owner, now)
  }
})
const failures = new Map()
// Whether the overlay on screen is insitu's: Vite tells every error payload it shows.
let overlayIsOurs = false
hot.on('vite:error', (payload) => {
  overlayIsOurs = payload?.err?.plugin === ${JSON.stringify(PLUGIN_NAME)}
})
// While a failure is shown, an update (of this page or of any other module) neither reloads the
// page (Vite's client does at its first update when an overlay shows) nor clears insitu's
// overlay: it is taken out of the page just before and put back right after.
let parked = []
hot.on('vite:beforeUpdate', () => {
  if (!overlayIsOurs || failures.size === 0) return
  parked = [...document.querySelectorAll('vite-error-overlay')]
  for (const overlay of parked) overlay.remove()
})
hot.on('vite:afterUpdate', () => {
  for (const overlay of parked) if (overlayIsOurs && failures.size > 0) document.body.appendChild(overlay)
  parked = []
})
hot.on(${JSON.stringify(FAILURES_EVENT)}, (message) => {
  for (const { file, failures: now } of message.files) {
    const before = new Set((failures.get(file) ?? []).map((failure) => failure.text))
    for (const failure of now) if (!before.has(failure.text)) console.error(failure.text)
    if (now.length > 0) failures.set(file, now)
    else failures.delete(file)
  }
  // Fixed: close the overlay before the update that follows reaches Vite's client, which
  // reloads a page that shows an overlay at its first update.
  if (failures.size === 0 && overlayIsOurs) {
    overlayIsOurs = false
    parked = []
    for (const overlay of document.querySelectorAll('vite-error-overlay')) {
      if (typeof overlay.close === 'function') overlay.close()
      else overlay.remove()
    }
  }
})
hot.send(${JSON.stringify(READY_EVENT)}, {})
`
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`
}

/**
 * Vite's client module with the insitu client loaded once it has run (a dynamic import: the
 * insitu client imports Vite's, so a static one would form a cycle; a non-literal specifier,
 * which Vite's import analysis leaves alone).
 */
export function withInsituClient(code: string): string {
  return `${code}\n;{ const insituClient = ${JSON.stringify(CLIENT_PATH)}; import(/* @vite-ignore */ insituClient).catch(() => {}) }\n`
}

/** The script tag loading the client. */
export function clientScriptTag(): { tag: 'script'; attrs: Record<string, string>; injectTo: 'head' } {
  return { tag: 'script', attrs: { type: 'module', src: CLIENT_PATH }, injectTo: 'head' }
}

/** Serves the client at `CLIENT_PATH` (mount it there). */
export function clientMiddleware(base: () => string) {
  return (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void => {
    const pathname = (req.url ?? '/').split('?')[0]
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (pathname !== '/' && pathname !== '')) return next()
    res.statusCode = 200
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8')
    res.setHeader('Cache-Control', 'no-cache')
    res.end(clientCode(base()))
  }
}

/**
 * Answer `insitu:ready` with every owner's current warnings and info (engine of the moment), and
 * hand the client to `onReady` (dev-failures.ts sends it the current failures).
 */
export function answerReadyClients(
  channel: HotChannelLike,
  getEngine: () => InsituEngine | undefined,
  onReady: (client: HotClientLike) => void,
): void {
  channel.on(READY_EVENT, (_data, client) => {
    onReady(client)
    const engine = getEngine()
    if (!engine) return
    const owners = engine.runRecords
      .list()
      .map((record) => ({ owner: record.owner, diagnostics: browserDiagnostics(record) }))
      .filter((entry) => entry.diagnostics.length > 0)
    if (owners.length > 0) client.send(DIAGNOSTICS_EVENT, { owners } satisfies DiagnosticsMessage)
  })
}

/** Send an owner's warnings and info after each of its runs (see the contract). Returns the unsubscribe function. */
export function connectBrowserDiagnostics(channel: HotChannelLike, engine: InsituEngine): () => void {
  const hadSome = new Set<string>()
  return engine.runRecords.onRun((record) => {
    const diagnostics = browserDiagnostics(record)
    if (diagnostics.length === 0 && !hadSome.has(record.owner)) return
    if (diagnostics.length > 0) hadSome.add(record.owner)
    else hadSome.delete(record.owner)
    channel.send(DIAGNOSTICS_EVENT, { owners: [{ owner: record.owner, diagnostics }] } satisfies DiagnosticsMessage)
  })
}
