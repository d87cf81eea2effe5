/**
 * `pluginVersion()`: the version of the package.json named vite-plugin-insitu above the module
 * (src/engine/ here; dist/chunks/ in the published bundle, test/integration/cli.test.ts runs it
 * there through `--version`). It keys the persistent caches, so a wrong answer would reuse
 * another version's results.
 */
import fs from 'node:fs'
import path from 'node:path'
import { expect, it } from 'vitest'
import { pluginVersion } from '../../src/engine/dependency-fingerprints.js'

it("is this repository's package.json version", () => {
  const manifest = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { name: string; version: string }
  expect(manifest.name).toBe('vite-plugin-insitu')
  expect(pluginVersion()).toBe(manifest.version)
})
