/**
 * What a page in Chromium went through while a test broke and fixed a document (issue #34):
 * its reloads, its console, the HMR payloads it received, and the error overlay it shows.
 *
 * Contract: `openWatched(page, url, shown, timeout)` starts listening on `page`, loads `url`
 * afresh (so Vite's client has seen no HMR update yet: at its first update it reloads a page
 * that shows an overlay, the case insitu's client must prevent), waits for `shown()`, then (at
 * most `timeout` ms each) for Vite's client to be connected and for insitu's client to be
 * loaded, then sets a marker in the page
 * and counts from there: `navigations()` (main-frame navigations, a reload included),
 * `markerKept()` (false once the page was reloaded), `insituErrors()` (the console's
 * `console.error` lines starting with `[insitu]`), `payloads()` (the type of each HMR payload
 * on the page's sockets, `full-reload` with its path: `full-reload *`). `stop()` removes the
 * listeners. `overlayTexts(page)` is the text of each `vite-error-overlay` element's shadow
 * root (Vite's overlay, or Astro's, which keeps the element's name).
 */
import type { ConsoleMessage, Frame, Page, WebSocket } from 'playwright-core'
import { expect } from 'vitest'

export interface PageWatch {
  navigations(): number
  markerKept(): Promise<boolean>
  insituErrors(): string[]
  payloads(): string[]
  stop(): void
}

/** The name of the marker set in the page (a reload loses it). */
const MARKER = '__insituMarker'

export async function openWatched(page: Page, url: string, shown: () => Promise<unknown>, timeout: number): Promise<PageWatch> {
  let navigations = 0
  let connected = false
  const errors: string[] = []
  const payloads: string[] = []
  const onNavigated = (frame: Frame) => {
    if (frame === page.mainFrame()) navigations++
  }
  const onConsole = (message: ConsoleMessage) => {
    const text = message.text()
    if (text.includes('[vite] connected.')) connected = true
    if (message.type() === 'error' && text.startsWith('[insitu]')) errors.push(text)
  }
  const onSocket = (socket: WebSocket) =>
    socket.on('framereceived', ({ payload }) => {
      try {
        const parsed = JSON.parse(String(payload)) as { type?: string; path?: string }
        payloads.push(parsed.type === 'full-reload' && parsed.path ? `full-reload ${parsed.path}` : String(parsed.type))
      } catch {
        // not one of Vite's payloads
      }
    })
  page.on('framenavigated', onNavigated)
  page.on('console', onConsole)
  page.on('websocket', onSocket)
  await page.goto(url, { waitUntil: 'domcontentloaded' })
  await shown()
  await expect.poll(() => connected, { timeout }).toBe(true)
  const clientLoaded = () =>
    page.evaluate(() => performance.getEntriesByType('resource').some((entry) => entry.name.includes('/__insitu/client.js')))
  await expect.poll(clientLoaded, { timeout }).toBe(true)
  const token = `marker-${Date.now()}`
  await page.evaluate(([name, value]) => ((globalThis as Record<string, unknown>)[name!] = value), [MARKER, token])
  navigations = 0
  errors.length = 0
  payloads.length = 0
  return {
    navigations: () => navigations,
    markerKept: async () => (await page.evaluate((name) => (globalThis as Record<string, unknown>)[name], MARKER)) === token,
    insituErrors: () => [...errors],
    payloads: () => [...payloads],
    stop: () => {
      page.off('framenavigated', onNavigated)
      page.off('console', onConsole)
      page.off('websocket', onSocket)
    },
  }
}

export async function overlayTexts(page: Page): Promise<string[]> {
  return page.locator('vite-error-overlay').evaluateAll((overlays) => overlays.map((overlay) => overlay.shadowRoot?.textContent ?? ''))
}
