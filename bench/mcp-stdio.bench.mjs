// What dsh's own stdio framing (LineTransport: parse errors, backpressure, in-flight bound) costs per call, against
// the SDK's StdioServerTransport it replaced: the same context and tools, two servers over in-process streams, calls
// interleaved one by one (old, new, old, new, …); the figure is the median of the per-call ratios new / old.
// Run `npx tsc -b` first (it imports the built packages).
import { loadavg } from 'node:os'
import { PassThrough } from 'node:stream'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { createDefaultContext } from 'dsh-agent-tools'
import { connect, serveStdio } from '@deepseek-ai/dsh-mcp'
import { median, row, summaryRow } from './lib.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const host = await createDefaultContext()

/** A raw line client on a pair of streams: `call(line)` resolves with the answer line to the request's id. */
function wire() {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const waiting = new Map()
  let partial = ''
  stdout.setEncoding('utf8').on('data', (chunk) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()
    for (const line of lines) {
      const id = JSON.parse(line).id
      waiting.get(id)?.(line)
      waiting.delete(id)
    }
  })
  let next = 0
  const request = (method, params) =>
    new Promise((resolve) => {
      const id = ++next
      waiting.set(id, resolve)
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
    })
  return { stdin, stdout, request }
}

const sdk = wire()
await connect(host.ctx, new StdioServerTransport(sdk.stdin, sdk.stdout), { cwd: root })
const own = wire()
await serveStdio(host.ctx, { stdin: own.stdin, stdout: own.stdout, cwd: root })
const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '0' } }
await sdk.request('initialize', init)
await own.request('initialize', init)

const CALLS = 600
const CASES = [
  ['read package.json (20 lines)', { name: 'read', arguments: { path: 'package.json' } }],
  ['read a 2000-line page (~50 KB answer)', { name: 'read', arguments: { path: 'package-lock.json' } }],
  ['bash_output of an unknown task (pipeline only)', { name: 'bash_output', arguments: { task_id: 'bash-999' } }],
]
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (1, 5, 15 min), ${CALLS} interleaved calls per case`,
)
for (const [label, params] of CASES) {
  const lap = async (client) => {
    const start = performance.now()
    await client.request('tools/call', params)
    return performance.now() - start
  }
  for (let i = 0; i < 50; i++) {
    await lap(sdk)
    await lap(own)
  } // warm-up
  const ratios = []
  const old = []
  const mine = []
  for (let i = 0; i < CALLS; i++) {
    const a = await lap(sdk)
    const b = await lap(own)
    old.push(a)
    mine.push(b)
    ratios.push(b / a)
  }
  const us = (ms) => `${(ms * 1000).toFixed(0)} µs`
  console.log(`\n${label}`)
  row('SDK StdioServerTransport (floor), median', us(median(old)))
  row('dsh LineTransport, median', us(median(mine)))
  row('median of per-call ratios LineTransport / SDK', `${median(ratios).toFixed(3)}×`)
  summaryRow({ figure: `stdio framing: ${label}`, value: median(ratios), goal: 1.1, floor: 'SDK StdioServerTransport' })
}
await host.dispose()
