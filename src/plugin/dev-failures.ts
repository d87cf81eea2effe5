/**
 * A dev server's failing documents, shown where people look, once (issue #34). The document
 * itself stays served (serve-document.ts: a failing job keeps its region's last good body);
 * this module is how the failure is told.
 *
 * Contract:
 * - `connect(engine)` follows the engine's runs (`runRecords.onRun`). A document's failures are
 *   the error diagnostics of its file's latest run (`README.md` and `README.md?raw` are one
 *   file). When a file's failures change:
 *   - each failure not shown before is printed once to the terminal (`logger.error`):
 *     `insitu: docs/a.md:4: <message>` (` ← <cause>` when a change selected the run), then the
 *     file and line it points at (`File: <absolute file>:<line>:<column>`, the model or template
 *     file when the diagnostic names one) and the code frame there; a failure that persists
 *     through later runs (every request of a document whose extension crashes) is not printed
 *     again; a fixed file prints `insitu: docs/a.md: fixed`;
 *   - every HMR client gets the custom event `insitu:failures`
 *     (`{ files: [{ file, failures: [{ text, err }] }] }`, that file's full list, empty when fixed);
 *   - when a failure is new, Vite's own error payload (`{ type: 'error', err }`: `message`,
 *     `stack: ''`, `id`, `loc`, `frame`, `plugin`) of the first new one, so Vite's overlay shows
 *     it in every framework (Vite's client honours `server.hmr.overlay`).
 * - Write mode (`deferRewrites`): a run whose output differs from its input is about to be
 *   written, and its lines are those of the text the user saved, not of the file written: it is
 *   held until the live sync has synced the document (`settled(file, sync)`), then told with the
 *   sync's diagnostics, whose lines are those of the file written (sync-document.ts), or as it
 *   is when nothing was written (an unwritable file).
 * - `forget(file)`: the document was deleted; its failures go (the browsers told, nothing
 *   printed); a run that ends after its document was deleted tells nothing.
 * - When some of a file's failures are fixed and others are left, the overlay gets the first of
 *   those left (it may have shown a fixed one).
 * - `reportStartFailure(error)`: the engine could not start (a bad `insitu.toml`): the same, under
 *   the config file, except the terminal line (logged once at start by `logEngineStartError`).
 *   `clearStartFailure()` forgets it.
 * - `answerReady(client)`: a page whose client announced itself (`insitu:ready`) gets every
 *   current failure, and the first as an error payload.
 * - The browser client (browser-diagnostics.ts) prints each failure once per page with
 *   `console.error`, and closes the overlay it knows to be insitu's (Vite's `vite:error` event
 *   says whose it is) once no failure is left, before the update that follows the fix reaches
 *   Vite's client (which would reload a page showing an overlay at its first update).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { InsituEngine } from '../engine/engine.js'
import type { LocatedDiagnostic } from '../engine/render-document.js'
import { describeReason, type OwnerRecord } from '../engine/run-records.js'
import { engineStartError, failureAt } from './diagnostics.js'
import type { PluginLogger } from './plugin-logger.js'
import { PLUGIN_NAME } from './options.js'

export const FAILURES_EVENT = 'insitu:failures'

/** What Vite's overlay shows of a failure (Vite's `ErrorPayload['err']`). */
export interface OverlayError {
  message: string
  stack: string
  id: string
  loc: { file: string; line: number; column: number }
  frame?: string
  plugin: string
}

/** One failure as the browser gets it: the console line and the overlay's error. */
export interface BrowserFailure {
  text: string
  err: OverlayError
}

export interface FailuresMessage {
  files: { file: string; failures: BrowserFailure[] }[]
}

/** A hot channel (Vite 5–8 `server.ws`) or one client of it: custom events and Vite's own payloads. */
export interface FailureChannel {
  send(payload: { type: 'error'; err: OverlayError } | { type: 'custom'; event: string; data: FailuresMessage }): void
}

interface FileFailures {
  /** Identity of each failure (location and message), in order. */
  keys: string[]
  failures: BrowserFailure[]
}

/** A failure as found: its identity, where it is in the document (`docs/a.md:4`), what the browser gets. */
interface FoundFailure {
  key: string
  where: string
  failure: BrowserFailure
}

/** The file a start failure is filed under when it names none. */
const START_FAILURE = '(insitu)'

export class DevFailures {
  private readonly files = new Map<string, FileFailures>()
  /** Write mode: each file's last run, held until the live sync has synced the file (see the contract). */
  private readonly held = new Map<string, { record: OwnerRecord; root: string }>()
  /** The file the engine's start failure is filed under (it is logged when it happens, not here). */
  private startFailureFile: string | null = null

  constructor(
    private readonly channel: FailureChannel,
    private readonly logger: PluginLogger,
    private readonly options: {
      /** Hold the runs of documents about to be written (write mode). @default false */
      deferRewrites?: boolean
    } = {},
  ) {}

  /** Follow `engine`'s runs (see the contract). Returns the unsubscribe function. */
  connect(engine: InsituEngine): () => void {
    return engine.runRecords.onRun((record) => {
      if (record.type !== 'document') return
      if (this.options.deferRewrites && record.lastRun.rewrites) {
        this.held.set(record.file, { record, root: engine.root })
        return
      }
      this.held.delete(record.file)
      this.ran(record, engine.root)
    })
  }

