/** Types of install-site.mjs (its contract is there). */
import type { StdioOptions } from 'node:child_process'

export function installSite(folder: string, options?: { stdio?: StdioOptions; link?: boolean }): void
