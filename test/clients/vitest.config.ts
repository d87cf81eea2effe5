// The real-client suites (VitePress 1 and 2, Astro 5) on real installs: `npx vitest run --config test/clients/vitest.config.ts`.
// Held out of `npm test` until the plugin's `write` option lands (issue 8); setup.ts installs each site once per lockfile.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: new URL('../..', import.meta.url).pathname,
    include: ['test/clients/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    globalSetup: ['test/clients/setup.ts'],
  },
})