  /** Write mode: `file` (project-relative) was synced: its held run is told, at the lines of the file written when it was. */
  settled(file: string, sync: { written: boolean; diagnostics: readonly LocatedDiagnostic[] }): void {
    const held = this.held.get(file)
    if (!held) return
    this.held.delete(file)
    this.ran(held.record, held.root, sync.written ? sync.diagnostics : undefined)
  }

  reportStartFailure(error: unknown): void {
    const failure = engineStartError(error) as Error & { loc?: OverlayError['loc']; frame?: string }
    const loc = failure.loc ?? { file: START_FAILURE, line: 1, column: 1 }
    const err = overlayError(failure.message, loc, failure.frame)
    this.clearStartFailure()
    this.startFailureFile = loc.file
    const where = loc.file === START_FAILURE ? PLUGIN_NAME : `${loc.file}:${loc.line}`
    this.update(loc.file, [{ key: `${where}\u0000${failure.message}`, where, failure: { text: `[insitu] ${failure.message}`, err } }], null)
  }

  /** A document was deleted: its failures are gone with it (the browsers are told). */
  forget(file: string): void {
    this.held.delete(file)
    this.drop(file)
  }

  clearStartFailure(): void {
    const file = this.startFailureFile
    this.startFailureFile = null
    if (file !== null) this.drop(file)
  }

  /** `file` has no failures any more: the browsers are told. */
  private drop(file: string): void {
    if (this.files.delete(file)) sendFailures(this.channel, [{ file, failures: [] }])
  }

  answerReady(client: FailureChannel): void {
    const files = [...this.files].map(([file, { failures }]) => ({ file, failures }))
    if (files.length === 0) return
    sendFailures(client, files)
    client.send({ type: 'error', err: files[0]!.failures[0]!.err })
  }

  private ran(record: OwnerRecord, root: string, diagnostics: readonly LocatedDiagnostic[] = record.lastRun.diagnostics): void {
    // A run that ended after its document was deleted (a runaway's) has nothing left to tell.
    if (!fs.existsSync(path.resolve(root, record.file))) return this.forget(record.file)
    const run = record.lastRun
    const errors = diagnostics.filter((d) => d.severity === 'error')
    const failures = errors.map((diagnostic): FoundFailure => {
      const located = failureAt(diagnostic, path.resolve(root, record.file), root)
      const where = `${diagnostic.path ?? record.file}${typeof diagnostic.line === 'number' ? `:${diagnostic.line}` : ''}`
      const err = overlayError(located.message, located.loc, located.frame)
      const key = `${where}\u0000${located.loc.file}:${located.loc.line}:${located.loc.column}\u0000${located.message}`
      return { key, where, failure: { text: `[insitu] ${where} ${located.message}`, err } }
    })
    const cause = run.reason.kind === 'selected' ? describeReason(run.reason) : null
    this.update(record.file, failures, cause)
  }

  private update(file: string, failures: FoundFailure[], cause: string | null): void {
    const before = this.files.get(file)
    const keys = failures.map((f) => f.key)
    if (before ? sameList(before.keys, keys) : keys.length === 0) return
    const shown = new Set(before?.keys ?? [])
    const fresh = failures.filter((f) => !shown.has(f.key))
    if (failures.length === 0) {
      this.files.delete(file)
      if (before && file !== this.startFailureFile) this.logger.info(`insitu: ${file}: fixed`)
    } else {
      this.files.set(file, { keys, failures: failures.map((f) => f.failure) })
    }
    // A start failure is logged once when it happens (dev-server.ts `logEngineStartError`).
    if (file !== this.startFailureFile) for (const found of fresh) this.print(found, cause)
    sendFailures(this.channel, [{ file, failures: failures.map((f) => f.failure) }])
    // The overlay shows the first new failure; when some were fixed and others are left, the first
    // of those (it may have shown a fixed one).
    const shownNext = fresh[0] ?? (before && failures.length > 0 && failures.length < before.keys.length ? failures[0] : undefined)
    if (shownNext) this.channel.send({ type: 'error', err: shownNext.failure.err })
  }

  private print({ where, failure: { err } }: FoundFailure, cause: string | null): void {
    const { loc } = err
    const head = `insitu: ${where}: ${err.message}${cause ? ` ← ${cause}` : ''}`
    const frame = err.frame ? `\n${indent(err.frame)}` : ''
    this.logger.error(`${head}\n  File: ${loc.file}:${loc.line}:${loc.column}${frame}`)
  }
}

/** Vite's error payload for its overlay. */
function overlayError(message: string, loc: OverlayError['loc'], frame?: string): OverlayError {
  return { message, stack: '', id: loc.file, loc, plugin: PLUGIN_NAME, ...(frame ? { frame } : {}) }
}

/** The browser client's event: each file's failures now (none: fixed). */
function sendFailures(channel: FailureChannel, files: FailuresMessage['files']): void {
  channel.send({ type: 'custom', event: FAILURES_EVENT, data: { files } satisfies FailuresMessage })
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i])
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n')
}
