/**
 * Runs one measurement in a fresh Node process (cold JIT, its own peak RSS): `node --import tsx
 * <script> '<json request>'`, for bench/build.ts and bench/engine.ts.
 *
 * Contract: `measureInChild(script, request)` resolves with the JSON object the child prints as
 * its last stdout line; a child that exits non-zero or prints no JSON rejects with its exit
 * code and stderr. A `.mjs` script runs in plain Node, without tsx (bench/startup.ts times
 * what a user's process loads).
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('..', import.meta.url))

export function measureInChild<T>(script: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...(script.endsWith('.mjs') ? [] : ['--import', 'tsx']), fileURLToPath(new URL(script, import.meta.url)), JSON.stringify(request)],
      { cwd: REPO, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const last = stdout.trim().split('\n').at(-1) ?? ''
        if (error) return reject(new Error(`${script} failed (${error.code ?? error.signal}): ${stderr.trim() || stdout.trim()}`))
        try {
          resolve(JSON.parse(last) as T)
        } catch {
          reject(new Error(`${script} printed no JSON result: ${stdout.trim()} ${stderr.trim()}`))
        }
      },
    )
  })
}
