/**
 * Write one regenerated document back to disk: atomic, and never clobbering an edit.
 *
 * Contract: `writeBack(file, renderedFrom, text)` returns
 * - 'missing'   when the file does not exist (a deleted document is never recreated);
 * - 'conflict'  when the file's bytes are no longer exactly `renderedFrom` (someone edited it
 *               since it was read: nothing is written, the caller renders again);
 * - 'unchanged' when the file's bytes already are `text` (nothing is written, mtime kept);
 * - 'written'   otherwise: `text` goes to a temporary file in the target's folder (same mode,
 *               same owner when permitted), the file is compared once more, then the temporary
 *               file is renamed over it. A symlink is followed (the link stays a link).
 * The temporary file (`isWriteBackTemporary`) is removed on every failure. A file the process may not write (`access`
 * W_OK: a read-only document, an immutable file, a read-only file system) is an error, not a
 * rename around its permissions. Errors throw `cannot write <name>: <CODE>: <reason>` (`name`: the
 * optional fourth argument, else `file` as given).
 * The only window left for a concurrent edit is between the last comparison and the rename
 * (microseconds, no await of other work in between).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

export type WriteOutcome = 'written' | 'unchanged' | 'conflict' | 'missing'

/** Temporary files are named `.<name>.insitu-<12 hex>.tmp`, next to the file they replace. */
const TEMPORARY_NAME = /^\..+\.insitu-[0-9a-f]{12}\.tmp$/

/** Whether a path is one of writeBack's temporary files (watchers may ignore them). */
export function isWriteBackTemporary(file: string): boolean {
  return TEMPORARY_NAME.test(path.basename(file))
}

/** `name` is how errors name the file (default: `file` as given), e.g. its project-relative path. */
export async function writeBack(file: string, renderedFrom: string, text: string, name = file): Promise<WriteOutcome> {
  let target: string
  try {
    target = await fs.promises.realpath(file)
  } catch (error) {
    if (isMissing(error)) return 'missing'
    throw writeError(name, error)
  }
  const expected = Buffer.from(renderedFrom, 'utf8')
  const wanted = Buffer.from(text, 'utf8')
  let state: 'missing' | 'conflict' | 'unchanged' | 'different'
  let stat: fs.Stats
  try {
    stat = await fs.promises.stat(target)
    state = compare(await fs.promises.readFile(target), expected, wanted)
  } catch (error) {
    if (isMissing(error)) return 'missing'
    throw writeError(name, error)
  }
  if (state !== 'different') return state
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.insitu-${randomBytes(6).toString('hex')}.tmp`)
  let created = false
  try {
    await fs.promises.access(target, fs.constants.W_OK)
    const mode = stat.mode & 0o7777
    const handle = await fs.promises.open(temporary, 'wx', mode)
    created = true
    try {
      await handle.writeFile(wanted)
      await handle.chmod(mode) // the umask may have dropped bits
      await handle.chown(stat.uid, stat.gid).catch(() => {}) // only permitted to root or the owner's group
      await handle.sync()
    } finally {
      await handle.close()
    }
    const again = compare(await readOrNull(target), expected, wanted)
    if (again !== 'different') {
      await removeQuietly(temporary)
      created = false
      return again
    }
    await fs.promises.rename(temporary, target)
    created = false
    return 'written'
  } catch (error) {
    if (created) await removeQuietly(temporary)
    throw writeError(name, error)
  }
}

function compare(current: Buffer | null, expected: Buffer, wanted: Buffer): 'missing' | 'conflict' | 'unchanged' | 'different' {
  if (current === null) return 'missing'
  if (!current.equals(expected)) return current.equals(wanted) ? 'unchanged' : 'conflict'
  return current.equals(wanted) ? 'unchanged' : 'different'
}

async function readOrNull(file: string): Promise<Buffer | null> {
  try {
    return await fs.promises.readFile(file)
  } catch (error) {
    if (isMissing(error)) return null
    throw error
  }
}

async function removeQuietly(file: string): Promise<void> {
  await fs.promises.rm(file, { force: true }).catch(() => {})
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

/** `cannot write <file>: EACCES: permission denied` (Node's own message without its syscall and path). */
function writeError(file: string, error: unknown): Error {
  const errno = error as NodeJS.ErrnoException
  const reason = errno.code ? errno.message.replace(/,\s*\w+\s+'.*$/s, '') : errno.message ?? String(error)
  return new Error(`cannot write ${file}: ${reason}`, { cause: error })
}
