// Host costs: cold start of `dsh call` against a bare `node -e 0`, and what a tool call over an open MCP
// connection adds to the same call made in-process. Run `npx tsc -b` first (it imports the built packages).
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { createDefaultContext } from '@deepseek-ai/dsh'
import { connect } from '@deepseek-ai/dsh-mcp'
import { median, ratio, row, sideBySide } from './lib.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const bin = join(root, 'packages/host/cli/dist/bin.js')

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`)
}

console.log('Cold start (wall time of one process, median of 11 interleaved rounds)')
const cold = await sideBySide({
  'node -e 0': () => run(['-e', '0']),
  'dsh --version': () => run([bin, '--version']),
  'dsh call glob {"pattern":"*.json"}': () => run([bin, 'call', 'glob', '{"pattern":"*.json"}']),
}, { rounds: 11, warmup: 2 })
const floor = cold['node -e 0']
for (const [name, ms] of Object.entries(cold)) row(name, `${ms.toFixed(1)} ms  ${ratio(ms, floor)} node -e 0`)
row('goal: dsh call glob ≤ 4× node -e 0', ratio(cold['dsh call glob {"pattern":"*.json"}'], floor))

// The trivial call: read a 20-line file (no process spawned), in the same session directory each way.
const CALLS = 400
const args = { path: 'package.json' }

async function timed(call) {
  for (let i = 0; i < 50; i++) await call() // warm-up: JIT, ajv compile, file cache
  const samples = []
  for (let i = 0; i < CALLS; i++) {
    const start = performance.now()
    await call()
    samples.push(performance.now() - start)
  }
  return median(samples)
}

console.log(`\nOne trivial tool call (read package.json), median of ${CALLS} sequential calls`)
const host = await createDefaultContext()
const session = { id: 'bench', cwd: root }
const inProcess = await timed(() => host.ctx.tools.execute('read', args, { session }))

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
await connect(host.ctx, serverSide, { cwd: root })
const memoryClient = new Client({ name: 'bench', version: '0' })
await memoryClient.connect(clientSide)
const inMemory = await timed(() => memoryClient.callTool({ name: 'read', arguments: args }))
await memoryClient.close()
await host.dispose()

const stdioClient = new Client({ name: 'bench', version: '0' })
await stdioClient.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--cwd', root], cwd: root, stderr: 'inherit' }))
const overStdio = await timed(() => stdioClient.callTool({ name: 'read', arguments: args }))
await stdioClient.close()

row('in-process ctx.tools.execute', `${(inProcess * 1000).toFixed(0)} µs`)
row('MCP protocol in-process (InMemoryTransport)', `${(inMemory * 1000).toFixed(0)} µs  (+${((inMemory - inProcess) * 1000).toFixed(0)} µs)`)
row('MCP over stdio to `dsh mcp` (client + server + pipes)', `${(overStdio * 1000).toFixed(0)} µs  (+${((overStdio - inProcess) * 1000).toFixed(0)} µs)`)
row('goal: added by MCP over stdio < 1000 µs', `${((overStdio - inProcess) * 1000).toFixed(0)} µs`)
