/**
 * `insitu(options)`: the Vite (and Rollup) plugin. An adapter only: Vite/Rollup hooks in,
 * engine calls out.
 *
 * Contract:
 * - Managed documents (`include`/`exclude`, default insitu.toml's `[sources]`) are
 *   regenerated in `transform` (enforce `pre`, with a source map) and served regenerated for
 *   `?raw` imports in `load`; module rules run a transform capability on whole modules.
 * - Every result's dependencies drive watching (DESIGN.md's table): existing `fs:file:`
 *   files through `addWatchFile` (never a missing path); create/delete of files a glob or a
 *   folder covers, documents the index reads, and file dependencies through `hotUpdate`,
 *   which returns the affected modules so Vite propagates the update (the engine's cache is
 *   cleared first); git metadata through a watcher of our own (Vite ignores `.git`), live
 *   before the first module is served, that reloads the affected modules in every
 *   environment; in build watch mode, `watchChange` marks affected modules so
 *   `shouldTransformCachedModule` re-runs them.
 * - Diagnostics: errors fail the module with file:line, warnings go to `this.warn`.
 * - Lifecycle: the engine (and its extension processes) starts at `buildStart` or on first
 *   use and is reused across rebuilds; it stops at `closeServer`, `closeBundle` (when not
 *   watching) or `closeWatcher`, idempotently.
 */
import fs from 'node:fs'
import path from 'node:path'
import MagicString from 'magic-string'
import type { Plugin, ViteDevServer } from 'vite'
import { createPathMatcher } from '../documents/project-files.js'
import type { DocumentResult } from '../engine/render-document.js'
import { InsituEngine, type AffectedResult } from '../engine/engine.js'
import { toPosixPath } from '../host/config.js'
import { globBase } from '../resources/fs.js'
import { locatedError, type PluginLogger, type ReportingContext, reportDiagnostics } from './diagnostics.js'
import { type GitWatcher, watchGitMetadata } from './git-watcher.js'
import { type InsituOptions, PLUGIN_NAME, resolveOptions, type ResolvedModuleRule } from './options.js'

const RAW_QUERY = /[?&]raw(?:&|=|$)/
/** Queries under which a module is not Markdown text (Vite turns it into JS or a URL). */
const NON_TEXT_QUERY = /[?&](?:raw|url|inline|worker|sharedworker)(?:&|=|$)/

interface WatchContext extends ReportingContext {
  addWatchFile(id: string): void
  meta?: { watchMode?: boolean }
}

