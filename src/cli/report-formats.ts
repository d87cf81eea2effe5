/**
 * Machine-readable reports of `check` and `sync` (`--format json`, `--format github`), built on
 * the report objects of sync/sync-project.ts (never on the text report's wording).
 *
 * Contract:
 * - `jsonReport(report, context)` → one JSON object and a newline (shape in
 *   docs/reference/cli.md, "Machine-readable reports"): `command`, `root`, `ok`, `summary` (counts), `documents`
 *   (path and state of each managed document), `stale` (each job still stale on disk after the
 *   command — sync lists only the documents it did not write: `path`, `line`, `target`, `id`,
 *   `kind`, `state` (`stale`, or `hand-edited` for a region its generations never wrote: check
 *   only), `why` (check: the sentence of region-states.ts, e.g. which inputs changed), `diff`), `written` (paths), `errors` and `warnings` (the documents'
 *   diagnostics: `path`, `line`, `message`, `code`), `validation` (every validator diagnostic).
 *   `jsonFailure(context, error)` is the object of a run that could not report (a config error):
 *   `ok: false` and `error` (`message`, `file`, `line`, `column`).
 * - `githubReport(report, context)` → GitHub Actions workflow commands, one per line: a stale job
 *   is `::error file=<path>,line=<line>,title=insitu::<target> <id> is stale …` with its diff;
 *   error and warning diagnostics are `::error` / `::warning` at their file and line (validator
 *   diagnostics without a path have no `file`); a written document is `::notice file=<path>::…`;
 *   then one plain summary line. Paths are relative to `context.workspace` (GitHub's
 *   `GITHUB_WORKSPACE`, else the current folder). Messages are escaped as the runner's
 *   command parser requires (`%` → `%25`, CR → `%0D`, LF → `%0A`; in property values also `:` →
 *   `%3A` and `,` → `%2C`). `githubFailure(context, error)` is one `::error` for a config error.
 * Pure functions; nothing is recorded.
 */
import path from 'node:path'
import type { Diagnostic } from '../protocol/schemas.js'
import type { DocumentSync } from '../sync/sync-document.js'
import type { ProjectSync } from '../sync/sync-project.js'

export type ReportFormat = 'text' | 'json' | 'github'
export const REPORT_FORMATS: readonly ReportFormat[] = ['text', 'json', 'github']

export interface ReportContext {
  command: 'check' | 'sync'
  /** Absolute project root. */
  root: string
  /** The folder annotation paths are relative to. */
  workspace: string
  exitCode: number
}

interface DiagnosticEntry {
  path: string | null
  line: number | null
  message: string
  code: string | null
}

export function jsonReport(report: ProjectSync, context: ReportContext): string {
  const stale = report.documents.filter(staleOnDisk).flatMap((document) =>
    document.stale.map((job) => ({
      path: document.path,
      line: job.line,
      target: job.target,
      id: job.id,
      kind: job.kind,
      state: job.state ?? 'stale',
      ...(job.why === undefined ? {} : { why: job.why }),
      diff: job.diff,
    })),
  )
  const errors: DiagnosticEntry[] = []
  const warnings: DiagnosticEntry[] = []
  for (const document of report.documents) {
    for (const diagnostic of document.diagnostics) {
      const entry = { path: diagnostic.path ?? document.path, line: diagnostic.line, message: diagnostic.message, code: diagnostic.code }
      if (diagnostic.severity === 'error') errors.push(entry)
      else if (diagnostic.severity === 'warning') warnings.push(entry)
    }
  }
  const object = {
    command: context.command,
    root: context.root,
    ok: context.exitCode === 0,
    exitCode: context.exitCode,
    summary: {
      documents: report.documents.length,
      stale: report.stale,
      staleJobs: stale.length,
      written: report.written,
      failed: report.failed,
      validatorErrors: report.validationErrors,
    },
    documents: report.documents.map((document) => ({
      path: document.path,
      state: document.failed ? 'failed' : document.written ? 'written' : document.text !== document.source ? 'stale' : 'current',
      staleJobs: staleOnDisk(document) ? document.stale.length : 0,
    })),
    stale,
    written: report.documents.filter((document) => document.written).map((document) => document.path),
    errors,
    warnings,
    validation: report.validation.map((d) => ({ severity: d.severity, path: d.path, line: d.line, message: d.message, code: d.code })),
  }
  return `${JSON.stringify(object, null, 2)}\n`
}

