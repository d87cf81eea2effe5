/**
 * The dev server's "why did this re-run?" page: `/__insitu/` (HTML) and `/__insitu/data.json`.
 *
 * Contract:
 * - `inspectorData(engine)` reads what the engine records (`engine.runRecords`, the document
 *   index, `engine.stats` when present); it keeps nothing of its own. Every managed document
 *   and module the engine ran is listed with its jobs (id, kind, line, provider, reused), last
 *   run time and duration, dependencies (per job: which region read what), diagnostics and
 *   reason (`reasonText` in words); managed documents no module id has requested yet are
 *   listed by path. `timeZone` names the zone the page's times are shown in.
 * - Times are the dev server process's local time (`localTime`: the zone of the terminal it
 *   runs in, with its UTC offset), the zone named once at the top; the `<time>` element keeps
 *   the ISO instant in its `datetime` attribute.
 * - `renderInspectorPage(data)` is a self-contained HTML page: every text from the project
 *   (paths, ids, messages) is escaped with `escapeHtml`, nothing external is linked, no
 *   script runs (the response forbids scripts through its Content-Security-Policy).
 * - `inspectorMiddleware(getEngine)` answers GET/HEAD of `/` and `/data.json` below its mount
 *   point (`INSPECTOR_PATH`); 404 for anything else below it; 503 with a short message while
 *   the engine is not running. Dev server only (it lists project paths; see docs/guide/security.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { InsituEngine } from '../engine/engine.js'
import { describeReason, type OwnerRecord } from '../engine/run-records.js'
import type { Diagnostic } from '../protocol/schemas.js'
import { localTime, timeZoneName } from './local-time.js'

export const INSPECTOR_PATH = '/__insitu'

export interface InspectorData {
  root: string
  /** The time zone the page shows times in (the dev server's). */
  timeZone: string
  stats: { jobsRun: number; jobsReused: number } | null
  owners: (OwnerRecord & { reasonText: string; pendingText: string | null })[]
  /** Managed documents without a record (no module id of theirs was requested yet). */
  notRequested: string[]
}

