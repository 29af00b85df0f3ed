// Host costs: cold start of `dsh call` and of `dsh mcp` (spawn → initialize answered) against a bare `node -e 0`
// measured in the same rounds, and what a tool call over an open MCP connection adds to the same call made
// in-process. Run `npm run build` first (it imports the built packages and spawns the bundle).
import { createSession } from '@deepseek-ai/dsh-tools'
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { build } from 'rolldown'
import { createDefaultContext } from 'dsh-agent-tools'
import { connect } from '@deepseek-ai/dsh-mcp'
import { loadAverage, median, pairedRatios, row, summaryRow } from './lib.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/**
 * The shipped command as npm links it (the committed shim, which loads the bundle), and the unbundled tsc output
 * the bundle is made of, for comparison.
 */
const bin = join(root, 'packages/host/cli/bin/dsh.js')
const unbundled = join(root, 'packages/host/cli/dist/bin.js')

// A small project directory, so that the figure is the host's start-up and not ripgrep walking a big tree
// (the checkout's node_modules: glob lists ignored files too).
const project = mkdtempSync(join(tmpdir(), 'dsh-host-bench-'))
for (const name of ['package.json', 'tsconfig.json', 'README.md', 'index.ts'])
  writeFileSync(join(project, name), '{}\n')

// NODE_EXTRA_CA_CERTS makes every Node process read a certificate file at start (about 85 ms on the machines this
// was measured on, where it is set for every process): floor and candidate alike, which flatters every ratio. So
// each start-up figure is measured twice: with the environment as it is, and without that variable.
const ENVIRONMENTS = [['environment as is', process.env]]
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  const { NODE_EXTRA_CA_CERTS: _, ...rest } = process.env
  ENVIRONMENTS.push(['without NODE_EXTRA_CA_CERTS', rest])
}

function run(command, args, env) {
  const result = spawnSync(command, args, { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] })
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`)
}
const { rgPath: rg } = await import('@vscode/ripgrep')
const rgGlob = ['--files', '--glob=*.json', '--no-ignore', '--hidden']

/**
 * bench/stack-floor.mjs (Cordis with ten empty plugins, one rg spawn, disposal), bundled and code-cached the way
 * the build treats dsh (packages/host/cli/scripts/bundle.mjs): CommonJS, a stub that runs the code through
 * bin/load-bundle.cjs, one training run that writes the cache. Returns the stub's path.
 */
async function stackFloor() {
  const code = join(project, '.stack-floor', 'floor.code.cjs')
  await build({
    input: join(root, 'bench', 'stack-floor.mjs'),
    platform: 'node',
    logLevel: 'warn',
    output: { format: 'cjs', file: code, codeSplitting: false },
  })
  const stub = code.replace(/\.code\.cjs$/, '.cjs')
  writeFileSync(
    stub,
    `'use strict'\nrequire(${JSON.stringify(join(root, 'packages/host/cli/bin/load-bundle.cjs'))}).load(module, require, __filename)\n`,
  )
  run(process.execPath, [stub, rg, ...rgGlob], { ...process.env, DSH_BUILD_CODE_CACHE: '1' })
  return stub
}
const floorStub = await stackFloor()

const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } } })}\n`

/** Spawns `dsh mcp` and sends initialize at once (as clients do); resolves with the ms from spawn to the answer. */
function mcpInitialize(entry, env) {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, [entry, 'mcp', '--cwd', project], { env, stdio: ['pipe', 'pipe', 'ignore'] })
    let out = ''
    let answeredMs
    child.on('error', reject)
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      if (answeredMs !== undefined || !out.includes('\n')) return
      answeredMs = performance.now() - started
      child.stdin.end()
    })
    // Resolved on exit (after stdin ended) so that rounds never overlap; the figure is spawn → answer.
    child.on('exit', () => {
      if (answeredMs !== undefined && out.includes('"result"')) resolve(answeredMs)
      else reject(new Error(`dsh mcp did not answer initialize: ${out}`))
    })
    child.stdin.write(INITIALIZE)
  })
}

