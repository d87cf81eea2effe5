/**
 * Benchmark: this project's RpcPeer against vscode-jsonrpc, both talking to the same echo child
 * (bench/echo-server.mjs) over real pipes. Run with `npm run bench`; not part of `npm test`.
 *
 * Contract:
 * - Each client gets its own child process of the same echo server; requests are
 *   `echo` with params `{"data":"xxx…"}` sized so the request body is about 200 B, 64 KiB or 4 MiB.
 * - Modes: latency (sequential, each request awaited before the next; the median request time
 *   in µs) and throughput (N requests issued at once, all awaited; messages/s and MB/s, where MB/s
 *   counts each request body once, 1 MB = 10^6 bytes).
 * - After a warm-up, every (row, client) is measured RUNS times, alternating which client goes
 *   first; the reported value is the median of the runs.
 * - Rewrites its section of bench/RESULTS.md (`rpc`: machine line and table) and prints it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import os from 'node:os'
import { fileURLToPath } from 'node:url'
import v8 from 'node:v8'
import vm from 'node:vm'
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node'
import { RpcPeer } from '../src/protocol/peer.js'
import { writeSection } from './results-file.js'

const ECHO_SERVER = fileURLToPath(new URL('./echo-server.mjs', import.meta.url))
const RUNS = 7

// A full collection before every measurement, so neither client pays for the other's garbage.
v8.setFlagsFromString('--expose-gc')
const collectGarbage = vm.runInNewContext('gc') as () => void

interface Size {
  label: string
  bytes: number
  sequential: number
  pipelined: number
}

const SIZES: Size[] = [
  { label: '200 B', bytes: 200, sequential: 5000, pipelined: 40_000 },
  { label: '64 KiB', bytes: 64 * 1024, sequential: 2000, pipelined: 2000 },
  { label: '4 MiB', bytes: 4 * 1024 * 1024, sequential: 20, pipelined: 40 },
]

interface Client {
  name: string
  request(params: unknown): Promise<unknown>
  close(): Promise<void>
}

function startEcho(): { child: ChildProcessWithoutNullStreams; exited: Promise<string> } {
  const child = spawn(process.execPath, [ECHO_SERVER], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text))
  const exited = new Promise<string>((resolve) => child.on('close', () => resolve(stderr.trim())))
  return { child, exited }
}

function ours(): Client {
  const { child, exited } = startEcho()
  const peer = new RpcPeer(child.stdout, child.stdin, { name: 'echo-server' })
  return {
    name: 'ours',
    request: (params) => peer.request('echo', params),
    close: async () => {
      peer.close()
      console.error(`  ours: ${await exited}`)
    },
  }
}

function vscodeJsonrpc(): Client {
  const { child, exited } = startEcho()
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin))
  connection.listen()
  return {
    name: 'vscode-jsonrpc',
    request: (params) => connection.sendRequest('echo', params),
    close: async () => {
      connection.dispose()
      child.stdin.end()
      console.error(`  vscode-jsonrpc: ${await exited}`)
    },
  }
}

/** Params whose request body (`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"data":"…"}}`) is `bytes` long. */
function paramsOfSize(bytes: number): { data: string } {
  const overhead = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { data: '' } }).length
  return { data: 'x'.repeat(Math.max(0, bytes - overhead)) }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Median µs per request, one request at a time. */
async function measureLatency(client: Client, params: unknown, count: number): Promise<number> {
  collectGarbage()
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint()
    await client.request(params)
    times.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  return median(times)
}

/** Messages per second with `count` requests in flight at once. */
async function measureThroughput(client: Client, params: unknown, count: number): Promise<number> {
  collectGarbage()
  const start = process.hrtime.bigint()
  const all: Promise<unknown>[] = []
  for (let i = 0; i < count; i++) all.push(client.request(params))
  await Promise.all(all)
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  return count / seconds
}

