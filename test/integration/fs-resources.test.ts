import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import ignore from 'ignore'
import { afterEach, describe, expect, it, vi } from 'vitest'
import {
  createPathMatcher,
  isIgnored,
  listProjectEntries,
  listProjectFiles,
  type ProjectEntry,
  type ProjectFilesOptions,
} from '../../src/documents/project-files.js'
import { physicalPath, resolveInsideRoot, toPosixRelative } from '../../src/resources/confine.js'
import {
  globBase,
  globMatcher,
  resolveFsDir,
  resolveFsFile,
  resolveFsGlob,
  type FsResolveContext,
} from '../../src/resources/fs.js'

const DEFAULT_EXCLUDE = [
  '.git/**', '.insitu/**', '.venv/**', '.pytest_cache/**', '.ruff_cache/**', '.pyrefly/**',
  '**/__pycache__/**', 'dist/**', 'site/**', 'node_modules/**',
]

const temporaryFolders: string[] = []

function makeFolder(files: Record<string, string | Buffer> = {}): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'insitu-')))
  temporaryFolders.push(folder)
  for (const [rel, content] of Object.entries(files)) {
    const absolute = path.join(folder, rel)
    fs.mkdirSync(path.dirname(absolute), { recursive: true })
    fs.writeFileSync(absolute, content)
  }
  return folder
}

/** A folder made a real git work tree (`git init`): only there do .gitignore files apply (SPEC §11). */
function makeRepository(files: Record<string, string | Buffer> = {}): string {
  const folder = makeFolder(files)
  execFileSync('git', ['init', '--quiet'], { cwd: folder })
  return folder
}

afterEach(() => {
  vi.restoreAllMocks()
  for (const folder of temporaryFolders.splice(0)) fs.rmSync(folder, { recursive: true, force: true })
})

const defaults: ProjectFilesOptions = { exclude: DEFAULT_EXCLUDE, respectGitignore: true }

/** A listed file or folder, as listProjectEntries and fs:dir report it. */
const file = (rel: string): ProjectEntry => ({ path: rel, kind: 'file' })
const dir = (rel: string): ProjectEntry => ({ path: rel, kind: 'directory' })

function context(root: string, overrides: Partial<FsResolveContext> = {}): FsResolveContext {
  return {
    root,
    exclude: DEFAULT_EXCLUDE,
    respectGitignore: true,
    isManagedDocument: (relPath) => relPath.endsWith('.md'),
    ...overrides,
  }
}

