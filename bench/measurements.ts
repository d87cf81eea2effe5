/**
 * What every project benchmark of bench/ shares: command-line flags, the statistics of a
 * row (median with min–max), number formatting, the machine line, and the cache-option probe.
 *
 * Contract:
 * - `benchArgs(argv)` reads `--sizes=1000,10000` (generated documents; default both),
 *   `--layouts=flat,nested,readme` (project layouts, bench/project-generator.ts; default all; the
 *   benchmarks that have one layout only ignore it), `--runs=N` (measured repetitions per cell;
 *   default per benchmark), `--keep` (leave the generated temp folders), and rejects anything
 *   else with a message naming the flag.
 * - `summary(values)` is the median with min and max; `ratioCell(ours, theirs)` their
 *   medians' quotient as `1.84×`.
 */
import fs from 'node:fs'
import os from 'node:os'
import { LAYOUTS, type ProjectLayout } from './project-generator.js'

export interface BenchArgs {
  sizes: number[]
  layouts: ProjectLayout[]
  runs: number
  keep: boolean
}

export const DEFAULT_SIZES = [1000, 10_000]

export function benchArgs(argv: readonly string[], defaultRuns: number): BenchArgs {
  const args: BenchArgs = { sizes: DEFAULT_SIZES, layouts: [...LAYOUTS], runs: defaultRuns, keep: false }
  for (const arg of argv) {
    const [flag, value] = arg.split('=', 2) as [string, string | undefined]
    if (flag === '--sizes' && value) {
      args.sizes = value.split(',').map((text) => {
        const size = Number(text.replace(/k$/i, '000'))
        if (!Number.isInteger(size) || size < 1) throw new Error(`--sizes: not a document count: ${text}`)
        return size
      })
    } else if (flag === '--layouts' && value) {
      args.layouts = value.split(',').map((text) => {
        if (!LAYOUTS.includes(text as ProjectLayout)) throw new Error(`--layouts: not a layout: ${text} (expected ${LAYOUTS.join(', ')})`)
        return text as ProjectLayout
      })
    } else if (flag === '--runs' && value) {
      const runs = Number(value)
      if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: not a positive integer: ${value}`)
      args.runs = runs
    } else if (flag === '--keep' && value === undefined) {
      args.keep = true
    } else {
      throw new Error(`unknown flag ${arg} (expected --sizes=1000,10000, --layouts=${LAYOUTS.join(',')}, --runs=N, --keep)`)
    }
  }
  return args
}

export interface Summary {
  median: number
  min: number
  max: number
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export function summary(values: readonly number[]): Summary {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
}

/** `412 ms (380–455)`: median, then min–max, in `unit`. */
export function cell(values: readonly number[], unit: string): string {
  const { median, min, max } = summary(values)
  return `${formatNumber(median)} ${unit} (${formatNumber(min)}–${formatNumber(max)})`
}

/** The quotient of the medians, `2.31×`. */
export function ratioCell(ours: readonly number[], theirs: readonly number[]): string {
  return `${(median(ours) / median(theirs)).toFixed(2)}×`
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US')
  if (Math.abs(value) >= 10) return value.toFixed(1)
  return value.toPrecision(2)
}

export function formatSize(documents: number): string {
  return documents.toLocaleString('en-US')
}

export function machineLine(): string {
  const cpus = os.cpus()
  const cpu = cpus[0]?.model.trim() ?? 'unknown CPU'
  const hugePages = transparentHugePages()
  return `Node ${process.version}, ${cpu} (${cpus.length} logical CPUs), ${os.platform()} ${os.release()}${hugePages ? `, transparent huge pages \`${hugePages}\`` : ''}, ${new Date().toISOString()}`
}

/**
 * Linux's transparent huge pages setting (`always`, `madvise`, `never`), or undefined. It moves
 * build times (bench/README.md, "Noise"): Rolldown's allocator asks for huge pages.
 */
export function transparentHugePages(): string | undefined {
  try {
    return /\[(\w+)\]/.exec(fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))?.[1]
  } catch {
    return undefined
  }
}

/** Milliseconds on the wall clock shared with other processes (Chromium's `performance.timeOrigin + now()`). */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now()
}

/**
 * `first` then `second` on even runs, `second` then `first` on odd ones (the warm-up round, run
 * -1, is odd): neither side of a side-by-side benchmark always goes first.
 */
export async function inAlternateOrder(run: number, first: () => Promise<unknown>, second: () => Promise<unknown>): Promise<void> {
  if (run % 2 === 0) {
    await first()
    await second()
  } else {
    await second()
    await first()
  }
}
