/**
 * Reading a file or listing a folder exactly where a confinement check allowed it: no
 * check-then-use race with a symlink swapped in between (SPEC §6 confinement).
 *
 * Contract:
 * - `readConfinedFile(realRoot, absolute)` opens `absolute` first (read-only and non-blocking, so
 *   a FIFO never blocks), verifies that the OPENED object lies inside `realRoot` (the root's real
 *   path), and only then reads from that same descriptor. It returns `{ kind: 'file', bytes,
 *   stat }` (stat with bigint times), `{ kind: 'directory' }`, `{ kind: 'other' }` (FIFO, socket,
 *   device: a socket cannot be opened at all, whatever error the platform gives, so `stat` tells
 *   it and its real path is checked instead: `'outside'` when it lies outside),
 *   `{ kind: 'missing' }` (ENOENT, ENOTDIR, ELOOP) or `{ kind: 'outside' }`.
 *   Any other error is thrown. With `maxBytes`, a file larger than that is not read:
 *   `{ kind: 'too-large', stat }` (also when it grows past it while being read).
 * - `listConfinedFolder(realRoot, absolute)` is the same for a folder: its entries (`fs.Dirent`,
 *   only `name` and the type are meaningful), or `'missing'` (a file where a folder is expected
 *   may be reported so: ENOTDIR), `'outside'` or `'not-a-folder'`.
 * - Verification: on Linux the descriptor's real path is the text of `/proc/self/fd/<fd>`, and a
 *   folder is listed through that link, so what is read is exactly what was checked. Where
 *   `/proc` is unavailable the path's real path is checked before opening and again after, and
 *   the descriptor's device and inode must equal those of the real path (a much narrower window
 *   than checking the path alone, not none).
 */
import fs from 'node:fs'
import { isUnresolvable } from './fs-errors.js'
import { isInsideFolder } from './project-paths.js'
import { realPathSync } from './real-path.js'

export type ConfinedFile =
  | { kind: 'file'; bytes: Buffer; stat: fs.BigIntStats }
  | { kind: 'too-large'; stat: fs.BigIntStats }
  | { kind: 'directory' | 'other' | 'missing' | 'outside' }

export type ConfinedFolder = fs.Dirent[] | 'missing' | 'outside' | 'not-a-folder'

const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0)
const FOLDER_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0)

const PROC_FD_AVAILABLE = process.platform === 'linux' && fs.existsSync('/proc/self/fd')

/** `/proc/self/fd/<fd>` when the platform offers it (Linux), else undefined. */
function procLink(fd: number): string | undefined {
  return PROC_FD_AVAILABLE ? `/proc/self/fd/${fd}` : undefined
}

function realPathOrUndefined(absolute: string): string | undefined {
  try {
    return realPathSync(absolute)
  } catch (error) {
    if (isUnresolvable(error)) return undefined
    throw error
  }
}

/** Whether the open descriptor `fd` (opened from `absolute`) lies inside `realRoot`. */
function isOpenedInside(fd: number, absolute: string, realRoot: string, checkedReal: string | undefined): boolean {
  const link = procLink(fd)
  if (link !== undefined) return isInsideFolder(realRoot, fs.readlinkSync(link))
  const real = realPathOrUndefined(absolute)
  if (checkedReal === undefined || real !== checkedReal || !isInsideFolder(realRoot, real)) return false
  const opened = fs.fstatSync(fd)
  const named = fs.statSync(real)
  return opened.dev === named.dev && opened.ino === named.ino
}

/** Without `/proc`: the real path checked before opening (undefined when it is outside or missing). */
function checkedBeforeOpen(absolute: string, realRoot: string): string | undefined {
  if (PROC_FD_AVAILABLE) return undefined
  const real = realPathOrUndefined(absolute)
  return real !== undefined && isInsideFolder(realRoot, real) ? real : undefined
}

function openOrMissing(absolute: string, flags: number): number | 'missing' | 'is-folder' | 'socket' {
  try {
    return fs.openSync(absolute, flags)
  } catch (error) {
    if (isUnresolvable(error)) return 'missing'
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EISDIR') return 'is-folder'
    // A Unix domain socket exists and holds nothing to read, but no platform opens it (Linux:
    // ENXIO; macOS: errno 102, which libuv does not name), so its kind is asked of `stat`.
    if (isSocket(absolute)) return 'socket'
    throw error
  }
}

