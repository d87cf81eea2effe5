/**
 * Builtin transform `materialize` (SPEC §8): render(resource(source)).
 *
 * Options: `source` (required: `materialize transform requires source`): a resource
 * capability name (invoked with all the options) or a resource identifier containing `:`
 * (read through the host); `renderer` (default `jinja`, invoked with the value and all the
 * options). Dependencies: the resource's, then the renderer's.
 */
import type { BuiltinCapability, BuiltinContext } from '../host/host.js'
import type { InvocationResult } from '../protocol/schemas.js'
import { optionalString, requiredString } from './options.js'

export const materializeTransform: BuiltinCapability = {
  kind: 'transform',
  name: 'materialize',
  invoke({ options }, context) {
    return materializeWith(options, context)
  },
}

/** Read the source's value (and its dependencies) on behalf of a builtin. */
export async function readSource(
  options: Record<string, unknown>,
  context: BuiltinContext,
): Promise<{ value: unknown; dependencies: string[] }> {
  const source = requiredString(options, 'source', 'materialize transform requires source')
  // Dependencies of what `context` reads are recorded by the host's builtin context.
  if (source.includes(':')) return { value: await context.read(source), dependencies: [] }
  const result = await context.host.resource(source, options, context.location, context.trace)
  return { value: result.value, dependencies: result.dependencies }
}

export async function materializeWith(
  options: Record<string, unknown>,
  context: BuiltinContext,
): Promise<Partial<InvocationResult>> {
  const source = await readSource(options, context)
  const renderer = optionalString(options, 'renderer', 'materialize') ?? 'jinja'
  const rendered = await context.host.render(renderer, source.value, options, context.location, context.trace)
  return {
    content: rendered.content,
    diagnostics: rendered.diagnostics,
    dependencies: [...source.dependencies, ...rendered.dependencies],
  }
}
