/**
 * A sandbox process (src/sandbox/process-pool.ts forks it, IPC with V8 serialization): where the
 * project's work that may never end runs, so that ending this process stops it.
 *
 * Messages, handled one per turn of the event loop in the order they came (so a `skip` that
 * arrived meanwhile is read before the next task runs):
 * - `setup`: `index-init` and `index-apply` keep this process's copy of the document index
 *   (documents/index-copy.ts);
 * - `task`: answered `start` when it starts, then `result` with its value or `error`
 *   (sandbox/task-errors.ts): `query` (a SQL query on the copy), `render` (a template render
 *   that outran its slice in the parent: builtins/jinja-renderer.ts), `compile-model` (a SQL
 *   model whose templates did: documents/sql-models.ts);
 * - `skip`: tasks the parent gave to another process meanwhile: not run.
 * A task starts once the answer of the one before has been written. The template engine and
 * YAML reader are loaded at the first task that needs them (a process that only runs queries,
 * the usual one, starts in the time of Node and SQLite). It exits when its IPC
 * channel closes (the parent let it go) while it waits for work; the parent kills it when it
 * ends, however it ends (sandbox/process-end.ts).
 */
import type { RenderTask } from './builtins/jinja-renderer.js'
import { createIndexCopy, type IndexCopySetup, type QueryTask } from './documents/index-copy.js'
import type { CompileModelTask } from './documents/sql-models.js'
import type { SandboxMessage, SandboxReply } from './sandbox/process-pool.js'
import { taskErrorReply } from './sandbox/task-errors.js'

type Task = QueryTask | RenderTask | CompileModelTask

const copy = createIndexCopy()
const skipped = new Set<number>()
const inbox: Exclude<SandboxMessage, { type: 'skip' }>[] = []
let draining = false

/** Sends a reply; `then` runs once it is written (a large one takes a while to leave). */
function send(reply: SandboxReply, then?: () => void): void {
  if (process.send) process.send(reply, undefined, {}, () => then?.())
  else then?.()
}

function receive(message: SandboxMessage): void {
  if (message.type === 'skip') {
    for (const id of message.ids) skipped.add(id)
    return
  }
  inbox.push(message)
  if (!draining) {
    draining = true
    setImmediate(() => void drain())
  }
}

async function drain(): Promise<void> {
  const next = inbox.shift()
  if (!next) {
    draining = false
    return
  }
  if (next.type === 'setup' || skipped.delete(next.id)) {
    if (next.type === 'setup') copy.setup(next.payload as IndexCopySetup)
    setImmediate(() => void drain())
    return
  }
  // The next task starts once this one's answer has left: the parent's clock for a task runs
  // from its `start`, which must not wait behind the answer of the one before.
  send({ type: 'start', id: next.id })
  let reply: SandboxReply
  try {
    reply = { type: 'result', id: next.id, value: await run(next.payload as Task) }
  } catch (error) {
    reply = { type: 'error', id: next.id, ...taskErrorReply(error) }
  }
  send(reply, () => setImmediate(() => void drain()))
}

async function run(task: Task): Promise<unknown> {
  switch (task.kind) {
    case 'query':
      return copy.query(task)
    case 'render':
      return (await import('./builtins/jinja-renderer.js')).renderTask(task)
    case 'compile-model':
      return (await import('./documents/sql-models.js')).compileModelTask(task)
  }
}

process.on('message', (message) => receive(message as SandboxMessage))
process.on('disconnect', () => process.exit(0))
