/**
 * The /__insitu/ page's HTML: every project text escaped; and the update log line and the
 * browser console text, as pure formatters.
 */
import { describe, expect, it } from 'vitest'
import type { OwnerRecord } from '../../src/engine/run-records.js'
import { formatBrowserDiagnostic, browserDiagnostics } from '../../src/plugin/browser-diagnostics.js'
import { escapeHtml, type InspectorData, renderInspectorPage } from '../../src/plugin/inspector-page.js'
import { formatUpdateLine, updateLine } from '../../src/plugin/update-log.js'

const EVIL = `<script>alert("x")</script>&'`
const EVIL_ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;'

function record(overrides: Partial<OwnerRecord['lastRun']> = {}, owner = 'README.md'): OwnerRecord {
  const lastRun: OwnerRecord['lastRun'] = {
    at: Date.UTC(2026, 11, 1, 3, 0, 0),
    durationMs: 12.34,
    reason: { kind: 'selected', causes: [{ type: 'update', path: 'tasks/a.md' }], more: 0, batch: 1 },
    jobs: [
      { id: 'open', kind: 'sql', line: 3, target: 'region', provider: 'insitu', reused: false, error: null },
      { id: 'mix', kind: 'status_mix', line: 9, target: 'region', provider: 'acme/stats', reused: false, error: null },
      { id: 'tree', kind: 'tree', line: 14, target: 'region', provider: 'insitu', reused: true, error: null },
    ],
    dependencies: ['index:documents'],
    diagnostics: [],
    error: null,
    outputChanged: true,
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
        jobs: [{ id: EVIL, kind: EVIL, line: 1, target: 'region', provider: EVIL, reused: false, error: EVIL }],
        dependencies: [`fs:file:${EVIL}`],
        diagnostics: [{ severity: 'warning', message: EVIL, path: EVIL, line: 2, code: null }],
        error: EVIL,
      },
      `${EVIL}.md?raw`,
    )
    const data: InspectorData = {
      root: `/home/${EVIL}`,
      stats: null,
      owners: [{ ...evil, reasonText: `${EVIL}.md created`, pendingText: EVIL }],
      notRequested: [EVIL],
    }
    const html = renderInspectorPage(data)
    expect(html).not.toContain('<script')
    expect(html).not.toContain(EVIL)
    // Every place a text appears: root, owner (attribute and cell), reason, pending, job id, kind, provider and error,
    // the run error, dependency, diagnostic path and message, not requested.
    expect(html.split(EVIL_ESCAPED).length - 1).toBe(14)
    expect(html).toContain(`<tr data-owner="${EVIL_ESCAPED}.md?raw">`)
    expect(html).toContain(`warning ${EVIL_ESCAPED}:2 ${EVIL_ESCAPED}`)
  })

  it('shows the jobs with line, provider and reuse, the run time, the reason and the stats', () => {
    const html = renderInspectorPage({
      root: '/p',
      stats: { jobsRun: 5, jobsReused: 7 },
      owners: [{ ...record(), reasonText: 'tasks/a.md changed', pendingText: null }],
      notRequested: [],
    })
    expect(html).toContain('<code>open</code> sql, line 3, insitu</li>')
    expect(html).toContain('<code>mix</code> status_mix, line 9, acme/stats</li>')
    expect(html).toContain('<code>tree</code> tree, line 14, insitu, reused</li>')
    expect(html).toContain('<td class="reason">tasks/a.md changed</td>')
    expect(html).toContain('2026-12-01T03:00:00.000Z<br><span class="muted">12.3 ms; runs 2, cached 0</span>')
    expect(html).toContain('<p>Jobs run 5, reused 7 since start.</p>')
    expect(html).toContain('<div id="not-requested"><span class="muted">none</span></div>')
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
