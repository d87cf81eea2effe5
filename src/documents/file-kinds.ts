/**
 * What a path names, asked without throwing.
 *
 * Contract: `isFile(path)` is true for a regular file and `isFolder(path)` for a folder
 * (symbolic links followed); both are false for a path that does not exist or cannot be
 * stat'ed.
 */
import fs from 'node:fs'

export function isFile(file: string): boolean {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

export function isFolder(folder: string): boolean {
  try {
    return fs.statSync(folder).isDirectory()
  } catch {
    return false
  }
}