describe('listProjectFiles / listProjectEntries', () => {
  it('lists regular files sorted by code unit', () => {
    const root = makeFolder({ 'a.md': '', 'a/b.md': '', 'a-b/x.md': '', 'B.md': '', 'a/c/d.txt': '' })
    expect(listProjectFiles(root, defaults)).toEqual(['B.md', 'a-b/x.md', 'a.md', 'a/b.md', 'a/c/d.txt'])
    expect(listProjectEntries(root, defaults)).toEqual([
      file('B.md'), dir('a'), dir('a-b'), file('a-b/x.md'), file('a.md'), file('a/b.md'), dir('a/c'), file('a/c/d.txt'),
    ])
  })

  it('skips excluded folders without entering them', () => {
    const root = makeFolder({
      'README.md': '',
      'node_modules/pkg/README.md': '',
      'node_modules/pkg/lib/index.js': '',
      'docs/node_modules/kept.md': '', // `node_modules/**` is anchored at the root
      'docs/__pycache__/x.pyc': '',
      'dist/out.js': '',
      '.git/HEAD': '',
    })
    // Folders are opened (then verified and listed through the descriptor): count the opens.
    const open = vi.spyOn(fs, 'openSync')
    expect(listProjectEntries(root, defaults)).toEqual([
      file('README.md'), dir('docs'), dir('docs/node_modules'), file('docs/node_modules/kept.md'),
    ])
    const folderFlags = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY
    const folders = open.mock.calls
      .filter(([, flags]) => flags === folderFlags)
      .map(([folder]) => toPosixRelative(root, String(folder)))
      .sort()
    expect(folders).toEqual(['', 'docs', 'docs/node_modules'])
  })

  it('keeps an excluded folder listed when a negation could re-include something inside it', () => {
    const root = makeFolder({ 'vendor/a.md': '', 'vendor/keep.md': '' })
    const options = { exclude: ['vendor/**', '!vendor/keep.md'], respectGitignore: false }
    expect(listProjectFiles(root, options)).toEqual(['vendor/keep.md'])
  })

  it('applies nested .gitignore files relative to their folder, and .git/info/exclude', () => {
    const root = makeFolder({
      '.gitignore': '*.log\nbuild/\n',
      '.git/info/exclude': 'secret.md\n',
      'a.log': '',
      'draft1.md': '',
      'secret.md': '',
      'build/out.md': '',
      'docs/.gitignore': '!keep.log\ndraft*.md\n/local.md\n',
      'docs/keep.log': '',
      'docs/other.log': '',
      'docs/draft1.md': '',
      'docs/local.md': '',
      'docs/sub/local.md': '',
      'docs/build/x.md': '',
      'docs/sub/secret.md': '',
    })
    expect(listProjectFiles(root, defaults)).toEqual([
      '.gitignore',
      'docs/.gitignore',
      'docs/keep.log',
      'docs/sub/local.md',
      'draft1.md',
    ])
    expect(listProjectFiles(root, { exclude: DEFAULT_EXCLUDE, respectGitignore: false })).toEqual([
      '.gitignore',
      'a.log',
      'build/out.md',
      'docs/.gitignore',
      'docs/build/x.md',
      'docs/draft1.md',
      'docs/keep.log',
      'docs/local.md',
      'docs/other.log',
      'docs/sub/local.md',
      'docs/sub/secret.md',
      'draft1.md',
      'secret.md',
    ])
  })

  it('never lists .git content when respecting gitignore, even without a .git exclude', () => {
    const root = makeFolder({ '.git/HEAD': 'ref', 'a.md': '' })
    expect(listProjectFiles(root, { exclude: [], respectGitignore: true })).toEqual(['a.md'])
    expect(listProjectFiles(root, { exclude: [], respectGitignore: false })).toEqual(['.git/HEAD', 'a.md'])
  })

  it('lists symlinks pointing inside the root, skips those pointing outside or dangling, and stops at cycles', () => {
    const outside = makeFolder({ 'secret.md': 'secret', 'inner/x.md': '' })
    const root = makeFolder({ 'docs/a.md': '' })
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'out-file.md'))
    fs.symlinkSync(outside, path.join(root, 'out-dir'))
    fs.symlinkSync('docs', path.join(root, 'alias'))
    fs.symlinkSync('a.md', path.join(root, 'docs', 'link.md'))
    fs.symlinkSync('missing.md', path.join(root, 'dangling.md'))
    fs.symlinkSync('..', path.join(root, 'docs', 'loop'))
    expect(listProjectEntries(root, defaults)).toEqual([
      dir('alias'), file('alias/a.md'), file('alias/link.md'), dir('alias/loop'),
      dir('docs'), file('docs/a.md'), file('docs/link.md'), dir('docs/loop'),
    ])
  })

  it('walks only below `under`, honouring the .gitignore files above it', () => {
    const root = makeRepository({
      '.gitignore': 'docs/private/\n',
      'docs/.gitignore': '*.tmp\n',
      'docs/guide/a.md': '',
      'docs/guide/b.tmp': '',
      'docs/private/c.md': '',
      'other.md': '',
    })
    expect(listProjectFiles(root, defaults, 'docs/guide')).toEqual(['docs/guide/a.md'])
    expect(listProjectFiles(root, defaults, 'docs/private')).toEqual([])
    expect(listProjectFiles(root, defaults, 'nope')).toEqual([])
    expect(listProjectFiles(root, defaults, 'other.md')).toEqual([])
  })

  it('lists the same with folder-only patterns (tested per folder) as with per-path matching', () => {
    const root = makeFolder({
      'drafts.md': '',
      'drafts/x.md': '',
      'docs/drafts/y.md': '',
      'docs/drafts.md': '',
      'a/__pycache__/m.pyc': '',
      'a/b/__pycache__/n.pyc': '',
      'a/__pycache__.md': '',
      'build-1/out.md': '',
      'build-x/deep/out.md': '',
      'site/index.md': '',
      'docs/site/index.md': '',
      'keep.md': '',
    })
    const folderPatterns = ['drafts/**', '**/__pycache__/**', 'build-*/**', 'site/**']
    const fast = listProjectEntries(root, { exclude: folderPatterns, respectGitignore: false })
    // A pattern that is neither `X/**` nor `X/` is tested against every path the walk meets.
    const slow = listProjectEntries(root, { exclude: [...folderPatterns, 'no-such-file'], respectGitignore: false })
    expect(fast).toEqual(slow)
    expect(fast.filter((entry) => entry.kind === 'file').map((entry) => entry.path)).toEqual([
      'a/__pycache__.md',
      'docs/drafts.md',
      'docs/drafts/y.md',
      'docs/site/index.md',
      'drafts.md',
      'keep.md',
    ])
  })

  it('lists what matching every path against every pattern lists, for random pattern lists (the walk tests fewer)', () => {
    // The oracle: a path is listed when neither it nor a folder above it is excluded, each
    // tested against the whole list with `ignore` (folders with a trailing slash), and, with no
    // `!` pattern, a folder whose whole content an `X/**` pattern excludes counts as excluded.
    const folders = ['a', 'b', 'drafts', 'build-1', '__pycache__', 'x.md', 'y.tmp']
    const files: Record<string, string> = { 'keep.md': '', 'top.tmp': '', 'z.md': '' }
    for (const first of folders) {
      for (const second of folders) files[`${first}/${second}/f.md`] = ''
      files[`${first}/z.md`] = ''
      files[`${first}/k.txt`] = ''
    }
    const root = makeFolder(files)
    const all: ProjectEntry[] = []
    const walkAll = (rel: string) => {
      for (const dirent of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
        const child = rel === '' ? dirent.name : `${rel}/${dirent.name}`
        all.push({ path: child, kind: dirent.isDirectory() ? 'directory' : 'file' })
        if (dirent.isDirectory()) walkAll(child)
      }
    }
    walkAll('')
    const pool = [
      'drafts/', '**/drafts/', 'a/b/', 'b/', '*.tmp/', 'build-*/', 'drafts/**', '**/__pycache__/**', 'a/**',
      'b/**', '*.md', 'z.md', 'a/z.md', '/b', 'b', 'build-*', '**/f.md', '*.txt', 'y.tmp', 'a/*/f.md', '*.tmp',
      'x.md/', 'keep.md', '!keep.md', '!a/b/f.md', '!drafts/', '!z.md', '# comment', '',
    ]
    let seed = 7
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    let compared = 0
    for (let round = 0; round < 300; round += 1) {
      const patterns = Array.from({ length: 1 + random(4) }, () => pool[random(pool.length)]!)
      const oracle = ignore().add(patterns)
      const negated = patterns.some((pattern) => pattern.startsWith('!'))
      const implied = negated
        ? ignore()
        : ignore().add(patterns.filter((p) => p.endsWith('/**') && p.length > 3).map((p) => p.slice(0, -3)).map((b) => (b.includes('/') ? `${b}/` : `/${b}/`)))
      const excluded = (rel: string, folder: boolean) => oracle.ignores(folder ? `${rel}/` : rel) || (folder && implied.ignores(`${rel}/`))
      const expected = all
        .filter((entry) => {
          const segments = entry.path.split('/')
          return segments.every((_, i) => !excluded(segments.slice(0, i + 1).join('/'), i < segments.length - 1 || entry.kind === 'directory'))
        })
        .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
      const listed = listProjectEntries(root, { exclude: patterns, respectGitignore: false })
      expect(listed, JSON.stringify(patterns)).toEqual(expected)
      for (const entry of all) {
        expect(isIgnored(root, { exclude: patterns, respectGitignore: false }, entry.path, entry.kind === 'directory'), `${JSON.stringify(patterns)} ${entry.path}`).toBe(
          !expected.some((e) => e.path === entry.path),
        )
      }
      compared += 1
    }
    expect(compared).toBe(300)
  })

  it('isIgnored answers for one path as the walker would', () => {
    const root = makeRepository({ '.gitignore': '*.log\n', 'docs/.gitignore': '!keep.log\n' })
    expect(isIgnored(root, defaults, 'a.log')).toBe(true)
    expect(isIgnored(root, defaults, 'docs/keep.log')).toBe(false)
    expect(isIgnored(root, defaults, 'docs/other.log')).toBe(true)
    expect(isIgnored(root, defaults, 'node_modules/x/a.md')).toBe(true)
    expect(isIgnored(root, defaults, 'node_modules', true)).toBe(true)
    expect(isIgnored(root, defaults, '.git/config')).toBe(true)
    expect(isIgnored(root, defaults, 'docs/a.md')).toBe(false)
    expect(isIgnored(root, { exclude: [], respectGitignore: false }, 'a.log')).toBe(false)
  })

  it('applies .gitignore files only inside a git work tree (SPEC §11)', () => {
    const files = { '.gitignore': '*.log\nbuild/\n', 'a.log': '', 'build/out.md': '', 'docs/.gitignore': '*.md\n', 'docs/x.md': '', 'keep.md': '' }
    const plain = makeFolder(files)
    expect(listProjectFiles(plain, defaults)).toEqual(['.gitignore', 'a.log', 'build/out.md', 'docs/.gitignore', 'docs/x.md', 'keep.md'])
    expect(isIgnored(plain, defaults, 'a.log')).toBe(false)
    const repository = makeRepository(files)
    expect(listProjectFiles(repository, defaults)).toEqual(['.gitignore', 'docs/.gitignore', 'keep.md'])
    expect(isIgnored(repository, defaults, 'a.log')).toBe(true)
  })

  it("applies the repository's rules above a project in a subfolder, as git does", () => {
    const top = makeRepository({
      '.gitignore': '*.log\n/site/docs/drafts/\n',
      'site/.gitignore': 'private.md\n',
      'site/docs/a.md': '',
      'site/docs/a.log': '',
      'site/docs/private.md': '',
      'site/docs/drafts/d.md': '',
    })
    fs.writeFileSync(path.join(top, '.git', 'info', 'exclude'), 'excluded.md\n')
    fs.writeFileSync(path.join(top, 'site', 'docs', 'excluded.md'), '')
    const root = path.join(top, 'site', 'docs')
    expect(listProjectFiles(root, defaults)).toEqual(['a.md'])
    expect(isIgnored(root, defaults, 'drafts', true)).toBe(true)
    // git itself agrees on every file there
    const ignored = execFileSync('git', ['check-ignore', '--no-index', 'a.log', 'private.md', 'drafts/d.md', 'excluded.md', 'a.md'], {
      cwd: root,
      encoding: 'utf8',
    })
    expect(ignored.split('\n').filter(Boolean)).toEqual(['a.log', 'private.md', 'drafts/d.md', 'excluded.md'])
  })

  it('a linked work tree (a .git file) counts as a work tree', () => {
    const main = makeRepository()
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '--quiet', '--allow-empty', '-m', 'init'], { cwd: main })
    const linked = path.join(makeFolder(), 'linked')
    execFileSync('git', ['worktree', 'add', '--quiet', linked], { cwd: main })
    fs.writeFileSync(path.join(linked, '.gitignore'), '*.log\n')
    fs.writeFileSync(path.join(linked, 'a.log'), '')
    expect(fs.statSync(path.join(linked, '.git')).isFile()).toBe(true)
    expect(listProjectFiles(linked, defaults)).toEqual(['.gitignore'])
  })

  it('lists what git ignores, marked, with markIgnored', () => {
    const root = makeRepository({ '.gitignore': '*.log\nbuild/\n', 'a.log': '', 'build/out.md': '', 'keep.md': '' })
    expect(listProjectEntries(root, { ...defaults, markIgnored: true })).toEqual([
      file('.gitignore'),
      { ...file('a.log'), ignored: true },
      { ...dir('build'), ignored: true },
      { ...file('build/out.md'), ignored: true },
      file('keep.md'),
    ])
    expect(listProjectEntries(root, { ...defaults, markIgnored: true }, 'build')).toEqual([{ ...file('build/out.md'), ignored: true }])
  })

  it('createPathMatcher uses gitignore semantics, case-sensitively', () => {
    const matches = createPathMatcher(['build/', '*.log', 'docs/*.tmp'])
    expect(matches('build', true)).toBe(true)
    expect(matches('build', false)).toBe(false)
    expect(matches('a/build/x.md')).toBe(true)
    expect(matches('deep/x.log')).toBe(true)
    expect(matches('X.LOG')).toBe(false)
    expect(matches('docs/a.tmp')).toBe(true)
    expect(matches('docs/sub/a.tmp')).toBe(false)
    expect(matches('')).toBe(false)
  })
})

