/**
 * `vite-plugin-insitu/sdk`: write insitu extensions in TypeScript/Node.
 *
 * ```ts
 * import { defineExtension, z } from 'vite-plugin-insitu/sdk'
 * const ext = defineExtension({ name: 'acme/hello', version: '1.0.0' })
 * ext.transform('hello', { params: z.object({ who: z.string().default('world') }) }, (p) => `Hello ${p.who}`)
 * await ext.serve()
 * ```
 * Depends only on the protocol layer, zod and Node builtins.
 */
export { z } from 'zod'
export type { DiagnosticInput, HandlerContext } from './context.js'
export {
  type Awaitable,
  type ConnectOptions,
  type ContentOutput,
  DEFAULT_PARAMS,
  type DefaultParams,
  defineExtension,
  Extension,
  type ExtensionInfo,
  type RendererHandler,
  type RendererSpec,
  type ResourceHandler,
  type ResourceSpec,
  type TransformHandler,
  type TransformSpec,
  type ValidatorHandler,
  type ValidatorSpec,
} from './extension.js'
export type { RpcPeer } from '../protocol/peer.js'
export type { CapabilityKind, Diagnostic, InitializeResult, InvocationResult, Location } from '../protocol/schemas.js'
