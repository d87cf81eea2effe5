/**
 * A stand-in for VS Code's extension host, just enough to run the built client
 * (editors/vscode/dist/extension.js) with its real vscode-languageclient against a real server.
 * Used by vscode-client.test.ts: VS Code itself cannot run here.
 *
 * `node vscode-host.cjs <bundle> <scenario.json>`; the scenario: `{ folder, settings: { key:
 * value }, documents: [{ path, languageId }] (the open documents), waitFor: [substring…],
 * restartWith?: settings, createProjectFile?: text, noServer?: [phase name] (phases that wait
 * for nothing) }`. It:
 * 1. loads the bundle with `require('vscode')` answered by the fake below (what it does not
 *    model is a callable no-op), and records `child_process.spawn` calls with their exit codes;
 * 2. `activate`s, then waits (15 s at most) until the diagnostics published since, by a client
 *    started since (a new diagnostic collection), hold every `waitFor` substring: phase `activate`;
 *    With `createProjectFile` (a text): writes it as the folder's insitu.toml, tells the file
 *    system watchers whose pattern names that file, and waits again: `project created`;
 * 3. runs the `insitu.restartServer` command it registered, and waits again: `restart command`;
 * 4. with `restartWith`: takes those settings, fires a configuration change of the first key
 *    that differs, and waits again: `settings change`;
 * 5. `deactivate`s and waits for every spawned process to exit (10 s at most);
 * then prints one JSON object to stdout: `commands` (registered), `configurationKeys` (read),
 * `spawns` ([{ command, args, cwd, shell, exitCode }]), `phases` ([{ name, timedOut,
 * diagnostics: { uri: [{ line, message, severity, code }] } }]), `output` (the output
 * channel's lines), `shown` (messages shown to the user); and `error` when a step threw (exit 1).
 */
'use strict'
const Module = require('node:module')
const childProcess = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { pathToFileURL, fileURLToPath } = require('node:url')

const [bundle, scenarioFile] = process.argv.slice(2)
const scenario = JSON.parse(fs.readFileSync(scenarioFile, 'utf8'))
let settings = scenario.settings ?? {}
const record = { commands: [], configurationKeys: [], spawns: [], phases: [], output: [], shown: [] }
/** The diagnostics published since the current phase began, by URI (the last set of each), by collections created since. */
let current = {}
let collections = 0
let phaseCollections = 0
const commandHandlers = new Map()
const configurationListeners = []

// ---- child_process: record what the client spawns (called through the module object).
const realSpawn = childProcess.spawn
const exits = []
childProcess.spawn = function spawn(command, args, options) {
  const entry = { command, args: [...args], cwd: options?.cwd, shell: options?.shell ?? false, exitCode: undefined }
  record.spawns.push(entry)
  const child = realSpawn.call(this, command, args, options)
  exits.push(
    new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve((entry.exitCode = code ?? signal)))
      child.on('error', (error) => resolve((entry.exitCode = error.code)))
    }),
  )
  return child
}

// ---- The fake `vscode` module.
/** Anything not modelled: callable, constructible, every property another such value. */
function anything(name) {
  const cache = new Map()
  return new Proxy(function () {}, {
    get(_, key) {
      if (key === 'then' || key === Symbol.iterator) return undefined
      if (key === Symbol.toPrimitive || key === 'toString') return () => `<${name}>`
      if (!cache.has(key)) cache.set(key, anything(`${name}.${String(key)}`))
      return cache.get(key)
    },
    apply: () => anything(`${name}()`),
    construct: () => anything(`new ${name}`),
  })
}
const disposable = () => ({ dispose() {} })

