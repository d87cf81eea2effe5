/**
 * What the plugin knows before (and without) the engine: the project config, read once, and
 * which modules are its business.
 *
 * Contract: `loadProjectScope(options, baseRoot)` reads the config synchronously — with the
 * `root` option, exactly `<baseRoot>/<root>/insitu.toml` (no walking up); without it, the
 * nearest `insitu.toml` walking up from `baseRoot` — and never throws: a bad config is kept
 * as `error` (thrown again when the engine is needed) and the scope falls back to the default
 * `[sources]` so that managed modules can still be told apart and fail with that error.
 * `isManaged(file)` is `include` minus `exclude` (the plugin's options when given, else the
 * config's `[sources]`; gitignore semantics, relative to the config's root), exactly the
 * engine's document selection; `moduleRule(file)` is the first module rule matching the file.
 * Both take absolute module files with either separator. Every path the scope hands out is
 * absolute POSIX.
 */
import { projectRelativePath } from '../documents/project-paths.js'
import path from 'node:path'
import { createPathMatcher } from '../documents/project-files.js'
import { readProjectConfig } from '../engine/engine.js'
import { ConfigError, DEFAULT_EXCLUDE, findProjectConfig, PROJECT_CONFIG_FILE, type ProjectConfig, toPosixPath } from '../host/config.js'
import type { ResolvedModuleRule, ResolvedOptions } from './options.js'

export interface ProjectScope {
  /** The project config; undefined when reading it failed (see `error`). */
  config: ProjectConfig | undefined
  /** Why the config could not be read (a `ConfigError` naming file and line for a bad insitu.toml). */
  error: Error | undefined
  /** Absolute POSIX project root. */
  root: string
  /** Absolute POSIX path of the project's `insitu.toml` (whether it exists or not). */
  configFile: string
  /** Project-relative POSIX path of a file, or null when it lies outside the root. */
  relativePath(file: string): string | null
  /** Whether the file is a managed document (`include` minus `exclude`). */
  isManaged(file: string): boolean
  /** The first module rule whose patterns match the file. */
  moduleRule(file: string): ResolvedModuleRule | undefined
}

export function loadProjectScope(options: ResolvedOptions, baseRoot: string): ProjectScope {
  const explicit = options.root !== undefined
  const start = path.resolve(baseRoot, options.root ?? '.')
  let config: ProjectConfig | undefined
  let error: Error | undefined
  let configFile: string
  try {
    config = readProjectConfig(start, !explicit)
    configFile = config.file
  } catch (failure) {
    error = failure as Error
    const named = failure instanceof ConfigError ? failure.file : explicit ? null : findProjectConfig(start)
    configFile = toPosixPath(path.resolve(named ?? path.join(start, PROJECT_CONFIG_FILE)))
  }
  const root = path.posix.dirname(configFile)
  const include = createPathMatcher(options.include ?? config?.sources.include ?? ['**/*.md'])
  const exclude = createPathMatcher(options.exclude ?? config?.sources.exclude ?? DEFAULT_EXCLUDE)
  const rules = options.modules.map((rule) => {
    const ruleInclude = createPathMatcher(rule.include)
    const ruleExclude = createPathMatcher(rule.exclude)
    return { rule, matches: (relPath: string) => ruleInclude(relPath) && !ruleExclude(relPath) }
  })
  const relativePath = (file: string): string | null => projectRelativePath(root, file)
  // Asked for every module, twice (load, transform): remember the answer per file.
  const managed = new Map<string, boolean>()
  return {
    config,
    error,
    root,
    configFile,
    relativePath,
    isManaged(file) {
      let answer = managed.get(file)
      if (answer === undefined) {
        const relative = relativePath(file)
        answer = relative !== null && include(relative) && !exclude(relative)
        if (managed.size > 100_000) managed.clear()
        managed.set(file, answer)
      }
      return answer
    },
    moduleRule(file) {
      const relative = relativePath(file)
      return relative === null ? undefined : rules.find((r) => r.matches(relative))?.rule
    },
  }
}
