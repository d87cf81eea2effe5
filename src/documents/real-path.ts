/**
 * The one real-path resolver of the package. Confinement compares real paths (a root's with a
 * file's), so both sides must come from the same resolver.
 *
 * Contract: `realPathSync(p)` is `fs.realpathSync.native(p)` (`realpath(3)`: one system call;
 * the JavaScript `fs.realpathSync` lstats every segment of the path, about three times the time,
 * and a render locates its templates and models through it: issue #17), except on Windows, where
 * the native call spells some paths differently (substituted drives, `\\?\` prefixes), so the
 * JavaScript resolution stays there. Errors are those of the resolver (`ENOENT`, `ENOTDIR`,
 * `ELOOP`…).
 */
import fs from 'node:fs'

export const realPathSync: (p: string) => string =
  process.platform === 'win32' ? (p) => fs.realpathSync(p) : (p) => fs.realpathSync.native(p)
