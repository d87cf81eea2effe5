/**
 * Reverse dependency index: which owners (documents, modules) a file event may affect.
 *
 * Contract:
 * - `set(owner, dependencies)` replaces the owner's previous dependencies (stale edges are
 *   removed); `delete(owner)` forgets it.
 * - `affected(events, changes)` returns the owners whose results may change:
 *   - `fs:file:X`: any event on X, or on a folder holding X;
 *   - `fs:glob:P`: a create or delete of a file P matches, or of a folder P could match
 *     inside (judged by P's literal base folder, conservatively);
 *   - `fs:dir:D`: a create or delete at or under D;
 *   - `index:documents`, `sql:model:*`: only when `changes.documents` (a row of the index's
 *     `documents` view changed); `index:entries` only when `changes.entries` (a file or
 *     folder appeared, vanished or changed kind);
 *   - `git://*`: when `changes.git` (HEAD, refs, packed-refs or index changed); also
 *     `git://status/<p>` and `git://diff/<p>` on an event at or under p (or on a folder
 *     holding p), and `git://ignore-rules` on a `.gitignore` event;
 *   - `resource:*` and anything else: nothing itself (its transitive dependencies are listed).
 * Paths are project-relative POSIX.
 */
import { globBase, globMatcher } from '../resources/fs.js'
import { fsPathOf } from '../resources/identifiers.js'
import type { ChangedRows } from '../documents/changed-rows.js'

export type FileEventType = 'create' | 'update' | 'delete'

export interface FileEvent {
  type: FileEventType
  /** Project-relative POSIX path of a file or folder. */
  path: string
  /** The path is a folder (as the watcher reports it). @default false */
  directory?: boolean
}

export interface ProjectionChanges {
  /** A row of the document index's `documents` view changed. */
  documents: boolean
  /** A row of the index's `entries` (every file and folder) changed. @default false */
  entries?: boolean
  /** Git metadata changed. */
  git: boolean
  /**
   * With `documents`: the `documents` columns that changed, when every changed row kept its
   * path (the job memo then re-checks only jobs whose queries can read one of them).
   * @default undefined (any column may have changed)
   */
  columns?: ReadonlySet<string>
  /** With `columns`: the paths of the rows that changed. @default undefined (any row may have) */
  paths?: ReadonlySet<string>
  /** With `paths`: what those rows held (their values decide some WHERE clauses). @default undefined (unknown) */
  rows?: ChangedRows
}

interface GlobEntry {
  matches: (relPath: string) => boolean
  base: string
  owners: Set<string>
}

const FILE = 'fs:file:'
const GLOB = 'fs:glob:'
const DIR = 'fs:dir:'
const GIT = 'git://'

export class DependencyGraph {
  private readonly byOwner = new Map<string, readonly string[]>()
  private readonly files = new Map<string, Set<string>>()
  private readonly dirs = new Map<string, Set<string>>()
  /** `git://status/<p>` and `git://diff/<p>` paths: a change at, under or above p changes the value. */
  private readonly gitPaths = new Map<string, Set<string>>()
  private readonly globs = new Map<string, GlobEntry>()
  private readonly indexOwners = new Map<string, number>()
  private readonly entriesOwners = new Map<string, number>()
  private readonly gitOwners = new Map<string, number>()
  private readonly ignoreRuleOwners = new Map<string, number>()

  dependenciesOf(owner: string): readonly string[] {
    return this.byOwner.get(owner) ?? []
  }

  owners(): string[] {
    return [...this.byOwner.keys()]
  }

  set(owner: string, dependencies: readonly string[]): void {
    this.delete(owner)
    const unique = [...new Set(dependencies)]
    this.byOwner.set(owner, unique)
    for (const dependency of unique) this.link(owner, dependency, +1)
  }

  delete(owner: string): void {
    const previous = this.byOwner.get(owner)
    if (!previous) return
    this.byOwner.delete(owner)
    for (const dependency of previous) this.link(owner, dependency, -1)
  }

