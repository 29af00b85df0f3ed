// Host costs: cold start of `dsh call` against a bare `node -e 0`, and what a tool call over an open MCP
// connection adds to the same call made in-process. Run `npx tsc -b` first (it imports the built packages).
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
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

// A small project directory, so that the figure is the host's start-up and not ripgrep walking a big tree
// (the checkout's node_modules: glob lists ignored files too).
const project = mkdtempSync(join(tmpdir(), 'dsh-host-bench-'))
for (const name of ['package.json', 'tsconfig.json', 'README.md', 'index.ts']) writeFileSync(join(project, name), '{}\n')

function run(command, args) {
  const result = spawnSync(command, args, { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`)
}
const { rgPath: rg } = await import('@vscode/ripgrep')

console.log('Cold start in a 4-file directory (wall time of one process, median of 11 interleaved rounds)')
const cold = await sideBySide({
  'node -e 0': () => run(process.execPath, ['-e', '0']),
  'rg --files --glob=*.json (the tool\'s own work)': () => run(rg, ['--files', '--glob=*.json', '--no-ignore', '--hidden']),
  'dsh --version': () => run(process.execPath, [bin, '--version']),
  'dsh call glob {"pattern":"*.json"}': () => run(process.execPath, [bin, 'call', 'glob', '{"pattern":"*.json"}']),
}, { rounds: 11, warmup: 2 })
rmSync(project, { recursive: true, force: true })
const floor = cold['node -e 0']
for (const [name, ms] of Object.entries(cold)) row(name, `${ms.toFixed(1)} ms  ${ratio(ms, floor)} node -e 0`)
row('goal: dsh call glob ≤ 4× node -e 0', ratio(cold['dsh call glob {"pattern":"*.json"}'], floor))

// Trivial calls, each made three ways in turn (so that machine noise hits all alike): in-process, over the MCP
// protocol in the same process, and over stdio to a `dsh mcp` child. Same session directory each way.
const CALLS = 400
const TRIVIAL = [
  ['read package.json (20 lines)', 'read', { path: 'package.json' }],
  ['bash_output of an unknown task (pipeline only)', 'bash_output', { task_id: 'bash-999' }],
]

const host = await createDefaultContext()
const session = { id: 'bench', cwd: root }
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
await connect(host.ctx, serverSide, { cwd: root })
const memoryClient = new Client({ name: 'bench', version: '0' })
await memoryClient.connect(clientSide)
const stdioClient = new Client({ name: 'bench', version: '0' })
await stdioClient.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--cwd', root], cwd: root, stderr: 'inherit' }))

// The physical floor of "over stdio": one line to a Node child and back (no MCP, no tool).
const echo = spawn(process.execPath, ['-e', 'process.stdin.on("data", (d) => process.stdout.write(d))'], { stdio: ['pipe', 'pipe', 'inherit'] })
let pendingEcho
echo.stdout.on('data', () => pendingEcho?.())
const pipeRoundTrip = () => new Promise((resolve) => {
  pendingEcho = resolve
  echo.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
})

async function lap(fn) {
  const start = performance.now()
  await fn()
  return performance.now() - start
}

for (const [label, name, args] of TRIVIAL) {
  const ways = {
    inProcess: () => host.ctx.tools.execute(name, args, { session }),
    inMemory: () => memoryClient.callTool({ name, arguments: args }),
    stdio: () => stdioClient.callTool({ name, arguments: args }),
    pipe: pipeRoundTrip,
  }
  const samples = { inProcess: [], inMemory: [], stdio: [], pipe: [] }
  for (let i = 0; i < 50; i++) for (const fn of Object.values(ways)) await fn() // warm-up: JIT, ajv compile
  for (let i = 0; i < CALLS; i++) for (const [way, fn] of Object.entries(ways)) samples[way].push(await lap(fn))
  const [p, m, s, e] = [median(samples.inProcess), median(samples.inMemory), median(samples.stdio), median(samples.pipe)]
  const us = (ms) => `${(ms * 1000).toFixed(0)} µs`
  console.log(`\nOne trivial call: ${label}, median of ${CALLS} interleaved calls`)
  row('in-process ctx.tools.execute', us(p))
  row('MCP protocol in-process (InMemoryTransport)', `${us(m)}  (+${us(m - p)})`)
  row('MCP over stdio to `dsh mcp` (client + server + pipes)', `${us(s)}  (+${us(s - p)})`)
  row('floor: a line to a Node child and back (pipe round trip)', us(e))
  row('goal: added by MCP over stdio < 1000 µs', `${us(s - p)}  (${us(s - p - e)} beyond the pipe round trip)`)
}

echo.kill()
await memoryClient.close()
await stdioClient.close()
await host.dispose()
