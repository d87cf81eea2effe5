/**
 * The language server on this process's stdin and stdout (`vite-plugin-insitu lsp --stdio`).
 *
 * Contract: `runLanguageServer(options)` serves (server.ts) until the client's `exit`
 * (the process then exits: 0 after `shutdown`, 1 without) or until stdin closes (the workspace
 * stops, every extension and sandbox process ends, then it resolves to 0 after `shutdown`, else 1). stdout carries LSP
 * messages only: `console.log`/`info`/`debug` are sent to stderr while it runs.
 * The client's process (`initialize`'s `processId`) is watched here, not by the library (its
 * interval is never cleared: the process would outlive its closed stdin while the client lives):
 * once that process is gone it ends as when stdin closes.
 */
import { format } from 'node:util'
import { createConnection, Message, type MessageReader, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver/node'
import { type LanguageServerOptions, serveLanguage } from './server.js'

/** How often the client's process is looked for. */
const CLIENT_CHECK_MS = 3_000

export async function runLanguageServer(options: LanguageServerOptions): Promise<number> {
  const toStderr = (...args: unknown[]) => void process.stderr.write(`${format(...args)}\n`)
  console.log = toStderr
  console.info = toStderr
  console.debug = toStderr
  const input = new StreamMessageReader(process.stdin)
  const writer = new StreamMessageWriter(process.stdout)
  let inputClosed!: () => void
  const closed = new Promise<void>((resolve) => {
    inputClosed = resolve
  })
  input.onClose(() => inputClosed())
  let clientWatch: NodeJS.Timeout | undefined
  const reader = watchingClient(input, (processId) => {
    clientWatch ??= setInterval(() => {
      if (!isAlive(processId)) inputClosed()
    }, CLIENT_CHECK_MS).unref()
  })
  const connection = createConnection(reader, writer)
  const { shutdown } = await serveLanguage(connection, { ...options, closed })
  // Nothing more is read: stdin (still open when the client's process went away) lets the process end.
  clearInterval(clientWatch)
  connection.dispose()
  process.stdin.destroy()
  // A client that asked for shutdown may close stdin before `exit` is read (vscode-languageclient does).
  return shutdown ? 0 : 1
}

/** `reader`, with `initialize`'s `processId` handed to `watch` and hidden from the library. */
function watchingClient(reader: MessageReader, watch: (processId: number) => void): MessageReader {
  return {
    onError: reader.onError,
    onClose: reader.onClose,
    onPartialMessage: reader.onPartialMessage,
    dispose: () => reader.dispose(),
    listen: (callback) =>
      reader.listen((message) => {
        if (Message.isRequest(message) && message.method === 'initialize' && message.params !== null && typeof message.params === 'object' && 'processId' in message.params) {
          const { processId } = message.params as { processId: unknown }
          if (typeof processId === 'number') watch(processId)
          const params = { ...message.params, processId: null }
          callback({ ...message, params } as Message)
          return
        }
        callback(message)
      }),
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH'
  }
}
