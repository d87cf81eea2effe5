/**
 * A real LSP client for the language-server tests (test/integration/lsp.test.ts): the built
 * command line's `lsp --stdio` (`node dist/cli/bin.js lsp --stdio`, built by the global setup,
 * test/clients/setup.ts) as a child process, spoken to over its stdin and stdout with
 * vscode-jsonrpc, as an editor does.
 *
 * Contract:
 * - `LspClient.start(root, { processId })` spawns the server with `root` as its working folder,
 *   sends `initialize` (the workspace folder `root`; `processId` this process unless given) and
 *   `initialized`, and resolves with the client.
 *   Every `textDocument/publishDiagnostics` is kept per URI, in order; `window/logMessage`
 *   lines and stderr are kept for failure messages.
 * - `open(rel, text?)` opens a project-relative file (its text on disk unless given),
 *   `opened(rel)` waits for the publish of the text opened, `change(rel, text)` sends the whole new
 *   text as the next version (versions of a URI keep growing across openings), `close(rel)`.
 *   `text(rel)` is the text the client has open.
 * - `published(rel)` is how many publishes the URI had; `next(rel, after)` the first publish after
 *   that many (waiting for it); `until(rel, predicate, what)` the latest publish once it
 *   satisfies `predicate` (it may be one published already); `forVersion(rel, v)` the publish of
 *   version `v` of an open document. Every wait fails after `WAIT_MS`, naming what it waited for
 *   and the publishes and logs seen.
 * - `codeActions(rel, line, diagnostics, only?)`, `hover`, `definition`, `links`, `completion`: the
 *   requests, at 0-based lines and characters. A request the server exits before answering fails
 *   at once with its stderr (a server that cannot start: `initialize` says why).
 * - `stop()`: `shutdown` then `exit`; resolves with the exit code. `exitOnly()` sends `exit`
 *   alone; `closeInput()` ends the server's stdin without either; `exited(promise)` bounds a
 *   wait for the exit code by `WAIT_MS`. `descendants()` lists the pids of every process running
 *   under the server now (extensions, sandbox processes); each is remembered in `seenPids`.
 * - `kill()` (cleanup) kills the server and every process seen under it.
 * `applyEdit(text, edit, uri)` applies a WorkspaceEdit's edits for `uri` to a text.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createMessageConnection, type MessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node'
import type {
  CodeAction,
  CompletionItem,
  CompletionList,
  Diagnostic,
  DocumentLink,
  Hover,
  InitializeResult,
  Location,
  PublishDiagnosticsParams,
  TextEdit,
  WorkspaceEdit,
} from 'vscode-languageserver'

const REPO = path.resolve(import.meta.dirname, '../..')
/** Built once per run by test/clients/setup.ts. */
export const BIN = path.join(REPO, 'dist/cli/bin.js')
/** How long a wait for the server lasts before it fails. */
export const WAIT_MS = 15_000

type Predicate = (diagnostics: Diagnostic[]) => boolean

export class LspClient {
  readonly child: ChildProcess
  readonly connection: MessageConnection
  readonly exit: Promise<number | null>
  stderr = ''
  readonly logs: string[] = []
  readonly seenPids = new Set<number>()
  capabilities: InitializeResult['capabilities'] | undefined
  private readonly publishes = new Map<string, PublishDiagnosticsParams[]>()
  private readonly listeners = new Set<() => void>()
  /** Open documents: their text and the version they were opened with. */
  private readonly texts = new Map<string, { text: string; version: number }>()
  private readonly versions = new Map<string, number>()

