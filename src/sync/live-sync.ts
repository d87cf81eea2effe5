/**
 * Keeping documents current while their inputs change: the answer to one file event, for the
 * Vite dev server (dev-server.ts) and the command line's `watch` alike. Imports nothing from Vite.
 *
 * Contract:
 * - `changed(type, file)` handles one watcher event of a file of the project (not git) and
 *   returns a `ChangePlan` (which owners' modules to update, whether to send nothing for the
 *   event's own file):
 *   - a write-back temporary or backup file (`isWriteBackTemporary`) is ignored entirely;
 *   - an update of a file that is EMPTY waits (up to ~100 ms, as Vite's own HMR read does)
 *     until it is written again: a writer that truncates and then writes can be reported
 *     between the two, and the watcher drops the second change (its 50 ms change throttle);
 *   - write mode, a document: its state now (mtime, size, bytes) is classified by the ledger
 *     (self-writes.ts): the ECHO of this process's own write has its own owners neither
 *     invalidated nor re-run, and `suppressOwn` (the change that caused the write sent the
 *     update already; `announced` false for the echo of a start-up write, which nothing
 *     announced); a state already handled (a second report of one save) is dropped whole;
 *   - anything else goes through `engine.affected()`, then `updatesFor()` below.
 *   It rejects when the event cannot be handled (`engine.affected()` throws: the index refresh
 *   of a path that has become a symlink loop, say; a written document's `affected()`): no
 *   update was decided, and the host falls back to `fallback()`.
 * - `fallback(type, file, directory?)`, after an event's handling threw (`changed()`, or a
 *   folder event's): `updatesFor()` (below: rendered, written back in write mode, early cutoff)
 *   of every owner `engine.mayBeAffected()` finds (the dependency graph alone, every reader of
 *   the index counted in: whether the index changed is unknown). Nothing once closed. Both
 *   hosts use it (dev-server.ts `failedPlan`, src/sync/watch-session.ts).
 * - `updatesFor(affected, cause)` (also for git changes) decides per affected owner:
 *   - a module-rule owner, or a document whose render threw: its modules update (a document
 *     with a failing job is rendered all the same, its failed regions with their last good
 *     bodies, and decided like any other: issue #34);
 *   - a document (not the event's own file): rendered now from its text on disk; when that is
 *     the text its owner was last rendered to, or last sent an update for, nothing is sent
 *     (EARLY CUTOFF: a second report of one save, before the browser fetched the module again,
 *     sends no second update); decided in the file's chain, after an earlier change's;
 *   - write mode: each affected document (and the event's file, when it is a document the
 *     user edited) is synced (written back) BEFORE the plan resolves, and its modules update
 *     now: the file on disk is current when the browser fetches it again, and the write's echo
 *     sends nothing. A written document goes through `affected()` at once (its own owners
 *     excepted), so documents whose models read its front matter follow in the same update.
 *     A write that fails (EACCES, EROFS…) is logged with the path, and its modules update as
 *     without write mode. A document deleted meanwhile is left deleted. Writes of one document
 *     never overlap (one chain per file, the start-up sync's included); at most MAX_HELD writes
 *     are held unsettled at once (the oldest is settled early).
 * - No lost save (issue #14.1): every write is recorded before it can be seen
 *   (`SelfWrites.wrote`), and RECHECK_MS after it the write is settled: a save an editor wrote
 *   into the replaced file is put back (write-back.ts) and reported through
 *   `onMissedChange(file)`, which the host turns into a file event. (A save the watcher drops
 *   inside its change throttle is the watcher's to report: dropped-changes.ts.)
 * - Self-writes chain only through documents that read a written document's text (an `include`
 *   of it; an extension's `fs:file:` read, which sees its generated front matter): the index never
 *   holds generated bodies or `generated` values, so no model hears a write. A chain deeper than
 *   `MAX_WRITE_CHAIN` writes nothing more and warns.
 * - `syncAll()` (write mode, at engine start) writes every stale managed document back.
 * - `onSynced(document)` hears every document synced (at start and after a change), written or
 *   not, with its diagnostics; `onWritten(document)` every document written.
 * - `replacedText(file, text)`: whether `text` is what this process's last write of `file` replaced.
 * - `close()` settles every write still held and stops the re-checks; nothing is written after it.
 * Files are absolute POSIX paths (or paths the engine resolves against its root).
 */
import fs from 'node:fs'
import path from 'node:path'
import { type AffectedResult, hashText, type InsituEngine, ownerFile, ownerQuery } from '../engine/engine.js'
import type { FileEventType } from '../engine/dependency-graph.js'
import { toPosixPath } from '../host/config.js'
import type { HostLogger } from '../host/process.js'
import type { DiskMode } from './disk-mode.js'
import { diskState, type DiskState, SelfWrites } from './self-writes.js'
import { type DocumentSync, renderText, syncDocument } from './sync-document.js'
import { syncProject, writtenSummary } from './sync-project.js'
import { isWriteBackTemporary, type WrittenFile } from './write-back.js'

