/**
 * A build that does not watch (`vite build`, Rollup's `rollup()`): the plugin's runtime runs in
 * a process of its own (src/build-child.ts), so that the build's process holds neither the
 * engine's code nor its data and garbage (issue #38: a VitePress build's memory peaks while it
 * renders the pages, after the bundling, and an engine in that process raised the peak by 7 %;
 * with the engine beside it, by nothing measurable).
 *
 * Contract (`BuildProcessRuntime`, a `PluginRuntime`):
 * - The process is forked at the `config` hook (the program loads while Vite resolves the config
 *   and the bundler sets up), told its options at `configResolved` (plain Rollup: at the first
 *   `buildStart`, where it is forked), and ends when the last build that started in it reaches
 *   `buildEnd` (every module is loaded: nothing more is asked of the engine; it stops, its
 *   caches written, while the bundler writes its output, and `closeBundle` returns once the
 *   process is gone), so it is not there while a docs tool renders its pages. A later build
 *   starts another, as the in-process engine starts again after a `closeBundle`.
 * - `buildStart`, `load`, `transform` and `buildEnd` run there (its `closeBundle` stops the
 *   engine), by the same code as in a dev server's process (in-process.ts, builds.ts,
 *   serve-document.ts): the same results, errors (with file, line and frame; the user's errors
 *   stay the user's, user-errors.ts) and warnings, given to this process's plugin context; the
 *   logger's lines are printed here, by Vite's logger once the config is resolved.
 * - `transform` sends only what the build process could change: a module matched by a module
 *   rule, or a managed document (scope-matchers.ts, with the patterns the process read from the
 *   project's config) that is not job-free by its text and simple front matter alone
 *   (job-free-verdict.ts: a front matter outside simple-yaml.ts's subset is asked about);
 *   anything else is left as it is, unsent.
 * - The process ending before the build is done (a crash) fails what is pending and every
 *   later hook of that build with `vite-plugin-insitu: its build process ended …`. The process
 *   does not keep this one alive (unreferenced while no hook waits for it), and ends when this
 *   one does (its channel closes).
 * - In write and check mode without module rules, the build's `buildStart` syncs (or checks)
 *   every document there, and the process ends once the builds sharing it have done so: each
 *   managed document is then current on disk, its regions and front matter as a render would
 *   give them, so `load` and `transform` leave documents to the bundler (what they served was
 *   the file's text) and `buildEnd` and `closeBundle` have nothing to do (Astro's builds keep no
 *   engine beside them: its pages render from the documents on disk).
 * - A server that does not watch (plugin.ts: Astro's content sync) uses this runtime as a build
 *   does; `closeServer` ends its process. The other dev-server and watch hooks do nothing here:
 *   such runs use the in-process runtime.
 */
import { type ChildProcess, fork } from 'node:child_process'
import path from 'node:path'
import type { ResolvedConfig } from 'vite'
import { jobFreeVerdict, simpleFrontMatter } from '../documents/job-free-verdict.js'
import { diskMode } from '../sync/disk-mode.js'
import { childProgram } from '../sandbox/child-programs.js'
import { type BuildHook, type ChildMessage, type ParentMessage, reviveError } from './build-messages.js'
import { cleanId, isSkippedId, NON_TEXT_QUERY } from './module-ids.js'
import { PLUGIN_NAME, type ResolvedOptions } from './options.js'
import { consoleLogger, type PluginLogger, viteLogger } from './plugin-logger.js'
import type { HookContext, PluginRuntime, ServedModule } from './plugin-runtime.js'
import { type ScopeMatchers, type ScopePatterns, scopeMatchers } from './scope-matchers.js'

/** How long an ending build process may take to exit before it is killed. */
const EXIT_WAIT_MS = 10_000

export class BuildProcessRuntime implements PluginRuntime {
  private logger: PluginLogger = consoleLogger
  private vite: { root: string; outDir: string } | undefined
  private current: BuildProcess | undefined
  /** Builds started in the current process and not yet at `buildEnd`. */
  private openBuilds = 0
  /** The last process told to end (`release`), until it has. */
  private ending: Promise<void> | undefined

