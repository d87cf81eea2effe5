/**
 * The /__insitu/ page's HTML: every project text escaped; and the update log line and the
 * browser console text, as pure formatters.
 */
import { describe, expect, it } from 'vitest'
import type { OwnerRecord } from '../../src/engine/run-records.js'
import { formatBrowserDiagnostic, browserDiagnostics } from '../../src/plugin/browser-diagnostics.js'
import { escapeHtml, type InspectorData, renderInspectorPage } from '../../src/plugin/inspector-page.js'
import { localTime, timeZoneName } from '../../src/plugin/local-time.js'
import { failureLine, formatUpdateLine, updateLine } from '../../src/plugin/update-log.js'

const EVIL = `<script>alert("x")</script>&'`
const EVIL_ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;'

function record(overrides: Partial<OwnerRecord['lastRun']> = {}, owner = 'README.md'): OwnerRecord {
  const lastRun: OwnerRecord['lastRun'] = {
    at: Date.UTC(2026, 11, 1, 3, 0, 0),
    durationMs: 12.34,
    reason: { kind: 'selected', causes: [{ type: 'update', path: 'tasks/a.md' }], more: 0, batch: 1 },
    jobs: [
      { id: 'open', kind: 'sql', line: 3, target: 'region', provider: 'insitu', reused: false, error: null, dependencies: ['index:documents', 'fs:file:insitu/models/open.sql'] },
      { id: 'mix', kind: 'status_mix', line: 9, target: 'region', provider: 'acme/stats', reused: false, error: null, dependencies: ['index:documents'] },
      { id: 'tree', kind: 'tree', line: 14, target: 'region', provider: 'insitu', reused: true, error: null, dependencies: ['fs:dir:.'] },
    ],
    dependencies: ['index:documents', 'fs:file:insitu/models/open.sql', 'fs:dir:.'],
    diagnostics: [],
    error: null,
    outputChanged: true,
    rewrites: true,
    ...overrides,
  }
  return { owner, file: owner.replace(/\?.*/, ''), type: 'document', reason: lastRun.reason, lastRun, runs: 2, cachedRequests: 0, pending: null }
}

describe('escapeHtml', () => {
  it('escapes the five HTML-significant characters and nothing else', () => {
    expect(escapeHtml(EVIL)).toBe(EVIL_ESCAPED)
    expect(escapeHtml('tasks/a b.md → ok')).toBe('tasks/a b.md → ok')
  })
})