  private constructor(readonly root: string) {
    this.child = spawn(process.execPath, [BIN, 'lsp', '--stdio'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } })
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()))
    this.exit = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)))
    this.connection = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(this.child.stdin!))
    this.connection.onNotification('textDocument/publishDiagnostics', (params: PublishDiagnosticsParams) => {
      const list = this.publishes.get(params.uri) ?? []
      list.push(params)
      this.publishes.set(params.uri, list)
      for (const listener of [...this.listeners]) listener()
    })
    this.connection.onNotification('window/logMessage', (params: { message: string }) => void this.logs.push(params.message))
    // A server that writes anything but LSP messages to stdout breaks the connection: fail loudly.
    this.connection.onError(([error]) => void this.logs.push(`connection error: ${error.message}`))
    this.connection.listen()
  }

  /** `processId`: the client process `initialize` names (this one unless given). */
  static async start(root: string, options: { processId?: number } = {}): Promise<LspClient> {
    const client = new LspClient(root)
    const folder = pathToFileURL(root).href
    client.capabilities = (
      await client.request<InitializeResult>('initialize', {
        processId: options.processId ?? process.pid,
        rootUri: folder,
        capabilities: {},
        workspaceFolders: [{ uri: folder, name: path.basename(root) }],
      })
    ).capabilities
    await client.connection.sendNotification('initialized', {})
    return client
  }

  /** A request, failing (with the server's stderr) if the server exits before it is answered. */
  private request<T>(method: string, params: unknown): Promise<T> {
    const ended = this.exit.then((code) => {
      throw new Error(`the server exited (code ${code}) before answering ${method}\nstderr:\n${this.stderr}\nlogs:\n${this.logs.join('\n')}`)
    })
    return Promise.race([this.connection.sendRequest<T>(method, params), ended])
  }

  uri(rel: string): string {
    return pathToFileURL(path.join(this.root, rel)).href
  }

  text(rel: string): string {
    const open = this.texts.get(this.uri(rel))
    if (!open) throw new Error(`${rel} is not open`)
    return open.text
  }

  /** Opens `rel` (its text on disk unless given); resolves with the version sent. */
  async open(rel: string, text?: string): Promise<number> {
    const uri = this.uri(rel)
    const content = text ?? fs.readFileSync(path.join(this.root, rel), 'utf8')
    // Versions keep growing when a document is opened again: a publish names one opening's text.
    const version = (this.versions.get(uri) ?? 0) + 1
    this.versions.set(uri, version)
    this.texts.set(uri, { text: content, version })
    await this.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'markdown', version, text: content } })
    return version
  }

  /**
   * The publish of the text `rel` was last opened with (by its version: the empty publish that
   * closing it before sends may still be on its way).
   */
  opened(rel: string): Promise<Diagnostic[]> {
    const open = this.texts.get(this.uri(rel))
    if (!open) throw new Error(`${rel} is not open`)
    return this.forVersion(rel, open.version)
  }

  /** Sends `text` as the whole new text of `rel`; resolves with the version sent. */
  async change(rel: string, text: string): Promise<number> {
    const uri = this.uri(rel)
    const open = this.texts.get(uri)
    if (!open) throw new Error(`${rel} is not open`)
    const version = this.versions.get(uri)! + 1
    this.versions.set(uri, version)
    open.text = text
    await this.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ text }] })
    return version
  }

  async close(rel: string): Promise<void> {
    const uri = this.uri(rel)
    this.texts.delete(uri)
    await this.connection.sendNotification('textDocument/didClose', { textDocument: { uri } })
  }

  published(rel: string): number {
    return this.publishes.get(this.uri(rel))?.length ?? 0
  }

  /** The publishes of `rel` so far. */
  history(rel: string): PublishDiagnosticsParams[] {
    return [...(this.publishes.get(this.uri(rel)) ?? [])]
  }

  /** The first publish of `rel` after the first `after` ones. */
  next(rel: string, after: number): Promise<Diagnostic[]> {
    return this.waitFor(rel, `a publish after the first ${after}`, (list) => list[after]?.diagnostics)
  }

  /** The latest publish of `rel`, once it satisfies `predicate`. */
  until(rel: string, predicate: Predicate, what: string): Promise<Diagnostic[]> {
    return this.waitFor(rel, what, (list) => {
      const last = list.at(-1)
      return last && predicate(last.diagnostics) ? last.diagnostics : undefined
    })
  }

  /** The (latest) publish of version `version` of `rel`. */
  forVersion(rel: string, version: number): Promise<Diagnostic[]> {
    return this.waitFor(rel, `the publish of version ${version}`, (list) => list.findLast((p) => p.version === version)?.diagnostics)
  }

  private waitFor(rel: string, what: string, pick: (list: PublishDiagnosticsParams[]) => Diagnostic[] | undefined): Promise<Diagnostic[]> {
    const uri = this.uri(rel)
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = pick(this.publishes.get(uri) ?? [])
        if (found === undefined) return false
        this.listeners.delete(check)
        clearTimeout(timer)
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        this.listeners.delete(check)
        reject(new Error(`no ${what} for ${rel} within ${WAIT_MS} ms\n${this.describe(uri)}`))
      }, WAIT_MS)
      if (!check()) this.listeners.add(check)
    })
  }

  /** What the server published for `uri` and logged (for failure messages). */
  describe(uri: string): string {
    const publishes = (this.publishes.get(uri) ?? []).map((p) => `  v${p.version ?? '-'}: ${JSON.stringify(p.diagnostics.map((d) => [d.range.start.line, d.code, d.message]))}`)
    return `publishes:\n${publishes.join('\n')}\nlogs:\n${this.logs.join('\n')}\nstderr:\n${this.stderr}`
  }

  codeActions(rel: string, line: number, diagnostics: readonly Diagnostic[], only?: string[]): Promise<CodeAction[]> {
    const position = { line, character: 0 }
    return this.request<CodeAction[]>('textDocument/codeAction', {
      textDocument: { uri: this.uri(rel) },
      range: { start: position, end: position },
      context: { diagnostics, ...(only ? { only } : {}) },
    })
  }

  hover(rel: string, line: number, character: number): Promise<Hover | null> {
    return this.request('textDocument/hover', { textDocument: { uri: this.uri(rel) }, position: { line, character } })
  }

  definition(rel: string, line: number, character: number): Promise<Location[] | null> {
    return this.request('textDocument/definition', { textDocument: { uri: this.uri(rel) }, position: { line, character } })
  }

  links(rel: string): Promise<DocumentLink[]> {
    return this.request('textDocument/documentLink', { textDocument: { uri: this.uri(rel) } })
  }

  async completion(rel: string, line: number, character: number): Promise<CompletionItem[]> {
    const result = await this.request<CompletionItem[] | CompletionList | null>('textDocument/completion', {
      textDocument: { uri: this.uri(rel) },
      position: { line, character },
    })
    return result === null ? [] : Array.isArray(result) ? result : result.items
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** `shutdown`, then `exit`: resolves with the server's exit code. */
  async stop(): Promise<number | null> {
    await this.request('shutdown', null)
    await this.connection.sendNotification('exit')
    return this.exit
  }

  /** `exit` (the server's exit code, from `stop()`, `exitOnly()`, …), or a failure after `WAIT_MS` naming what it logged. */
  exited(exit: Promise<number | null>): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the server has not exited within ${WAIT_MS} ms\nlogs:\n${this.logs.join('\n')}\nstderr:\n${this.stderr}`)), WAIT_MS)
    })
    return Promise.race([exit, late]).finally(() => clearTimeout(timer))
  }

  /** `exit` without `shutdown`: resolves with the server's exit code. */
  async exitOnly(): Promise<number | null> {
    await this.connection.sendNotification('exit')
    return this.exit
  }

  /** Ends the server's stdin (the client went away): resolves with its exit code. */
  closeInput(): Promise<number | null> {
    this.connection.end()
    this.child.stdin!.end()
    return this.exit
  }

  /** The pids of every process under the server now (remembered in `seenPids`). */
  descendants(): number[] {
    const pid = this.child.pid
    if (pid === undefined || !this.running) return []
    const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/).map(Number))
      .filter((pair): pair is [number, number] => pair.length === 2 && pair[0]! > 0)
    const found: number[] = []
    const queue = [pid]
    while (queue.length > 0) {
      const parent = queue.shift()!
      for (const [child, ppid] of table) {
        if (ppid !== parent) continue
        found.push(child)
        queue.push(child)
      }
    }
    for (const child of found) this.seenPids.add(child)
    return found
  }

  /** The command lines of the processes under the server now. */
  commandsOf(pids: readonly number[]): string[] {
    if (pids.length === 0) return []
    try {
      return execFileSync('ps', ['-o', 'args=', '-p', pids.join(',')], { encoding: 'utf8' }).split('\n').filter(Boolean)
    } catch {
      return []
    }
  }

  /** Cleanup: the server and every process seen under it, killed. */
  kill(): void {
    this.connection.dispose()
    if (this.running) this.child.kill('SIGKILL')
    for (const pid of this.seenPids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone already
      }
    }
  }
}

/** `text` with the edits `edit` holds for `uri` applied (edits do not overlap, as LSP requires). */
export function applyEdit(text: string, edit: WorkspaceEdit | undefined, uri: string): string {
  const edits: TextEdit[] = [...(edit?.changes?.[uri] ?? [])]
  if (edits.length === 0) throw new Error(`the edit has no change for ${uri}: ${JSON.stringify(edit)}`)
  const starts = [0]
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) starts.push(at + 1)
  const offset = (position: { line: number; character: number }) => starts[position.line]! + position.character
  edits.sort((a, b) => offset(b.range.start) - offset(a.range.start))
  let result = text
  for (const e of edits) result = result.slice(0, offset(e.range.start)) + e.newText + result.slice(offset(e.range.end))
  return result
}
