/**
 * Runs one command to completion and measures its wall time and peak memory, for
 * bench/docs-build.ts (Linux only: it reads /proc).
 *
 * Contract: `runMeasured(command, args, { cwd, env })` spawns the command in a process group of
 * its own and resolves, once it exits 0, with
 * - `wallMs`: spawn to exit;
 * - `treePeakKiB`: the peak of the summed resident set (`/proc/<pid>/statm`, resident pages) of
 *   every live process in that group (Node, worker threads included, and children such as
 *   esbuild's service), sampled every `SAMPLE_MS`: a spike shorter than that can be missed;
 *   `sandboxAtPeakKiB`: the part of that peak sample held by insitu's sandbox processes (a
 *   command line naming `sandbox-child.js`);
 * - `largestPeakKiB`: when `/usr/bin/time` exists (it then wraps the command, and its own
 *   process is left out of the sum), its `%M`: the kernel's exact peak RSS of the largest single
 *   process of the tree (not a sum); otherwise null; `cpuMs`: its `%U` + `%S`, the CPU time
 *   (user + system) of the command and every descendant it waited for (steadier than wall
 *   time on a busy machine); otherwise null;
 * - `output`: the command's stdout and stderr.
 * A non-zero exit rejects with the output.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const SAMPLE_MS = 20
const TIME = '/usr/bin/time'
const PAGE_KIB = 4 // x86-64 and arm64 Linux: 4 KiB pages (statm counts pages)

export interface MeasuredRun {
  wallMs: number
  treePeakKiB: number
  sandboxAtPeakKiB: number
  largestPeakKiB: number | null
  cpuMs: number | null
  output: string
}

export function hasGnuTime(): boolean {
  return fs.existsSync(TIME)
}

/** Whether a process is one of insitu's sandbox processes, by its command line (cached per pid). */
function isSandbox(pid: number, seen: Map<number, boolean>): boolean {
  let sandbox = seen.get(pid)
  if (sandbox === undefined) {
    try {
      sandbox = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('sandbox-child.js')
    } catch {
      sandbox = false
    }
    seen.set(pid, sandbox)
  }
  return sandbox
}

/** Resident KiB of every live process whose process group is `group`, except `skip`, and the sandbox processes' part. */
function groupRssKiB(group: number, skip: number | undefined, seen: Map<number, boolean>): { total: number; sandbox: number } {
  let total = 0
  let sandbox = 0
  for (const entry of fs.readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 57 || entry.charCodeAt(0) < 48) continue
    const pid = Number(entry)
    if (pid === skip) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) !== group || fields[0] === 'Z') continue
      const statm = fs.readFileSync(`/proc/${entry}/statm`, 'utf8').split(' ')
      const kib = Number(statm[1]) * PAGE_KIB
      total += kib
      if (isSandbox(pid, seen)) sandbox += kib
    } catch {
      // the process ended while we looked
    }
  }
  return { total, sandbox }
}

export function runMeasured(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<MeasuredRun> {
  const timeFile = path.join(os.tmpdir(), `insitu-bench-time-${process.pid}-${Date.now()}.txt`)
  const wrapped = hasGnuTime()
  const [file, argv] = wrapped ? [TIME, ['-f', '%M %U %S', '-o', timeFile, command, ...args]] : [command, [...args]]
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(file, argv, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    const group = child.pid!
    let treePeakKiB = 0
    let sandboxAtPeakKiB = 0
    const seen = new Map<number, boolean>()
    const sample = () => {
      const { total, sandbox } = groupRssKiB(group, wrapped ? group : undefined, seen)
      if (total > treePeakKiB) {
        treePeakKiB = total
        sandboxAtPeakKiB = sandbox
      }
    }
    const timer = setInterval(sample, SAMPLE_MS)
    child.on('error', (error) => {
      clearInterval(timer)
      reject(error)
    })
    child.on('close', (code, signal) => {
      const wallMs = performance.now() - started
      clearInterval(timer)
      let largestPeakKiB: number | null = null
      let cpuMs: number | null = null
      if (wrapped) {
        try {
          const [kib, user, system] = (fs.readFileSync(timeFile, 'utf8').trim().split('\n').at(-1) ?? '').split(' ').map(Number)
          if (Number.isFinite(kib)) largestPeakKiB = kib!
          if (Number.isFinite(user) && Number.isFinite(system)) cpuMs = (user! + system!) * 1000
        } catch {
          // no report
        }
        fs.rmSync(timeFile, { force: true })
      }
      if (code !== 0) reject(new Error(`${command} ${args.join(' ')} failed in ${options.cwd} (${code ?? signal}):\n${output}`))
      else resolve({ wallMs, treePeakKiB, sandboxAtPeakKiB, largestPeakKiB, cpuMs, output })
    })
  })
}