export function insitu(userOptions: InsituOptions = {}): Plugin {
  const options = resolveOptions(userOptions)
  const moduleRules = options.modules.map((rule) => ({ rule, matches: ruleMatcher(rule) }))
  let viteRoot: string | undefined
  let logger: PluginLogger = consoleLogger
  let server: ViteDevServer | undefined
  let starting: Promise<InsituEngine> | undefined
  let engine: InsituEngine | undefined
  let gitWatcher: GitWatcher | undefined
  let stopping: Promise<void> | undefined
  /** One `affected()` per file event, shared by the environments `hotUpdate` runs for. */
  const eventBatches = new Map<string, AffectedResult>()
  /** Build watch: modules whose cached transform must be redone (until they are transformed). */
  const staleModules = new Set<string>()

  const start = (): Promise<InsituEngine> => {
    if (stopping) return Promise.reject(new Error(`${PLUGIN_NAME}: the plugin has been stopped`))
    starting ??= InsituEngine.create({
      root: path.resolve(viteRoot ?? process.cwd(), options.root ?? '.'),
      include: options.include,
      exclude: options.exclude,
      persistIndex: options.persistIndex,
      python: options.python,
      timeoutMs: options.timeout,
      logger: { info: (m) => logger.info(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m) },
      filterExtension: (name) => options.extensions[name] ?? true,
    }).then(async (created) => {
      engine = created
      if (stopping) {
        void created.close()
        throw new Error(`${PLUGIN_NAME}: the plugin has been stopped`)
      }
      if (server) {
        watchServer(server, created)
        // Serve nothing before git changes can be seen (a commit right after the first page load).
        await gitWatcher?.ready
      }
      return created
    })
    return starting
  }

  /**
   * Stop the engine and the git watcher. Idempotent while it runs; once done, the next
   * `start()` starts afresh (Vite reuses an inline plugin object across server restarts).
   */
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      await gitWatcher?.close()
      const running = starting ? await starting.catch(() => undefined) : undefined
      await running?.close()
    })().finally(() => {
      starting = undefined
      engine = undefined
      gitWatcher = undefined
      stopping = undefined
    })
    return stopping
  }

  const watchServer = (dev: ViteDevServer, current: InsituEngine): void => {
    if (!isInside(current.root, dev.config.root)) dev.watcher.add(current.root)
    if (current.gitPaths && !gitWatcher) {
      gitWatcher = watchGitMetadata(
        current.gitPaths,
        (file) => current.isGitMetadata(file),
        (files) => void reloadAffected(dev, current.affected(files.map((file) => ({ type: 'update' as const, path: file })))),
        current.config.watch.debounce_ms,
      )
    }
  }

  /** Changes that arrive outside `hotUpdate`: reload the affected modules in every environment. */
  const reloadAffected = async (dev: ViteDevServer, affected: AffectedResult): Promise<void> => {
    const current = engine
    if (!current) return
    for (const environment of Object.values(dev.environments)) {
      for (const owner of affected.owners) {
        for (const module of environment.moduleGraph.getModulesByFile(path.join(current.root, owner)) ?? []) {
          await environment.reloadModule(module)
        }
      }
    }
  }

  const recordWatchFiles = (context: WatchContext, current: InsituEngine, dependencies: readonly string[]): void => {
    const buildWatch = !server && context.meta?.watchMode === true
    for (const dependency of dependencies) {
      const watched = watchTarget(current, dependency, buildWatch)
      for (const file of watched) if (fs.existsSync(file)) context.addWatchFile(file)
    }
  }

  const renderManaged = async (
    context: WatchContext,
    current: InsituEngine,
    file: string,
    code: string,
  ): Promise<DocumentResult> => {
    const result = await current.renderDocument(file, code)
    recordWatchFiles(context, current, result.dependencies)
    reportDiagnostics(context, file, result.diagnostics, logger, current.root)
    return result
  }

  const startFor = async (context: ReportingContext): Promise<InsituEngine> => {
    try {
      return await start()
    } catch (error) {
      return context.error(new Error(`${PLUGIN_NAME}: ${(error as Error).message}`, { cause: error }))
    }
  }

  return {
    name: PLUGIN_NAME,
    enforce: 'pre',

    configResolved(config) {
      viteRoot = config.root
      const vite = config.logger
      logger = {
        info: (m) => vite.info(m, { timestamp: true }),
        warn: (m) => vite.warn(m, { timestamp: true }),
        error: (m) => vite.error(m, { timestamp: true }),
      }
    },

    configureServer(dev) {
      server = dev
      if (engine) watchServer(dev, engine)
    },

    async buildStart() {
      await start()
    },

    load: {
      filter: { id: RAW_QUERY },
      async handler(id) {
        if (!RAW_QUERY.test(id) || id.startsWith('\0')) return null
        const file = cleanId(id)
        const current = await startFor(this)
        if (!current.isDocument(file)) return null
        const code = await fs.promises.readFile(file, 'utf8')
        this.addWatchFile(file)
        const result = await renderManaged(this, current, file, code)
        return { code: `export default ${JSON.stringify(result.text)}`, map: null }
      },
    },

    transform: {
      order: 'pre',
      async handler(code, id) {
        if (id.startsWith('\0') || NON_TEXT_QUERY.test(id)) return null
        const file = cleanId(id)
        const current = await startFor(this)
        // Transformed now (Rollup also re-runs modules whose watch files changed): no longer stale.
        staleModules.delete(file)
        if (current.isDocument(file)) {
          const result = await renderManaged(this, current, file, code)
          if (!result.changed) return null
          const magic = new MagicString(code)
          for (const edit of result.edits) {
            if (edit.start === edit.end) magic.appendLeft(edit.start, edit.text)
            else magic.overwrite(edit.start, edit.end, edit.text)
          }
          return { code: magic.toString(), map: magic.generateMap({ hires: 'boundary', source: file, includeContent: true }) }
        }
        const relative = current.relativePath(file)
        const match = relative === null ? undefined : moduleRules.find((m) => m.matches(relative))
        if (!match) return null
        let result
        try {
          result = await current.transformModule(file, code, { transform: match.rule.transform, options: match.rule.options })
        } catch (error) {
          return this.error(locatedError((error as Error).message, { file, line: 1, column: 0 }))
        }
        recordWatchFiles(this, current, result.dependencies)
        reportDiagnostics(this, file, result.diagnostics, logger, current.root)
        return { code: result.code, map: null }
      },
    },

    hotUpdate(update) {
      const current = engine
      if (!current) return
      const key = `${update.type}\u0000${update.file}\u0000${update.timestamp}`
      let affected = eventBatches.get(key)
      if (!affected) {
        if (update.type === 'delete') current.forget(update.file)
        affected = current.affected([{ type: update.type, path: update.file }])
        eventBatches.set(key, affected)
        // Every environment runs within the same event loop turn sequence; keep the map small.
        setTimeout(() => eventBatches.delete(key), 10_000).unref()
      }
      if (affected.owners.length === 0) return
      const modules = new Set(update.modules)
      for (const owner of affected.owners) {
        for (const module of this.environment.moduleGraph.getModulesByFile(path.join(current.root, owner)) ?? []) {
          modules.add(module)
        }
      }
      return [...modules]
    },

    watchChange(id, change) {
      // The dev server reports changes through hotUpdate; this is for build watch and Rollup.
      if (server || !engine) return
      const type = change.event === 'create' ? 'create' : change.event === 'delete' ? 'delete' : 'update'
      if (type === 'delete') engine.forget(id)
      for (const owner of engine.affected([{ type, path: id }]).owners) staleModules.add(path.join(engine.root, owner))
    },

    shouldTransformCachedModule({ id }) {
      const file = cleanId(id)
      if (!staleModules.has(file)) return null
      staleModules.delete(file)
      return true
    },

    async closeServer() {
      await stop()
    },

    async closeBundle() {
      if (!server && !this.meta.watchMode) await stop()
    },

    async closeWatcher() {
      await stop()
    },
  }
}