const ROUNDS = Number(process.env.DSH_BENCH_ROUNDS) || 21
const glob = ['call', 'glob', '{"pattern":"*.json"}']
for (const [where, env] of ENVIRONMENTS) {
  console.log(
    `\nCold start in a 4-file directory, ${where}: ${ROUNDS} paired rounds (node -e 0, then each candidate), load average ${loadAverage()}`,
  )
  const cold = await pairedRatios(
    () => run(process.execPath, ['-e', '0'], env),
    {
      "rg --files (the tool's own work)": () => run(rg, rgGlob, env),
      'the stack alone (Cordis, 10 empty plugins, one rg; no goal)': () =>
        run(process.execPath, [floorStub, rg, ...rgGlob], env),
      'dsh --version': () => run(process.execPath, [bin, '--version'], env),
      'dsh call glob': () => run(process.execPath, [bin, ...glob], env),
      'dsh call glob, unbundled (dist/bin.js)': () => run(process.execPath, [unbundled, ...glob], env),
    },
    { rounds: ROUNDS, warmup: 2 },
  )
  row('node -e 0 (the floor)', `${cold.floorMs.toFixed(1)} ms`)
  for (const [name, { ms, ratio }] of Object.entries(cold))
    if (name !== 'floorMs') row(name, `${ms.toFixed(1)} ms  ${ratio.toFixed(2)}× node -e 0`)

  // Paired by hand: the figure is the answer's time, not the candidate's whole promise (which waits for the exit).
  const mcpSamples = { bundle: [], unbundled: [], floor: [] }
  for (let round = 0; round < ROUNDS + 1; round++) {
    const floorStart = performance.now()
    run(process.execPath, ['-e', '0'], env)
    const floor = performance.now() - floorStart
    const [a, b] = round % 2 ? [bin, unbundled] : [unbundled, bin]
    const first = await mcpInitialize(a, env)
    const second = await mcpInitialize(b, env)
    if (round === 0) continue
    mcpSamples.floor.push(floor)
    mcpSamples[a === bin ? 'bundle' : 'unbundled'].push(first / floor)
    mcpSamples[b === bin ? 'bundle' : 'unbundled'].push(second / floor)
  }
  const mcpRatio = median(mcpSamples.bundle)
  console.log(`\ndsh mcp: spawn → initialize answered, ${where}, ${ROUNDS} paired rounds`)
  row('node -e 0 (the floor)', `${median(mcpSamples.floor).toFixed(1)} ms`)
  row(
    'dsh mcp (bundle)',
    `${mcpRatio.toFixed(2)}× node -e 0 (≈ ${(mcpRatio * median(mcpSamples.floor)).toFixed(0)} ms)`,
  )
  row('dsh mcp, unbundled (dist/bin.js)', `${median(mcpSamples.unbundled).toFixed(2)}× node -e 0`)

  const suffix = where === 'environment as is' ? '' : `, ${where}`
  summaryRow({
    figure: `cold \`dsh call glob\` (4-file dir)${suffix}`,
    value: cold['dsh call glob'].ratio,
    goal: 2.0,
    floor: 'node -e 0',
  })
  summaryRow({
    figure: `\`dsh mcp\` spawn → initialize answered${suffix}`,
    value: mcpRatio,
    goal: 2.0,
    floor: 'node -e 0',
  })
}
rmSync(project, { recursive: true, force: true })

// Trivial calls, each made three ways in turn (so that machine noise hits all alike): in-process, over the MCP
// protocol in the same process, and over stdio to a `dsh mcp` child. Same session directory each way.
const CALLS = 400
const TRIVIAL = [
  ['read package.json (20 lines)', 'read', { path: 'package.json' }],
  ['bash_output of an unknown task (pipeline only)', 'bash_output', { task_id: 'bash-999' }],
]

const host = await createDefaultContext()
const session = createSession({ id: 'bench', cwd: root })
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
await connect(host.ctx, serverSide, { cwd: root })
const memoryClient = new Client({ name: 'bench', version: '0' })
await memoryClient.connect(clientSide)
const stdioClient = new Client({ name: 'bench', version: '0' })
await stdioClient.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp', '--cwd', root],
    cwd: root,
    stderr: 'inherit',
  }),
)

// The physical floor of "over stdio": one line to a Node child and back (no MCP, no tool).
const echo = spawn(process.execPath, ['-e', 'process.stdin.on("data", (d) => process.stdout.write(d))'], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
let pendingEcho
echo.stdout.on('data', () => pendingEcho?.())
const pipeRoundTrip = () =>
  new Promise((resolve) => {
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
  const [p, m, s, e] = [
    median(samples.inProcess),
    median(samples.inMemory),
    median(samples.stdio),
    median(samples.pipe),
  ]
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
