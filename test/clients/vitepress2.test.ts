/**
 * VitePress 2 (2.0.0-alpha.21, Vite 8): the shared client tests of vitepress-site.ts on
 * the fixture site test/clients/vitepress2 (installed once by test/clients/setup.ts).
 */
import { describeVitePress } from './vitepress-site.js'

describeVitePress('vitepress2', { devSearchFollowsFiles: true })