  /**
   * Write and check modes without module rules: once `buildStart` has synced (or checked) every
   * document, each is current on disk, so what `load` and `transform` would serve is the file's
   * own text; the process ends there (see the contract).
   */
  private readonly finishesAtStart: boolean

  constructor(private readonly options: ResolvedOptions) {
    this.finishesAtStart = diskMode(options) !== 'none' && options.modules.length === 0
  }

  /** The build's config is being resolved: the process starts loading now, beside it. */
  config(): null {
    this.current ??= new BuildProcess(this.options, () => this.logger)
    return null
  }

  configResolved(config: ResolvedConfig): void {
    const vite = { root: config.root, outDir: path.resolve(config.root, config.build.outDir) }
    this.logger = viteLogger(config.logger)
    // Builds of one site share a process (VitePress resolves its client and server builds'
    // configs, then runs both; the output folder serves build watch only); one of another root,
    // with none open, gets its own.
    const previous = this.vite
    this.vite = vite
    if (this.current?.started && this.openBuilds === 0 && previous?.root !== vite.root) {
      void this.current.end()
      this.current = undefined
    }
    this.process()
  }

  configureServer(): void {}

  transformIndexHtml(): undefined {
    return undefined
  }

  async buildStart(context: HookContext): Promise<void> {
    const child = this.process()
    this.openBuilds++
    try {
      await child.call('buildStart', [], context)
    } finally {
      if (this.finishesAtStart) {
        // Gone before any module loads: the bundling runs without it.
        this.release(child)
        await this.ending
      }
    }
  }

  async load(context: HookContext, id: string): Promise<ServedModule> {
    if (this.finishesAtStart) return null
    return (await this.process().call('load', [id], context)) as ServedModule
  }

  async transform(context: HookContext, code: string, id: string, options: { ssr?: boolean } | undefined): Promise<ServedModule> {
    if (this.finishesAtStart || isSkippedId(id) || NON_TEXT_QUERY.test(id)) return null
    const child = this.process()
    const scope = await child.scope
    const file = cleanId(id)
    // A managed document whose text alone says it holds no job comes out as it went in (serve-document.ts's cheap path).
    if (!scope.moduleRule(file) && (!scope.isManaged(file) || jobFreeVerdict(code, simpleFrontMatter))) return null
    return (await child.call('transform', [code, id, options?.ssr === undefined ? undefined : { ssr: options.ssr }], context)) as ServedModule
  }

  hotUpdate(): undefined {
    return undefined
  }

  handleHotUpdate(): undefined {
    return undefined
  }

  watchChange(): void {}

  async buildEnd(context: HookContext, error: Error | undefined): Promise<void> {
    const child = this.current
    if (!child || this.finishesAtStart) return
    try {
      await child.call('buildEnd', [error?.message], context)
    } finally {
      // Every module is loaded: the build asks nothing more of the engine.
      this.release(child)
    }
  }

  renderStart(): void {}

  shouldTransformCachedModule(): null {
    return null
  }

  /** A server that does not watch (see plugin.ts) is done: its process ends. */
  async closeServer(): Promise<void> {
    const child = this.current
    this.current = undefined
    this.openBuilds = 0
    await Promise.all([child?.end(), this.ending])
  }

  /** The process was told to end at the last `buildEnd` (or `buildStart`, see the contract): wait until it has. */
  async closeBundle(): Promise<void> {
    await this.ending
  }

  /**
   * One build is done with `child`: the last one stops its engine (its caches written) and ends
   * it, while the bundler goes on (writing its output); `closeBundle` waits for the exit.
   */
  private release(child: BuildProcess): void {
    this.openBuilds = Math.max(0, this.openBuilds - 1)
    if (this.openBuilds > 0 || this.current !== child) return
    this.current = undefined
    this.ending = child
      .call('closeBundle', [], undefined)
      .catch(() => undefined) // the engine's stop reports its own failures (logged there)
      .then(() => child.end())
  }

  async closeWatcher(): Promise<void> {}

