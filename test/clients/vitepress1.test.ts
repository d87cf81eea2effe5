/**
 * VitePress 1.6.4 (Vite 5): the shared client tests of vitepress-site.ts on
 * the fixture site test/clients/vitepress1 (installed once by test/clients/setup.ts).
 */
import { describeVitePress } from './vitepress-site.js'

describeVitePress('vitepress1', { devSearchFollowsFiles: false })
