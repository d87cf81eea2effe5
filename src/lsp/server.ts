/**
 * `vite-plugin-insitu lsp --stdio`: the insitu language server (issue #37), on
 * vscode-languageserver, over a connection the caller gives (the command line: stdin/stdout).
 *
 * Contract: `serveLanguage(connection, options)` answers LSP 3.17 requests:
 * - `initialize`: the workspace is the first workspace folder (else `rootUri`, else the current
 *   folder); capabilities: incremental text sync, code actions (quick fix, `source.insitu.regenerate`),
 *   hover, definition, document links, completion (triggered by `"`, `=`, space and `/`).
 * - `initialized` starts the workspace (workspace.ts): its engine, watchers and extension
 *   processes; diagnostics are pushed (`textDocument/publishDiagnostics`).
 * - Requests on documents are answered from the analysis of the editor's current text.
 * - `shutdown` stops the workspace (every extension and sandbox process ends) and resolves;
 *   `exit` then ends the process (the library's default: code 0 after shutdown, 1 without).
 *   The input closing stops the workspace too; `serveLanguage` then resolves to whether
 *   `shutdown` came first (a client may close the input right after sending `exit`).
 * Nothing but LSP messages goes to the connection's output: logs go to `window/logMessage`.
 */
import { CodeActionKind, type Connection, TextDocumentSyncKind } from 'vscode-languageserver'
import { TextDocument } from 'vscode-languageserver-textdocument'
import { codeActions, REGENERATE_ALL_KIND } from './code-actions.js'
import { completionsAt } from './completion.js'
import { hoverAt } from './hover.js'
import { definitionAt, documentLinks } from './navigation.js'
import { pathOfUri } from './uris.js'
import { LspWorkspace } from './workspace.js'

export interface LanguageServerOptions {
  /** Read and write the persistent cache. @default true */
  cache?: boolean
  /** Poll the file system every this many milliseconds instead of using its events. @default undefined */
  pollMs?: number
  /** The folder used when the client names none. @default process.cwd() */
  cwd?: string
  /** Resolves when the connection's input closes (the client went away without `exit`). */
  closed?: Promise<void>
}

/** Serve until `exit` or the input closing; resolves once the workspace has stopped, to whether `shutdown` was received. */
export function serveLanguage(connection: Connection, options: LanguageServerOptions = {}): Promise<{ shutdown: boolean }> {
  const documents = new Map<string, TextDocument>()
  let workspace: LspWorkspace | undefined
  let stopping: Promise<void> | undefined
  const stop = () => (stopping ??= workspace?.stop() ?? Promise.resolve())

  let versioned = false
  connection.onInitialize((params) => {
    versioned = params.capabilities.workspace?.workspaceEdit?.documentChanges === true
    const folderUri = params.workspaceFolders?.[0]?.uri ?? params.rootUri ?? null
    const folder = (folderUri !== null ? pathOfUri(folderUri) : null) ?? params.rootPath ?? options.cwd ?? process.cwd()
    workspace = new LspWorkspace({
      folder,
      cache: options.cache,
      pollMs: options.pollMs,
      output: {
        publish: (uri, diagnostics, version) => void connection.sendDiagnostics({ uri, diagnostics, ...(version === undefined ? {} : { version }) }),
        log: (message) => connection.console.log(message),
        error: (message) => void connection.window.showErrorMessage(message),
      },
    })
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental },
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix, REGENERATE_ALL_KIND] },
        hoverProvider: true,
        definitionProvider: true,
        documentLinkProvider: { resolveProvider: false },
        completionProvider: { triggerCharacters: ['"', '=', ' ', '/'] },
      },
      serverInfo: { name: 'insitu' },
    }
  })
  connection.onInitialized(() => {
    void workspace!.start()
  })
  let shutdown = false
  connection.onShutdown(() => {
    shutdown = true
    return stop()
  })

  connection.onDidOpenTextDocument(({ textDocument }) => {
    const document = TextDocument.create(textDocument.uri, textDocument.languageId, textDocument.version, textDocument.text)
    documents.set(document.uri, document)
    workspace?.open(document.uri, document.getText(), document.version)
  })
  connection.onDidChangeTextDocument(({ textDocument, contentChanges }) => {
    const document = documents.get(textDocument.uri)
    if (!document) return
    const updated = TextDocument.update(document, contentChanges, textDocument.version)
    documents.set(updated.uri, updated)
    workspace?.change(updated.uri, updated.getText(), updated.version)
  })
  connection.onDidCloseTextDocument(({ textDocument }) => {
    documents.delete(textDocument.uri)
    workspace?.close(textDocument.uri)
  })

  connection.onCodeAction(async ({ textDocument, range, context }) => {
    const analysis = await workspace?.analysis(textDocument.uri)
    return analysis ? codeActions(textDocument.uri, analysis, range, context.diagnostics, { only: context.only, versioned }) : []
  })
  connection.onHover(async ({ textDocument, position }) => {
    const analysis = await workspace?.analysis(textDocument.uri)
    const engine = workspace?.engine
    return analysis && engine ? hoverAt(engine, analysis, position) : null
  })
  connection.onDefinition(async ({ textDocument, position }) => {
    const analysis = await workspace?.analysis(textDocument.uri)
    const engine = workspace?.engine
    return analysis && engine ? definitionAt(engine, analysis, position) : null
  })
  connection.onDocumentLinks(async ({ textDocument }) => {
    const analysis = await workspace?.analysis(textDocument.uri)
    const engine = workspace?.engine
    return analysis && engine ? documentLinks(engine, analysis) : []
  })
  connection.onCompletion(async ({ textDocument, position }) => {
    const engine = workspace?.engine
    const text = workspace?.textOf(textDocument.uri)
    const file = pathOfUri(textDocument.uri)
    return engine && text !== undefined && file !== null ? completionsAt(engine, file, text, position) : []
  })

  const ended = new Promise<void>((resolve) => {
    connection.onExit(() => resolve())
    void options.closed?.then(() => resolve())
  })
  connection.listen()
  return ended.then(() => stop()).then(() => ({ shutdown }))
}
