import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**'],
    // The real-client suites (test/clients: VitePress 1 and 2, Astro 5) import the built plugin
    // from real installs: this setup builds dist/ and installs each fixture site once per
    // lockfile (a run that selects no client test skips it).
    globalSetup: ['test/clients/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})
