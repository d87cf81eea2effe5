/**
 * The template names a project has, to suggest one for a misspelt name (issue #18).
 *
 * Contract: `templateNames(directory)` lists the files under the templates folder as template
 * names (POSIX paths relative to it, sorted), walking at most `MAX_NAMES` files and skipping
 * what cannot be read; [] when the folder is missing (or undefined). Used only to build an error
 * message: a failure to list yields fewer suggestions, never an error.
 */
import fs from 'node:fs'
import path from 'node:path'

/** Enough for any real templates folder; a huge one only costs a shorter list. */
const MAX_NAMES = 2_000

export function templateNames(directory: string | undefined): string[] {
  if (directory === undefined) return []
  const names: string[] = []
  const walk = (relative: string): void => {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(directory, relative), { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      if (names.length >= MAX_NAMES) return
      const name = relative === '' ? entry.name : `${relative}/${entry.name}`
      if (entry.isDirectory()) walk(name)
      else if (entry.isFile()) names.push(name)
    }
  }
  walk('')
  return names.sort()
}
