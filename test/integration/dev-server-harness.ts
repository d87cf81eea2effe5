/**
 * Pieces shared by the dev-server tests (plugin-dev, plugin-write): a Vite logger that records
 * instead of printing, the text a `?raw` module exports, the documents HMR updates name, and a
 * plugin that holds one transform (as a slow downstream plugin would), and one dev server per
 * test, closed after it.
 */
import type { DevEnvironment, HotPayload, Logger, Plugin, ViteDevServer } from 'vite'
import { afterEach } from 'vitest'

export interface LogEntry {
  level: 'info' | 'warn' | 'error'
  message: string
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g

/** A Vite logger that hands every message (ANSI colours stripped) to `record` and prints nothing. */
export function recordingLogger(onLog: (entry: LogEntry) => void): Logger {
  const record = (level: LogEntry['level']) => (message: string) => onLog({ level, message: message.replace(ANSI, '') })
  return {
    info: record('info'),
    warn: record('warn'),
    warnOnce: record('warn'),
    error: record('error'),
    clearScreen: () => {},
    hasErrorLogged: () => false,
    hasWarned: false,
  }
}

/** Record every HMR payload the environment sends (into `payloads`, which the caller may reset). */
export function recordPayloads(environment: DevEnvironment, payloads: () => HotPayload[]): void {
  const hot = environment.hot
  const send = hot.send.bind(hot)
  hot.send = ((payload: HotPayload) => {
    payloads().push(payload)
    send(payload)
  }) as typeof hot.send
}

/** The document text a `?raw` module exports. */
export async function loadRaw(environment: DevEnvironment, url: string): Promise<string> {
  const result = await environment.transformRequest(url)
  const match = /^export default ("(?:[^"\\]|\\.)*")$/.exec(result?.code ?? '')
  if (!match) throw new Error(`unexpected module code for ${url}: ${result?.code}`)
  return JSON.parse(match[1]!) as string
}

/**
 * Documents named by HMR `update` payloads, sorted, once per payload that names them: a second
 * payload naming a document (a second update for one change) shows as a repeated entry.
 */
export function acceptedPaths(payloads: readonly HotPayload[]): string[] {
  return payloads.flatMap((p) => (p.type === 'update' ? [...new Set(p.updates.map((u) => u.acceptedPath))] : [])).sort()
}

/** Holds the next transform of `url` once `arm()` is called, until `release()`. */
export function transformGate(url: string) {
  let armed = false
  let reached = false
  let release: () => void = () => {}
  const plugin: Plugin = {
    name: 'test:transform-gate',
    enforce: 'post',
    async transform(_code, id) {
      if (!armed || !id.endsWith(url)) return
      armed = false
      reached = true
      await new Promise<void>((resolve) => (release = resolve))
    },
  }
  return {
    plugin,
    arm: () => (armed = true),
    reached: () => reached,
    release: () => release(),
  }
}

/** One dev server per test: `keep(server)` it, and it is closed after the test, then `cleanup()` runs. */
export function serverPerTest(cleanup: () => void): (server: ViteDevServer) => void {
  let current: ViteDevServer | undefined
  afterEach(async () => {
    await current?.close()
    current = undefined
    cleanup()
  })
  return (server) => {
    current = server
  }
}
