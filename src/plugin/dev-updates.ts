/**
 * The dev server's answer to one change: which owners' modules to update, after early cutoff
 * and (in write mode) writing the affected documents back.
 *
 * Contract:
 * - `changed(type, file)` handles one watcher event (a file of the project, not git):
 *   - a write-back temporary file (`isWriteBackTemporary`) is ignored entirely ('ignore');
 *   - an update of a file that is EMPTY waits (up to ~100 ms, as Vite's own HMR read does)
 *     until it is written again: a writer that truncates and then writes (`fs.writeFileSync`)
 *     can be reported between the two, and the watcher drops the second change (its 50 ms
 *     change throttle), so planning at once would cache renders of the empty file for good;
 *   - the first event of a document whose modification time and text on disk are exactly
 *     those this plugin's last write left is the ECHO of that write (the record is used up:
 *     a later save of the same text, an undo, a `git checkout`, is the user's): its own owners
 *     are neither invalidated nor re-run, and `suppressOwn` tells the hook to send no update
 *     for the file (the change that caused the write already sent it). Other plugins and the
 *     watcher's listeners still get the event (a tool reading the file from disk reloads);
 *   - anything else goes through `engine.affected()`, then `settle()` below.
 * - `settle(affected, cause)` (also for git changes) decides per affected owner:
 *   - a module-rule owner, or a document whose render failed: its modules update;
 *   - a document (not the event's own file): rendered now from its text on disk; when that is
 *     the text its owner was last rendered to, nothing is sent (EARLY CUTOFF);
 *   - write mode: each affected document (and the event's file, when it is a document the
 *     user edited) is synced (`syncDocument`, write) BEFORE the hook returns, and its modules
 *     update now: the file on disk is current when the browser fetches it again, and the
 *     write's echo sends nothing (so the one update never depends on the watcher reporting a
 *     write that follows an edit within its change throttle). A written document goes through
 *     `affected()` at once (its own owners excepted), so documents whose models read its front
 *     matter follow in the same update, without waiting for the echo either. Unchanged bytes: early cutoff as
 *     above. A write that fails (EACCES, EROFS…) is logged with the path and its modules update
 *     as without write mode (the transform still serves current text). A document deleted
 *     meanwhile is left deleted.
 * - Self-writes can chain only through front-matter materializations that another document's
 *   model reads; a chain deeper than `MAX_WRITE_CHAIN` writes nothing more and warns (a cycle
 *   through front matter can never loop).
 * - `replacedText(file, text)`: whether `text` is what the plugin's last write of `file`
 *   replaced (BOM aside): a module Vite read just before that write is still the document's
 *   Markdown, though the file on disk has moved on.
 * - `syncAll()` (write mode, at engine start) writes every stale managed document back, each
 *   recorded as it is written (its echo may arrive before the last one is written).
 */
import fs from 'node:fs'
import path from 'node:path'
import { type AffectedResult, hashText, type InsituEngine, ownerFile, ownerQuery } from '../engine/engine.js'
import type { FileEventType } from '../engine/dependency-graph.js'
import { toPosixPath } from '../host/config.js'
import { renderText, syncDocument, type DocumentSync } from '../sync/sync-document.js'
import { syncProject } from '../sync/sync-project.js'
import { isWriteBackTemporary } from '../sync/write-back.js'
import type { PluginLogger } from './diagnostics.js'

export interface ChangePlan {
  /** Owners whose modules must update (besides Vite's own modules of the event's file). */
  owners: string[]
  /** Send no update for the event's own file: it is the echo of the plugin's own write. */
  suppressOwn: boolean
  affected: AffectedResult | null
}

/** How many writes may follow one another through self-write events before the plugin stops writing. */
export const MAX_WRITE_CHAIN = 4

const NOTHING: ChangePlan = { owners: [], suppressOwn: false, affected: null }

