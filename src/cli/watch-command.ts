/**
 * `watch`: sync once, then keep every managed document current on disk as its inputs change,
 * until stopped — for projects whose docs something other than Vite builds.
 *
 * Contract: `runWatch({ root, cache, pollMs }, io, stop?)` resolves to the exit code.
 * - The project is found as for `check` and `sync` (`resolveProjectRoot`); a `--root` that is no
 *   folder is a usage error (2).
 * - It runs a `WatchSession` (src/sync/watch-session.ts): stdout gets `wrote <path>` per written file,
 *   diagnostics as `sync` prints them, `watching <root>` once the first sync is done and the
 *   watchers are ready (again after each restart), `<file> changed, restarting`, and
 *   `stopped` at the end; stderr gets extension stderr (`[<name>] …`) and other logs.
 * - It stops on `stop` (default `processStopRequests()`: SIGINT, SIGTERM, SIGHUP, and stdin
 *   closing when stdin is a pipe or socket), then prints `stopped` once every extension process
 *   is gone and every write is settled, and resolves to 0. A stop asked for during the first
 *   start stops it at once.
 * - A config error at the start (a bad `insitu.toml`, manifest or `insitu.lock`; its message
 *   starts `file:line:col:`) or a better-sqlite3 that cannot load (cli-io.ts) exits 2, any other
 *   start failure 1, with the message on stderr.
 */
import fs from 'node:fs'
import { ConfigError } from '../host/config.js'
import { type CliIo, CLI_NAME, EXIT_CLEAN, EXIT_USAGE, messageOf, startErrorExitCode } from './cli-io.js'
import { resolveProjectRoot } from './project-command.js'
import { WatchSession } from '../sync/watch-session.js'

export interface WatchCommandOptions {
  /** `--root` as given, or null. */
  root: string | null
  cache: boolean
  /** `--poll <ms>`, or null (file system events). */
  pollMs: number | null
}

/** Something that asks a long-running command to stop: `requested` resolves once, `dispose()` stops listening. */
export interface StopRequests {
  requested: Promise<void>
  dispose(): void
}

export async function runWatch(options: WatchCommandOptions, io: CliIo, stop: StopRequests = processStopRequests()): Promise<number> {
  const resolved = resolveProjectRoot(options.root, io)
  if ('problem' in resolved) {
    stop.dispose()
    io.stderr.write(`${CLI_NAME}: ${resolved.problem}\n`)
    return EXIT_USAGE
  }
  const session = new WatchSession({
    root: resolved.root,
    searchParents: resolved.searchParents,
    cache: options.cache,
    pollMs: options.pollMs ?? undefined,
    prefix: CLI_NAME,
    output: {
      report: (line) => io.stdout.write(`${line}\n`),
      log: (line) => io.stderr.write(`${line}\n`),
    },
  })
  try {
    const started = session.start().then(
      () => null,
      (error: unknown) => error ?? new Error('start failed'),
    )
    const first = await Promise.race([started, stop.requested.then(() => 'stop' as const)])
    if (first !== null && first !== 'stop') {
      await session.stop()
      io.stderr.write(`${first instanceof ConfigError ? first.message : `${CLI_NAME}: ${messageOf(first)}`}\n`)
      return startErrorExitCode(first)
    }
    if (first !== 'stop') await stop.requested
    await session.stop()
    await started // settled: the stop ends a start in progress
    io.stdout.write('stopped\n')
    return EXIT_CLEAN
  } finally {
    stop.dispose()
  }
}

/** Signals that end a watch (Ctrl-C, `kill`, the terminal closing). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * The process's stop requests: SIGINT, SIGTERM or SIGHUP, and the end of stdin when stdin is a
 * pipe or a socket (the parent that started the watch went away). A terminal's stdin is not
 * read (a watch started in the background would be stopped by the terminal), nor is
 * `/dev/null` or a file (both end at once). A second signal while stopping ends the process at
 * once (its exit hooks still kill the extensions, host/process-end.ts).
 */
export function processStopRequests(): StopRequests {
  let request!: () => void
  const requested = new Promise<void>((resolve) => (request = resolve))
  let asked = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (!asked) {
      asked = true
      request()
      return
    }
    dispose()
    process.kill(process.pid, signal)
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  const readsStdin = stdinIsPipe()
  const onEnd = () => {
    asked = true
    request()
  }
  if (readsStdin) {
    process.stdin.on('end', onEnd).on('close', onEnd).on('error', onEnd)
    process.stdin.on('data', ignoreData)
    process.stdin.resume()
  }
  let disposed = false
  function dispose() {
    if (disposed) return
    disposed = true
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
    if (readsStdin) {
      process.stdin.off('end', onEnd).off('close', onEnd).off('error', onEnd).off('data', ignoreData)
      process.stdin.pause()
      process.stdin.destroy() // the open pipe would keep the process alive
    }
  }
  return { requested, dispose }
}

function ignoreData(): void {}

function stdinIsPipe(): boolean {
  try {
    const stat = fs.fstatSync(0)
    return stat.isFIFO() || stat.isSocket()
  } catch {
    return false
  }
}
