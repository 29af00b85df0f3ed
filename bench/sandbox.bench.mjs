// The sandboxed bash (tool-bash over bash-sandbox, bubblewrap) against the local one and a bare spawn, in one run:
// a warm foreground `bash` tool call of `true`, interleaved round by round. Each figure is the median of the
// per-round ratios to the bare spawn measured in the same round (paired), printed with the load average.
// No threshold: the figure is recorded (packages/bash/bash-sandbox/README.md).
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import { LocalSubprocess } from '@deepseek-ai/dsh-subprocess-local'
import { LocalBashExecutor } from '@deepseek-ai/dsh-bash-local'
import { LocalTaskService } from '@deepseek-ai/dsh-tasks-local'
import { SandboxBashExecutor, DEFAULT_DENY_READ, bwrapArgs, hiddenPaths } from '@deepseek-ai/dsh-bash-sandbox'
import Workspace from '@deepseek-ai/dsh-workspace'
import ToolBash from '@deepseek-ai/dsh-tool-bash'
import { median, row, summaryRow } from './lib.mjs'

// Under /var/tmp: the sandbox replaces the host's /tmp, and the session cwd must be visible inside.
const root = await mkdtemp('/var/tmp/dsh-sandbox-bench-')
const session = createSession({ id: 'bench', cwd: root })

async function host(executor) {
  const ctx = new Context()
  await ctx.plugin(ToolsService)
  await ctx.plugin(SystemPromptService)
  await ctx.plugin(LocalSubprocess, { spillDir: join(root, '.spill') })
  await ctx.plugin(Workspace, {})
  await ctx.plugin(LocalTaskService)
  await ctx.plugin(executor, {})
  await ctx.plugin(ToolBash)
  for (let i = 0; i < 200 && !ctx.tools.get('bash'); i++) await new Promise((resolve) => setImmediate(resolve))
  if (!ctx.tools.get('bash')) throw new Error('the bash tool did not load')
  return ctx
}

const local = await host(LocalBashExecutor)
const sandboxed = await host(SandboxBashExecutor)
const tool = (ctx) => async () => {
  const result = await ctx.tools.execute('bash', { command: 'true', description: 'bench' }, { session })
  if (result.isError || result.content[0].text !== '(no output)')
    throw new Error(`unexpected result ${result.content[0].text}`)
}
const spawned = (program, args) => () =>
  new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    child.once('error', reject)
    child.stdout.resume()
    child.stderr.resume()
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${program} exited ${code}`))))
  })
// The same confinement as the executor's, spawned bare: what bubblewrap itself costs.
const argv = bwrapArgs(
  {
    writable: [root],
    readOnly: [],
    hidden: hiddenPaths(DEFAULT_DENY_READ),
    tmpDir: join(root, '.tmp'),
    network: 'none',
  },
  root,
)
await mkdir(join(root, '.tmp'))

const candidates = {
  bare: spawned('bash', ['-c', 'true']),
  bareBwrap: spawned('bwrap', [...argv, '--', 'bash', '-c', 'true']),
  local: tool(local),
  sandbox: tool(sandboxed),
}
const ROUNDS = 200
const WARMUP = 20
const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
for (let round = 0; round < WARMUP + ROUNDS; round++) {
  const times = {}
  for (const [name, fn] of Object.entries(candidates)) {
    const t = performance.now()
    await fn()
    times[name] = performance.now() - t
  }
  if (round >= WARMUP)
    for (const name of Object.keys(candidates)) samples[name].push({ ms: times[name], ratio: times[name] / times.bare })
}
const [one, five] = loadavg()
console.log(
  `foreground \`true\` (${ROUNDS} rounds after ${WARMUP} warm-up, interleaved; load average ${one.toFixed(2)} / ${five.toFixed(2)})`,
)
for (const [name, label] of [
  ['bare', 'bare child_process.spawn(bash -c true)'],
  ['bareBwrap', 'bare spawn of bwrap <confinement> -- bash -c true'],
  ['local', 'bash tool, bash-local'],
  ['sandbox', 'bash tool, bash-sandbox'],
]) {
  const ms = median(samples[name].map((s) => s.ms))
  const ratio = median(samples[name].map((s) => s.ratio))
  row(`  ${label}`, `${ms.toFixed(3)} ms  ${ratio.toFixed(3)}× of bare (median of paired ratios)`)
}
const overLocal = median(samples.sandbox.map((s, i) => s.ms / samples.local[i].ms))
row('  sandbox / local, paired', `${overLocal.toFixed(3)}×`)
// The goal: the sandbox (bwrap, its seccomp filter, the trusted wrapper) stays within the few-fold cost recorded in
// the bash-sandbox README; a regression past it shows here.
summaryRow({
  figure: 'sandboxed `bash true` vs local `bash true`',
  value: overLocal,
  goal: 6,
  floor: 'the local bash tool, same run',
})

await local.fiber.dispose()
await sandboxed.fiber.dispose()
await rm(root, { recursive: true, force: true })
