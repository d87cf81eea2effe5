/**
 * Learning of a managed document's edit before Vite's watcher reports it (issue #17, step 3):
 * Vite's watcher (chokidar) re-reads the folder of a changed file before it emits `change`,
 * which at 10,000 documents in one folder costs hundreds of milliseconds; a native `fs.watch`
 * (inotify) of the document folders reports the same write at once.
 *
 * Contract: `watchDocumentsEarly(folders, onChange)` watches each folder (absolute, not
 * recursive) natively and calls `onChange(file)` (absolute POSIX) for each reported name, at
 * most once per file at a time: reports arriving while its `onChange` runs coalesce into one
 * more call after it. It never reports creates or deletes as such (the caller checks the file,
 * and Vite's own events still follow). `close()` stops every watch. A folder that cannot be
 * watched is skipped (Vite's watcher still reports its changes, later).
 */
import fs from 'node:fs'
import path from 'node:path'
import { toPosixPath } from '../host/config.js'

export interface EarlyDocumentWatch {
  close(): void
}

export function watchDocumentsEarly(folders: Iterable<string>, onChange: (file: string) => Promise<void>): EarlyDocumentWatch {
  const watchers: fs.FSWatcher[] = []
  const running = new Map<string, { again: boolean }>()
  let closed = false
  const report = (file: string) => {
    const current = running.get(file)
    if (current) {
      current.again = true
      return
    }
    const state = { again: false }
    running.set(file, state)
    const run = async (): Promise<void> => {
      do {
        state.again = false
        if (closed) break
        await onChange(file).catch(() => undefined)
      } while (state.again)
      running.delete(file)
    }
    void run()
  }
  for (const folder of folders) {
    try {
      const watcher = fs.watch(folder, { persistent: false }, (_event, name) => {
        if (!closed && typeof name === 'string' && name !== '') report(toPosixPath(path.join(folder, name)))
      })
      watcher.on('error', () => watcher.close())
      watchers.push(watcher)
    } catch {
      // unwatchable (gone, too many watches): Vite's watcher still reports it
    }
  }
  return {
    close() {
      closed = true
      for (const watcher of watchers) watcher.close()
    },
  }
}