async function checkEcho(client: Client): Promise<void> {
  const params = { data: 'ünïcødé ✓', n: [1, null, true] }
  const result = await client.request(params)
  if (JSON.stringify(result) !== JSON.stringify(params)) {
    throw new Error(`${client.name}: echo returned ${JSON.stringify(result)}`)
  }
}

interface Row {
  label: string
  kind: 'latency' | 'throughput'
  bytes: number
  count: number
  ours: number[]
  theirs: number[]
}

async function main(): Promise<void> {
  const clients = [ours(), vscodeJsonrpc()] as const
  for (const client of clients) await checkEcho(client)

  console.error('warming up…')
  for (const size of SIZES) {
    const params = paramsOfSize(size.bytes)
    for (const client of clients) {
      await measureLatency(client, params, Math.ceil(size.sequential / 4))
      await measureThroughput(client, params, Math.ceil(size.pipelined / 4))
    }
  }

  const rows: Row[] = []
  for (const size of SIZES) {
    const params = paramsOfSize(size.bytes)
    const latency: Row = { label: `${size.label} sequential`, kind: 'latency', bytes: size.bytes, count: size.sequential, ours: [], theirs: [] }
    const throughput: Row = { label: `${size.label} pipelined ×${size.pipelined}`, kind: 'throughput', bytes: size.bytes, count: size.pipelined, ours: [], theirs: [] }
    for (let run = 0; run < RUNS; run++) {
      const order = run % 2 === 0 ? clients : ([clients[1], clients[0]] as const)
      for (const client of order) {
        const into = client === clients[0] ? 'ours' : 'theirs'
        latency[into].push(await measureLatency(client, params, size.sequential))
        throughput[into].push(await measureThroughput(client, params, size.pipelined))
      }
    }
    rows.push(latency, throughput)
    for (const row of [latency, throughput]) console.error(`${row.label}: ours ${fmtRuns(row, row.ours)} | vscode-jsonrpc ${fmtRuns(row, row.theirs)}`)
  }

  for (const client of clients) await client.close()
  const markdown = renderResults(rows)
  writeSection('rpc', markdown)
  console.log(markdown)
}

function fmtRuns(row: Row, values: number[]): string {
  return values.map((v) => (row.kind === 'latency' ? `${v.toFixed(0)}µs` : `${v.toFixed(0)}/s`)).join(' ')
}

function formatCell(row: Row, values: number[]): string {
  const value = median(values)
  const spread = `${formatNumber(Math.min(...values))}–${formatNumber(Math.max(...values))}`
  if (row.kind === 'latency') return `${formatNumber(value)} µs (${spread})`
  const mbps = (value * row.bytes) / 1e6
  return `${formatNumber(value)} msg/s, ${formatNumber(mbps)} MB/s (${spread} msg/s)`
}

function formatNumber(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString('en-US')
  return value.toPrecision(3)
}

function ratio(row: Row): number {
  const ours = median(row.ours)
  const theirs = median(row.theirs)
  return row.kind === 'latency' ? theirs / ours : ours / theirs
}

function renderResults(rows: Row[]): string {
  const cpus = os.cpus()
  const cpu = cpus[0]?.model.trim() ?? 'unknown CPU'
  const lines = [
    `Machine: Node ${process.version}, ${cpu} (${cpus.length} logical CPUs), ${os.platform()} ${os.release()}, ${new Date().toISOString()}`,
    `Each cell is the median of ${RUNS} runs (min–max in parentheses).`,
    '',
    '| row | ours | vscode-jsonrpc | ours / vscode-jsonrpc |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => {
      const what = row.kind === 'latency' ? `latency, ${row.label} (median per request, ${row.count} requests)` : `throughput, ${row.label}`
      return `| ${what} | ${formatCell(row, row.ours)} | ${formatCell(row, row.theirs)} | ${ratio(row).toFixed(2)}× |`
    }),
  ]
  return lines.join('\n')
}

await main()
