/**
 * The published JavaScript of the package (`npm run build`, after `tsc` has written the type
 * declarations to dist/): the bundles of src/ made with Rolldown.
 *
 * Contract:
 * - The plugin bundle: `dist/index.js`, `dist/cli/bin.js`, `dist/engine/index.js` (the engine's
 *   API) and `dist/build-child.js` (a build's engine process) (shared code in `dist/chunks/`).
 *   `dist/index.js` is the plugin's entry alone (a few small chunks); the plugin's runtime (the
 *   engine and the hooks' bodies) is `dist/runtime.cjs`, one CommonJS file that the entry and
 *   the build process run with V8's code cache when a run needs it (src/plugin/runtime-module.ts,
 *   src/sandbox/code-cache.ts; issue #38: Node 20 caches no compiled code for ES modules). The
 *   command line and the engine's API import the same sources as ES chunks.
 *   Every runtime dependency is inlined except `better-sqlite3` (a native addon), Vite, and
 *   `semver`, which src/host/version-spec.ts requires from node_modules the first time an npm
 *   range is checked (inlined, it cost every import about 5 ms).
 *   Importing the plugin loads 4 small files of ours and no dependency; its runtime is one file
 *   of ours and better-sqlite3's 13, where `tsc`'s output loaded 144 of ours and 248 of the
 *   dependencies' (zod 95 ES modules, yaml 72 and semver 47 CommonJS files) on every import
 *   (bench/RESULTS.md, "Startup").
 * - The extension SDK bundle: `dist/sdk/index.js`, with `zod` left external, so that the `z`
 *   it re-exports is the `zod` package extension authors install beside it (their schemas and
 *   ours are one library). It holds its own copy of src/protocol (an extension process loads
 *   one small file, not the plugin's shared chunk): the classes the two entry points export are
 *   distinct (`instanceof` across them is false; docs/guide/extensions-node.md).
 * - The sandbox's process: `dist/sandbox-child.js`, a bundle of its own (src/sandbox-child.ts:
 *   the copy of the document index that runs the project's SQL queries, and the renders that
 *   outrun their slice of the plugin's process; src/sandbox/process-pool.ts forks it).
 * - The document index's worker thread: `dist/index-worker.js`, a bundle of its own as well
 *   (src/index-worker.ts: a dev server's first scan of the project, documents/rebuild-in-worker.ts).
 * - The dependencies stay in package.json's `dependencies`: the declarations name their types,
 *   and the SDK imports `zod`.
 * - `dist/THIRD-PARTY-LICENSES.md`: name, version, license and license text of every package
 *   inlined into a bundle.
 * - Source maps beside each file (`node --enable-source-maps` shows src/ positions; not for
 *   `runtime.cjs`, which runs as a `vm.Script`: Node 20 maps no such script's frames,
 *   nodejs/node#52102).
 * - ASCII only, without doc comments (`charset: 'ascii'`; legal and annotation comments kept):
 *   V8 keeps a module's source text in the heap for the life of the process, one byte a
 *   character only when every character is Latin-1. With the 250 arrows and dashes of src/'s
 *   comments and messages the shared chunk took 3 MB of heap instead of 1.2; importing the
 *   plugin went from +6.6 to +4.6 MiB of heap (after a full GC), which a build's heap carries
 *   throughout (issue #38). The declarations keep the doc comments.
 */
import fs from 'node:fs'
import { builtinModules } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { rolldown } from 'rolldown'

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const DIST = path.join(ROOT, 'dist')

const builtins = new Set(builtinModules)
const isBuiltin = (id) => id.startsWith('node:') || builtins.has(id) || builtins.has(id.split('/')[0])
const isPackage = (id, names) => names.some((name) => id === name || id.startsWith(`${name}/`))