describe('resolveInsideRoot', () => {
  it('returns the absolute path for paths inside the root', () => {
    const root = makeFolder({ 'docs/a.md': '' })
    expect(resolveInsideRoot(root, 'docs/a.md', 'fs:file:docs/a.md')).toBe(path.join(root, 'docs', 'a.md'))
    expect(resolveInsideRoot(root, 'docs/../new/x.md', 'r')).toBe(path.join(root, 'new', 'x.md'))
    expect(resolveInsideRoot(root, '', 'r')).toBe(root)
    expect(resolveInsideRoot(root, '..foo', 'r')).toBe(path.join(root, '..foo'))
  })

  it('rejects absolute paths and .. escapes', () => {
    const root = makeFolder()
    expect(() => resolveInsideRoot(root, '/etc/passwd', 'fs:file:/etc/passwd')).toThrow(
      'resource escapes project root: fs:file:/etc/passwd',
    )
    expect(() => resolveInsideRoot(root, '../x', 'fs:file:../x')).toThrow('resource escapes project root: fs:file:../x')
    expect(() => resolveInsideRoot(root, 'docs/../../x', 'R')).toThrow('resource escapes project root: R')
    expect(() => resolveInsideRoot(root, '..', 'R')).toThrow('resource escapes project root: R')
  })

  it('rejects ..\\ as a way up even where a file of that name exists (project paths read \\ as a separator)', () => {
    const root = makeFolder({ '..\\x': 'a file named with a backslash' })
    expect(fs.existsSync(path.join(root, '..\\x'))).toBe(true)
    expect(() => resolveInsideRoot(root, '..\\x', 'fs:file:..\\x')).toThrow('resource escapes project root: fs:file:..\\x')
  })

  it('rejects symlinks in any component that point outside, including dangling ones', () => {
    const outside = makeFolder({ 'secret.md': 'secret' })
    const root = makeFolder({ 'docs/a.md': '' })
    fs.symlinkSync(outside, path.join(root, 'docs', 'ext'))
    fs.symlinkSync(path.join(outside, 'nowhere', 'x.md'), path.join(root, 'dangling.md'))
    expect(() => resolveInsideRoot(root, 'docs/ext/secret.md', 'R1')).toThrow('resource escapes project root: R1')
    expect(() => resolveInsideRoot(root, 'docs/ext/missing/deeper.md', 'R2')).toThrow('resource escapes project root: R2')
    expect(() => resolveInsideRoot(root, 'docs/ext', 'R3')).toThrow('resource escapes project root: R3')
    expect(() => resolveInsideRoot(root, 'dangling.md', 'R4')).toThrow('resource escapes project root: R4')
  })

  it('accepts a root reached through a symlink', () => {
    const real = makeFolder({ 'a.md': '' })
    const holder = makeFolder()
    const linkedRoot = path.join(holder, 'project')
    fs.symlinkSync(real, linkedRoot)
    expect(resolveInsideRoot(linkedRoot, 'a.md', 'R')).toBe(path.join(linkedRoot, 'a.md'))
    expect(toPosixRelative(linkedRoot, path.join(linkedRoot, 'docs', 'a.md'))).toBe('docs/a.md')
  })
})

