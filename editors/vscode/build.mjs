// `npm run build`: bundle src/extension.ts and vscode-languageclient into dist/extension.js
// (CommonJS, for VS Code's Node extension host). Only `vscode`, which the host provides, stays
// a `require`; Node's builtins are the others.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const here = path.dirname(fileURLToPath(import.meta.url))
fs.rmSync(path.join(here, 'dist'), { recursive: true, force: true })
await build({
  absWorkingDir: here,
  entryPoints: ['src/extension.ts'],
  outfile: 'dist/extension.js',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['vscode'],
  sourcemap: true,
  logLevel: 'warning',
})
