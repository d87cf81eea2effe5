/**
 * The engine's lifecycle for one plugin instance: one start, reused across rebuilds; a stop
 * that is idempotent while it runs; a fresh start after a stop (Vite reuses an inline plugin
 * object across server restarts); validators once per engine.
 *
 * Contract:
 * - `start()` resolves to the running engine: one creation (through the `create` given to the
 *   constructor) shared by every caller until `stop()`. Each `prepare` step registered with
 *   `onStart` runs once per created engine, in order, before `start()` resolves (the dev
 *   server wires its watchers there). While or after a stop it rejects with `PluginStoppedError`;
 *   an engine whose creation finishes during a stop is closed at once.
 * - `current`: the engine once created (while its `prepare` steps run too), else undefined.
 *   `starting`: a start is in progress and not finished.
 * - `abort(reason)`: a start in progress gives up at once (the signal handed to `create`), and
 *   the jobs of a running engine fail with `reason` (the dev server is closing).
 * - `stop()`: runs the `onStop` steps (watchers close first), then closes the engine (awaiting a
 *   start in progress: abort it first to not wait for a hanging handshake). Calls made while
 *   it runs share it; once it is done, everything is as before the first start, and nothing
 *   here refers to the closed engine (a docs tool renders its pages after the last build's
 *   `closeBundle`: a closed engine kept in reach, its job memo and records, was heap the
 *   collector could not free through that rendering).
 * - `validateOnce(engine)`: the validators' diagnostics the first time it is asked for this
 *   engine, else null (already reported).
 */
import type { InsituEngine } from '../engine/engine.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { messageOf, PluginStoppedError } from './diagnostics.js'

export type CreateEngine = (signal: AbortSignal) => Promise<InsituEngine>

export class EngineLifecycle {
  private creation: Promise<InsituEngine> | undefined
  private startAbort: AbortController | undefined
  private stopping: Promise<void> | undefined
  private running: InsituEngine | undefined
  private validated: InsituEngine | undefined
  private ready = false
  private readonly prepareSteps: ((engine: InsituEngine) => Promise<void> | void)[] = []
  private readonly stopSteps: (() => Promise<void> | void)[] = []

  constructor(
    private readonly create: CreateEngine,
    private readonly logError: (message: string) => void,
  ) {}

  get current(): InsituEngine | undefined {
    return this.running
  }

  get starting(): boolean {
    return this.creation !== undefined && !this.ready && !this.stopping
  }

  get isStopping(): boolean {
    return this.stopping !== undefined
  }

  onStart(prepare: (engine: InsituEngine) => Promise<void> | void): void {
    this.prepareSteps.push(prepare)
  }

  onStop(step: () => Promise<void> | void): void {
    this.stopSteps.push(step)
  }

  start(): Promise<InsituEngine> {
    if (this.stopping) return Promise.reject(new PluginStoppedError())
    if (!this.creation) {
      const abort = new AbortController()
      this.startAbort = abort
      this.creation = this.create(abort.signal).then(async (created) => {
        this.running = created
        if (this.stopping) {
          void created.close().catch((error: unknown) => this.logError(messageOf(error)))
          throw new PluginStoppedError()
        }
        for (const prepare of this.prepareSteps) await prepare(created)
        this.ready = true
        return created
      })
    }
    return this.creation
  }

  abort(reason: Error): void {
    this.startAbort?.abort(reason)
    void this.creation?.then(
      (engine) => engine.abort(reason),
      () => undefined,
    )
    this.running?.abort(reason)
  }

  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await Promise.all(this.stopSteps.map(async (step) => step()))
      const running = this.creation ? await this.creation.catch(() => undefined) : undefined
      await running?.close()
    })().finally(() => {
      this.creation = undefined
      this.startAbort = undefined
      this.running = undefined
      this.validated = undefined
      this.ready = false
      this.stopping = undefined
    })
    return this.stopping
  }

  validateOnce(engine: InsituEngine): Promise<Diagnostic[]> | null {
    if (this.validated === engine) return null
    this.validated = engine
    return engine.host.validate()
  }
}
