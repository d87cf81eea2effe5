/**
 * Builtin renderer `jinja` (SPEC §8): options `template` (default `@insitu/table`) and
 * `params`; renders the invocation's value. Dependencies: the template files read.
 *
 * Bounded (issue #34): a render runs here for at most `IN_PROCESS_SLICE_MS` (the most it holds
 * the event loop of the process that serves pages); one that takes longer is done again in the
 * sandbox (src/sandbox/process-pool.ts: `renderTask` in another process) with the rest of
 * `budgetMs`, and fails there with `template <name>: the render ran longer than 30 s (line 3)`
 * (its process killed when the render cannot stop itself). Its value and params cross to that
 * process through cloneable-values.ts; its errors keep their position and dependencies.
 */
import type { BuiltinCapability } from '../host/host.js'
import { describeDuration, IN_PROCESS_SLICE_MS, type ProcessPool, SANDBOX_GRACE_MS } from '../sandbox/process-pool.js'
import { fromSandboxError } from '../sandbox/task-errors.js'
import { fromCloneable, toCloneable } from '../values/cloneable-values.js'
import { createJinjaRenderer, DEFAULT_TEMPLATE, JinjaTemplateError, type JinjaRendererOptions, type RenderInput, type RenderOutput } from './jinja.js'
import { optionalString, optionalTable } from './options.js'

export interface JinjaRendererContext extends JinjaRendererOptions {
  /** Milliseconds a render may run. @default 30000 */
  budgetMs?: number
  /** The sandbox a render that outruns its slice moves to. @default none: it fails at the slice */
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

export function jinjaRenderer(context: JinjaRendererContext): BuiltinCapability {
  const renderer = createJinjaRenderer(context)
  const budgetMs = context.budgetMs ?? 30_000
  return {
    kind: 'renderer',
    name: 'jinja',
    invoke({ options: opts, value, location }) {
      const template = optionalString(opts, 'template', 'jinja')
      const params = optionalTable(opts, 'params', 'jinja')
      const input: RenderInput = { template, params, value, location }
      const started = performance.now()
      const slice = context.sandbox ? Math.min(IN_PROCESS_SLICE_MS, budgetMs) : budgetMs
      try {
        return renderer.render(input, { deadline: started + slice, budgetMs })
      } catch (error) {
        if (!(error instanceof JinjaTemplateError && error.timedOut) || slice >= budgetMs || !context.sandbox) throw error
      }
      const remainingMs = Math.max(1, Math.round(budgetMs - (performance.now() - started)))
      return renderInSandbox(context.sandbox(), { kind: 'render', templatesDir: context.templatesDir, root: context.root, input: toCloneable(input), remainingMs, budgetMs })
    },
  }
}

async function renderInSandbox(pool: ProcessPool, task: RenderTask): Promise<RenderOutput> {
  const name = (task.input as { template?: string }).template || DEFAULT_TEMPLATE
  try {
    return (await pool.run(task, {
      slow: true,
      timeoutMs: task.remainingMs + SANDBOX_GRACE_MS,
      timedOut: () => Object.assign(new JinjaTemplateError(`template ${name}: the render ran longer than ${describeDuration(task.budgetMs)}`, []), { timedOut: true }),
    })) as RenderOutput
  } catch (error) {
    throw fromSandboxError(error)
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
