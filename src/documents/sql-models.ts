/**
 * SQL models (SPEC §7): Jinja templates under `paths.models` compiled into one read-only query.
 *
 * Contract:
 * - Every `*.sql` file under the models folder (recursively) is a model named by its path
 *   relative to that folder, POSIX, without `.sql` (`reports/open.sql` → `reports/open`).
 * - `names()` lists the folder and `compile()` reads the model files each time, so an edited,
 *   added or removed model is seen on the next call without any reload; only the render of a
 *   model text is kept (by the text: a render depends on nothing else, except in a text that
 *   names `random` or `lipsum`, which is rendered every time).
 * - `compile(name)` renders the model as a Jinja2 template (builtins/engine.ts: StrictUndefined,
 *   autoescape off, no trim/lstrip of blocks; compiled forms cached by content) with a
 *   `ref("<model>")` function that renders as the CTE name of that model; every
 *   referenced model is compiled the same way, once, and the result is
 *   `with <cte1> as (<sql1>), ..., __insitu_result as (<sql of name>) select * from __insitu_result`
 *   with the CTEs in dependency order; a model without refs is its own SQL, run as written (no
 *   wrapping CTE, so duplicate result columns keep their names, as in the Python implementation). Each model's SQL (a trailing `;` stripped) must itself be
 *   a SELECT or WITH query. `files` lists the project-relative model files compiled, the
 *   requested model first, then in the order refs were first met.
 * - Bounds (issue #34): `compile(name, { deadline, budgetMs })` stops rendering the model
 *   templates at the deadline (`ModelTimeoutError`: `insitu/models/x.sql:3: its template ran
 *   longer than 30 s`); `runSqlModel` compiles within `IN_PROCESS_SLICE_MS` here and, past it,
 *   again in the sandbox with the rest of the index's budget (`compileModelTask` runs there),
 *   then runs the query in the sandbox (the index's `runQuery`).
 * - Errors: `unknown SQL model: <name> (looked for <models>/<name>.sql)`, then `; did you mean
 *   <model>?` when an existing model's name is close (a name that cannot be a file under the
 *   models folder says so instead); `dependency cycle: a -> b -> a` (the chain of refs from the
 *   requested model); template errors name the model and its line
 *   (`cannot render SQL model <name>: <Jinja's reason> (<file> line <n>, column <c>)`) and carry
 *   that file and line as their `position`; SQLite's errors when the query runs
 *   are prefixed with the failing model's file and line (see sql-model-errors.ts), carry that
 *   file and line as their `position` (error-positions.ts) and the dependencies a success
 *   would have. Every error carries
 *   `dependencies` (see dependency-errors.ts): the model files read so far and, for an
 *   unknown model, the file that would define it, so creating or fixing it re-runs the job.
 * - `runSqlModel` runs a compiled model on the document index (`runQuery`: in the query sandbox,
 *   bounded in time and size; out of time it fails with `<model file>: the query ran longer than
 *   30 s`, carrying that file as its position) with the named parameters
 *   `:insitu_path`, `:insitu_dir`, `:insitu_root`, `:insitu_depth` taken from the location,
 *   overridden by `params`, bound and read back as Python's sqlite3 does (sql-values.ts: ints
 *   as INTEGER, floats as REAL, integral REALs read as `PythonFloat`). It returns the rows and the dependencies `index:documents`,
 *   `index:entries` when the compiled SQL mentions the `entries` table, and
 *   `fs:file:<model file>` for each compiled file (the caller adds `sql:model:...` itself).
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { createJinjaEngine, errorPosition as templateErrorPosition, TemplateTimeoutError } from '../jinja/engine.js'
import { describeDuration, SandboxCrashError } from '../sandbox/process-pool.js'
import { runSliced } from '../sandbox/sliced-work.js'
import type { Location } from '../protocol/schemas.js'
import { withDependencies } from './dependency-errors.js'
import type { DocumentIndex } from './document-index.js'
import { errorCode, isMissing } from './fs-errors.js'
import { normalizeRelPath } from './project-paths.js'
import { assertSelectOrWith } from './read-only-sql.js'
import { chainQuery, sqlModelErrorSite, type SqlModelPart } from './sql-model-errors.js'
import { withPosition } from './error-positions.js'
import { didYouMean } from '../values/did-you-mean.js'
import { QueryTimeoutError, QueryTooLargeError } from './query-sandbox.js'
import { realPathSync } from './real-path.js'

export interface CompiledSqlModel {
  sql: string
  /** Project-relative POSIX paths of every model file compiled. */
  files: string[]
  /** The models in CTE order (the requested one last), for locating errors. */
  parts: SqlModelPart[]
}

