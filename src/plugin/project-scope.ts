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
 * engine's document selection; `moduleRule(file)` is the first module rule matching the file
 * (scope-matchers.ts; `patterns` are what they apply). Both take absolute module files with
 * either separator. Every path the scope hands out is absolute POSIX.
 */
import path from 'node:path'
import { readProjectConfig } from '../engine/engine.js'
import { ConfigError, DEFAULT_EXCLUDE, findProjectConfig, PROJECT_CONFIG_FILE, type ProjectConfig, toPosixPath } from '../host/config.js'
import type { ResolvedOptions } from './options.js'
import { type ScopeMatchers, type ScopePatterns, scopeMatchers } from './scope-matchers.js'

export interface ProjectScope extends ScopeMatchers {
  /** The project config; undefined when reading it failed (see `error`). */
  config: ProjectConfig | undefined
  /** Why the config could not be read (a `ConfigError` naming file and line for a bad insitu.toml). */
  error: Error | undefined
  /** Absolute POSIX project root. */
  root: string
  /** Absolute POSIX path of the project's `insitu.toml` (whether it exists or not). */
  configFile: string
  /** The root and the patterns `isManaged` applies (what a build process hands the plugin's entry). */
  patterns: ScopePatterns
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
  const patterns: ScopePatterns = {
    root,
    include: options.include ?? config?.sources.include ?? ['**/*.md'],
    exclude: options.exclude ?? config?.sources.exclude ?? DEFAULT_EXCLUDE,
  }
  return { config, error, root, configFile, patterns, ...scopeMatchers(patterns, options.modules) }
}