export function jsonFailure(context: Omit<ReportContext, 'workspace'>, error: unknown): string {
  const located = error as { message?: string; file?: string; line?: number; column?: number }
  const object = {
    command: context.command,
    root: context.root,
    ok: false,
    exitCode: context.exitCode,
    error: {
      message: located.message ?? String(error),
      file: located.file ?? null,
      line: located.line ?? null,
      column: located.column ?? null,
    },
  }
  return `${JSON.stringify(object, null, 2)}\n`
}

export function githubReport(report: ProjectSync, context: ReportContext): string {
  const lines: string[] = []
  const fileOf = (relPath: string) => path.relative(context.workspace, path.join(context.root, relPath)).split(path.sep).join('/')
  for (const document of report.documents) {
    for (const job of staleOnDisk(document) ? document.stale : []) {
      const what = job.state === 'hand-edited' ? `was edited by hand: ${job.why}` : 'is stale'
      const message = `${job.target} ${job.id} ${what} (run vite-plugin-insitu sync)\n${job.diff}`
      lines.push(workflowCommand('error', { file: fileOf(document.path), line: job.line, title: 'insitu' }, message))
    }
    if (document.written) lines.push(workflowCommand('notice', { file: fileOf(document.path), title: 'insitu' }, `wrote ${document.path}`))
  }
  for (const document of report.documents) {
    for (const diagnostic of document.diagnostics) lines.push(...diagnosticCommand(diagnostic, fileOf(diagnostic.path ?? document.path)))
  }
  for (const diagnostic of report.validation) {
    lines.push(...diagnosticCommand(diagnostic, diagnostic.path === null ? null : fileOf(diagnostic.path), 'insitu validator'))
  }
  const jobs = report.documents.filter(staleOnDisk).reduce((n, d) => n + d.stale.length, 0)
  const counts = [
    counted(report.documents.length, 'document'),
    context.command === 'check' ? `${report.stale} stale (${counted(jobs, 'stale job')})` : `${report.written} written`,
    `${report.failed} failed`,
    counted(report.validationErrors, 'validator error'),
  ]
  lines.push(`insitu ${context.command}: ${counts.join(', ')}`)
  return `${lines.join('\n')}\n`
}

/** `1 document`, `2 documents`. */
function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

export function githubFailure(context: Omit<ReportContext, 'exitCode'>, error: unknown): string {
  const located = error as { message?: string; file?: string; line?: number; column?: number }
  const properties: Record<string, string | number> = { title: 'insitu' }
  if (located.file) properties.file = path.relative(context.workspace, path.resolve(context.root, located.file)).split(path.sep).join('/')
  if (located.line !== undefined) properties.line = located.line
  if (located.column !== undefined) properties.col = located.column
  return `${workflowCommand('error', properties, located.message ?? String(error))}\n`
}

/** Whether the document's file is still stale after the command (sync wrote the others). */
function staleOnDisk(document: DocumentSync): boolean {
  return !document.written && document.stale.length > 0
}

function diagnosticCommand(diagnostic: Diagnostic, file: string | null, title = 'insitu'): string[] {
  if (diagnostic.severity === 'info') return []
  const properties: Record<string, string | number> = {}
  if (file !== null) properties.file = file
  if (diagnostic.line !== null) properties.line = diagnostic.line
  properties.title = title
  return [workflowCommand(diagnostic.severity, properties, diagnostic.message)]
}

/** `::<command> k=v,k=v::<message>`, escaped as GitHub's runner reads workflow commands. */
export function workflowCommand(command: string, properties: Readonly<Record<string, string | number>>, message: string): string {
  const props = Object.entries(properties)
    .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
    .join(',')
  return `::${command}${props ? ` ${props}` : ''}::${escapeData(message)}`
}

export function escapeData(text: string): string {
  return text.replaceAll('%', '%25').replaceAll('\r', '%0D').replaceAll('\n', '%0A')
}

export function escapeProperty(text: string): string {
  return escapeData(text).replaceAll(':', '%3A').replaceAll(',', '%2C')
}
