// Only the real-client suites (VitePress 1 and 2, Astro 5), which `npm test` runs too, with the
// same settings: `npx vitest run --config test/clients/vitest.config.ts` (one file: add its path).
// setup.ts builds dist/ and installs each fixture site once per lockfile.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/clients/*.test.ts'],
    exclude: ['**/node_modules/**'],
    globalSetup: ['test/clients/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