export interface ChangePlan {
  /** Owners whose modules must update (besides the host's own modules of the event's file). */
  owners: string[]
  /** Send no update for the event's own file: the echo of this process's own write, or a save already handled. */
  suppressOwn: boolean
  /**
   * With `suppressOwn`: the update that the change before sent (the change that caused the write,
   * or the first report of the save) reached the file's modules, and Vite took it on to their
   * importers. False for the echo of a start-up write (`syncAll`): nothing announced that one.
   */
  announced?: boolean
  affected: AffectedResult | null
}

export type SyncLogger = HostLogger

export interface LiveSyncOptions {
  disk: DiskMode
  logger: SyncLogger
  /** Log prefix of write failures. */
  prefix: string
  /** A change the watcher cannot have reported (a racing save this process put back): report it as a file event. */
  onMissedChange: (file: string) => void
  /** Told of each document written (the command line's `watch` prints them). */
  onWritten?: (document: DocumentSync) => void
  /** Told of each document synced, written or not (the command line's `watch` prints its errors). */
  onSynced?: (document: DocumentSync) => void
  /** How long after a write its file is checked again (above the watcher's 50 ms change throttle). @default RECHECK_MS */
  recheckMs?: number
  /**
   * Log `insitu: wrote <n> of <m> documents` after the start-up sync (off where `onWritten`
   * already prints each file, as the command line's `watch` does).
   * @default true
   */
  summary?: boolean
}

/** Writes held at once (each keeps the replaced file open, and its backup name, until settled). */
const MAX_HELD = 64

/** How many writes may follow one another through self-write events before writing stops. */
export const MAX_WRITE_CHAIN = 4

/** When a write is settled: long enough for an in-place writer that opened the file before the swap to have written. */
export const RECHECK_MS = 150

const NOTHING: ChangePlan = { owners: [], suppressOwn: false, affected: null }
const DUPLICATE: ChangePlan = { owners: [], suppressOwn: true, announced: true, affected: null }

export class LiveSync {
  private readonly ledger = new SelfWrites()
  /** Writes whose replaced inode is still held, per file (settled at the re-check or before the next write). */
  private readonly held = new Map<string, WrittenFile>()
  private readonly rechecks = new Map<string, NodeJS.Timeout>()
  /** Files the start-up sync wrote whose echo has not come yet (no update announced those writes). */
  private readonly startupWrites = new Set<string>()
  /** The sync in progress per file: writes of one document never overlap. */
  private readonly chains = new Map<string, Promise<unknown>>()
  private closed = false

  constructor(
    private readonly engine: InsituEngine,
    private readonly options: LiveSyncOptions,
  ) {}

  private get writing(): boolean {
    return this.options.disk === 'write' && !this.closed
  }

  async syncAll(): Promise<void> {
    if (!this.writing) return
    const report = await syncProject(this.engine, {
      write: true,
      selfWrites: this.ledger,
      settle: 'later',
      onDocument: (document) => {
        if (document.written) this.startupWrites.add(toPosixPath(path.resolve(this.engine.root, document.path)))
        this.afterSync(document)
      },
      // One chain per file with the changes' syncs: a write in flight is settled before the next.
      around: (relPath, sync) => {
        const file = toPosixPath(path.resolve(this.engine.root, relPath))
        return this.inChain(file, async () => {
          if (this.closed) return null // nothing is written after close()
          this.settleHeld(file)
          return sync()
        })
      },
    })
    if (report.written > 0 && this.options.summary !== false) this.options.logger.info(`insitu: ${writtenSummary(report)}`)
  }

  async changed(type: FileEventType, file: string): Promise<ChangePlan> {
    if (isWriteBackTemporary(file)) return NOTHING
    const absolute = toPosixPath(path.resolve(this.engine.root, file))
    if (type === 'delete') {
      this.ledger.forget(absolute)
      this.engine.forget(absolute)
    }
    if (type === 'update') await untilWrittenAfterTruncation(absolute)
    const document = type !== 'delete' && this.engine.isDocument(absolute)
    if (document && this.writing) {
      const state = await readState(absolute)
      const seen = state ? this.ledger.classify(absolute, state) : { kind: 'new' as const }
      if (seen.kind === 'seen') return DUPLICATE
      if (seen.kind === 'echo') {
        const relPath = this.engine.relativePath(absolute)
        const affected = this.engine.affected([{ type, path: absolute }], (owner) => ownerFile(owner) === relPath)
        const announced = !this.startupWrites.delete(absolute)
        return { ...(await this.updatesFor(affected, { file: null, depth: seen.depth + 1 })), suppressOwn: true, announced }
      }
    }
    const affected = this.engine.affected([{ type, path: absolute }])
    return this.updatesFor(affected, { file: document && this.writing ? absolute : null, depth: 0 })
  }

