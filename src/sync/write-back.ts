/**
 * Write one regenerated document back to disk: atomic, never clobbering an edit, and never
 * losing a save that races the write (issue #14).
 *
 * Contract: `writeBack(file, renderedFrom, text, name?)` returns
 * - 'missing'   when the file does not exist (a deleted document is never recreated);
 * - 'conflict'  when the file's bytes are no longer exactly `renderedFrom` (someone edited it
 *               since it was read), or an editor's save raced the write and won: the editor's
 *               bytes are on disk, the caller renders again;
 * - 'unchanged' when the file's bytes already are `text` (nothing is written, mtime kept);
 * - 'written'   otherwise.
 * `replaceDocument(file, renderedFrom, text, options)` is the same write for callers that keep
 * watching the file (the live sync): a 'written' outcome comes with a `WrittenFile` to settle
 * later (see step 4), and `options.beforeReplace(state)` is called synchronously just before
 * the new text can be seen at the path (so its watcher event can be recognized as an echo).
 * A symlink is followed (the link stays a link). A file the process may not write (`access`
 * W_OK: a read-only document, an immutable file, a read-only file system) is an error, not a
 * rename around its permissions. Errors throw `cannot write <name>: <CODE>: <reason>` (`name`:
 * how to name the file, default `file` as given). No temporary file is left behind.
 *
 * Protocol. POSIX has no compare-and-swap of a file's contents, so the write detects and recovers:
 * 1. Open the file (inode A) and read it through that handle: not `renderedFrom` → 'conflict';
 *    already `text` → 'unchanged'.
 * 2. Write `text` to a temporary file T in the same folder (mode and owner kept, fsynced).
 * 3. In one synchronous step, with no other work of this process in between: read A again
 *    through the handle (an in-place writer may have written since step 1 → 'conflict'); move
 *    the path aside to a backup name (`rename`); when what moved is not A (an editor renamed its
 *    save over the path meanwhile) put it back → 'conflict'; link T at the path: `link` fails
 *    when the path exists, so an editor's save that landed in the microseconds between the two
 *    calls is kept → 'conflict'; remove T's name. A rename over the path (the common way) would
 *    instead silently discard a save renamed into place after the last comparison.
 * 4. Settle: the backup name and the handle on A are kept until `settle()` (the live sync
 *    settles at its late re-check, 150 ms on; `writeBack` at once), because an in-place writer
 *    (`fs.writeFile`, most editors) that opened A before step 3 still writes into A. Settling
 *    reads A: unchanged → the backup name is removed ('kept'); changed → A itself is linked back
 *    at the path when the path still holds `text` ('restored': the editor's bytes win, and
 *    later writes into A land at the path too), then the backup name is removed.
 * For a few microseconds in step 3 the path does not exist (a reader opening it then gets
 * ENOENT; watchers report a change). Where `link` is not supported (EPERM, ENOTSUP, EXDEV…),
 * step 3 renames T over the path instead. Temporary and backup files are named
 * `.<name>.insitu-<12 hex>.tmp|.bak` (`isWriteBackTemporary`); a process that ends while a write
 * is unsettled settles it synchronously (process-end.ts).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { isWriteBackTemporaryName } from '../documents/project-paths.js'
import { onProcessEnd } from '../sandbox/process-end.js'

export type WriteOutcome = 'written' | 'unchanged' | 'conflict' | 'missing'

/** The file's state right after the write (what its watcher event will show). */
export interface WrittenState {
  mtimeMs: number
  size: number
}

/** A written document whose replaced inode is still held (protocol step 4). */
export interface WrittenFile {
  readonly state: WrittenState
  /** 'kept': nobody wrote into the old inode; 'restored': an editor did, and its bytes are back at the path. */
  settle(): 'kept' | 'restored'
}

export interface ReplaceOptions {
  /** How errors name the file. @default the file as given */
  name?: string
  /** Called synchronously just before `text` can be seen at the path. */
  beforeReplace?: (state: WrittenState) => void
  /** Called when the write did not happen after all (the path changed in step 3), undoing `beforeReplace`. */
  replaceFailed?: () => void
}

