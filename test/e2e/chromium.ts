/**
 * How tests and benchmarks start Chromium: Debian's `/usr/bin/chromium` (or `$INSITU_CHROMIUM`),
 * driven by playwright-core (its own browser download is not used), headless, with the flags
 * a container without a GPU or a sandbox needs.
 *
 * Contract: `launchChromium()` launches it, or throws `Chromium not found at <path> (set
 * INSITU_CHROMIUM)` when the binary is missing.
 */
import fs from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

export const CHROMIUM = process.env.INSITU_CHROMIUM ?? '/usr/bin/chromium'

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
]

export function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (set INSITU_CHROMIUM)`)
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
}