  /** The current build process (forked if there is none), told its options and Vite's folders. */
  private process(): BuildProcess {
    this.current ??= new BuildProcess(this.options, () => this.logger)
    this.current.start(this.vite ?? { root: process.cwd(), outDir: path.resolve('dist') })
    return this.current
  }
}

/** One build process and the hooks waiting for its replies. */
class BuildProcess {
  /** The project's matchers, from the patterns the process read from its config (once started). */
  scope: Promise<ScopeMatchers> = Promise.reject(new Error('the build process was not started'))
  /** `start` was called: the process has its options (the program loads from the fork on). */
  started = false
  private readonly child: ChildProcess
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void; context: HookContext | undefined }>()
  private nextId = 1
  /** Why no more hooks can run here (set when the process exited). */
  private ended: Error | undefined
  private ending = false
  private readonly exited: Promise<void>

  constructor(
    private readonly options: ResolvedOptions,
    private readonly logger: () => PluginLogger,
  ) {
    this.child = fork(childProgram('build-child'), [], {
      // Not the build's own Node options (an inspector, a loader): the process runs the published program.
      execArgv: [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.child.unref()
    this.child.channel?.unref()
    this.child.on('message', (message: ChildMessage) => this.receive(message))
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.failPending(new Error(`${PLUGIN_NAME}: its build process ended (${signal ?? `exit code ${code}`}) before the build was done`))
        resolve()
      })
      this.child.once('error', (error) => {
        this.failPending(new Error(`${PLUGIN_NAME}: its build process could not run: ${error.message}`))
        resolve()
      })
    })
    this.scope.catch(() => {})
  }

  /** Give the process its options and Vite's folders (once; the first call wins). */
  start(vite: { root: string; outDir: string }): void {
    if (this.started) return
    this.started = true
    const { options } = this
    this.post({ type: 'start', options, root: vite.root, outDir: vite.outDir })
    this.scope = this.call('scope', [], undefined).then((patterns) => scopeMatchers(patterns as ScopePatterns, options.modules))
    // Asked by transform only; a build that fails before any module is transformed never awaits it.
    this.scope.catch(() => {})
  }

  /** Run `hook` there; its warnings and errors go to `context`. */
  call(hook: BuildHook, args: unknown[], context: HookContext | undefined): Promise<unknown> {
    if (this.ended) return Promise.reject(this.ended)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, context })
      if (this.pending.size === 1) this.child.channel?.ref()
      try {
        this.post({ type: 'call', id, hook, args })
      } catch (error) {
        this.settle(id)
        reject(error)
      }
    })
  }

  /** Close the channel (the process stops its engine and exits); resolves once it is gone. */
  end(): Promise<void> {
    if (!this.ending) {
      this.ending = true
      // The hook awaiting this keeps the build's process alive until the exit (Rollup reports
      // a hook left pending by an event loop that ran out of work as an early exit).
      this.child.ref()
      if (this.child.connected) this.child.disconnect()
      const kill = setTimeout(() => this.child.kill('SIGKILL'), EXIT_WAIT_MS)
      kill.unref()
      void this.exited.then(() => clearTimeout(kill))
    }
    return this.exited
  }

  private post(message: ParentMessage): void {
    this.child.send(message)
  }

  private receive(message: ChildMessage): void {
    if (message.type === 'log') {
      this.logger()[message.level](message.message)
      return
    }
    const call = this.settle(message.id)
    if (!call) return
    try {
      for (const warning of message.warnings) call.context?.warn(typeof warning === 'string' ? { message: warning } : warning)
      if (message.error) {
        const error = reviveError(message.error)
        // The user's errors go through `this.error`, as they did in the process that made them.
        if (message.error.user && call.context) call.context.error(error)
        throw error
      }
      call.resolve(message.result)
    } catch (error) {
      call.reject(error)
    }
  }

  private settle(id: number) {
    const call = this.pending.get(id)
    this.pending.delete(id)
    if (this.pending.size === 0) this.child.channel?.unref()
    return call
  }

  private failPending(error: Error): void {
    this.ended ??= error
    for (const [id, call] of this.pending) {
      this.pending.delete(id)
      call.reject(this.ended)
    }
  }
}
