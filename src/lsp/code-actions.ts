/**
 * Code actions on an analyzed document, as workspace edits the editor applies (the server never
 * writes a file; the edits are computed from the editor's text, saved or not).
 *
 * Contract: `codeActions(uri, analysis, range, diagnostics, { only, versioned })`: the edits name
 * the document's version analyzed (`documentChanges`, so a client applies none to a newer text)
 * when the client said it takes them (`versioned`), else they are `changes`; with `only`, the
 * actions of those kinds alone:
 * - `Regenerate region <id>` (quick fix) for each stale or hand-edited region whose markers or
 *   body `range` touches: its body replaced by what its inputs generate now (for a hand-edited
 *   one the title says the edits are discarded).
 * - `Regenerate every region of the document` (quick fix when the range touches a stale region
 *   and more than one edit is due, else the source action `source.insitu.regenerate`; a request
 *   whose `only` names a kind gets the actions of that kind, so `source.insitu.regenerate` always
 *   finds it): every edit of the render, front-matter materializations included.
 * - `Change <wrong> to <right>` (preferred quick fix) for each diagnostic of the request with a
 *   did-you-mean (`unknown transform: includ; did you mean include?`, `unknown tree options:
 *   dpth (did you mean depth?)`, `template not found: x; did you mean x.j2?`): the first whole
 *   occurrence of `<wrong>` in the region's begin comment replaced by `<right>`.
 * A region whose job failed gets no regenerate action (its body would not change).
 */
import { type CodeAction, CodeActionKind, type Diagnostic, type Range, type TextEdit, type WorkspaceEdit } from 'vscode-languageserver'
import type { Region } from '../documents/regions.js'
import type { DocumentAnalysis, RegionDiagnosticData } from './document-analysis.js'
import { rangeOf } from './uris.js'

export const REGENERATE_ALL_KIND = `${CodeActionKind.Source}.insitu.regenerate`

export function codeActions(
  uri: string,
  analysis: DocumentAnalysis,
  range: Range,
  diagnostics: readonly Diagnostic[],
  options: { only?: readonly string[]; versioned?: boolean } = {},
): CodeAction[] {
  const { only } = options
  const workspaceEdit = (edits: TextEdit[]): WorkspaceEdit =>
    options.versioned && analysis.version !== null
      ? { documentChanges: [{ textDocument: { uri, version: analysis.version }, edits }] }
      : { changes: { [uri]: edits } }
  const actions = allCodeActions(analysis, range, diagnostics, workspaceEdit)
  if (only && only.length > 0) return actions.filter((action) => only.some((kind) => action.kind === kind || action.kind?.startsWith(`${kind}.`)))
  // The source action duplicates the quick fix when both are offered (each carries every edit).
  const fixesAll = actions.some((action) => action.kind === CodeActionKind.QuickFix && action.title === REGENERATE_ALL)
  return fixesAll ? actions.filter((action) => action.kind !== REGENERATE_ALL_KIND) : actions
}

const REGENERATE_ALL = 'Regenerate every region of the document'

function allCodeActions(analysis: DocumentAnalysis, range: Range, diagnostics: readonly Diagnostic[], workspaceEdit: (edits: TextEdit[]) => WorkspaceEdit): CodeAction[] {
  const result = analysis.result
  if (!result) return []
  const { text } = analysis
  const actions: CodeAction[] = []
  const edit = (start: number, end: number, newText: string): TextEdit => ({ range: rangeOf(text, start, end), newText })
  let touchesStale = false
  for (const report of analysis.reports) {
    if (report.state.kind !== 'stale' && report.state.kind !== 'hand-edited') continue
    if (!touches(text, report.region, range)) continue
    const regionEdit = result.edits.find((e) => e.start === report.region.bodyStart)
    if (!regionEdit) continue
    touchesStale = true
    const discards = report.state.kind === 'hand-edited' ? ' (discards the edits made inside it)' : ''
    actions.push({
      title: `Regenerate region ${report.region.id}${discards}`,
      kind: CodeActionKind.QuickFix,
      diagnostics: diagnostics.filter((d) => (d.data as RegionDiagnosticData | undefined)?.region === report.region.id),
      edit: workspaceEdit([edit(regionEdit.start, regionEdit.end, regionEdit.text)]),
    })
  }
  if (result.edits.length > 0) {
    const all = workspaceEdit(result.edits.map((e) => edit(e.start, e.end, e.text)))
    if (touchesStale && result.edits.length > 1) actions.push({ title: REGENERATE_ALL, kind: CodeActionKind.QuickFix, edit: all })
    actions.push({ title: REGENERATE_ALL, kind: REGENERATE_ALL_KIND, edit: all })
  }
  for (const diagnostic of diagnostics) {
    const regionId = (diagnostic.data as RegionDiagnosticData | undefined)?.region
    const region = analysis.reports.find((r) => r.region.id === regionId)?.region
    if (!region) continue
    const message = typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value
    for (const { wrong, right } of suggestions(message)) {
      const at = wholeWordIn(text, wrong, region.start, region.bodyStart)
      if (at < 0) continue
      actions.push({
        title: `Change ${wrong} to ${right}`,
        kind: CodeActionKind.QuickFix,
        isPreferred: true,
        diagnostics: [diagnostic],
        edit: workspaceEdit([edit(at, at + wrong.length, right)]),
      })
    }
  }
  return actions
}

/** Each `<wrong>; did you mean <right>?` and `<wrong> (did you mean <right>?)` of a message. */
export function suggestions(message: string): { wrong: string; right: string }[] {
  const found: { wrong: string; right: string }[] = []
  for (const match of message.matchAll(/([^\s:;,()]+)(?:; | \()did you mean ([^?\s]+)\?/g)) found.push({ wrong: match[1]!, right: match[2]! })
  return found
}

/** Whether `range` (0-based lines) meets the region's lines, begin comment to end comment. */
function touches(text: string, region: Region, range: Range): boolean {
  const first = region.line - 1
  let last = first
  for (let at = text.indexOf('\n', region.start); at >= 0 && at < region.end; at = text.indexOf('\n', at + 1)) last++
  return range.start.line <= last && range.end.line >= first
}

/** The offset of `word` in `[from, to)` not inside a longer name, or -1. */
function wholeWordIn(text: string, word: string, from: number, to: number): number {
  const isNameCharacter = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_.-]/u.test(c)
  for (let at = text.indexOf(word, from); at >= 0 && at + word.length <= to; at = text.indexOf(word, at + 1)) {
    if (!isNameCharacter(text[at - 1]) && !isNameCharacter(text[at + word.length])) return at
  }
  return -1
}
