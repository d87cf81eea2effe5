/**
 * The published package's entry points from a CommonJS project (`npm init -y` makes one):
 * Vite's real config loader bundles `vite.config.*` of such a project to CommonJS and loads
 * our package with `require`, which works only when the `exports` map offers the entry to
 * `require` (Node >= 20.19 then loads the ES module itself).
 *
 * The package folder in the temp project is this repository's package.json with stand-ins
 * for the built files (dist/ is a build output, not in the repository): the exports map is
 * what is under test.
 */
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { createLogger, loadConfigFromFile } from 'vite'
import { afterEach, describe, expect, it } from 'vitest'
import { removeTempDirs, tempDir } from '../unit/temp-folders.js'

afterEach(removeTempDirs)

const PACKAGE_JSON = fileURLToPath(new URL('../../package.json', import.meta.url))

/** A CommonJS project with our package (stand-in dist files) installed. */
function commonJsProject(): string {
  const root = tempDir()
  fs.writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'fresh', version: '1.0.0', type: 'commonjs' }))
  const installed = path.join(root, 'node_modules', 'vite-plugin-insitu')
  fs.mkdirSync(path.join(installed, 'dist', 'sdk'), { recursive: true })
  fs.copyFileSync(PACKAGE_JSON, path.join(installed, 'package.json'))
  fs.writeFileSync(
    path.join(installed, 'dist', 'index.js'),
    "export function insitu() { return { name: 'vite-plugin-insitu' } }\nexport default insitu\n",
  )
  fs.writeFileSync(path.join(installed, 'dist', 'sdk', 'index.js'), 'export function defineExtension() { return {} }\n')
  return root
}

const quiet = createLogger('silent')

describe('a CommonJS project', () => {
  it('loads vite.config.ts importing the plugin', async () => {
    const root = commonJsProject()
    fs.writeFileSync(
      path.join(root, 'vite.config.ts'),
      "import insitu from 'vite-plugin-insitu'\nexport default { plugins: [insitu()] }\n",
    )
    const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, undefined, root, 'silent', quiet)
    expect(loaded?.config.plugins).toEqual([{ name: 'vite-plugin-insitu' }])
  })

  it('loads vite.config.js requiring the plugin', async () => {
    const root = commonJsProject()
    fs.writeFileSync(
      path.join(root, 'vite.config.js'),
      "const { insitu } = require('vite-plugin-insitu')\nmodule.exports = { plugins: [insitu()] }\n",
    )
    const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, undefined, root, 'silent', quiet)
    expect(loaded?.config.plugins).toEqual([{ name: 'vite-plugin-insitu' }])
  })

  it('resolves both entry points for require', () => {
    const root = commonJsProject()
    const require = createRequire(path.join(root, 'index.js'))
    const installed = path.join(root, 'node_modules', 'vite-plugin-insitu')
    expect(require.resolve('vite-plugin-insitu')).toBe(path.join(installed, 'dist', 'index.js'))
    expect(require.resolve('vite-plugin-insitu/sdk')).toBe(path.join(installed, 'dist', 'sdk', 'index.js'))
  })
})
