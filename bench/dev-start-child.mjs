/**
 * One dev server start for bench/startup.ts: `node bench/dev-start-child.mjs '<json>'` with
 * `{ root, configFile }` (bench/child-measurement.ts).
 *
 * Contract: imports Vite, starts a dev server on `root` with that config file (loaded by Node
 * as is, `configLoader: 'native'`), fetches `/README.md?import&raw` as the bench page's import
 * does, and prints one JSON line `{ "ms": <milliseconds from this process's start to the
 * response's last byte>, "bytes": <length> }`; then closes the server and exits. Plain
 * JavaScript, so that no loader (tsx) adds to the time.
 */
const { root, configFile } = JSON.parse(process.argv[2] ?? '')
const { createServer } = await import('vite')
const server = await createServer({ root, configFile, configLoader: 'native', logLevel: 'silent', server: { port: 0, strictPort: false } })
await server.listen()
const url = server.resolvedUrls?.local[0]
if (!url) throw new Error('the dev server has no local URL')
const response = await fetch(`${url}README.md?import&raw`)
const body = await response.text()
// performance.now() counts from this process's start (its time origin).
const ms = performance.now()
if (!response.ok) throw new Error(`README.md?raw answered ${response.status}: ${body.slice(0, 200)}`)
await server.close()
console.log(JSON.stringify({ ms, bytes: body.length }))
process.exit(0)
