// The bash tool (tool-bash over bash-local over subprocess-local) against the bare equivalents, in one run:
//   1. a warm foreground `bash` tool call of `true` vs a bare child_process spawn of `bash -c true` (paired: the
//      median of per-round ratios, each round running every candidate once, interleaved);
//   1b. `sleep 30 & echo started`: how long the call takes (the drain bound) and that nothing is left;
//   1c. a bash_input round trip on an interactive task vs the same round trip on a bare pseudo-terminal;
//   2. 100 background tasks started and read concurrently: all complete, no output lost, peak RSS;
//   3. 1 GiB of output through the bash tool: time against the physical limit, peak RSS growth, spill file size.
import { spawn } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import { LocalSubprocess } from '@deepseek-ai/dsh-subprocess-local'
import { LocalBashExecutor } from '@deepseek-ai/dsh-bash-local'
import { LocalTaskService } from '@deepseek-ai/dsh-tasks-local'
import ToolBash from '@deepseek-ai/dsh-tool-bash'
import { median, mib, peakRssDuring, ratio, row, summaryRow } from './lib.mjs'

const GiB = 1073741824
const root = await mkdtemp(join(tmpdir(), 'dsh-bash-bench-'))
const spillDir = join(root, 'spill')
const ctx = new Context()
await ctx.plugin(ToolsService)
await ctx.plugin(SystemPromptService)
await ctx.plugin(LocalSubprocess, { spillDir })
await ctx.plugin(LocalTaskService)
await ctx.plugin(LocalBashExecutor, {})
await ctx.plugin(ToolBash)
for (let i = 0; i < 200 && !ctx.tools.get('bash'); i++) await new Promise((resolve) => setImmediate(resolve))
if (!ctx.tools.get('bash')) throw new Error('the bash tool did not load')
const session = createSession({ id: 'bench', cwd: root })
const call = async (name, args) => {
  const result = await ctx.tools.execute(name, args, { session })
  if (result.isError) throw new Error(`${name} failed: ${result.content[0].text}`)
  return result.content[0].text
}

// 1. Per-call overhead. The bare candidate reads both pipes like the tool does; the tool also spawns detached
// (its own process group, so that every descendant can be stopped), stats the workdir and renders the text.
const bare = () =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    child.once('error', reject)
    child.stdout.resume()
    child.stderr.resume()
    child.once('close', resolve)
  })
const bareDetached = () =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', 'true'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    child.once('error', reject)
    child.stdout.resume()
    child.stderr.resume()
    child.once('close', resolve)
  })
const tool = async () => {
  const text = await call('bash', { command: 'true', description: 'bench' })
  if (text !== '(no output)') throw new Error(`unexpected text ${text}`)
}
// The layers in between, to show where the time goes: the subprocess seam alone, then the executor.
const collect = { maxBytes: 64000, spill: { maxBytes: 64 * 1048576 } }
const seam = async () => {
  const handle = await ctx.subprocess.spawn({
    argv: ['bash', '-c', '--', 'true'],
    cwd: root,
    stdin: 'ignore',
    stdout: collect,
    stderr: collect,
    graceMs: 3000,
  })
  await handle.done
}
const executor = async () => {
  await ctx.bash.run(ctx.bash.resolve({ command: 'true', workdir: root }))
}
const CALLS = 400
const candidates = { bare, bareDetached, seam, executor, tool }
const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
for (let i = 0; i < CALLS + 30; i++) {
  for (const [name, fn] of Object.entries(candidates)) {
    const t = performance.now()
    await fn()
    if (i >= 30) samples[name].push(performance.now() - t) // the first 30 rounds warm up
  }
}
const ms = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]))
/** The median over rounds of `name`'s time divided by `base`'s time in the same round. */
const pairedValue = (name, base) => median(samples[name].map((value, i) => value / samples[base][i]))
const paired = (name, base) => `${pairedValue(name, base).toFixed(3)}×`
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
console.log(
  `foreground \`true\` (${CALLS} rounds, interleaved, warm; ratio = median of per-round ratios; load average ${load()})`,
)
row('  bare child_process.spawn(bash -c true), pipes read', `${ms.bare.toFixed(3)} ms`)
row('  bare, detached (setsid)', `${ms.bareDetached.toFixed(3)} ms  ${paired('bareDetached', 'bare')}`)
row('  ctx.subprocess.spawn(bash -c -- true), both collected', `${ms.seam.toFixed(3)} ms  ${paired('seam', 'bare')}`)
row('  ctx.bash.run(ctx.bash.resolve(true))', `${ms.executor.toFixed(3)} ms  ${paired('executor', 'bare')}`)
row(
  '  ctx.tools.execute(bash, true)',
  `${ms.tool.toFixed(3)} ms  ${paired('tool', 'bare')} of bare (goal <= 1.15×), ${paired('tool', 'bareDetached')} of bare detached`,
)