export class DevUpdates {
  /** Per absolute POSIX document: what this plugin's last write left there (until its echo), and the chain depth of that write. */
  private readonly written = new Map<string, { text: string; mtimeMs: number; depth: number }>()
  /** Per absolute POSIX document: the text the plugin's last write of it replaced. */
  private readonly replaced = new Map<string, string>()

  constructor(
    private readonly engine: InsituEngine,
    private readonly options: { write: boolean; logger: PluginLogger; prefix: string },
  ) {}

  async syncAll(): Promise<void> {
    const report = await syncProject(this.engine, { write: true, onDocument: (document) => this.recordOutcome(document, 0) })
    if (report.written > 0) this.options.logger.info(`insitu: wrote ${report.written} of ${report.documents.length} documents`)
  }

  async changed(type: FileEventType, file: string): Promise<ChangePlan> {
    if (isWriteBackTemporary(file)) return NOTHING
    const absolute = toPosixPath(path.resolve(file))
    if (type === 'delete') {
      this.written.delete(absolute)
      this.replaced.delete(absolute)
      this.engine.forget(absolute)
    }
    if (type === 'update') await untilWrittenAfterTruncation(absolute)
    const selfWrite = type !== 'delete' ? await this.selfWrite(absolute) : undefined
    if (selfWrite) {
      const relPath = this.engine.relativePath(absolute)
      const affected = this.engine.affected([{ type, path: absolute }], (owner) => ownerFile(owner) === relPath)
      return { ...(await this.settle(affected, { file: null, depth: selfWrite.depth + 1 })), suppressOwn: true }
    }
    const affected = this.engine.affected([{ type, path: absolute }])
    const own = type !== 'delete' && this.options.write && this.engine.isDocument(absolute) ? absolute : null
    return this.settle(affected, { file: own, depth: 0 })
  }

  /**
   * Decide for each affected owner (see the contract). `cause.file`: the event's own document,
   * synced too in write mode; `cause.depth`: how many self-writes led here.
   */
  async settle(affected: AffectedResult, cause: { file: string | null; depth: number }): Promise<ChangePlan> {
    const byFile = new Map<string, string[]>()
    const update: string[] = []
    for (const owner of affected.owners) {
      const file = toPosixPath(path.resolve(this.engine.root, ownerFile(owner)))
      if (!this.engine.isDocument(file)) {
        update.push(owner)
        continue
      }
      byFile.set(file, [...(byFile.get(file) ?? []), owner])
    }
    if (cause.file && !byFile.has(cause.file)) byFile.set(cause.file, [])
    await Promise.all(
      [...byFile].map(async ([file, owners]) => {
        // What each owner served before this change (rendering below records the new output).
        const before = owners.map((owner) => this.engine.lastOutputHash(owner))
        // A render that throws (an engine closing) updates the owners: transform reports it.
        // Rendered as one of its module ids, so no record appears for an id nobody requested.
        const query = owners.length > 0 ? ownerQuery(owners[0]!) : ''
        const outcome = await this.refresh(file, query, cause).catch((): 'failed' => 'failed')
        if (outcome === 'missing') return
        if (outcome === 'written') update.push(...(await this.afterWrite(file, cause.depth)))
        owners.forEach((owner, i) => {
          if (outcome === 'written' || outcome === 'failed' || before[i] === undefined || before[i] !== outcome) update.push(owner)
        })
      }),
    )
    return { owners: [...new Set(update)].sort(), suppressOwn: false, affected }
  }

  /**
   * The index learns a written document's new text now (its front matter may feed other
   * documents' models), its own owners excepted: the owners that change follow at `depth + 1`.
   */
  private async afterWrite(file: string, depth: number): Promise<string[]> {
    const relPath = this.engine.relativePath(file)
    const affected = this.engine.affected([{ type: 'update', path: file }], (owner) => ownerFile(owner) === relPath)
    if (affected.owners.length === 0) return []
    return (await this.settle(affected, { file: null, depth: depth + 1 })).owners
  }

