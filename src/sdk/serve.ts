/**
 * Serving an extension on stdio (SPEC §1, §3).
 *
 * Contract:
 * - The protocol goes to the real stdout through the `process.stdout.write` captured before
 *   anything else; afterwards `process.stdout.write` (hence `console.log/info/debug`) writes
 *   to stderr, so user output never corrupts the protocol stream. (Writes that bypass the
 *   stream, such as `fs.writeSync(1, …)`, cannot be redirected.)
 * - The process exits once the connection closes and the output is flushed: code 0 on stdin
 *   EOF and after `insitu.shutdown`, code 1 after a protocol error (its message goes to stderr).
 * - Only one stdio server per process.
 */
import { type Readable, Writable } from 'node:stream'
import { RpcClosedError, type RpcPeer } from '../protocol/peer.js'

export interface StdioHooks {
  onClose: (reason: Error) => void
  onError: (error: Error) => void
}
export type Connect = (input: Readable, output: Writable, hooks: StdioHooks) => RpcPeer

let serving = false

/** Connect over stdin/stdout; resolves once listening (the process exits by itself later). */
export function serveStdio(connect: Connect): Promise<void> {
  if (serving) return Promise.reject(new Error('an insitu extension is already serving stdio in this process'))
  serving = true
  const output = captureStdout()
  connect(process.stdin, output, {
    onClose: (reason) => {
      const clean = reason instanceof RpcClosedError && reason.message === 'RPC peer closed'
      if (!clean) logError(reason)
      exitAfterFlush(output, clean ? 0 : 1)
    },
    onError: logError,
  })
  return Promise.resolve()
}

/** A Writable onto the real stdout; `process.stdout.write` is redirected to stderr from now on. */
function captureStdout(): Writable {
  const stdout = process.stdout
  const writeProtocol = stdout.write.bind(stdout) as (chunk: Buffer, callback: (error?: Error | null) => void) => boolean
  const writeLog = process.stderr.write.bind(process.stderr) as (...args: unknown[]) => boolean
  stdout.write = ((...args: unknown[]) => writeLog(...args)) as typeof stdout.write
  // Write failures (EPIPE when the host is gone) reach the peer through the write callbacks.
  stdout.on('error', () => {})
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writeProtocol(chunk, (error) => callback(error ?? null))
    },
  })
}

function exitAfterFlush(output: Writable, code: number): void {
  let exited = false
  const exit = (): void => {
    if (exited) return
    exited = true
    process.exit(code)
  }
  if (output.writableFinished || output.destroyed) return exit()
  output.once('finish', exit)
  output.once('close', exit)
  output.once('error', exit)
  if (!output.writableEnded) output.end()
}

function logError(error: Error): void {
  process.stderr.write(`insitu extension: ${error.message}\n`)
}