describe('fs:file', () => {
  const managed = [
    '# Tasks',
    '<!-- insitu:begin sql',
    'id = "open"',
    'model = "open_tasks"',
    '-->',
    '| a |',
    '| - |',
    '<!-- insitu:end -->',
    'tail',
    '',
  ].join('\n')

  it('returns UTF-8 text and reports the identifier as dependency', () => {
    const root = makeFolder({ 'notes.txt': 'héllo\n' })
    expect(resolveFsFile('fs:file:notes.txt', context(root))).toEqual({
      value: 'héllo\n',
      dependencies: ['fs:file:notes.txt'],
    })
  })

  it('blanks every region body of a managed document, keeping the directives', () => {
    const root = makeFolder({ 'docs/tasks.md': managed })
    const result = resolveFsFile('fs:file:docs/tasks.md', context(root))
    expect(result.value).toBe(
      '# Tasks\n<!-- insitu:begin sql\nid = "open"\nmodel = "open_tasks"\n-->\n<!-- insitu:end -->\ntail\n',
    )
    expect(result.dependencies).toEqual(['fs:file:docs/tasks.md'])
  })

  it('passes the project-relative POSIX path to isManagedDocument and keeps unmanaged text as is', () => {
    const root = makeFolder({ 'docs/tasks.md': managed })
    const asked: string[] = []
    const ctx = context(root, { isManagedDocument: (relPath) => (asked.push(relPath), false) })
    expect(resolveFsFile('fs:file:docs/../docs/tasks.md', ctx).value).toBe(managed)
    expect(asked).toEqual(['docs/tasks.md'])
  })

  it('ignores a ?query suffix, like the permission check', () => {
    const root = makeFolder({ 'a.txt': 'A' })
    expect(resolveFsFile('fs:file:a.txt?raw=1', context(root))).toEqual({
      value: 'A',
      dependencies: ['fs:file:a.txt?raw=1'],
    })
  })

  it('reads excluded files by name', () => {
    const root = makeFolder({ 'node_modules/pkg/README.md': 'pkg' })
    expect(resolveFsFile('fs:file:node_modules/pkg/README.md', context(root)).value).toBe('pkg')
  })

  it('names the path of a missing file, and refuses folders and invalid UTF-8', () => {
    const root = makeFolder({ 'docs/a.md': '', 'bad.bin': Buffer.from([0x61, 0xff, 0x62]) })
    expect(() => resolveFsFile('fs:file:docs/nope.md', context(root))).toThrow('file not found: docs/nope.md')
    expect(() => resolveFsFile('fs:file:docs/a.md/x', context(root))).toThrow('file not found: docs/a.md/x')
    expect(() => resolveFsFile('fs:file:docs', context(root))).toThrow('not a file: docs')
    expect(() => resolveFsFile('fs:file:bad.bin', context(root))).toThrow('file is not valid UTF-8: bad.bin')
  })

  it('is confined to the root', () => {
    const outside = makeFolder({ 'secret.md': 'secret' })
    const root = makeFolder({ 'a.md': '' })
    fs.symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'link.md'))
    fs.symlinkSync(outside, path.join(root, 'out'))
    fs.symlinkSync('a.md', path.join(root, 'inside-link.md'))
    const ctx = context(root)
    for (const identifier of ['fs:file:link.md', 'fs:file:out/secret.md', 'fs:file:../x.md', `fs:file:${path.join(outside, 'secret.md')}`]) {
      expect(() => resolveFsFile(identifier, ctx)).toThrow(`resource escapes project root: ${identifier}`)
    }
    expect(resolveFsFile('fs:file:inside-link.md', ctx).value).toBe('')
  })
})

