/**
 * The language server on this process's stdin and stdout (`vite-plugin-insitu lsp --stdio`).
 *
 * Contract: `runLanguageServer(options)` serves (server.ts) until the client's `exit`
 * (the process then exits: 0 after `shutdown`, 1 without) or until stdin closes (the workspace
 * stops, every extension and sandbox process ends, then it resolves to 1). stdout carries LSP
 * messages only: `console.log`/`info`/`debug` are sent to stderr while it runs.
 */
import { format } from 'node:util'
import { createConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node'
import { type LanguageServerOptions, serveLanguage } from './server.js'

export async function runLanguageServer(options: LanguageServerOptions): Promise<number> {
  const toStderr = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
  const reader = new StreamMessageReader(process.stdin)
  const writer = new StreamMessageWriter(process.stdout)
  const connection = createConnection(reader, writer)
  let inputClosed!: () => void
  const closed = new Promise<void>((resolve) => {
    inputClosed = resolve
  })
  reader.onClose(() => inputClosed())
  await serveLanguage(connection, { ...options, closed })
  return 1
}
