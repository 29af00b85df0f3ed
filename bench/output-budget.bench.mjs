// What the result budget costs (docs/model-surface.md#budgets), as ratios against a floor measured in the same run, paired call by call
// (pairedRatios: median of per-call ratios), with the load average printed; rows in the summary table:
//   1. collect mode with a head (headBytes) and newline counting vs a bare Node pipe that discards, on 64 MiB of
//      short lines (a newline every 8 bytes: the worst case for counting) and 64 MiB without a newline;
//   2. the bash tool, `seq 1 400000` through the shipped composition (collect, head + tail, one cut marker, 30 000
//      bytes) vs a bare `bash -c 'seq 1 400000'` read to end.
import { createSession } from '@deepseek-ai/dsh-tools'
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { LocalSubprocess } from '@deepseek-ai/dsh-subprocess-local'
import { createDefaultContext } from 'dsh-agent-tools'
import { loadAverage, mib, pairedRatios, peakRssDuring, row, summaryRow } from './lib.mjs'

const ROUNDS = 9
const dir = await mkdtemp(join(tmpdir(), 'dsh-budget-bench-'))
const MiB = 1048576
const lines = join(dir, 'lines.txt')
const flat = join(dir, 'flat.txt')
await writeFile(lines, '1234567\n'.repeat(8 * MiB)) // 64 MiB, 8 Mi lines
await writeFile(flat, Buffer.alloc(64 * MiB, 'x'))

console.log(`load average at start: ${loadAverage()}`)

const bare = (argv) =>
  new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    child.once('error', reject)
    child.stdout.resume()
    child.stderr.resume()
    child.once('close', resolve)
  })

// 1. Collect mode with a head: the per-chunk newline count and the head copy.
const ctx = new Context()
await ctx.plugin(LocalSubprocess, { spillDir: dir })
const seam = ctx.subprocess
const collect = { maxBytes: 64000, headBytes: 64000 }
// The flat file is the seam's own collect cost (no newline to count): printed, not a goal of the budget's.
for (const [name, file, goal] of [
  ['64 MiB of 8-byte lines', lines, 2.5],
  ['64 MiB without a newline', flat, undefined],
]) {
  let counted = 0
  const viaSeam = async () => {
    const handle = await seam.spawn({
      argv: ['cat', file],
      cwd: dir,
      stdin: 'ignore',
      stdout: collect,
      stderr: collect,
      graceMs: 1000,
    })
    await handle.done
    counted = handle.collected.stdout.totalLines
  }
  const result = await pairedRatios(() => bare(['cat', file]), { collect: viaSeam }, { rounds: ROUNDS })
  const { peakGrowth } = await peakRssDuring(viaSeam)
  row(
    `collect (head + tail + line count), ${name}`,
    `${result.collect.ms.toFixed(0)} ms vs bare pipe ${result.floorMs.toFixed(0)} ms; ${counted} lines counted; peak RSS growth ${mib(peakGrowth)}`,
  )
  row('  ratio (median of per-call ratios)', `${result.collect.ratio.toFixed(3)}× of the bare pipe`)
  if (goal !== undefined)
    summaryRow({
      figure: `collect with head + line count, ${name}`,
      value: result.collect.ratio,
      goal,
      floor: 'bare Node pipe',
    })
  summaryRow({
    figure: `collect with head + line count, ${name}: peak RSS growth`,
    value: peakGrowth / 1048576,
    goal: 64,
    unit: 'MiB',
  })
}

// 2. The bash tool through the shipped composition, against bare bash read to end.
const host = await createDefaultContext({ log: () => {} })
const session = createSession({ id: 'bench', cwd: dir })
let size = 0
const viaTool = async () => {
  const result = await host.ctx.tools.execute('bash', { command: 'seq 1 400000', description: 'bench' }, { session })
  size = Buffer.byteLength(result.content[0].text)
}
const tool = await pairedRatios(() => bare(['bash', '-c', 'seq 1 400000']), { tool: viaTool }, { rounds: ROUNDS })
row(
  'bash tool `seq 1 400000` (head + marker + tail)',
  `${tool.tool.ms.toFixed(1)} ms vs bare bash ${tool.floorMs.toFixed(1)} ms; result ${size} bytes`,
)
summaryRow({
  figure: 'bash tool `seq 1 400000` within the 30 000-byte budget',
  value: tool.tool.ratio,
  goal: 2.0,
  floor: 'bare bash read to end',
})
await host.dispose()
await ctx.fiber.dispose()
console.log(`load average at end: ${loadAverage()}`)
await rm(dir, { recursive: true, force: true })
