/**
 * Which modules are the plugin's business, given the project's root and patterns: no config
 * read, no engine (plugin.ts's build runtime matches modules with it before asking its build
 * process; project-scope.ts builds its own from the config it reads).
 *
 * Contract: `scopeMatchers({ root, include, exclude }, modules)`: `isManaged(file)` is
 * `include` minus `exclude` (gitignore semantics, relative to `root`, absolute POSIX), exactly
 * the engine's document selection, remembered per file (asked for every module, twice: load,
 * transform); `moduleRule(file)` is the first module rule matching the file; `relativePath(file)`
 * the project-relative POSIX path or null outside the root. Files are absolute, either separator.
 */
import { createPathMatcher } from '../documents/project-files.js'
import { projectRelativePath } from '../documents/project-paths.js'
import type { ResolvedModuleRule } from './options.js'

/** The patterns that select a project's documents, as a scope resolved them (options over config over defaults). */
export interface ScopePatterns {
  /** Absolute POSIX project root. */
  root: string
  include: readonly string[]
  exclude: readonly string[]
}

export interface ScopeMatchers {
  /** Project-relative POSIX path of a file, or null when it lies outside the root. */
  relativePath(file: string): string | null
  /** Whether the file is a managed document (`include` minus `exclude`). */
  isManaged(file: string): boolean
  /** The first module rule whose patterns match the file. */
  moduleRule(file: string): ResolvedModuleRule | undefined
}

/** Files remembered by `isManaged` before the memo starts over. */
const MANAGED_MEMO = 100_000

export function scopeMatchers(patterns: ScopePatterns, modules: readonly ResolvedModuleRule[]): ScopeMatchers {
  const { root } = patterns
  const include = createPathMatcher([...patterns.include])
  const exclude = createPathMatcher([...patterns.exclude])
  const rules = modules.map((rule) => {
    const ruleInclude = createPathMatcher(rule.include)
    const ruleExclude = createPathMatcher(rule.exclude)
    return { rule, matches: (relPath: string) => ruleInclude(relPath) && !ruleExclude(relPath) }
  })
  const relativePath = (file: string): string | null => projectRelativePath(root, file)
  const managed = new Map<string, boolean>()
  return {
    relativePath,
    isManaged(file) {
      let answer = managed.get(file)
      if (answer === undefined) {
        const relative = relativePath(file)
        answer = relative !== null && include(relative) && !exclude(relative)
        if (managed.size > MANAGED_MEMO) managed.clear()
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