describe('renderInspectorPage', () => {
  it('escapes every project text: owner, job ids, kinds, providers, errors, dependencies, diagnostics, paths', () => {
    const evil = record(
      {
        reason: { kind: 'selected', causes: [{ type: 'create', path: `${EVIL}.md` }], more: 0, batch: 1 },
        jobs: [{ id: EVIL, kind: EVIL, line: 1, target: 'region', provider: EVIL, reused: false, error: EVIL, dependencies: [`fs:file:${EVIL}`] }],
        dependencies: [`fs:file:${EVIL}`],
        diagnostics: [{ severity: 'warning', message: EVIL, path: EVIL, line: 2, code: null }],
        error: EVIL,
      },
      `${EVIL}.md?raw`,
    )
    const data: InspectorData = {
      root: `/home/${EVIL}`,
      timeZone: EVIL,
      stats: null,
      owners: [{ ...evil, reasonText: `${EVIL}.md created`, pendingText: EVIL }],
      notRequested: [EVIL],
    }
    const html = renderInspectorPage(data)
    expect(html).not.toContain('<script')
    expect(html).not.toContain(EVIL)
    // Every place a text appears: root, time zone, owner (attribute and cell), reason, pending, job id, kind, provider
    // and error, the run error, the job id and its dependency, diagnostic path and message, not requested.
    expect(html.split(EVIL_ESCAPED).length - 1).toBe(16)
    expect(html).toContain(`<tr data-owner="${EVIL_ESCAPED}.md?raw">`)
    expect(html).toContain(`warning ${EVIL_ESCAPED}:2 ${EVIL_ESCAPED}`)
  })

  it('shows the jobs with line, provider and reuse, the run time, the reason and the stats', () => {
    const html = renderInspectorPage({
      root: '/p',
      timeZone: 'UTC',
      stats: { jobsRun: 5, jobsReused: 7 },
      owners: [{ ...record(), reasonText: 'tasks/a.md changed', pendingText: null }],
      notRequested: [],
    })
    expect(html).toContain('<code>open</code> sql, line 3, insitu</li>')
    expect(html).toContain('<code>mix</code> status_mix, line 9, acme/stats</li>')
    expect(html).toContain('<code>tree</code> tree, line 14, insitu, reused</li>')
    expect(html).toContain('<td class="reason">tasks/a.md changed</td>')
    expect(html).toContain('<span class="muted">12.3 ms; runs 2, cached 0</span>')
    expect(html).toContain('<p>Jobs run 5, reused 7 since start.</p>')
    expect(html).toContain('<div id="not-requested"><span class="muted">none</span></div>')
  })
  it('lists what each job read, under the job', () => {
    const html = renderInspectorPage({ root: '/p', timeZone: 'UTC', stats: null, owners: [{ ...record(), reasonText: 'x', pendingText: null }], notRequested: [] })
    const cell = /<td class="dependencies">(.*?)<\/td>/.exec(html)![1]
    expect(cell).toBe(
      '<ul>' +
        '<li class="job-dependencies"><code>open</code><ul><li><code>index:documents</code></li><li><code>fs:file:insitu/models/open.sql</code></li></ul></li>' +
        '<li class="job-dependencies"><code>mix</code><ul><li><code>index:documents</code></li></ul></li>' +
        '<li class="job-dependencies"><code>tree</code><ul><li><code>fs:dir:.</code></li></ul></li>' +
        '</ul>',
    )
  })

  it('shows times in the time zone of the process, and names it', () => {
    const zone = process.env.TZ
    try {
      process.env.TZ = 'Asia/Kolkata' // UTC+05:30, no daylight saving time
      const html = renderInspectorPage({ root: '/p', timeZone: timeZoneName(), stats: null, owners: [{ ...record(), reasonText: 'x', pendingText: null }], notRequested: [] })
      expect(html).toContain('<time datetime="2026-12-01T03:00:00.000Z">2026-12-01 08:30:00.000 +05:30</time>')
      expect(html).toMatch(/Times are the dev server's local time \(Asia\/(?:Kolkata|Calcutta)\)/)
      process.env.TZ = 'America/Los_Angeles' // UTC-08:00 in December
      expect(localTime(Date.UTC(2026, 11, 1, 3, 0, 0, 7))).toBe('2026-11-30 19:00:00.007 -08:00')
    } finally {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
    }
  })
})

describe('update log line', () => {
  it('names the file, the jobs that re-ran and the causes', () => {
    expect(formatUpdateLine('README.md', ['open', 'mix'], { kind: 'selected', causes: [{ type: 'update', path: 'tasks/a.md' }], more: 0, batch: 1 })).toBe(
      'insitu: README.md (open, mix) ← tasks/a.md changed',
    )
    expect(formatUpdateLine('docs/git.md', ['head'], { kind: 'selected', causes: [{ type: 'git' }], more: 0, batch: 1 })).toBe(
      'insitu: docs/git.md (head) ← git changed',
    )
    expect(
      formatUpdateLine('a.md', [], {
        kind: 'selected',
        causes: [
          { type: 'create', path: 'n/x.md' },
          { type: 'delete', path: 'n/y.md' },
        ],
        more: 2,
        batch: 1,
      }),
    ).toBe('insitu: a.md ← n/x.md created, n/y.md deleted (+2 more)')
  })

  it('is given for a plugin-caused run that changed the output, without reused jobs, and for nothing else', () => {
    expect(updateLine(record())).toBe('insitu: README.md (open, mix) ← tasks/a.md changed')
    expect(updateLine(record({}, 'README.md?raw'))).toBe('insitu: README.md (open, mix) ← tasks/a.md changed')
    expect(updateLine(record({ outputChanged: false }))).toBeNull()
    expect(updateLine(record({ reason: { kind: 'first' } }))).toBeNull()
    expect(updateLine(record({ reason: { kind: 'source' } }))).toBeNull()
  })

  it('logs a plugin-caused run in which a job failed as a failure, with its message', () => {
    const jobs = record().lastRun.jobs.map((job) => (job.id === 'open' ? { ...job, error: 'transform sql failed in open: insitu/models/open.sql:2: no such column: stauts' } : job))
    const failing = record({ jobs, reason: { kind: 'selected', causes: [{ type: 'update', path: 'insitu/models/open.sql' }], more: 0, batch: 2 } })
    expect(updateLine(failing)).toBeNull()
    expect(failureLine(failing)).toBe(
      'insitu: README.md (open) failed ← insitu/models/open.sql changed: transform sql failed in open: insitu/models/open.sql:2: no such column: stauts',
    )
    expect(failureLine(record({ jobs: [], error: 'unterminated Insitu region at line 4' }))).toBe(
      'insitu: README.md failed ← tasks/a.md changed: unterminated Insitu region at line 4',
    )
    expect(failureLine(record())).toBeNull()
    expect(failureLine({ ...failing, lastRun: { ...failing.lastRun, reason: { kind: 'first' } } })).toBeNull()
  })
})

describe('browser console text', () => {
  it('is `[insitu] <file>:<line> <message>`, for warnings and info only', () => {
    expect(formatBrowserDiagnostic({ severity: 'warning', message: 'stray end', path: 'README.md', line: 12, code: null }, 'x.md')).toBe(
      '[insitu] README.md:12 stray end',
    )
    expect(formatBrowserDiagnostic({ severity: 'info', message: 'note', path: null, line: null, code: null }, 'docs/a.md')).toBe('[insitu] docs/a.md note')
    const shown = browserDiagnostics(
      record({
        diagnostics: [
          { severity: 'error', message: 'broken', path: 'README.md', line: 1, code: null },
          { severity: 'warning', message: 'careful', path: 'README.md', line: 2, code: null },
          { severity: 'info', message: 'fyi', path: 'README.md', line: 3, code: null },
        ],
      }),
    )
    expect(shown).toEqual([
      { severity: 'warning', text: '[insitu] README.md:2 careful' },
      { severity: 'info', text: '[insitu] README.md:3 fyi' },
    ])
  })
})