class Uri {
  constructor(scheme, fsPath) {
    this.scheme = scheme
    this.fsPath = fsPath
    this.path = fsPath
  }
  static file(file) {
    return new Uri('file', file)
  }
  static parse(value) {
    return value.startsWith('file:') ? new Uri('file', fileURLToPath(value)) : new Uri(value.split(':')[0], value)
  }
  toString() {
    return this.scheme === 'file' ? pathToFileURL(this.fsPath).href : this.fsPath
  }
  toJSON() {
    return this.toString()
  }
}
class Position {
  constructor(line, character) {
    this.line = line
    this.character = character
  }
}
class Range {
  constructor(a, b, c, d) {
    ;[this.start, this.end] = typeof a === 'number' ? [new Position(a, b), new Position(c, d)] : [a, b]
  }
}
class Diagnostic {
  constructor(range, message, severity) {
    this.range = range
    this.message = message
    this.severity = severity
  }
}
class EventEmitter {
  listeners = []
  event = (listener) => {
    this.listeners.push(listener)
    return { dispose: () => (this.listeners = this.listeners.filter((l) => l !== listener)) }
  }
  fire(value) {
    for (const listener of this.listeners) listener(value)
  }
  dispose() {}
}
class Disposable {
  constructor(callOnDispose) {
    this.callOnDispose = callOnDispose
  }
  static from(...items) {
    return new Disposable(() => items.forEach((item) => item?.dispose?.()))
  }
  dispose() {
    this.callOnDispose?.()
  }
}
class RelativePattern {
  constructor(base, pattern) {
    this.baseUri = base.uri ?? base
    this.base = this.baseUri.fsPath
    this.pattern = pattern
  }
}
/** File system watchers the extension created: `{ pattern, created: [listener] }`. */
const watchers = []
class CancellationTokenSource {
  token = { isCancellationRequested: false, onCancellationRequested: () => disposable() }
  cancel() {
    this.token.isCancellationRequested = true
  }
  dispose() {}
}
function line(message) {
  record.output.push(String(message))
}
const outputChannel = {
  name: 'insitu',
  logLevel: 2,
  onDidChangeLogLevel: () => disposable(),
  ...Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error', 'appendLine', 'append', 'replace'].map((level) => [level, line])),
  clear() {},
  show() {},
  hide() {},
  dispose() {},
}
const folder = { uri: Uri.file(scenario.folder), name: path.basename(scenario.folder), index: 0 }
const textDocuments = (scenario.documents ?? []).map(({ path: file, languageId }) => {
  const text = fs.readFileSync(file, 'utf8')
  return { uri: Uri.file(file), fileName: file, languageId, version: 1, isClosed: false, isUntitled: false, lineCount: text.split('\n').length, getText: () => text }
})
/** `languages.match` for the selectors the client uses: language, scheme, `**` patterns. */
function match(selector, document) {
  const filters = Array.isArray(selector) ? selector : [selector]
  return filters.some((filter) => {
    if (typeof filter === 'string') return filter === document.languageId
    if (filter.language !== undefined && filter.language !== document.languageId) return false
    if (filter.scheme !== undefined && filter.scheme !== document.uri.scheme) return false
    if (filter.pattern !== undefined) {
      const pattern = typeof filter.pattern === 'string' ? filter.pattern : filter.pattern.pattern
      const regex = new RegExp(`^${pattern.split('**/').map((part) => part.split('**').map((p) => p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')).join('.*')).join('(?:.*/)?')}$`)
      if (!regex.test(document.uri.fsPath)) return false
    }
    return true
  })
    ? 10
    : 0
}
const modelled = {
  version: '1.91.0',
  Uri,
  Position,
  Range,
  Diagnostic,
  EventEmitter,
  Disposable,
  CancellationTokenSource,
  RelativePattern,
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  window: {
    createOutputChannel: () => outputChannel,
    showErrorMessage: async (message) => void record.shown.push(`error: ${message}`),
    showWarningMessage: async (message) => void record.shown.push(`warning: ${message}`),
    showInformationMessage: async (message) => void record.shown.push(`info: ${message}`),
    visibleTextEditors: [],
    activeTextEditor: undefined,
    tabGroups: { all: [], onDidChangeTabs: () => disposable() },
  },
  commands: {
    registerCommand(name, handler) {
      record.commands.push(name)
      commandHandlers.set(name, handler)
      return disposable()
    },
  },
  workspace: {
    workspaceFolders: [folder],
    textDocuments,
    getWorkspaceFolder: () => folder,
    getConfiguration: () => ({
      get(key, fallback) {
        record.configurationKeys.push(key)
        return key in settings ? settings[key] : fallback
      },
    }),
    createFileSystemWatcher(pattern) {
      const watcher = { pattern, created: [] }
      watchers.push(watcher)
      return {
        onDidCreate: (listener) => (watcher.created.push(listener), disposable()),
        onDidChange: () => disposable(),
        onDidDelete: () => disposable(),
        dispose() {},
      }
    },
    onDidChangeConfiguration(listener) {
      configurationListeners.push(listener)
      return disposable()
    },
  },
  languages: {
    match,
    createDiagnosticCollection: () => {
      const id = ++collections
      const store = new Map()
      const set = (uri, diagnostics) => {
        if (Array.isArray(uri)) for (const [u, d] of uri) set(u, d)
        else {
          store.set(uri.toString(), diagnostics ?? [])
          // A client stopped by this phase's action may still publish: only a new client's count.
          if (id > phaseCollections) current[uri.toString()] = (diagnostics ?? []).map((d) => ({ line: d.range.start.line, message: d.message, severity: d.severity, code: d.code }))
        }
      }
      return { name: 'insitu', set, delete: (uri) => set(uri, []), clear() {}, forEach() {}, get: (uri) => store.get(uri.toString()), has: (uri) => store.has(uri.toString()), dispose() {} }
    },
  },
}
const base = anything('vscode')
const typesFile = require.resolve('@types/vscode/index.d.ts', { paths: [path.dirname(path.dirname(bundle))] })
const apiNames = [...new Set([...fs.readFileSync(typesFile, 'utf8').matchAll(/^\t(?:export )?(?:namespace|class|enum|const|let|function) (\w+)/gm)].map((m) => m[1]))]
for (const name of Object.keys(modelled)) if (!apiNames.includes(name)) apiNames.push(name)
const vscode = {}
for (const name of apiNames) {
  const own = modelled[name]
  const value =
    own === undefined
      ? base[name]
      : typeof own === 'object' && own !== null && !Array.isArray(own)
        ? new Proxy(own, { get: (target, key) => (key in target ? target[key] : base[name][key]) })
        : own
  Object.defineProperty(vscode, name, { value, enumerable: true })
}
const load = Module._load
Module._load = function (request) {
  return request === 'vscode' ? vscode : load.apply(this, arguments)
}