  /** Render (write mode: sync) one document: its new output hash, or what happened instead. */
  private async refresh(
    file: string,
    query: string,
    cause: { file: string | null; depth: number },
  ): Promise<string | 'written' | 'missing' | 'failed'> {
    const relPath = this.engine.relativePath(file) ?? file
    if (this.options.write && cause.depth <= MAX_WRITE_CHAIN) {
      const sync = await syncDocument(this.engine, file, { write: true, query })
      if (!sync) return 'missing'
      this.recordOutcome(sync, cause.depth)
      if (sync.written) return 'written'
      return sync.failed ? 'failed' : hashText(sync.source.startsWith('\uFEFF') ? sync.text.slice(1) : sync.text)
    }
    if (this.options.write) {
      this.options.logger.warn(
        `insitu: ${relPath} not written: it changed again after each of ${MAX_WRITE_CHAIN} writes (a cycle through front matter?)`,
      )
    }
    let text: string
    try {
      text = await fs.promises.readFile(file, 'utf8')
    } catch {
      return 'missing'
    }
    const rendered = await renderText(this.engine, file, text, query, { prefetch: true })
    return rendered.result.diagnostics.some((d) => d.severity === 'error') ? 'failed' : hashText(rendered.result.text)
  }

  /** Remember a write (synchronously: before its watcher event can be handled) and log write failures. */
  private recordOutcome(sync: DocumentSync, depth: number): void {
    const absolute = toPosixPath(path.resolve(this.engine.root, sync.path))
    if (sync.written) {
      this.replaced.set(absolute, sync.source)
      try {
        this.written.set(absolute, { text: sync.text, mtimeMs: fs.statSync(absolute).mtimeMs, depth })
      } catch {
        this.written.delete(absolute) // gone already: there is no echo to recognize
      }
    }
    for (const diagnostic of sync.diagnostics) {
      if (diagnostic.code === 'insitu/write') {
        const log = diagnostic.severity === 'error' ? this.options.logger.error : this.options.logger.warn
        log(`${this.options.prefix}: ${diagnostic.message}`)
      }
    }
  }

  replacedText(file: string, text: string): boolean {
    const source = this.replaced.get(toPosixPath(path.resolve(file)))
    return source !== undefined && (source === text || (source.charCodeAt(0) === 0xfeff && source.slice(1) === text))
  }

  /**
   * The record of the plugin's last write of `file` when this event is its echo (the file still
   * has that write's modification time and text). The record is used up either way: whatever
   * happens to the file next is not the plugin's doing.
   */
  private async selfWrite(absolute: string): Promise<{ depth: number } | undefined> {
    const record = this.written.get(absolute)
    if (!record) return undefined
    this.written.delete(absolute)
    try {
      if ((await fs.promises.stat(absolute)).mtimeMs !== record.mtimeMs) return undefined
      return (await fs.promises.readFile(absolute, 'utf8')) === record.text ? record : undefined
    } catch {
      return undefined
    }
  }
}

/** How often, and how long apart, an empty updated file's mtime is checked (Vite's `readModifiedFile`). */
const TRUNCATION_CHECKS = 10
const TRUNCATION_CHECK_MS = 10

/**
 * When `file` is empty, wait until it is written again (the write that followed a truncation),
 * at most TRUNCATION_CHECKS times TRUNCATION_CHECK_MS. A file that stays empty costs that wait once.
 */
async function untilWrittenAfterTruncation(file: string): Promise<void> {
  try {
    const first = await fs.promises.stat(file)
    if (first.size > 0) return
    for (let n = 0; n < TRUNCATION_CHECKS; n++) {
      await new Promise((resolve) => setTimeout(resolve, TRUNCATION_CHECK_MS))
      const now = await fs.promises.stat(file)
      // Written meanwhile (a coarse clock can give the truncation and the write one mtime).
      if (now.size > 0 || now.mtimeMs !== first.mtimeMs) return
    }
  } catch {
    // gone or unreadable: the event's handling reports what it finds
  }
}
