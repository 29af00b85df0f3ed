// What the result budget costs (DESIGN §12), as ratios against a floor measured in the same run, paired call by call
// (median of per-pair ratios), with the load average printed:
//   1. collect mode with a head (headBytes) and newline counting vs a bare Node pipe that discards, on 64 MiB of
//      short lines (a newline every 8 bytes: the worst case for counting) and 64 MiB without a newline;
//   2. the bash tool, `seq 1 400000` through the shipped composition (collect, head + tail, one cut marker, 30 000
//      bytes) vs a bare `bash -c 'seq 1 400000'` read to end.
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { LocalSubprocess } from '@deepseek-ai/dsh-subprocess-local'
import { createDefaultContext } from '@deepseek-ai/dsh'
import { median, mib, peakRssDuring, row } from './lib.mjs'

const ROUNDS = 7
const dir = await mkdtemp(join(tmpdir(), 'dsh-budget-bench-'))
const MiB = 1048576
const lines = join(dir, 'lines.txt')
const flat = join(dir, 'flat.txt')
await writeFile(lines, '1234567\n'.repeat(8 * MiB)) // 64 MiB, 8 Mi lines
await writeFile(flat, Buffer.alloc(64 * MiB, 'x'))

const load = () => loadavg().map((n) => n.toFixed(2)).join(' ')
console.log(`load average at start: ${load()}`)

const bare = (argv) => new Promise((resolve, reject) => {
  const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
  child.once('error', reject)
  child.stdout.resume()
  child.stderr.resume()
  child.once('close', resolve)
})

/** Runs `a` and `b` alternately, ROUNDS times after one warm-up pair; the median of the per-pair ratios a/b. */
async function paired(a, b) {
  const ratios = []
  const times = { a: [], b: [] }
  for (let round = 0; round <= ROUNDS; round++) {
    let start = performance.now()
    await a()
    const ta = performance.now() - start
    start = performance.now()
    await b()
    const tb = performance.now() - start
    if (round === 0) continue
    ratios.push(ta / tb)
    times.a.push(ta)
    times.b.push(tb)
  }
  return { ratio: median(ratios), a: median(times.a), b: median(times.b) }
}

// 1. Collect mode with a head: the per-chunk newline count and the head copy.
const ctx = new Context()
await ctx.plugin(LocalSubprocess, { spillDir: dir })
const seam = ctx.subprocess
const collect = { maxBytes: 64000, headBytes: 64000 }
for (const [name, file] of [['64 MiB of 8-byte lines', lines], ['64 MiB without a newline', flat]]) {
  let counted = 0
  const viaSeam = async () => {
    const handle = await seam.spawn({ argv: ['cat', file], cwd: dir, stdin: 'ignore', stdout: collect, stderr: collect, graceMs: 1000 })
    await handle.done
    counted = handle.collected.stdout.totalLines
  }
  const result = await paired(viaSeam, () => bare(['cat', file]))
  const { peakGrowth } = await peakRssDuring(viaSeam)
  row(`collect (head + tail + line count), ${name}`, `${result.a.toFixed(0)} ms vs bare pipe ${result.b.toFixed(0)} ms: ${result.ratio.toFixed(3)}× (median of per-pair ratios); ${counted} lines counted; peak RSS growth ${mib(peakGrowth)}`)
}

// 2. The bash tool through the shipped composition, against bare bash read to end.
const host = await createDefaultContext({ log: () => {} })
const session = { id: 'bench', cwd: dir }
let size = 0
const viaTool = async () => {
  const result = await host.ctx.tools.execute('bash', { command: 'seq 1 400000', description: 'bench' }, { session })
  size = Buffer.byteLength(result.content[0].text)
}
const tool = await paired(viaTool, () => bare(['bash', '-c', 'seq 1 400000']))
row('bash tool `seq 1 400000` (head + marker + tail)', `${tool.a.toFixed(1)} ms vs bare bash ${tool.b.toFixed(1)} ms: ${tool.ratio.toFixed(3)}×; result ${size} bytes`)
await host.dispose()
await ctx.fiber.dispose()
console.log(`load average at end: ${load()}`)
await rm(dir, { recursive: true, force: true })