  /**
   * After an event's handling threw (see the contract): the owners that may read `file`,
   * decided as any change's. (An echo whose handling threw is not told apart: its document's own
   * modules may get a second update.)
   */
  async fallback(type: FileEventType, file: string, directory?: boolean): Promise<ChangePlan> {
    if (this.closed) return NOTHING
    const absolute = toPosixPath(path.resolve(this.engine.root, file))
    const affected = this.engine.mayBeAffected([{ type, path: absolute, directory }])
    return this.updatesFor(affected, { file: null, depth: 0 })
  }

  /**
   * Decide for each affected owner (see the contract). `cause.file`: the event's own document,
   * synced too in write mode; `cause.depth`: how many self-writes led here.
   */
  async updatesFor(affected: AffectedResult, cause: { file: string | null; depth: number }): Promise<ChangePlan> {
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
    const noted: { owner: string; hash: string }[] = []
    const planned = Promise.all(
      [...byFile].map(async ([file, owners]) => {
        // Rendered as one of its module ids, so no record appears for an id nobody requested.
        const query = owners.length > 0 ? ownerQuery(owners[0]!) : ''
        // In the file's chain: an earlier change's render and update of it are decided first.
        const decided = await this.inChain(file, async () => {
          // What each owner's modules show (or were sent an update for) before this change.
          const before = owners.map((owner) => this.engine.lastOutputHash(owner))
          // A render that throws (an engine closing) updates the owners: transform reports it.
          const outcome = await this.refresh(file, query, cause.depth).catch((): 'failed' => 'failed')
          if (outcome === 'missing') return outcome
          const changed = owners.filter(
            (owner, i) => outcome === 'failed' || outcome.written || before[i] === undefined || before[i] !== outcome.hash,
          )
          // The update makes each module fetch this text: a second report of the same change
          // finds it shown already and sends nothing (issue #17: never one update twice).
          if (outcome !== 'failed') {
            for (const owner of changed) {
              this.engine.noteOutputSent(owner, outcome.hash)
              noted.push({ owner, hash: outcome.hash })
            }
          }
          return { changed, written: outcome !== 'failed' && outcome.written }
        })
        if (decided === 'missing') return
        if (decided.written) update.push(...(await this.afterWrite(file, cause.depth)))
        update.push(...decided.changed)
      }),
    )
    try {
      await planned
    } catch (error) {
      // No plan, so none of those updates is sent: the next change must not take them as shown.
      for (const { owner, hash } of noted) if (this.engine.lastOutputHash(owner) === hash) this.engine.noteOutputSent(owner, undefined)
      throw error
    }
    return { owners: [...new Set(update)].sort(), suppressOwn: false, affected }
  }

  replacedText(file: string, text: string): boolean {
    return this.ledger.replacedText(toPosixPath(path.resolve(this.engine.root, file)), text)
  }

  close(): void {
    this.closed = true
    for (const timer of this.rechecks.values()) clearTimeout(timer)
    this.rechecks.clear()
    for (const written of this.held.values()) written.settle()
    this.held.clear()
  }

  /** Run `work` after the sync in progress for `file` (writes of one document never overlap). */
  private inChain<T>(file: string, work: () => Promise<T>): Promise<T> {
    const run = (this.chains.get(file) ?? Promise.resolve()).then(work, work)
    const chained = run.catch(() => undefined)
    this.chains.set(file, chained)
    void chained.then(() => {
      if (this.chains.get(file) === chained) this.chains.delete(file)
    })
    return run
  }

  /**
   * The engine learns a written document's new text now (documents that include it, or read it
   * through an extension, follow), its own owners excepted: the owners that change follow at `depth + 1`.
   */
  private async afterWrite(file: string, depth: number): Promise<string[]> {
    const relPath = this.engine.relativePath(file)
    const affected = this.engine.affected([{ type: 'update', path: file }], (owner) => ownerFile(owner) === relPath)
    if (affected.owners.length === 0) return []
    return (await this.updatesFor(affected, { file: null, depth: depth + 1 })).owners
  }