describe('fs:glob', () => {
  const files = {
    'README.md': '',
    'notes.txt': '',
    'docs/a.md': '',
    'docs/b.txt': '',
    'docs/sub/c.md': '',
    'docs/sub/UPPER.MD': '',
    'guide/docs/d.md': '',
    'node_modules/pkg/README.md': '',
    'ignored/e.md': '',
    '.gitignore': 'ignored/\n',
  }

  it('matches gitignore-style: unanchored at any depth, anchored from the root', () => {
    const root = makeRepository(files)
    const ctx = context(root)
    expect(resolveFsGlob('fs:glob:*.md', ctx)).toEqual({
      value: ['README.md', 'docs/a.md', 'docs/sub/c.md', 'guide/docs/d.md', 'ignored/e.md'],
      dependencies: ['fs:glob:*.md'],
    })
    expect(resolveFsGlob('fs:glob:**/*.md', ctx).value).toEqual(['README.md', 'docs/a.md', 'docs/sub/c.md', 'guide/docs/d.md', 'ignored/e.md'])
    expect(resolveFsGlob('fs:glob:docs/*.md', ctx).value).toEqual(['docs/a.md'])
    expect(resolveFsGlob('fs:glob:docs/**/*.md', ctx).value).toEqual(['docs/a.md', 'docs/sub/c.md'])
    expect(resolveFsGlob('fs:glob:/README.md', ctx).value).toEqual(['README.md'])
    expect(resolveFsGlob('fs:glob:docs', ctx).value).toEqual([
      'docs/a.md', 'docs/b.txt', 'docs/sub/UPPER.MD', 'docs/sub/c.md', 'guide/docs/d.md',
    ])
    expect(resolveFsGlob('fs:glob:*.MD', ctx).value).toEqual(['docs/sub/UPPER.MD'])
    expect(resolveFsGlob('fs:glob:nothing/*.md', ctx).value).toEqual([])
    expect(resolveFsGlob('fs:glob:?otes.txt', ctx).value).toEqual(['notes.txt'])
  })

  it('drops excluded files only: gitignored files are listed, as the Python implementation lists them', () => {
    const root = makeRepository(files)
    expect(listProjectFiles(root, defaults)).not.toContain('ignored/e.md') // the walk of the index hides it
    expect(resolveFsGlob('fs:glob:**/README.md', context(root)).value).toEqual(['README.md'])
    expect(resolveFsGlob('fs:glob:e.md', context(root)).value).toEqual(['ignored/e.md'])
    expect(resolveFsGlob('fs:glob:e.md', context(root, { respectGitignore: false })).value).toEqual(['ignored/e.md'])
    expect(resolveFsGlob('fs:glob:**/README.md', context(root, { exclude: [] })).value).toEqual([
      'README.md',
      'node_modules/pkg/README.md',
    ])
  })

  it('refuses patterns climbing out of the root', () => {
    const root = makeFolder(files)
    expect(() => resolveFsGlob('fs:glob:../*.md', context(root))).toThrow('resource escapes project root: fs:glob:../*.md')
    expect(() => resolveFsGlob('fs:glob:docs/../../*.md', context(root))).toThrow(
      'resource escapes project root: fs:glob:docs/../../*.md',
    )
  })

  it('does not list files behind a symlinked folder pointing outside', () => {
    const outside = makeFolder({ 'x.md': '' })
    const root = makeFolder({ 'a.md': '' })
    fs.symlinkSync(outside, path.join(root, 'ext'))
    expect(resolveFsGlob('fs:glob:**/*.md', context(root)).value).toEqual(['a.md'])
    expect(resolveFsGlob('fs:glob:ext/*.md', context(root)).value).toEqual([])
  })

  it('globMatcher and globBase expose the same matching for the watch layer', () => {
    const matches = globMatcher('docs/*.md')
    expect(matches('docs/a.md')).toBe(true)
    expect(matches('docs/sub/a.md')).toBe(false)
    expect(matches('other/docs/a.md')).toBe(false)
    expect(globMatcher('*.md')('a/b/c.md')).toBe(true)
    expect(globMatcher('**/*.md')('c.md')).toBe(true)
    expect(globMatcher('')('a.md')).toBe(false)
    expect(globBase('docs/*.md')).toBe('docs')
    expect(globBase('docs/guide/**/*.md')).toBe('docs/guide')
    expect(globBase('/docs/a.md')).toBe('docs')
    expect(globBase('**/*.md')).toBe('')
    expect(globBase('*.md')).toBe('')
    expect(globBase('docs/')).toBe('')
    expect(globBase('d?cs/x/*.md')).toBe('')
  })
})

