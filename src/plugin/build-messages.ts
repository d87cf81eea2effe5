/**
 * The messages between the plugin's entry and its build process (build-process.ts, the parent;
 * src/build-child.ts, the child), over Node's IPC channel with the `advanced` serialization.
 *
 * Contract:
 * - parent → child: `start` (once, first: the resolved options and Vite's root and output
 *   folder), then `call`s, each a hook of the in-process runtime (plugin-runtime.ts) with its
 *   arguments, numbered; `scope` is a call too, answered with the project's `ScopePatterns`.
 * - child → parent: a `reply` per call, in any order (the hook's result or its error, and the
 *   warnings it gave its plugin context, in order), and `log` lines at any time (what the
 *   plugin's logger was given).
 * - Errors cross as `SerializedError`: message, stack, the location fields Rollup and Vite read
 *   (`id`, `loc`, `frame`, `code`), and whether it is one of the user's (user-errors.ts):
 *   `reviveError` makes it again, a user error as `userError` does (no stack).
 * Dependency-free but for user-errors.ts: both sides load it.
 */
import type { ResolvedOptions } from './options.js'
import { isUserError, userError } from './user-errors.js'

/** The hooks a build that does not watch calls, and `scope`. */
export type BuildHook = 'scope' | 'buildStart' | 'load' | 'transform' | 'buildEnd' | 'closeBundle'

export type ParentMessage =
  | { type: 'start'; options: ResolvedOptions; root: string; outDir: string }
  | { type: 'call'; id: number; hook: BuildHook; args: unknown[] }

export type ChildMessage =
  | { type: 'reply'; id: number; result?: unknown; error?: SerializedError; warnings: Warning[] }
  | { type: 'log'; level: 'info' | 'warn' | 'error'; message: string }

/** What a hook gave `this.warn`: a message, or a log object (message, id, loc, frame). */
export type Warning = string | { message: string; [field: string]: unknown }

export interface SerializedError {
  message: string
  stack?: string
  user: boolean
  fields: Record<string, unknown>
}

/** The fields of an error Rollup and Vite print, besides its message. */
const ERROR_FIELDS = ['id', 'loc', 'frame', 'code', 'hook', 'plugin'] as const

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error), user: false, fields: {} }
  const fields: Record<string, unknown> = {}
  for (const field of ERROR_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field]
    if (value !== undefined) fields[field] = value
  }
  return { message: error.message, stack: error.stack, user: isUserError(error), fields }
}

export function reviveError(serialized: SerializedError): Error {
  const error = serialized.user ? userError(serialized.message) : new Error(serialized.message)
  if (!serialized.user && serialized.stack !== undefined) error.stack = serialized.stack
  return Object.assign(error, serialized.fields)
}
