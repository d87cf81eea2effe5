/**
 * Boundary types of insitu protocol v1 (SPEC §4), as strict zod schemas.
 *
 * Contract:
 * - Every object rejects unknown fields; `parseBoundary` turns a failure into a
 *   `BoundaryError` whose message names the field path (`location.depth: ...`).
 * - Parsing fills SPEC defaults, so `writeX(partial)` (parse then emit) yields an object
 *   with every field present, in SPEC order: writers emit nulls and empty arrays too.
 * - JSON values are checked to be JSON (no `undefined`, functions, NaN).
 */
import { z } from 'zod'
import { issuePathText, valueAtPath } from './issue-paths.js'

export const JsonValue: z.ZodType<unknown> = z.json()

export const Location = z.strictObject({
  path: z.string(),
  directory: z.string(),
  root: z.string().default('.'),
  depth: z.int().min(0).default(0),
})
export type Location = z.output<typeof Location>

export const Severity = z.enum(['error', 'warning', 'info'])
export type Severity = z.output<typeof Severity>

export const Diagnostic = z.strictObject({
  severity: Severity,
  message: z.string(),
  path: z.string().nullable().default(null),
  line: z.int().min(1).nullable().default(null),
  code: z.string().nullable().default(null),
})
export type Diagnostic = z.output<typeof Diagnostic>

export const InitializeRequest = z.strictObject({
  protocol: z.literal(1),
  root: z.string(),
  extension: z.string(),
})
export type InitializeRequest = z.output<typeof InitializeRequest>

export const InitializeResult = z.strictObject({
  name: z.string(),
  version: z.string(),
  protocol: z.literal(1),
  capabilities: z.record(z.string(), z.unknown()).default({}),
})
export type InitializeResult = z.output<typeof InitializeResult>

export const InvocationRequest = z.strictObject({
  name: z.string(),
  options: z.record(z.string(), JsonValue).default({}),
  location: Location,
  value: JsonValue.default(null),
  trace: z.array(z.string()).default([]),
})
export type InvocationRequest = z.output<typeof InvocationRequest>

export const InvocationResult = z.strictObject({
  content: z.string().nullable().default(null),
  value: JsonValue.nullable().default(null),
  diagnostics: z.array(Diagnostic).default([]),
  dependencies: z.array(z.string()).default([]),
})
export type InvocationResult = z.output<typeof InvocationResult>

/** `value` is required but may be `null`. */
export const ResourceRead = z.strictObject({
  value: JsonValue,
  dependencies: z.array(z.string()).default([]),
})
export type ResourceRead = z.output<typeof ResourceRead>

export const ResourceGetParams = z.strictObject({
  resource: z.string(),
  location: Location,
  trace: z.array(z.string()).default([]),
})
export type ResourceGetParams = z.output<typeof ResourceGetParams>

export const CapabilityKind = z.enum(['resource', 'transform', 'renderer', 'validator'])
export type CapabilityKind = z.output<typeof CapabilityKind>
export const CAPABILITY_KINDS: readonly CapabilityKind[] = CapabilityKind.options

/** Thrown when a value fails a boundary schema; maps to JSON-RPC -32602 in a handler. */
export class BoundaryError extends Error {
  override name = 'BoundaryError'
  constructor(
    message: string,
    readonly issues: readonly z.core.$ZodIssue[] = [],
  ) {
    super(message)
  }
}

/** `a.b[2].c: message` for the first issue (and a count of the rest). */
export function formatIssues(issues: readonly z.core.$ZodIssue[], what?: string, input?: unknown): string {
  const parts = issues.map((issue) => {
    const path = issuePathText(issue.path)
    let message = issue.message
    if (issue.code === 'unrecognized_keys') {
      const keys = issue.keys.map((k) => (path ? `${path}.${k}` : k))
      return `unknown field${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`
    }
    // Only with the parsed input at hand can a missing field be told from a wrong one.
    if (input !== undefined && issue.path.length > 0 && valueAtPath(input, issue.path) === undefined) message = 'field required'
    return path ? `${path}: ${message}` : message
  })
  const body = parts.join('; ')
  return what ? `invalid ${what}: ${body}` : body
}

/** Parse `value` with `schema`, throwing a `BoundaryError` that names the field path. */
export function parseBoundary<S extends z.ZodType>(schema: S, value: unknown, what?: string): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  throw new BoundaryError(formatIssues(result.error.issues, what, value), result.error.issues)
}