function isSocket(absolute: string): boolean {
  try {
    return fs.statSync(absolute).isSocket()
  } catch {
    return false
  }
}

/**
 * A socket (it cannot be opened, so no descriptor can be checked): `'other'` when its real path
 * lies inside the root, else `'outside'`. A link swapped between the failed open and this check
 * can only change which of the two is reported: nothing is read either way.
 */
function socketKind(absolute: string, realRoot: string): 'other' | 'outside' | 'missing' {
  const real = realPathOrUndefined(absolute)
  if (real === undefined) return 'missing'
  return isInsideFolder(realRoot, real) ? 'other' : 'outside'
}

/** The file at `absolute`, read from the very descriptor whose location was verified. */
export function readConfinedFile(realRoot: string, absolute: string, maxBytes = Infinity): ConfinedFile {
  const checked = checkedBeforeOpen(absolute, realRoot)
  const fd = openOrMissing(absolute, READ_FLAGS)
  if (fd === 'missing') return { kind: 'missing' }
  if (fd === 'socket') return { kind: socketKind(absolute, realRoot) }
  if (fd === 'is-folder') {
    // Windows refuses to open folders as files: only the (checked) kind is reported.
    return realPathOrUndefined(absolute) === checked && checked !== undefined ? { kind: 'directory' } : { kind: 'outside' }
  }
  try {
    if (!isOpenedInside(fd, absolute, realRoot, checked)) return { kind: 'outside' }
    const stat = fs.fstatSync(fd, { bigint: true })
    if (stat.isDirectory()) return { kind: 'directory' }
    if (!stat.isFile()) return { kind: 'other' }
    if (Number(stat.size) > maxBytes) return { kind: 'too-large', stat }
    const bytes = readToEnd(fd, Number(stat.size), maxBytes)
    return bytes === null ? { kind: 'too-large', stat } : { kind: 'file', bytes, stat }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Everything from `fd` to its end, `expected` bytes sized up front (`readFileSync(fd)` would stat
 * it again); null once more than `maxBytes` were read (the file grew past it).
 */
function readToEnd(fd: number, expected: number, maxBytes: number): Buffer | null {
  let buffer = Buffer.allocUnsafe(expected + 1)
  let length = 0
  for (;;) {
    if (length > maxBytes) return null
    if (length === buffer.length) {
      const larger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(larger, 0, 0, length)
      buffer = larger
    }
    const read = fs.readSync(fd, buffer, length, buffer.length - length, null)
    if (read === 0) return buffer.subarray(0, length)
    length += read
  }
}

/** The entries of the folder at `absolute`, listed from the very folder whose location was verified. */
export function listConfinedFolder(realRoot: string, absolute: string): ConfinedFolder {
  const checked = checkedBeforeOpen(absolute, realRoot)
  const fd = openOrMissing(absolute, FOLDER_FLAGS)
  if (fd === 'missing') return 'missing'
  if (fd === 'socket') {
    const kind = socketKind(absolute, realRoot)
    return kind === 'other' ? 'not-a-folder' : kind
  }
  if (fd === 'is-folder') {
    // Windows cannot open a folder descriptor: list the checked real path, then re-check it.
    if (checked === undefined) return 'outside'
    const dirents = fs.readdirSync(checked, { withFileTypes: true })
    return realPathOrUndefined(absolute) === checked ? dirents : 'outside'
  }
  try {
    if (!isOpenedInside(fd, absolute, realRoot, checked)) return 'outside'
    if (!fs.fstatSync(fd).isDirectory()) return 'not-a-folder'
    const link = procLink(fd)
    if (link !== undefined) return fs.readdirSync(link, { withFileTypes: true })
    const dirents = fs.readdirSync(checked as string, { withFileTypes: true })
    return isOpenedInside(fd, absolute, realRoot, checked) ? dirents : 'outside'
  } finally {
    fs.closeSync(fd)
  }
}