  affected(events: readonly FileEvent[], changes: ProjectionChanges): Set<string> {
    const owners = new Set<string>()
    const addAll = (set: Iterable<string> | undefined) => {
      for (const owner of set ?? []) owners.add(owner)
    }
    if (changes.documents) addAll(this.indexOwners.keys())
    if (changes.entries) addAll(this.entriesOwners.keys())
    if (changes.git) addAll(this.gitOwners.keys())
    for (const event of events) {
      const target = trimSlashes(event.path)
      for (const [file, fileOwners] of this.files) {
        if (file === target || isInside(file, target)) addAll(fileOwners)
      }
      for (const [gitPath, gitPathOwners] of this.gitPaths) {
        if (gitPath === target || isInside(target, gitPath) || isInside(gitPath, target)) addAll(gitPathOwners)
      }
      if (basename(target) === '.gitignore') addAll(this.ignoreRuleOwners.keys())
      if (event.type === 'update') continue
      for (const [dir, dirOwners] of this.dirs) {
        if (dir === '' || dir === target || isInside(target, dir)) addAll(dirOwners)
      }
      for (const glob of this.globs.values()) {
        // A folder appearing or vanishing may hold matches: be conservative around the base.
        const hit = event.directory
          ? glob.base === '' || glob.base === target || isInside(glob.base, target) || isInside(target, glob.base)
          : glob.matches(target)
        if (hit) addAll(glob.owners)
      }
    }
    return owners
  }

  private link(owner: string, dependency: string, delta: 1 | -1): void {
    if (dependency.startsWith(FILE)) {
      this.linkSet(this.files, pathKey(dependency.slice(FILE.length)), owner, delta)
    } else if (dependency.startsWith(DIR)) {
      this.linkSet(this.dirs, pathKey(dependency.slice(DIR.length)), owner, delta)
    } else if (dependency.startsWith(GLOB)) {
      const pattern = dependency.slice(GLOB.length)
      let entry = this.globs.get(pattern)
      if (!entry && delta > 0) {
        entry = { matches: globMatcher(pattern), base: globBase(pattern), owners: new Set() }
        this.globs.set(pattern, entry)
      }
      if (!entry) return
      if (delta > 0) entry.owners.add(owner)
      else {
        entry.owners.delete(owner)
        if (entry.owners.size === 0) this.globs.delete(pattern)
      }
    } else if (dependency === 'index:documents' || dependency.startsWith('sql:model:')) {
      count(this.indexOwners, owner, delta)
    } else if (dependency === 'index:entries') {
      count(this.entriesOwners, owner, delta)
    } else if (dependency.startsWith(GIT)) {
      count(this.gitOwners, owner, delta)
      const [form, ...rest] = dependency.slice(GIT.length).replace(/^\/+/, '').split('/')
      if ((form === 'status' || form === 'diff') && rest.length > 0) {
        this.linkSet(this.gitPaths, pathKey(rest.join('/')), owner, delta)
      }
      if (form === 'ignore-rules') count(this.ignoreRuleOwners, owner, delta)
    }
  }

  /** Whether `owner` reads the `documents` view (`index:documents`, `sql:model:*`): the owners a change of its rows affects. */
  readsDocuments(owner: string): boolean {
    return this.indexOwners.has(owner)
  }

  private linkSet(map: Map<string, Set<string>>, key: string, owner: string, delta: 1 | -1): void {
    let set = map.get(key)
    if (delta > 0) {
      if (!set) map.set(key, (set = new Set()))
      set.add(owner)
    } else if (set) {
      set.delete(owner)
      if (set.size === 0) map.delete(key)
    }
  }
}

/** Reference-counted membership: an owner may list several identifiers of one group. */
function count(map: Map<string, number>, owner: string, delta: 1 | -1): void {
  const next = (map.get(owner) ?? 0) + delta
  if (next > 0) map.set(owner, next)
  else map.delete(owner)
}

/** The path an identifier body names, as events name it (`docs/../a.txt?x` → `a.txt`). */
function pathKey(body: string): string {
  return fsPathOf(body) ?? trimSlashes(body)
}

function trimSlashes(p: string): string {
  return p.replace(/^\/+|\/+$/g, '')
}

/** True when `inner` lies strictly below folder `outer`. */
function isInside(inner: string, outer: string): boolean {
  return outer === '' ? inner !== '' : inner.startsWith(`${outer}/`)
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1)
}