// 1b. A command that leaves a process holding its output: the call returns after the bounded drain, not after it.
const leftover = []
for (let i = 0; i < 5; i++) {
  const t = performance.now()
  const text = await call('bash', { command: 'sleep 30 & echo started', description: 'bench leftover' })
  leftover.push(performance.now() - t)
  const id = /task (bash-\d+)/.exec(text)?.[1]
  if (!id) throw new Error(`no adopted task in ${text}`)
  await call('bash_kill', { task_id: id })
}
console.log(`\n\`sleep 30 & echo started\` in the foreground (5 calls; load average ${load()})`)
row('  call time, median (drain bound 250 ms)', `${median(leftover).toFixed(0)} ms`)
summaryRow({
  figure: 'foreground `bash` tool call of `true`',
  value: pairedValue('tool', 'bare'),
  goal: 1.15,
  floor: 'bare spawn of bash -c true',
})
summaryRow({
  figure: 'foreground `sleep 30 & echo started` (drain bound 250 ms)',
  value: median(leftover),
  goal: 400,
  unit: 'ms',
})

// 1c. Input round trip: a line typed into an interactive task until its answer is back, through bash_input (write,
// the terminal, the program, the output, the wait_for test on the session's worker, the read, the text) vs the
// same program on a bare pseudo-terminal (util-linux script, as the executor uses) written and read directly.
const ECHO = 'while IFS= read -r l; do echo "pong-$l"; done'
const bareTerminal = spawn('script', ['-q', '-f', '-e', '-c', ECHO, '/dev/null'], {
  cwd: root,
  stdio: ['pipe', 'pipe', 'ignore'],
  env: { ...process.env, TERM: 'dumb' },
})
let bareOut = ''
let bareWaiter
bareTerminal.stdout.setEncoding('utf8').on('data', (chunk) => {
  bareOut += chunk
  bareWaiter?.()
})
const bareRound = (n) =>
  new Promise((resolve) => {
    bareOut = ''
    bareWaiter = () => {
      if (bareOut.includes(`pong-${n}\r\n`)) resolve()
    }
    bareTerminal.stdin.write(`${n}\n`)
  })
const started = await call('bash', {
  command: ECHO,
  description: 'bench input',
  run_in_background: true,
  interactive: true,
})
const inputTask = /task (bash-\d+)/.exec(started)?.[1]
const toolRound = async (n) => {
  const text = await call('bash_input', { task_id: inputTask, text: `${n}\n`, wait_for: `^pong-${n}$` })
  if (!text.includes(`pong-${n}\n`)) throw new Error(`unexpected bash_input text ${text}`)
}
const ROUNDS = 200
const inputSamples = { bare: [], tool: [] }
for (let i = 0; i < ROUNDS + 20; i++) {
  let t = performance.now()
  await bareRound(i)
  const bareMs = performance.now() - t
  t = performance.now()
  await toolRound(i)
  const toolMs = performance.now() - t
  if (i >= 20) {
    inputSamples.bare.push(bareMs)
    inputSamples.tool.push(toolMs)
  }
}
bareTerminal.kill()
await call('bash_kill', { task_id: inputTask })
const inputRatio = median(inputSamples.tool.map((value, i) => value / inputSamples.bare[i]))
console.log(`\ninput round trip: a line typed, its answer back (${ROUNDS} rounds, interleaved; load average ${load()})`)
row('  bare pseudo-terminal (script), written and read directly', `${median(inputSamples.bare).toFixed(3)} ms`)
row(
  '  bash_input { text, wait_for } on an interactive task',
  `${median(inputSamples.tool).toFixed(3)} ms  ${inputRatio.toFixed(2)}× of bare`,
)
// The goal allows for what the floor leaves out by design: the model's wait_for pattern is tested on the session's
// worker thread (one message round trip), never on the event loop; 0.5 ms in absolute terms at load 5.
summaryRow({
  figure: '`bash_input` round trip (write, echo back, returned)',
  value: inputRatio,
  goal: 5,
  floor: 'bare pty round trip',
})
if (process.env.DSH_BENCH_ONLY === 'foreground') {
  await ctx.fiber.dispose()
  await rm(root, { recursive: true, force: true })
  process.exit(0)
}