describe('fs:dir', () => {
  it('lists every entry below the folder but excluded ones, recursively, gitignored ones marked', () => {
    const root = makeRepository({
      '.gitignore': '*.tmp\n',
      'docs/a.md': '',
      'docs/b.tmp': '',
      'docs/sub/c.md': '',
      'docs/node_modules/d.md': '',
      'node_modules/x.md': '',
      'top.md': '',
    })
    const ctx = context(root, { exclude: ['**/node_modules/**'] })
    const ignored = { ...file('docs/b.tmp'), ignored: true }
    expect(resolveFsDir('fs:dir:docs', ctx)).toEqual({
      value: [file('docs/a.md'), ignored, dir('docs/sub'), file('docs/sub/c.md')],
      dependencies: ['fs:dir:docs'],
    })
    const atRoot = [file('.gitignore'), dir('docs'), file('docs/a.md'), ignored, dir('docs/sub'), file('docs/sub/c.md'), file('top.md')]
    expect(resolveFsDir('fs:dir:', ctx).value).toEqual(atRoot)
    expect(resolveFsDir('fs:dir:.', ctx)).toEqual({ value: atRoot, dependencies: ['fs:dir:.'] })
    expect(resolveFsDir('fs:dir:node_modules', ctx).value).toEqual([])
  })

  it('names a missing folder, refuses files and escapes', () => {
    const outside = makeFolder()
    const root = makeFolder({ 'a.md': '' })
    fs.symlinkSync(outside, path.join(root, 'ext'))
    expect(() => resolveFsDir('fs:dir:nope', context(root))).toThrow('directory not found: nope')
    expect(() => resolveFsDir('fs:dir:a.md', context(root))).toThrow('not a directory: a.md')
    expect(() => resolveFsDir('fs:dir:..', context(root))).toThrow('resource escapes project root: fs:dir:..')
    expect(() => resolveFsDir('fs:dir:ext', context(root))).toThrow('resource escapes project root: fs:dir:ext')
    expect(() => resolveFsDir(`fs:dir:${outside}`, context(root))).toThrow(`resource escapes project root: fs:dir:${outside}`)
  })
})

