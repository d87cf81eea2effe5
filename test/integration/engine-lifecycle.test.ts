/**
 * The plugin's engine lifecycle (src/plugin/engine-lifecycle.ts) as a state machine, with real
 * engines on a temporary project; the injected `create` only lets each test decide when the
 * creation finishes.
 */
import fs from 'node:fs'
import path from 'node:path'
import v8 from 'node:v8'
import vm from 'node:vm'
import { afterEach, describe, expect, it } from 'vitest'
import { InsituEngine } from '../../src/engine/engine.js'
import { PluginStoppedError } from '../../src/plugin/diagnostics.js'
import { EngineLifecycle } from '../../src/plugin/engine-lifecycle.js'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

afterEach(() => removeTempDirs())

function project(): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'insitu.toml'), 'version = 1\n')
  fs.writeFileSync(path.join(root, 'README.md'), '# Hello\n')
  return root
}

/** A lifecycle whose creations wait for `release()`; every engine it created is in `created`. */
function gatedLifecycle() {
  const root = project()
  const created: InsituEngine[] = []
  const signals: AbortSignal[] = []
  let release: () => void = () => {}
  let gate = new Promise<void>((resolve) => (release = resolve))
  const errors: string[] = []
  const lifecycle = new EngineLifecycle(async (signal) => {
    signals.push(signal)
    await gate
    const engine = await InsituEngine.create({ root, cache: false })
    created.push(engine)
    return engine
  }, (message) => errors.push(message))
  return {
    lifecycle,
    created,
    signals,
    errors,
    release: () => release(),
    regate: () => {
      gate = new Promise<void>((resolve) => (release = resolve))
    },
  }
}

describe('EngineLifecycle', () => {
  it('one creation for every caller, prepare steps once before anyone gets the engine', async () => {
    const { lifecycle, created, release } = gatedLifecycle()
    const prepared: InsituEngine[] = []
    lifecycle.onStart(async (engine) => {
      expect(lifecycle.current).toBe(engine)
      prepared.push(engine)
    })
    const first = lifecycle.start()
    const second = lifecycle.start()
    expect(lifecycle.starting).toBe(true)
    release()
    const [a, b] = await Promise.all([first, second])
    expect(a).toBe(b)
    expect(created).toEqual([a])
    expect(prepared).toEqual([a])
    expect(lifecycle.starting).toBe(false)
    await lifecycle.stop()
  })

  it('a stop during the start closes the engine created afterwards and rejects the start', async () => {
    const { lifecycle, created, release } = gatedLifecycle()
    const starting = lifecycle.start()
    const stopped = lifecycle.stop()
    await expect(lifecycle.start()).rejects.toBeInstanceOf(PluginStoppedError)
    release()
    await expect(starting).rejects.toBeInstanceOf(PluginStoppedError)
    await stopped
    expect(created).toHaveLength(1)
    // Closed: its index is gone.
    expect(() => created[0]!.index.documentPaths()).toThrow()
    expect(lifecycle.current).toBeUndefined()
  })

  it('abort() cancels the start in progress through the signal given to create', async () => {
    const { lifecycle, signals, release } = gatedLifecycle()
    const starting = lifecycle.start()
    const reason = new Error('closing')
    lifecycle.abort(reason)
    expect(signals[0]!.aborted).toBe(true)
    expect(signals[0]!.reason).toBe(reason)
    release()
    await starting.catch(() => undefined)
    await lifecycle.stop()
  })

  it('after a stop the next start creates a fresh engine; concurrent stops share one', async () => {
    const { lifecycle, created, release } = gatedLifecycle()
    release()
    const first = await lifecycle.start()
    const stops = [lifecycle.stop(), lifecycle.stop()]
    expect(stops[0]).toBe(stops[1])
    await Promise.all(stops)
    const second = await lifecycle.start()
    expect(second).not.toBe(first)
    expect(created).toEqual([first, second])
    await lifecycle.stop()
  })

  it('runs the stop steps before the engine closes, and validators once per engine', async () => {
    const { lifecycle, release } = gatedLifecycle()
    release()
    const engine = await lifecycle.start()
    const order: string[] = []
    lifecycle.onStop(async () => {
      order.push(lifecycle.current === engine ? 'step, engine still there' : 'step after')
    })
    expect(await lifecycle.validateOnce(engine)).toEqual([])
    expect(lifecycle.validateOnce(engine)).toBeNull()
    await lifecycle.stop()
    expect(order).toEqual(['step, engine still there'])
  })

  it('keeps no reference to an engine once it stopped (a docs tool renders its pages after the last build)', async () => {
    v8.setFlagsFromString('--expose-gc')
    const gc = vm.runInNewContext('gc') as () => void
    const root = project()
    const lifecycle = new EngineLifecycle(async () => InsituEngine.create({ root, cache: false }), () => {})
    const startValidateStop = async (): Promise<WeakRef<InsituEngine>> => {
      const engine = await lifecycle.start()
      expect(await lifecycle.validateOnce(engine)).toEqual([])
      await lifecycle.stop()
      return new WeakRef(engine)
    }
    const closed = await startValidateStop()
    await expect
      .poll(async () => {
        await new Promise((resolve) => setImmediate(resolve))
        gc()
        return closed.deref()
      })
      .toBeUndefined()
  })
})
