/**
 * Builtin renderer `jinja` (SPEC §8): options `template` (default `@insitu/table`) and
 * `params`; renders the invocation's value. Dependencies: the template files read.
 *
 * Bounded (issue #34): a render runs here for at most `IN_PROCESS_SLICE_MS` (the most it holds
 * the event loop of the process that serves pages); one that takes longer is done again in the
 * sandbox (and, for `SLOW_MEMORY_MS`, that template's renders go there at once: the regions of a
 * document that share it do not each hold this process first) (src/sandbox/sliced-work.ts:
 * `renderTask` in another process) with the rest of `budgetMs`, and fails there with `template <name>: the render ran longer than 30 s (line 3)`
 * (its process killed when the render cannot stop itself). Its value and params cross to that
 * process through cloneable-values.ts; its errors keep their position and dependencies.
 */
import path from 'node:path'
import { withPosition } from '../documents/error-positions.js'
import { toPosixRelative } from '../documents/project-paths.js'
import type { BuiltinCapability } from '../host/host.js'
import { describeDuration, type ProcessPool } from '../sandbox/process-pool.js'
import { runSliced } from '../sandbox/sliced-work.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'
import { createJinjaRenderer, DEFAULT_TEMPLATE, JinjaTemplateError, type JinjaRendererOptions, type RenderInput, type RenderOutput } from './jinja.js'
import { optionalString, optionalTable } from './options.js'

export interface JinjaRendererContext extends JinjaRendererOptions {
  /** Milliseconds a render may run. @default 30000 */
  budgetMs?: number
  /** The sandbox a render that outruns its slice moves to. @default none: the render runs here with the whole budget */
  sandbox?: () => ProcessPool
}

/** A render done in a sandbox process (see the header). */
export interface RenderTask {
  kind: 'render'
  templatesDir: string
  root: string
  input: unknown
  remainingMs: number
  budgetMs: number
}

/** How long a template that outran its slice goes straight to the sandbox (its other regions' renders don't each hold this process first). */
const SLOW_MEMORY_MS = 30_000

export function jinjaRenderer(context: JinjaRendererContext): BuiltinCapability {
  const renderer = createJinjaRenderer(context)
  const budgetMs = context.budgetMs ?? 30_000
  /** Template name → when it last outran its slice here. */
  const slowSince = new Map<string, number>()
  return {
    kind: 'renderer',
    name: 'jinja',
    invoke({ options: opts, value, location }) {
      const template = optionalString(opts, 'template', 'jinja')
      const params = optionalTable(opts, 'params', 'jinja')
      const input: RenderInput = { template, params, value, location }
      const name = template || DEFAULT_TEMPLATE
      return runSliced<RenderOutput>({
        budgetMs,
        pool: context.sandbox ?? null,
        skipHere: (slowSince.get(name) ?? -Infinity) > performance.now() - SLOW_MEMORY_MS,
        here: (deadline) => renderer.render(input, { deadline, budgetMs }),
        outOfTime: (error) => error instanceof JinjaTemplateError && error.timedOut,
        onOutOfSlice: () => slowSince.set(name, performance.now()),
        task: (remainingMs): RenderTask => ({ kind: 'render', templatesDir: context.templatesDir, root: context.root, input: toCloneable(input), remainingMs, budgetMs }),
        // Killed for good measure (its render could not stop itself): the template file is what to fix.
        killed: () => {
          const failure = Object.assign(new JinjaTemplateError(`template ${name}: the render ran longer than ${describeDuration(budgetMs)}`, []), { timedOut: true })
          if (name.startsWith('@insitu/')) return failure
          const file = toPosixRelative(context.root, path.resolve(context.templatesDir, name))
          return withPosition(Object.assign(failure, { dependencies: [`fs:file:${file}`] }), { path: file, line: null, column: null })
        },
      })
    },
  }
}

/** Renderers of the sandbox process, one per templates folder (their compiled templates kept). */
const renderers = new Map<string, ReturnType<typeof createJinjaRenderer>>()

/** The sandbox's side: the render with the rest of its budget. */
export function renderTask(task: RenderTask): RenderOutput {
  const key = `${task.root}\u0000${task.templatesDir}`
  let renderer = renderers.get(key)
  if (!renderer) renderers.set(key, (renderer = createJinjaRenderer({ root: task.root, templatesDir: task.templatesDir })))
  return renderer.render(fromCloneable(task.input) as RenderInput, { deadline: performance.now() + task.remainingMs, budgetMs: task.budgetMs })
}
