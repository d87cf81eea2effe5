/**
 * Builtin renderer `jinja` (SPEC §8): options `template` (default `@insitu/table`) and
 * `params`; renders the invocation's value. Dependencies: the template files read.
 */
import type { BuiltinCapability } from '../host/host.js'
import { createJinjaRenderer, type JinjaRendererOptions } from './jinja.js'
import { optionalString, optionalTable } from './options.js'

export function jinjaRenderer(options: JinjaRendererOptions): BuiltinCapability {
  const renderer = createJinjaRenderer(options)
  return {
    kind: 'renderer',
    name: 'jinja',
    invoke({ options: opts, value, location }) {
      const template = optionalString(opts, 'template', 'jinja')
      const params = optionalTable(opts, 'params', 'jinja')
      return renderer.render({ template, params, value, location })
    },
  }
}