export interface SqlModels {
  /** Project-relative POSIX path of the models folder (`''` for the root). */
  readonly modelsDir: string
  /** Sorted model names. */
  names(): string[]
  /** Project-relative POSIX path of a model's file. */
  fileOf(name: string): string
  /**
   * `options.deadline` (a `performance.now()` time) bounds the rendering of the model templates:
   * past it the compile fails with a `ModelTimeoutError` (`budgetMs` names the budget in its message).
   */
  compile(name: string, options?: { deadline?: number; budgetMs?: number }): CompiledSqlModel
}

/** A SQL model's template ran out of its time (its message names the model file and line). */
export class ModelTimeoutError extends Error {
  readonly timedOut = true
}

export const RESULT_CTE = '__insitu_result'
/** A compiled model that mentions the `entries` table (a mention in a comment counts too: safe). */
const ENTRIES_TABLE = /\bentries\b/i

/** How many rendered model texts a model set keeps. */
const MAX_RENDERED_MODELS = 256

/**
 * The CTE name `ref("<name>")` renders as: `__insitu_model_<name>` when the name is only
 * lowercase ASCII letters, digits and `_`; otherwise the name with other characters turned into
 * `_` plus a short hash of the name, so that distinct models never share a CTE name (SQLite
 * compares identifiers case-insensitively, hence upper case letters count as "other").
 */
export function modelCteName(name: string): string {
  const sanitized = name.replace(/[^a-z0-9_]/g, '_')
  if (sanitized === name) return `__insitu_model_${name}`
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8)
  return `__insitu_model_${sanitized}_${hash}`
}

interface RenderLimits {
  deadline?: number
  budgetMs?: number
}

/** A model compiled in a sandbox process (src/sandbox-child.ts runs `compileModelTask`). */
export interface CompileModelTask {
  kind: 'compile-model'
  root: string
  modelsDir: string
  name: string
  /** What is left of the budget when the task is sent. */
  remainingMs: number
  budgetMs: number
}

/** The sandbox's side of `compileBounded`: the model compiled with the rest of its budget. */
export function compileModelTask(task: CompileModelTask): CompiledSqlModel {
  return loadSqlModels(task.root, task.modelsDir).compile(task.name, { deadline: performance.now() + task.remainingMs, budgetMs: task.budgetMs })
}