const BUNDLES = [
  {
    // index.js loads the plugin's entry only (src/plugin/plugin.ts): the runtime is runtime.cjs,
    // which it loads when a run needs it (src/plugin/runtime-module.ts); build-child.js is the
    // build's engine process (src/plugin/build-process.ts forks it), which loads runtime.cjs
    // too; engine/index.js the engine's public API.
    input: { index: 'src/index.ts', 'cli/bin': 'src/cli/bin.ts', 'engine/index': 'src/engine/index.ts', 'build-child': 'src/build-child.ts' },
    // semver: required from node_modules when first needed (src/host/version-spec.ts).
    external: ['better-sqlite3', 'vite', 'semver'],
    // runtime-module.ts loads runtime.cjs instead of importing in-process.ts.
    define: { __INSITU_PUBLISHED__: 'true' },
  },
  {
    // The plugin's runtime (src/plugin/in-process.ts and all under it) as CommonJS, so that it
    // can run with V8's code cache (src/sandbox/code-cache.ts): Node 20 has no code cache for
    // ES modules a plugin imports. Its `import.meta.url` is its own file's URL.
    input: { runtime: 'src/plugin/in-process.ts' },
    external: ['better-sqlite3', 'vite', 'semver'],
    format: 'cjs',
    define: { 'import.meta.url': '__insituModuleUrl' },
    // Strict, as the ES modules it is made of were (Rolldown's CommonJS output says nothing of it).
    banner: '"use strict";\nconst __insituModuleUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  {
    input: { 'sdk/index': 'src/sdk/index.ts' },
    external: ['zod'],
  },
  {
    // The sandbox's process (src/sandbox/process-pool.ts forks it): a bundle of its own,
    // so that it loads the little it needs, not the plugin's shared chunk.
    input: { 'sandbox-child': 'src/sandbox-child.ts' },
    external: ['better-sqlite3'],
  },
  {
    // The document index's worker thread (src/documents/rebuild-in-worker.ts starts it): a
    // bundle of its own too, loaded on the other core while the plugin's thread goes on.
    input: { 'index-worker': 'src/index-worker.ts' },
    external: ['better-sqlite3'],
  },
]

/** Absolute module ids inlined from node_modules, over every bundle. */
const inlined = new Set()

for (const { input, external, format = 'esm', define, banner } of BUNDLES) {
  const bundle = await rolldown({
    cwd: ROOT,
    input,
    platform: 'node',
    transform: define ? { define } : undefined,
    external: (id) => isBuiltin(id) || isPackage(id, external),
    // A bundle that cannot resolve a module is broken: fail the build instead of warning.
    onwarn(warning, warn) {
      if (warning.code === 'UNRESOLVED_IMPORT' || warning.code === 'MISSING_EXPORT') throw new Error(warning.message)
      warn(warning)
    },
  })
  const { output } = await bundle.write({
    dir: DIST,
    format,
    banner,
    sourcemap: true,
    entryFileNames: format === 'cjs' ? '[name].cjs' : '[name].js',
    // V8 keeps the source in the heap: ASCII, so one byte a character (see the header).
    charset: 'ascii',
    comments: { legal: true, annotation: true, jsdoc: false },
    chunkFileNames: 'chunks/shared-[hash].js',
  })
  await bundle.close()
  for (const chunk of output) {
    if (chunk.type !== 'chunk') continue
    for (const id of chunk.moduleIds) if (id.includes(`${path.sep}node_modules${path.sep}`)) inlined.add(id)
    // V8 runs a CommonJS bundle as a script (code-cache.ts): `import()` would throw there.
    if (format === 'cjs' && (chunk.dynamicImports.length > 0 || chunk.fileName !== 'runtime.cjs')) {
      throw new Error(`${chunk.fileName}: a CommonJS bundle must be one file without import() (${chunk.dynamicImports.join(', ')})`)
    }
  }
}

fs.writeFileSync(path.join(DIST, 'THIRD-PARTY-LICENSES.md'), licenseNotice(inlined))

/** The package folder holding a module id under node_modules (the innermost one). */
function packageFolderOf(id) {
  for (let folder = path.dirname(id); folder !== path.dirname(folder); folder = path.dirname(folder)) {
    const manifest = path.join(folder, 'package.json')
    if (!fs.existsSync(manifest)) continue
    const parsed = JSON.parse(fs.readFileSync(manifest, 'utf8'))
    // Nested package.json files that only set `type` (zod's, yaml's dist folders) name no package.
    if (typeof parsed.name === 'string' && typeof parsed.version === 'string') return folder
  }
  throw new Error(`no package.json names the package of ${id}`)
}

function licenseNotice(ids) {
  const folders = [...new Set([...ids].map(packageFolderOf))]
  const entries = folders
    .map((folder) => {
      const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8'))
      const file = fs.readdirSync(folder).find((name) => /^(licen[cs]e|copying)([.-]|$)/i.test(name))
      if (!file) throw new Error(`${manifest.name} has no license file to ship with the bundle`)
      const text = fs.readFileSync(path.join(folder, file), 'utf8').trim()
      return { name: manifest.name, version: manifest.version, license: manifest.license ?? 'see text', text }
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const lines = [
    '# Third-party licenses',
    '',
    'The bundles in this folder include code of the following packages, under their licenses.',
    '',
  ]
  for (const entry of entries) {
    lines.push(`## ${entry.name} ${entry.version} (${entry.license})`, '', '```text', entry.text, '```', '')
  }
  return lines.join('\n')
}