/**
 * Absolute paths to hand to `addWatchFile` for one dependency. Dev: existing files only
 * (everything else goes through hotUpdate). Build watch: also the folders globs and `fs:dir:`
 * cover, except the project root, and every managed document for index dependencies.
 * Rollup and Rolldown watch a folder recursively, and the root holds the build output
 * (`dist/`): watching it would make every output write start another build, endlessly. So
 * in build watch, files created or deleted under a glob or `fs:dir:` based at the root go unseen.
 */
function watchTarget(engine: InsituEngine, dependency: string, buildWatch: boolean): string[] {
  const root = engine.root
  if (dependency.startsWith('fs:file:')) return [path.join(root, dependency.slice('fs:file:'.length))]
  if (!buildWatch) return []
  const folder = dependency.startsWith('fs:glob:')
    ? globBase(dependency.slice('fs:glob:'.length))
    : dependency.startsWith('fs:dir:')
      ? dependency.slice('fs:dir:'.length)
      : null
  if (folder !== null) {
    const absolute = path.resolve(root, folder)
    return absolute === root ? [] : [absolute]
  }
  if (dependency === 'index:documents' || dependency.startsWith('sql:model:')) {
    return engine.index.documentPaths().map((p) => path.join(root, p))
  }
  return []
}

function ruleMatcher(rule: ResolvedModuleRule): (relPath: string) => boolean {
  const include = createPathMatcher(rule.include)
  const exclude = createPathMatcher(rule.exclude)
  return (relPath) => include(relPath) && !exclude(relPath)
}

function cleanId(id: string): string {
  const query = id.indexOf('?')
  return query < 0 ? id : id.slice(0, query)
}

function isInside(inner: string, outer: string): boolean {
  const relative = toPosixPath(path.relative(outer, inner))
  return relative === '' || (!relative.startsWith('../') && relative !== '..' && !path.isAbsolute(relative))
}

const consoleLogger: PluginLogger = {
  info: (m) => console.info(m),
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
}
