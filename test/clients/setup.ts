/**
 * Global setup of the client tests (test/clients/*.test.ts): build once per run, install once per lockfile.
 *
 * Contract: builds the plugin (`npm run build`, so `dist/` is what the sites import, as users
 * do, and what the command-line tests run: BUILT_BIN_TESTS), then, in each fixture site under test/clients/ whose `node_modules` is missing or was
 * installed from another `package-lock.json` (a stamp file holds the lockfile's hash), runs
 * `npm ci`. Each fixture then gets `node_modules/vite-plugin-insitu`, a symlink to this
 * repository, so a site's config imports `vite-plugin-insitu` exactly as a user's does. The docs
 * site (docs/, test/docs/docs-site.test.ts) is installed and linked the same way (as
 * `npm run docs:build` does, scripts/docs.mjs). A failed install throws once, naming the folder
 * and saying whether the registry is reachable.
 * A run whose file filters select no client, docs or built-bin test (`vitest run test/unit/x.test.ts`) skips all
 * of this, so other test runs do not pay for it. `npm test` runs the client tests with the
 * others; `npx vitest run test/clients` runs only them. Once installed, this costs the build
 * (about 2 s) and a hash of each lockfile.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'
import { installSite } from '../../scripts/install-site.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const REPO = path.resolve(HERE, '../..')

export const FIXTURES = ['vitepress2', 'vitepress1', 'astro5'] as const

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
}

function outputOf(error: unknown): string {
  const failed = error as { stdout?: string; stderr?: string; message?: string }
  const text = [failed.stderr, failed.stdout].filter(Boolean).join('\n')
  // npm prints its usage after an error: keep the error lines before it, not the warnings.
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
  const usage = lines.findIndex((line) => /^npm error (Usage:|Clean install)/.test(line))
  return (usage >= 0 ? lines.slice(0, usage) : lines).slice(0, 30).join('\n') || String(failed.message)
}

/** `npm ci` in `folder` (named `label` in errors) unless its stamp says so, then link this repository into it (scripts/install-site.mjs). */
function install(folder: string, label: string): void {
  try {
    installSite(folder)
  } catch (error) {
    const output = outputOf(error)
    const offline = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ENETUNREACH/.test(output)
    throw new Error(
      `client tests: npm ci failed in ${label}` +
        (offline ? ' (the npm registry is unreachable: these tests need it once, to install the fixture sites and docs/)' : '') +
        `:\n${output}`,
    )
  }
}

/** Test files outside test/clients that run the built package (`dist/`: the command line, the bundles). */
const BUILT_BIN_TESTS = [
  '../integration/cli.test.ts',
  '../integration/cli-toolchain.test.ts',
  '../integration/cli-watch.test.ts',
  '../integration/parity-cli.test.ts',
  '../integration/published-bundle.test.ts',
  '../integration/native-build.test.ts',
  '../integration/hostile-documents.test.ts',
  '../integration/hostile-jobs.test.ts',
  '../integration/lsp.test.ts',
  '../integration/vscode-client.test.ts',
].map((file) =>
  path.join(HERE, file),
)

/** Whether the run selects one of `tests`: no file filter, or one that such a path contains. */
function selects(project: TestProject, tests: readonly string[]): boolean {
  // Vitest keeps the command line's file filters here (internal, so read defensively).
  const filters = (project.vitest as unknown as { filenamePattern?: unknown }).filenamePattern
  if (!Array.isArray(filters) || filters.length === 0) return true
  return filters.some((filter) => {
    const wanted = String(filter).replace(/^\.\//, '')
    return tests.some((test) => test.includes(wanted) || test.startsWith(path.resolve(wanted)))
  })
}

/** The docs site's test: it runs the built command line and builds docs/ with its own VitePress. */
const DOCS_TESTS = [path.join(REPO, 'test/docs/docs-site.test.ts')]

export default function setup(project: TestProject): void {
  const clientTests = FIXTURES.map((fixture) => path.join(HERE, `${fixture}.test.ts`))
  const clients = selects(project, clientTests)
  const docs = selects(project, DOCS_TESTS)
  if (!clients && !docs && !selects(project, BUILT_BIN_TESTS)) return
  try {
    run('npm', ['run', 'build'], REPO)
  } catch (error) {
    throw new Error(`client tests: npm run build failed:\n${outputOf(error)}`)
  }
  if (clients) for (const fixture of FIXTURES) install(path.join(HERE, fixture), `test/clients/${fixture}`)
  if (docs) install(path.join(REPO, 'docs'), 'docs')
}