// ---- The scenario.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
/** Run `action`, then wait (15 s at most) until a client created since publishes every `waitFor` substring; record phase `name`. */
async function phase(name, action) {
  current = {}
  phaseCollections = collections
  await action()
  const wanted = (scenario.noServer ?? []).includes(name) ? [] : (scenario.waitFor ?? [])
  const deadline = Date.now() + 15_000
  const messages = () => Object.values(current).flat().map((d) => d.message)
  let timedOut = false
  while (!wanted.every((s) => messages().some((m) => m.includes(s)))) {
    if (Date.now() > deadline) {
      timedOut = true
      break
    }
    await sleep(50)
  }
  record.phases.push({ name, timedOut, diagnostics: current })
}

async function main() {
  const extension = require(bundle)
  const context = { subscriptions: [], extensionPath: path.dirname(path.dirname(bundle)) }
  await phase('activate', () => extension.activate(context))
  if (scenario.createProjectFile !== undefined) {
    await phase('project created', async () => {
      const file = path.join(scenario.folder, 'insitu.toml')
      fs.writeFileSync(file, scenario.createProjectFile)
      const uri = Uri.file(file)
      for (const watcher of watchers) {
        const { base, pattern } = watcher.pattern
        if (path.join(base, pattern) === file) for (const listener of watcher.created) listener(uri)
      }
      await sleep(100)
    })
  }
  const restart = commandHandlers.get('insitu.restartServer')
  if (restart) await phase('restart command', () => restart())
  if (scenario.restartWith) {
    await phase('settings change', async () => {
      const changed = Object.keys(scenario.restartWith).find((key) => JSON.stringify(scenario.restartWith[key]) !== JSON.stringify(settings[key])) ?? ''
      settings = scenario.restartWith
      const event = { affectsConfiguration: (section) => changed === section || changed.startsWith(`${section}.`) }
      for (const listener of configurationListeners) listener(event)
      await sleep(100)
    })
  }
  await extension.deactivate()
  for (const item of context.subscriptions) item?.dispose?.()
  await Promise.race([Promise.all(exits), sleep(10_000)])
}

main().then(
  () => {
    process.stdout.write(`${JSON.stringify(record)}\n`)
    process.exit(0)
  },
  (error) => {
    process.stderr.write(`${error?.stack ?? error}\n`)
    process.stdout.write(`${JSON.stringify({ ...record, error: String(error?.message ?? error) })}\n`)
    process.exit(1)
  },
)