describe('path depth limits', () => {
  const deep = Array.from({ length: 8000 }, () => 'a').join('/')

  /** The message for identifier `resource` whose path or pattern is `text`. */
  function tooDeep(resource: string, text: string): string {
    const segments = text.split('/').length
    return (
      `resource path too deep: ${resource.slice(0, 120)}… (${segments} segments, ${text.length} bytes; ` +
      'at most 256 segments and 4096 bytes)'
    )
  }

  it('refuses 8,000-segment fs:file, fs:dir and fs:glob identifiers with a clear error', () => {
    const root = makeFolder({ 'a/b.md': '' })
    const ctx = context(root)
    expect(() => resolveFsFile(`fs:file:${deep}`, ctx)).toThrow(tooDeep(`fs:file:${deep}`, deep))
    expect(() => resolveFsDir(`fs:dir:${deep}`, ctx)).toThrow(tooDeep(`fs:dir:${deep}`, deep))
    expect(() => resolveFsGlob(`fs:glob:${deep}/*.md`, ctx)).toThrow(tooDeep(`fs:glob:${deep}/*.md`, `${deep}/*.md`))
    expect(() => resolveFsGlob(`fs:glob:${'**/'.repeat(8000)}*.md`, ctx)).toThrow('resource path too deep: fs:glob:**/**/')
  })

  it('refuses a path of more than 4096 bytes, and accepts 256 segments', () => {
    const root = makeFolder()
    const long = 'x'.repeat(4097)
    expect(() => resolveFsFile(`fs:file:${long}`, context(root))).toThrow(
      `resource path too deep: fs:file:${'x'.repeat(112)}… (1 segments, 4097 bytes; at most 256 segments and 4096 bytes)`,
    )
    const longName = 'n'.repeat(300) // longer than any file name may be (NAME_MAX 255)
    expect(() => resolveFsFile(`fs:file:${longName}`, context(root))).toThrow(`file not found: ${longName}`)
    expect(() => resolveFsDir(`fs:dir:${longName}`, context(root))).toThrow(`directory not found: ${longName}`)
    const limit = Array.from({ length: 256 }, () => 'a').join('/')
    expect(() => resolveFsFile(`fs:file:${limit}`, context(root))).toThrow(`file not found: ${limit}`)
    expect(() => resolveFsFile(`fs:file:${limit}/b`, context(root))).toThrow('resource path too deep: fs:file:a/a/')
  })

  it('resolves symlinks iteratively along a deep path (physicalPath)', () => {
    const outside = makeFolder()
    const root = makeFolder()
    const nested = path.join(root, ...Array.from({ length: 200 }, () => 'd'))
    fs.mkdirSync(nested, { recursive: true })
    fs.symlinkSync(outside, path.join(nested, 'out'))
    fs.symlinkSync('../../d', path.join(nested, 'up'))
    const below = Array.from({ length: 50 }, () => 'm').join('/')
    expect(physicalPath(path.join(nested, 'out', below))).toBe(path.join(outside, below))
    expect(physicalPath(path.join(nested, 'up', 'x'))).toBe(path.join(path.dirname(nested), 'x'))
  })
})