export function loadSqlModels(root: string, modelsDir: string): SqlModels {
  const absoluteRoot = path.resolve(root)
  const dir = normalizeRelPath(modelsDir)
  const absoluteDir = path.join(absoluteRoot, dir)
  const engine = createJinjaEngine({ trimBlocks: false, lstripBlocks: false })
  const fileOf = (name: string): string => (dir === '' ? `${name}.sql` : `${dir}/${name}.sql`)

  function readModel(name: string): string {
    if (!isModelName(name)) {
      throw new Error(`unknown SQL model: ${name} (a model is named by its path under ${dir === '' ? 'the project root' : `${dir}/`}, without .sql)`)
    }
    try {
      return fs.readFileSync(path.join(absoluteDir, `${name}.sql`), 'utf8')
    } catch (error) {
      if (isMissing(error) || errorCode(error) === 'EISDIR') {
        // The model file that would define it is a dependency: creating it fixes the query.
        // `; did you mean open_tasks?`: the nearest existing model (issue #18).
        const suggestion = didYouMean(name, listModelNames(absoluteDir))
        throw withDependencies(new Error(`unknown SQL model: ${name} (looked for ${fileOf(name)})${suggestion}`), [`fs:file:${fileOf(name)}`])
      }
      throw error
    }
  }

  /** Rendered models by their text: the render is a function of the text alone (nested projects run one model hundreds of times). */
  const renderedByText = new Map<string, { sql: string; refs: string[] }>()

  function render(name: string, limits: RenderLimits): { sql: string; source: string; refs: string[] } {
    const source = readModel(name)
    const known = renderedByText.get(source)
    if (known) return { sql: known.sql, source, refs: [...known.refs] }
    const rendered = renderText(name, source, limits)
    // A text that may render differently each time (Jinja's `random`, `lipsum`) is not kept.
    if (!/random|lipsum/.test(source)) {
      if (renderedByText.size >= MAX_RENDERED_MODELS) renderedByText.clear()
      renderedByText.set(source, rendered)
    }
    return { ...rendered, source, refs: [...rendered.refs] }
  }

  function renderText(name: string, source: string, limits: RenderLimits): { sql: string; refs: string[] } {
    const refs: string[] = []
    const ref = (target: unknown): string => {
      if (typeof target !== 'string') throw new Error('ref() takes the name of a SQL model')
      if (!refs.includes(target)) refs.push(target)
      return modelCteName(target)
    }
    let sql: string
    try {
      sql = engine.renderString(source, { ref }, fileOf(name), { deadline: limits.deadline })
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('unknown SQL model: ')) throw error
      const message = error instanceof Error ? error.message : String(error)
      const position = templateErrorPosition(error)
      const column = position?.column !== undefined ? `, column ${position.column}` : ''
      const where = position ? ` (${fileOf(name)} line ${position.line}${column})` : ''
      const failure =
        error instanceof TemplateTimeoutError
          ? new ModelTimeoutError(`${fileOf(name)}${position ? `:${position.line}` : ''}: its template ran longer than ${describeDuration(limits.budgetMs ?? error.budgetMs)}`, { cause: error })
          : new Error(`cannot render SQL model ${name}: ${message.replace(/\s*\n\s*/g, ' ')}${where}`, { cause: error })
      // The overlay and `File:` line point at the model file and line (issue #18).
      throw withPosition(failure, { path: fileOf(name), line: position?.line ?? null, column: position?.column ?? null })
    }
    sql = stripTrailingSemicolons(sql)
    assertSelectOrWith(sql)
    return { sql, refs }
  }

  return {
    modelsDir: dir,
    fileOf,
    names: () => listModelNames(absoluteDir),
    compile(name, limits = {}) {
      const compiled = new Map<string, { sql: string; source: string }>()
      const order: string[] = []
      const files: string[] = []
      const visit = (current: string, trace: readonly string[]): void => {
        if (trace.includes(current)) throw new Error(`dependency cycle: ${[...trace, current].join(' -> ')}`)
        if (compiled.has(current)) return
        files.push(fileOf(current))
        const { sql, source, refs } = render(current, limits)
        for (const target of refs) visit(target, [...trace, current])
        compiled.set(current, { sql, source })
        order.push(current)
      }
      try {
        visit(name, [])
      } catch (error) {
        // Every model file read so far (and a missing one) decides whether this compiles.
        throw withDependencies(error, files.map((file) => `fs:file:${file}`))
      }
      const parts = order.map((model) => ({
        name: model,
        file: fileOf(model),
        cte: model === name ? RESULT_CTE : modelCteName(model),
        ...compiled.get(model)!,
      }))
      return { sql: chainQuery(parts), files, parts }
    },
  }
}