// 2. 100 background tasks, started together and read together until all are done.
const TASKS = 100
const LINES = 1000
const expected = (n) => Array.from({ length: LINES }, (_, i) => `task ${n} line ${i + 1}\n`).join('')
const background = await peakRssDuring(async () => {
  const t = performance.now()
  const started = await Promise.all(
    Array.from({ length: TASKS }, (_, n) =>
      call('bash', {
        command: `for i in $(seq 1 ${LINES}); do echo "task ${n} line $i"; done`,
        description: 'bench task',
        run_in_background: true,
      }),
    ),
  )
  const ids = started.map((text) => text.slice('started background task '.length))
  const outputs = new Map(ids.map((id) => [id, '']))
  const pending = new Set(ids)
  let reads = 0
  while (pending.size) {
    // bash_output answers without I/O: yield to the event loop between rounds, or no child output is ever read.
    await new Promise((resolve) => setImmediate(resolve))
    await Promise.all(
      [...pending].map(async (id) => {
        // Completion notices of other tasks ride on a result after a blank line: not this task's output.
        const full = await call('bash_output', { task_id: id })
        const cut = full.indexOf('\n\n')
        const text = cut === -1 ? full : full.slice(0, cut)
        reads++
        const status = text.slice(text.lastIndexOf('\n[status: ') + 1)
        const body = text.slice(0, text.length - status.length - 1)
        if (body !== '(no new output)') outputs.set(id, `${outputs.get(id) + body}\n`)
        if (status !== '[status: running]') {
          if (status !== '[status: completed, exit code: 0]') throw new Error(`${id}: ${status}`)
          pending.delete(id)
        }
      }),
    )
  }
  const ms = performance.now() - t
  let lost = 0
  ids.forEach((id, n) => {
    if (outputs.get(id) !== expected(n)) lost++
  })
  return { ms, reads, lost, bytes: [...outputs.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0) }
})
console.log(`\n${TASKS} background tasks of ${LINES} lines each, started and read concurrently`)
row(
  '  wall time, start to last completed read',
  `${background.result.ms.toFixed(0)} ms (${background.result.reads} bash_output calls)`,
)
row(
  '  tasks whose output differs from what they printed',
  `${background.result.lost} of ${TASKS} (${mib(background.result.bytes)} read)`,
)
row('  peak RSS growth', mib(background.peakGrowth))

// 3. 1 GiB through the bash tool: a 64 000-byte tail in memory; the spill file is dropped once it passes 64 MiB.
const bareShell = (command) =>
  new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { stdio: 'ignore' })
    child.once('error', reject)
    child.once('close', resolve)
  })
let spillPeak = 0
const spillSize = () => {
  let total = 0
  try {
    for (const dir of readdirSync(spillDir)) {
      for (const file of readdirSync(join(spillDir, dir))) {
        try {
          total += statSync(join(spillDir, dir, file)).size
        } catch {
          /* removed meanwhile */
        }
      }
    }
  } catch {
    /* not made yet */
  }
  return total
}
const head = `head -c ${GiB} /dev/zero`
const times = { limit: [], tool: [] }
let rssPeak = 0
let lastText = ''
for (let round = 0; round < 3; round++) {
  let t = performance.now()
  await bareShell(`${head} | cat > /dev/null`)
  times.limit.push(performance.now() - t)
  const sampler = setInterval(() => {
    spillPeak = Math.max(spillPeak, spillSize())
  }, 10)
  t = performance.now()
  const { result, peakGrowth } = await peakRssDuring(() => call('bash', { command: head, description: 'bench 1 GiB' }))
  times.tool.push(performance.now() - t)
  clearInterval(sampler)
  rssPeak = Math.max(rssPeak, peakGrowth)
  lastText = result
}
// The marker between head and tail (the streams are NUL bytes without a newline: printing a line of them garbles the table).
const notice =
  lastText
    .split('\n')
    .filter((line) => line.startsWith('['))
    .pop() ?? '(no marker line)'
const limit = median(times.limit),
  through = median(times.tool)
const gibPerS = (ms) => `${(1024 / 1024 / (ms / 1000)).toFixed(2)} GiB/s`
console.log('\n1 GiB of /dev/zero through the bash tool (median of 3 rounds)')
row('  head | cat > /dev/null (physical limit, no Node)', `${limit.toFixed(0)} ms  ${gibPerS(limit)}`)
row(
  '  bash tool, default config',
  `${through.toFixed(0)} ms  ${gibPerS(through)}  throughput ${ratio(limit, through)} of the limit`,
)
row('  peak RSS growth (worst round)', `${mib(rssPeak)} (goal < 64 MiB)`)
row(
  '  largest spill file size seen (cap 64 MiB)',
  `${mib(spillPeak)}; left on disk after the call: ${mib(spillSize())}`,
)
row('  marker line of the result', notice)

await ctx.fiber.dispose()
await rm(root, { recursive: true, force: true })
