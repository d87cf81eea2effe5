/**
 * `init [DIR] [--force]` (SPEC §13): start a project.
 *
 * Contract: `runInit({ dir, force }, io)` resolves DIR (default: the current folder; created when
 * missing) and writes the starter files (starter-files.ts), the `.insitu/` folder and a
 * `.insitu/` line in `.gitignore`, printing `create <path>` for each file or folder it creates
 * and `update .gitignore` when it appends to an existing one (paths relative to the current
 * folder). An existing `insitu.toml` without `--force` is `error <path> already exists` on
 * stderr, exit 2, nothing written. With `--force` the starter files are written over; without
 * it, a model or template that exists already is kept (`exists <path>`). Exit 0.
 */
import fs from 'node:fs'
import path from 'node:path'
import { type CliIo, EXIT_CLEAN, EXIT_USAGE } from './cli-io.js'
import { GITIGNORE_LINE, STARTER_FILES, STATE_FOLDER } from './starter-files.js'

export function runInit(options: { dir: string | null; force: boolean }, io: CliIo): number {
  const root = path.resolve(io.cwd, options.dir ?? '.')
  const shown = (file: string) => (path.relative(io.cwd, file) || '.').split(path.sep).join('/')
  const config = path.join(root, STARTER_FILES[0]!.path)
  if (fs.existsSync(config) && !options.force) {
    io.stderr.write(`error ${shown(config)} already exists\n`)
    return EXIT_USAGE
  }
  fs.mkdirSync(root, { recursive: true })
  for (const [index, starter] of STARTER_FILES.entries()) {
    const file = path.join(root, starter.path)
    if (index > 0 && fs.existsSync(file) && !options.force) {
      io.stdout.write(`exists ${shown(file)}\n`)
      continue
    }
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, starter.text)
    io.stdout.write(`create ${shown(file)}\n`)
  }
  const state = path.join(root, STATE_FOLDER)
  if (!fs.existsSync(state)) {
    fs.mkdirSync(state)
    io.stdout.write(`create ${shown(state)}/\n`)
  }
  const gitignore = path.join(root, '.gitignore')
  if (!fs.existsSync(gitignore)) {
    fs.writeFileSync(gitignore, `${GITIGNORE_LINE}\n`)
    io.stdout.write(`create ${shown(gitignore)}\n`)
  } else {
    const text = fs.readFileSync(gitignore, 'utf8')
    const lines = text.split(/\r?\n/).map((line) => line.trim())
    if (!lines.includes(GITIGNORE_LINE) && !lines.includes(STATE_FOLDER) && !lines.includes(`/${GITIGNORE_LINE}`)) {
      fs.writeFileSync(gitignore, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}${GITIGNORE_LINE}\n`)
      io.stdout.write(`update ${shown(gitignore)}\n`)
    }
  }
  return EXIT_CLEAN
}