export async function runSqlModel(
  index: DocumentIndex,
  models: SqlModels,
  name: string,
  params: Record<string, unknown>,
  location: Location,
): Promise<{ rows: Record<string, unknown>[]; dependencies: string[] }> {
  const { sql, files, parts } = await compileBounded(index, models, name)
  // `entries` lists every file and folder: only a model that reads it depends on that listing.
  const listing = ENTRIES_TABLE.test(sql) ? ['index:entries'] : []
  const dependencies = ['index:documents', ...listing, ...files.map((file) => `fs:file:${file}`)]
  let rows: Record<string, unknown>[]
  try {
    rows = await index.runQuery(sql, {
      insitu_path: location.path,
      insitu_dir: location.directory,
      insitu_root: location.root,
      insitu_depth: location.depth,
      ...params,
    })
  } catch (error) {
    // Out of time, too large, or its process ended: the model file says which query (its first
    // line, the overlay's link).
    if (error instanceof QueryTimeoutError || error instanceof QueryTooLargeError || error instanceof SandboxCrashError) {
      const model = files[0]!
      throw withDependencies(withPosition(new Error(`${model}: ${error.message}`, { cause: error }), { path: model, line: null, column: null }), dependencies)
    }
    // SQLite's own errors say what, not where: name the model file (and line), and carry it
    // (`withPosition`) so the dev overlay links the model file, not the document (issue #18).
    const site = isSqliteError(error) ? sqlModelErrorSite(error.message, parts, name, (text) => index.prepareError(text)) : null
    const located = site === null ? error : new Error(site.message, { cause: error })
    throw withDependencies(site?.file ? withPosition(located, { path: site.file, line: site.line, column: null }) : located, dependencies)
  }
  return { rows, dependencies }
}

/**
 * A model compiled here when its templates render within `IN_PROCESS_SLICE_MS`; one that takes
 * longer is compiled again in the sandbox (`compileModelTask`, in src/sandbox-child.ts) with the
 * rest of the index's budget, so a runaway model template never holds this process for the whole budget.
 */
function compileBounded(index: DocumentIndex, models: SqlModels, name: string): CompiledSqlModel | Promise<CompiledSqlModel> {
  const budgetMs = index.queryTimeoutMs
  const file = models.fileOf(name)
  return runSliced<CompiledSqlModel>({
    budgetMs,
    pool: () => index.sandbox,
    here: (deadline) => models.compile(name, { deadline, budgetMs }),
    outOfTime: (error) => error instanceof ModelTimeoutError,
    task: (remainingMs): CompileModelTask => ({ kind: 'compile-model', root: index.root, modelsDir: models.modelsDir, name, remainingMs, budgetMs }),
    // Killed for good measure (its render could not stop itself): the model file is what to fix.
    killed: () =>
      withDependencies(withPosition(new ModelTimeoutError(`${file}: its template ran longer than ${describeDuration(budgetMs)}`), { path: file, line: null, column: null }), [`fs:file:${file}`]),
  })
}

function isSqliteError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof Error && typeof code === 'string' && code.startsWith('SQLITE_')
}

/** A name that can only address a file inside the models folder. */
function isModelName(name: string): boolean {
  if (name === '' || name.includes('\\') || name.includes('\0')) return false
  return name.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..')
}

function stripTrailingSemicolons(sql: string): string {
  let result = sql.trimEnd()
  while (result.endsWith(';')) result = result.slice(0, -1).trimEnd()
  return result
}

function listModelNames(absoluteDir: string): string[] {
  const names: string[] = []
  const active = new Set<string>()
  const walk = (relDir: string): void => {
    let dirents: fs.Dirent[]
    let real: string
    try {
      real = realPathSync(path.join(absoluteDir, relDir))
      if (active.has(real)) return // a symlinked folder that is one of its own ancestors
      dirents = fs.readdirSync(real, { withFileTypes: true })
    } catch {
      return
    }
    active.add(real)
    for (const dirent of dirents) {
      const relPath = relDir === '' ? dirent.name : `${relDir}/${dirent.name}`
      let isDirectory = dirent.isDirectory()
      let isFile = dirent.isFile()
      if (dirent.isSymbolicLink()) {
        try {
          const stat = fs.statSync(path.join(absoluteDir, relPath))
          isDirectory = stat.isDirectory()
          isFile = stat.isFile()
        } catch {
          continue
        }
      }
      if (isDirectory) walk(relPath)
      else if (isFile && dirent.name.endsWith('.sql') && dirent.name.length > 4) names.push(relPath.slice(0, -4))
    }
    active.delete(real)
  }
  walk('')
  return names.sort()
}
