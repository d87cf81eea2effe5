/**
 * The project's state folder (the folder of `paths.state`, `.insitu/` by default): where the
 * persistent caches live.
 *
 * Contract: `ensureStateFolder(folder, root)` creates `folder` (and its parents) when it does
 * not exist, and then, unless it is the project root itself, writes `.gitignore` holding `*`
 * into it, so that git ignores the caches without the user asking (as pytest's cache does). An
 * existing folder is left exactly as it is. Errors (a file in the way, no permission) are thrown.
 */
import fs from 'node:fs'
import path from 'node:path'

export const STATE_FOLDER_GITIGNORE = '# created by insitu\n*\n'

export function ensureStateFolder(folder: string, root: string): void {
  if (fs.existsSync(folder)) return
  fs.mkdirSync(folder, { recursive: true })
  if (path.resolve(folder) !== path.resolve(root)) fs.writeFileSync(path.join(folder, '.gitignore'), STATE_FOLDER_GITIGNORE)
}