export function inspectorData(engine: InsituEngine): InspectorData {
  const records = engine.runRecords.list()
  const requested = new Set(records.map((r) => r.file))
  const stats = (engine as { stats?: InspectorData['stats'] }).stats
  return {
    root: engine.root,
    timeZone: timeZoneName(),
    stats: stats ? { jobsRun: stats.jobsRun, jobsReused: stats.jobsReused } : null,
    owners: records.map((record) => ({
      ...record,
      reasonText: describeReason(record.reason),
      pendingText: record.pending ? describeReason(record.pending) : null,
    })),
    notRequested: engine.index.documentPaths().filter((p) => !requested.has(p)),
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text made safe for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
ul { margin: 0; padding-left: 1.1rem; }
code { font-size: 12px; }
.warning { color: #8a5a00; } .error { color: #b00020; } .info { color: #555; }
.muted { color: #777; }
`

export function renderInspectorPage(data: InspectorData): string {
  const e = escapeHtml
  const list = (items: string[], empty = '—') => (items.length === 0 ? `<span class="muted">${empty}</span>` : `<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>`)
  const rows = data.owners.map((o) => {
    const run = o.lastRun
    const jobs = run.jobs.map(
      (j) =>
        `<code>${e(j.id)}</code> ${e(j.kind)}, line ${j.line}, ${e(j.provider)}${j.reused ? ', reused' : ''}${j.error !== null ? ` <span class="error">failed: ${e(j.error)}</span>` : ''}`,
    )
    const reason = e(o.reasonText) + (o.reason.kind === 'cached' ? ` <span class="muted">(last run: ${e(describeReason(run.reason))})</span>` : '')
    const pending = o.pendingText === null ? '' : `<br><span class="muted">re-runs next: ${e(o.pendingText)}</span>`
    return [
      `<tr data-owner="${e(o.owner)}">`,
      `<td class="owner"><code>${e(o.owner)}</code></td>`,
      `<td>${o.type}</td>`,
      `<td><time datetime="${new Date(run.at).toISOString()}">${e(localTime(run.at))}</time><br><span class="muted">${run.durationMs.toFixed(1)} ms; runs ${o.runs}, cached ${o.cachedRequests}</span></td>`,
      `<td class="reason">${reason}${pending}</td>`,
      `<td class="jobs">${run.error !== null ? `<span class="error">${e(run.error)}</span>` : ''}${list(jobs)}</td>`,
      `<td class="dependencies">${jobDependencies(run)}</td>`,
      `<td class="diagnostics">${list(run.diagnostics.map(diagnosticItem))}</td>`,
      '</tr>',
    ].join('')
  })
  const stats = data.stats ? `<p>Jobs run ${data.stats.jobsRun}, reused ${data.stats.jobsReused} since start.</p>` : ''
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>insitu: why did this re-run?</title>
<style>${STYLE}</style>
</head>
<body>
<h1>insitu: why did this re-run?</h1>
<p>Project <code>${e(data.root)}</code>. Reload the page to see the latest runs; the same data as JSON: <a href="${INSPECTOR_PATH}/data.json">data.json</a>. Times are the dev server's local time (${e(data.timeZone)}).</p>
${stats}
<h2>Documents and modules</h2>
<table id="owners">
<thead><tr><th>Module</th><th>Type</th><th>Last run</th><th>Reason</th><th>Jobs</th><th>Dependencies (per job)</th><th>Diagnostics</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
<h2>Managed documents not requested yet</h2>
<div id="not-requested">${list(data.notRequested.map((p) => `<code>${e(p)}</code>`), 'none')}</div>
</body>
</html>
`
}

/** Each job with what it read; what the run depended on beyond its jobs (none normally) last. */
function jobDependencies(run: OwnerRecord['lastRun']): string {
  const e = escapeHtml
  const items = (deps: readonly string[]) =>
    deps.length === 0 ? ' <span class="muted">nothing</span>' : `<ul>${deps.map((d) => `<li><code>${e(d)}</code></li>`).join('')}</ul>`
  const byJob = run.jobs.map((job) => `<li class="job-dependencies"><code>${e(job.id)}</code>${items(job.dependencies ?? [])}</li>`)
  const attributed = new Set(run.jobs.flatMap((job) => job.dependencies ?? []))
  const rest = run.dependencies.filter((d) => !attributed.has(d))
  if (rest.length > 0) byJob.push(`<li class="job-dependencies"><span class="muted">the run</span>${items(rest)}</li>`)
  return byJob.length === 0 ? '<span class="muted">—</span>' : `<ul>${byJob.join('')}</ul>`
}

function diagnosticItem(d: Diagnostic): string {
  const where = `${d.path ?? ''}${d.line !== null && d.line !== undefined ? `:${d.line}` : ''}`
  return `<span class="${d.severity === 'error' ? 'error' : d.severity === 'warning' ? 'warning' : 'info'}">${escapeHtml(`${d.severity} ${where} ${d.message}`)}</span>`
}

type Next = (error?: unknown) => void

export function inspectorMiddleware(getEngine: () => InsituEngine | undefined) {
  return (req: IncomingMessage, res: ServerResponse, next: Next): void => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next()
    const pathname = (req.url ?? '/').split('?')[0]!
    const page = pathname === '/' || pathname === '' ? 'html' : pathname === '/data.json' ? 'json' : null
    res.setHeader('X-Content-Type-Options', 'nosniff')
    res.setHeader('Cache-Control', 'no-store')
    if (page === null) return send(res, 404, 'text/plain', `not found: ${INSPECTOR_PATH}${pathname}\n`)
    const engine = getEngine()
    if (!engine) return send(res, 503, 'text/plain', 'the insitu engine is not running (starting, or it failed to start: see the terminal)\n')
    let data: InspectorData
    try {
      data = inspectorData(engine)
    } catch (error) {
      return send(res, 503, 'text/plain', `the insitu engine is not available: ${error instanceof Error ? error.message : String(error)}\n`)
    }
    if (page === 'json') return send(res, 200, 'application/json', JSON.stringify(data))
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
    send(res, 200, 'text/html', renderInspectorPage(data))
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.statusCode = status
  res.setHeader('Content-Type', `${type}; charset=utf-8`)
  res.end(body)
}