/** Whether a path is one of writeBack's temporary or backup files (watchers and the project walk ignore them). */
export function isWriteBackTemporary(file: string): boolean {
  return isWriteBackTemporaryName(path.basename(file))
}

export async function writeBack(file: string, renderedFrom: string, text: string, name = file): Promise<WriteOutcome> {
  const result = await replaceDocument(file, renderedFrom, text, { name })
  if (result.outcome !== 'written') return result.outcome
  return result.written.settle() === 'restored' ? 'conflict' : 'written'
}

export async function replaceDocument(
  file: string,
  renderedFrom: string,
  text: string,
  options: ReplaceOptions = {},
): Promise<{ outcome: 'written'; written: WrittenFile } | { outcome: Exclude<WriteOutcome, 'written'> }> {
  const name = options.name ?? file
  let target: string
  try {
    target = await fs.promises.realpath(file)
  } catch (error) {
    if (isMissing(error)) return { outcome: 'missing' }
    throw writeError(name, error)
  }
  const expected = Buffer.from(renderedFrom, 'utf8')
  const wanted = Buffer.from(text, 'utf8')
  // A plain descriptor (not a FileHandle): it may outlive this call, until the write is settled.
  let held: number
  try {
    held = fs.openSync(target, 'r')
  } catch (error) {
    if (isMissing(error)) return { outcome: 'missing' }
    throw writeError(name, error)
  }
  let keepHeld = false
  let temporary: string | undefined
  try {
    const before = fs.fstatSync(held)
    const state = compare(readFd(held), expected, wanted)
    if (state !== 'different') return { outcome: state }
    await fs.promises.access(target, fs.constants.W_OK)
    const mode = before.mode & 0o7777
    temporary = siblingName(target, 'tmp')
    const handle = await fs.promises.open(temporary, 'wx', mode)
    let written: fs.Stats
    try {
      await handle.writeFile(wanted)
      await handle.chmod(mode) // the umask may have dropped bits
      await handle.chown(before.uid, before.gid).catch(() => {}) // only permitted to root or the owner's group
      await handle.sync()
      written = await handle.stat()
    } finally {
      await handle.close()
    }
    // Step 3: synchronous from here on.
    const outcome = swapInto(target, temporary, held, before, expected, written, options)
    temporary = undefined // linked into place, or removed by swapInto
    if (outcome.outcome !== 'written') return outcome
    keepHeld = true
    return { outcome: 'written', written: holdReplaced(target, held, outcome.backup, expected, wanted, written) }
  } catch (error) {
    throw writeError(name, error)
  } finally {
    if (temporary !== undefined) removeQuietly(temporary)
    if (!keepHeld) closeQuietly(held)
  }
}

/** Step 3: move the held inode aside and link the temporary file at the path, or explain why not. */
function swapInto(
  target: string,
  temporary: string,
  heldFd: number,
  before: fs.Stats,
  expected: Buffer,
  written: fs.Stats,
  options: ReplaceOptions,
): { outcome: 'written'; backup: string } | { outcome: 'conflict' | 'missing' } {
  const abandon = (outcome: 'conflict' | 'missing') => {
    removeQuietly(temporary)
    return { outcome }
  }
  if (!readFd(heldFd).equals(expected)) return abandon('conflict') // written in place since step 1
  let current: fs.Stats
  try {
    current = fs.statSync(target)
  } catch (error) {
    if (isMissing(error)) return abandon('missing')
    throw error
  }
  if (!sameFile(current, before)) return abandon('conflict') // replaced since step 1
  const backup = siblingName(target, 'bak')
  options.beforeReplace?.({ mtimeMs: written.mtimeMs, size: written.size })
  const failed = (outcome: 'conflict' | 'missing') => {
    options.replaceFailed?.()
    return abandon(outcome)
  }
  try {
    fs.renameSync(target, backup)
  } catch (error) {
    if (isMissing(error)) return failed('missing')
    options.replaceFailed?.()
    throw error
  }
  if (!sameFile(fs.lstatSync(backup), before)) {
    // An editor renamed its save over the path between the check and the move: put it back.
    placeAt(backup, target)
    removeQuietly(backup)
    return failed('conflict')
  }
  if (!placeAt(temporary, target)) {
    // A save landed in the gap (the path exists again): it is newer than A and ours.
    removeQuietly(backup)
    return failed('conflict')
  }
  return { outcome: 'written', backup }
}

