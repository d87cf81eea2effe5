/** insitu protocol v1 wire layer: framing, the JSON-RPC peer and the boundary schemas. */
export {
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  type FrameDecoderOptions,
  FramingError,
  type FramingRule,
  MAX_BODY_BYTES,
  MAX_HEADER_BYTES,
} from './framing.js'
export {
  DEFAULT_TIMEOUT_MS,
  ErrorCodes,
  type NotificationHandler,
  type RequestContext,
  type RequestHandler,
  type RequestOptions,
  RpcClosedError,
  RpcPeer,
  type RpcPeerOptions,
  RpcResponseError,
  RpcTimeoutError,
  SHUTDOWN_TIMEOUT_MS,
} from './peer.js'
export * from './schemas.js'