  /** Render (write mode: sync) one document: its new output hash (and whether it was written), or what happened instead. */
  private async refresh(file: string, query: string, depth: number): Promise<{ hash: string; written: boolean } | 'missing'> {
    const relPath = this.engine.relativePath(file) ?? file
    if (this.writing && depth <= MAX_WRITE_CHAIN) {
      this.settleHeld(file) // a save into the inode the last write replaced must be on disk before we read
      const sync = await syncDocument(this.engine, file, {
        write: true,
        query,
        selfWrites: { ledger: this.ledger, depth },
        settle: 'later',
      })
      if (!sync) return 'missing'
      // Written for a change, whose update announces it (a start-up write's echo may never have come).
      if (sync.written) this.startupWrites.delete(file)
      this.afterSync(sync)
      return { hash: hashText(sync.source.startsWith('\uFEFF') ? sync.text.slice(1) : sync.text), written: sync.written }
    }
    if (this.writing) {
      this.options.logger.warn(
        `insitu: ${relPath} not written: it changed again after each of ${MAX_WRITE_CHAIN} writes (do documents include each other's generated text?)`,
      )
    }
    let text: string
    try {
      text = fs.readFileSync(file, 'utf8') // see readState: no turn of the event loop here
    } catch {
      return 'missing'
    }
    const rendered = await renderText(this.engine, file, text, query, { prefetch: true })
    if (this.writing) {
      // Not written (the chain's end): its hearers learn it all the same (a dev server holds its failures till then).
      const { result } = rendered
      const failed = result.diagnostics.some((d) => d.severity === 'error')
      this.options.onSynced?.({ path: relPath, text: rendered.text, source: text, stale: [], written: false, diagnostics: result.diagnostics, failed, dependencies: result.dependencies })
    }
    // The engine hashed the text it rendered (401 KiB in the nested 10,000 bench README): not again.
    const hash = rendered.result.outputHash ?? hashText(rendered.result.text)
    // A failed job leaves its text served (its region's last good body): compared like any other.
    return { hash, written: false }
  }

  /** Log write failures; hold a written file and check it again RECHECK_MS later. */
  private afterSync(sync: DocumentSync): void {
    for (const diagnostic of sync.diagnostics) {
      if (diagnostic.code === 'insitu/write') {
        const log = diagnostic.severity === 'error' ? this.options.logger.error : this.options.logger.warn
        log(`${this.options.prefix}: ${diagnostic.message}`)
      }
    }
    this.options.onSynced?.(sync)
    if (!sync.written) return
    const file = toPosixPath(path.resolve(this.engine.root, sync.path))
    if (sync.writtenFile) {
      if (this.closed) sync.writtenFile.settle()
      else {
        this.settleHeld(file) // never two held writes of one file
        this.held.set(file, sync.writtenFile)
        // A start-up sync of many documents: hold at most MAX_HELD (a descriptor and a backup name each).
        if (this.held.size > MAX_HELD) this.settleOldestHeld()
      }
    }
    this.options.onWritten?.(sync)
    this.recheckLater(file)
  }

  /** Check `file` again RECHECK_MS from now (one pending re-check per file). */
  private recheckLater(file: string): void {
    if (this.closed) return
    clearTimeout(this.rechecks.get(file))
    const timer = setTimeout(() => this.recheck(file), this.options.recheckMs ?? RECHECK_MS)
    timer.unref()
    this.rechecks.set(file, timer)
  }

  /** Settle the write held longest (the map keeps insertion order); a restored save is reported. */
  private settleOldestHeld(): void {
    const oldest = this.held.keys().next().value
    if (oldest !== undefined && this.settleHeld(oldest)) this.options.onMissedChange(oldest)
  }

  /** Settle the write of `file` still held, if any (true when an editor's save was restored). */
  private settleHeld(file: string): boolean {
    const written = this.held.get(file)
    if (!written) return false
    this.held.delete(file)
    if (written.settle() !== 'restored') return false
    this.ledger.withdraw(file)
    return true
  }

  /**
   * The late re-check of a written file: its write is settled, and a save an editor wrote into
   * the replaced file (put back at the path now) is reported as a change.
   */
  private recheck(file: string): void {
    this.rechecks.delete(file)
    if (this.closed) return
    if (this.settleHeld(file)) this.options.onMissedChange(file)
  }
}

/**
 * The file's state now, or null when it cannot be read (deleted: the watcher reports that).
 * Read synchronously, as every read between a change and its update: an asynchronous read
 * hands the event loop to whatever waits, and right after a change that is Vite's watcher
 * re-reading the changed file's folder (hundreds of milliseconds beside 10,000 files, issue #17).
 */
async function readState(file: string): Promise<DiskState | null> {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, 'r')
    const stat = fs.fstatSync(fd)
    return diskState(stat, fs.readFileSync(fd))
  } catch {
    return null
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** How often, and how long apart, an empty updated file's mtime is checked (Vite's `readModifiedFile`). */
const TRUNCATION_CHECKS = 10
const TRUNCATION_CHECK_MS = 10

/**
 * When `file` is empty, wait until it is written again (the write that followed a truncation),
 * at most TRUNCATION_CHECKS times TRUNCATION_CHECK_MS. A file that stays empty costs that wait once.
 */
export async function untilWrittenAfterTruncation(file: string): Promise<void> {
  try {
    const first = fs.statSync(file) // see readState: no turn of the event loop for a file that is not empty
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