/** Step 4: keep the replaced inode (and its backup name) until the write is settled. */
function holdReplaced(
  target: string,
  held: number,
  backup: string,
  expected: Buffer,
  wanted: Buffer,
  written: fs.Stats,
): WrittenFile {
  let result: 'kept' | 'restored' | undefined
  const settle = (): 'kept' | 'restored' => {
    if (result) return result
    result = 'kept'
    unregister()
    try {
      if (!readFd(held).equals(expected) && holds(target, wanted, written)) {
        // An editor wrote into the old inode after the swap: its bytes win.
        const ours = siblingName(target, 'bak')
        fs.renameSync(target, ours)
        if (sameFile(fs.lstatSync(ours), written)) {
          if (placeAt(backup, target)) result = 'restored'
          removeQuietly(ours)
        } else {
          placeAt(ours, target) // replaced meanwhile by a newer save: keep that
          removeQuietly(ours)
        }
      }
    } catch {
      // the folder went away or became unwritable: nothing left to restore into
    } finally {
      removeQuietly(backup)
      closeQuietly(held)
    }
    return result
  }
  const unregister = onProcessEnd(() => void settle())
  return { state: { mtimeMs: written.mtimeMs, size: written.size }, settle }
}

/** Whether the path still holds exactly our written file (same inode, same bytes). */
function holds(target: string, wanted: Buffer, written: fs.Stats): boolean {
  try {
    return sameFile(fs.statSync(target), written) && fs.readFileSync(target).equals(wanted)
  } catch {
    return false
  }
}

/**
 * Give `from`'s file the name `to` unless `to` exists (then false, `from` untouched), and drop
 * the name `from`. Where hard links are not supported, a rename (which replaces `to`).
 */
function placeAt(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (!LINK_UNSUPPORTED.has(code ?? '')) throw error
    fs.renameSync(from, to)
    return true
  }
  removeQuietly(from)
  return true
}

/** `link` errors that mean "this file system has no hard links" (FAT, some network and FUSE mounts). */
const LINK_UNSUPPORTED = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS', 'EMLINK'])

function sameFile(a: fs.Stats, b: fs.Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev
}

function readFd(fd: number): Buffer {
  const chunks: Buffer[] = []
  let position = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024)
    const read = fs.readSync(fd, chunk, 0, chunk.length, position)
    if (read === 0) break
    chunks.push(chunk.subarray(0, read))
    position += read
  }
  return Buffer.concat(chunks)
}

function siblingName(target: string, kind: 'tmp' | 'bak'): string {
  return path.join(path.dirname(target), `.${path.basename(target)}.insitu-${randomBytes(6).toString('hex')}.${kind}`)
}

function compare(current: Buffer | null, expected: Buffer, wanted: Buffer): 'missing' | 'conflict' | 'unchanged' | 'different' {
  if (current === null) return 'missing'
  if (!current.equals(expected)) return current.equals(wanted) ? 'unchanged' : 'conflict'
  return current.equals(wanted) ? 'unchanged' : 'different'
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd)
  } catch {
    // closed already
  }
}

function removeQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true })
  } catch {
    // gone already, or the folder went away
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** `cannot write <file>: EACCES: permission denied` (Node's own message without its syscall and path). */
function writeError(file: string, error: unknown): Error {
  const errno = error as NodeJS.ErrnoException
  const reason = errno.code ? errno.message.replace(/,\s*\w+\s+'.*$/s, '') : (errno.message ?? String(error))
  return new Error(`cannot write ${file}: ${reason}`, { cause: error })
}
