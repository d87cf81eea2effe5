/**
 * The insitu VS Code extension: a client of `vite-plugin-insitu lsp --stdio` (src/lsp/ of the
 * repository) for the first workspace folder.
 *
 * Contract:
 * - `activate` (on a Markdown file, or a workspace with an `insitu.toml`) starts one language
 *   client for the first workspace folder, its server spawned as server-command.ts resolves it
 *   from the settings (`insitu.server.command`, `insitu.server.extraArgs`), in that folder,
 *   talking LSP on its stdin/stdout. No folder, or a folder that is not an insitu project
 *   (server-command.ts `shouldStart`), starts nothing (the output channel says why); an
 *   `insitu.toml` created in the folder later starts it. The client
 *   sends the server Markdown, SQL and template (`**\/insitu/templates/**`) documents of the
 *   `file` scheme; the server watches the project's files itself (no file events are sent).
 * - `insitu.restartServer`, and any change of an `insitu.server.*` setting, stop the server
 *   and start it again with the settings as they are now.
 * - `deactivate` stops the server (`shutdown`, `exit`: its extension processes end with it).
 * The server's log and stderr go to the "insitu" output channel, as does the command it runs; a
 * server that does not start is reported by the client (a message, with the output channel).
 */
import * as vscode from 'vscode'
import { type Executable, LanguageClient, type LanguageClientOptions } from 'vscode-languageclient/node'
import { commandLine, PROJECT_FILE, projectFileOf, resolveServerCommand, SETTINGS, SETTINGS_SECTION, shouldStart } from './server-command.js'

/** The command the extension contributes (package.json `contributes.commands`). */
export const RESTART_COMMAND = 'insitu.restartServer'

/** Documents the server analyzes (it answers nothing for other files of these languages). */
export const DOCUMENT_SELECTOR = [
  { scheme: 'file', language: 'markdown' },
  { scheme: 'file', language: 'sql' },
  { scheme: 'file', pattern: '**/insitu/templates/**' },
]

let client: LanguageClient | undefined
let outputChannel: vscode.LogOutputChannel | undefined
/** Start and stop one at a time: a restart waits for the previous one. */
let queue: Promise<void> = Promise.resolve()

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  outputChannel = vscode.window.createOutputChannel('insitu', { log: true })
  context.subscriptions.push(
    outputChannel,
    vscode.commands.registerCommand(RESTART_COMMAND, () => restart(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SETTINGS_SECTION)) void restart(false)
    }),
  )
  // A project created in the folder (`vite-plugin-insitu init`) starts the server it did not start.
  const folder = vscode.workspace.workspaceFolders?.[0]
  if (folder?.uri.scheme === 'file') {
    const created = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, PROJECT_FILE), false, true, true)
    context.subscriptions.push(
      created,
      created.onDidCreate(() => {
        if (!client?.isRunning()) void restart(false)
      }),
    )
  }
  await restart(false)
}

export function deactivate(): Promise<void> {
  return serially(stop)
}

function restart(byCommand: boolean): Promise<void> {
  return serially(async () => {
    await stop()
    await start(byCommand)
  })
}

function serially(step: () => Promise<void>): Promise<void> {
  queue = queue.then(step, step)
  return queue
}

async function start(byCommand: boolean): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]
  if (!folder || folder.uri.scheme !== 'file') {
    if (byCommand) void vscode.window.showInformationMessage('insitu: open a folder to start the language server.')
    return
  }
  const configuration = vscode.workspace.getConfiguration(undefined, folder.uri)
  const resolved = resolveServerCommand(
    { command: configuration.get<unknown>(SETTINGS.command), extraArgs: configuration.get<unknown>(SETTINGS.extraArgs) },
    { folder: folder.uri.fsPath },
  )
  if (!shouldStart(resolved, projectFileOf(folder.uri.fsPath))) {
    const why = `no ${PROJECT_FILE} in ${folder.uri.fsPath} or a folder above it, and no node_modules/.bin/vite-plugin-insitu: the language server is not started (open the project's folder, or set ${SETTINGS.command})`
    outputChannel?.info(why)
    if (byCommand) void vscode.window.showInformationMessage(`insitu: ${why}`)
    return
  }
  // No `transport`: with `TransportKind.stdio` the client would append a second `--stdio`.
  const server: Executable = { command: resolved.command, args: resolved.args, options: { cwd: resolved.cwd, shell: resolved.shell } }
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    workspaceFolder: folder,
    outputChannel,
  }
  outputChannel?.info(`starting ${commandLine(resolved)} in ${folder.uri.fsPath}`)
  try {
    client = new LanguageClient('insitu', 'insitu', server, clientOptions)
    await client.start()
  } catch (error) {
    // The client has shown its own message (the spawn error, or the server's exit and stderr).
    const message = error instanceof Error ? error.message : String(error)
    outputChannel?.error(`the language server did not start: ${message} (the command is set by ${SETTINGS.command})`)
  }
}

async function stop(): Promise<void> {
  const running = client
  client = undefined
  if (!running) return
  const wasRunning = running.isRunning()
  try {
    await running.dispose(5_000)
  } catch (error) {
    // A client whose server never started cannot be stopped (it says so): nothing to report.
    if (wasRunning) outputChannel?.error(`stopping the language server: ${error instanceof Error ? error.message : String(error)}`)
  }
}
