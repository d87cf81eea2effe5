/**
 * A build's engine process: where a build that does not watch runs the plugin's runtime
 * (plugin/in-process.ts), so that the build's own process holds none of it (issue #38: a docs
 * tool's build peaks while it renders the pages, after the bundling; an engine in that process
 * raised the peak by its code and its garbage). plugin/build-process.ts forks it and speaks
 * plugin/build-messages.ts to it.
 *
 * Contract:
 * - `start` creates the runtime and resolves it as Vite would (root, output folder; its logger
 *   sends each line to the parent). Each `call` runs the hook with a plugin context of a build
 *   that does not watch: `error` throws, `warn` is kept for the reply, `addWatchFile` does nothing
 *   (nothing watches); the reply carries the result or the error (serialized) and the warnings.
 * - When the parent goes away (its channel closes: the build closed it once its modules were
 *   loaded, or the parent ended), the engine stops (its extensions and sandbox processes end) and this
 *   process exits. Signals end it as any Node process of the plugin (sandbox/process-end.ts).
 */
import type { ResolvedConfig } from 'vite'
import { type BuildHook, type ChildMessage, type ParentMessage, serializeError, type Warning } from './plugin/build-messages.js'
import type { InProcessRuntime } from './plugin/in-process.js'
import type { HookContext } from './plugin/plugin-runtime.js'
import { loadRuntimeModule, saveRuntimeCodeCache } from './plugin/runtime-module.js'

/** Loaded while the parent resolves its config; the runtime exists once `start` came. */
const runtimeModule = loadRuntimeModule()
// A bundle that fails to load fails the `start` that awaits it (its reply carries the error).
runtimeModule.catch(() => undefined)
let runtime: Promise<InProcessRuntime> | undefined

/** How long the engine may take to stop once the parent is gone. */
const STOP_WAIT_MS = 3_000

function send(message: ChildMessage): void {
  if (process.connected) process.send!(message)
}

/** What Vite's logger would print, sent to the parent (which prints it with its own). */
const logger = {
  info: (message: string) => send({ type: 'log', level: 'info', message }),
  warn: (message: string) => send({ type: 'log', level: 'warn', message }),
  error: (message: string) => send({ type: 'log', level: 'error', message }),
}

process.on('message', (message: ParentMessage) => {
  if (message.type === 'start') {
    runtime = runtimeModule.then(({ createInProcessRuntime }) => {
      const created = createInProcessRuntime(message.options)
      created.configResolved({ root: message.root, build: { outDir: message.outDir }, logger } as unknown as ResolvedConfig)
      return created
    })
    return
  }
  void call(message.id, message.hook, message.args)
})

process.on('disconnect', () => {
  // Bounded: the exit itself ends what is left (sandbox/process-end.ts kills the extensions).
  setTimeout(() => process.exit(0), STOP_WAIT_MS).unref()
  // The build has done its work: what V8 compiled of the runtime serves the next build.
  saveRuntimeCodeCache()
  void (runtime?.then((created) => created.stop()) ?? Promise.resolve()).finally(() => process.exit(0))
})

async function call(id: number, hook: BuildHook, args: unknown[]): Promise<void> {
  const warnings: Warning[] = []
  const context: HookContext = {
    meta: { watchMode: false },
    addWatchFile() {},
    warn: (warning) => void warnings.push(warning),
    error: (error) => {
      throw typeof error === 'string' ? new Error(error) : error
    },
  }
  try {
    const result = await run(await runtime!, context, hook, args)
    send({ type: 'reply', id, result: result ?? null, warnings })
  } catch (error) {
    send({ type: 'reply', id, error: serializeError(error), warnings })
  }
}

function run(runtime: InProcessRuntime, context: HookContext, hook: BuildHook, args: unknown[]): unknown {
  switch (hook) {
    case 'scope':
      return runtime.projectScope().patterns
    case 'buildStart':
      return runtime.buildStart(context)
    case 'load':
      return runtime.load(context, args[0] as string)
    case 'transform':
      return runtime.transform(context, args[0] as string, args[1] as string, args[2] as { ssr?: boolean } | undefined)
    case 'buildEnd':
      return runtime.buildEnd(context, typeof args[0] === 'string' ? new Error(args[0]) : undefined)
    case 'closeBundle':
      return runtime.closeBundle(context)
  }
}
