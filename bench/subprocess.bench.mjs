// ctx.subprocess (local provider) against the bare Node/OS equivalents, side by side in one run:
//   1. per-spawn overhead of `true` through the seam vs a bare child_process.spawn;
//   2. 1 GiB of output through collect mode vs the same stream into `cat > /dev/null` (no Node in the data path)
//      and vs a bare Node pipe that discards what it reads; peak RSS growth of collect mode;
//   3. 256 MiB through collect mode with spill (the whole stream written to a file): peak RSS growth.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { LocalSubprocess } from '@deepseek-ai/dsh-subprocess-local'
import { childEnv } from '@deepseek-ai/dsh-subprocess'
import { median, mib, peakRssDuring, ratio, row } from './lib.mjs'

const GiB = 1073741824
const spillRoot = await mkdtemp(join(tmpdir(), 'dsh-subprocess-bench-'))
const ctx = new Context()
await ctx.plugin(LocalSubprocess, { spillDir: spillRoot })
const seam = ctx.subprocess
const base = { cwd: process.cwd(), stdin: 'ignore', graceMs: 1000 }

const bareExit = (file, args, stdio, options = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio, ...options })
    child.once('error', reject)
    if (child.stdout) child.stdout.resume()
    if (child.stderr) child.stderr.resume()
    child.once('close', resolve)
  })

// 1. Per-spawn overhead. The seam must spawn `detached` (setsid: a process group of its own), which on a kernel with
// CONFIG_SCHED_AUTOGROUP also puts the child in a new scheduling group: on a loaded machine that alone costs
// latency, so a bare detached spawn is measured too, to separate the OS's share from the seam's.
// The candidates alternate spawn by spawn (a, b, c, d, a, b, …), so that a burst of load
// on the machine hits all of them alike; each figure is the median of 600 single spawns.
const SPAWNS = 600
const candidates = {
  bareIgnore: () => bareExit('true', [], 'ignore'),
  bareDetached: () => bareExit('true', [], 'ignore', { detached: true }),
  bareSeamOptions: () => bareExit('true', [], 'ignore', { detached: true, cwd: process.cwd(), env: childEnv() }),
  seamIgnore: async () => {
    await (await seam.spawn({ ...base, argv: ['true'], stdout: 'ignore', stderr: 'ignore' })).done
  },
  barePipes: () => bareExit('true', [], ['ignore', 'pipe', 'pipe']),
  seamCollect: async () => {
    await (await seam.spawn({ ...base, argv: ['true'], stdout: { maxBytes: 64000 }, stderr: { maxBytes: 64000 } })).done
  },
}
const samples = Object.fromEntries(Object.keys(candidates).map((name) => [name, []]))
for (let i = 0; i < SPAWNS + 20; i++) {
  for (const [name, fn] of Object.entries(candidates)) {
    const t = performance.now()
    await fn()
    if (i >= 20) samples[name].push(performance.now() - t) // the first 20 rounds warm up
  }
}
const spawnMs = Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]))
console.log(`per-spawn cost of \`true\` (median of ${SPAWNS} spawns each, interleaved)`)
row('  bare child_process.spawn, stdio ignore', `${spawnMs.bareIgnore.toFixed(3)} ms`)
row(
  '  bare child_process.spawn, stdio ignore, detached (setsid)',
  `${spawnMs.bareDetached.toFixed(3)} ms  ${ratio(spawnMs.bareDetached, spawnMs.bareIgnore)}`,
)
row(
  '  bare, detached + cwd + scrubbed env (what the seam asks)',
  `${spawnMs.bareSeamOptions.toFixed(3)} ms  ${ratio(spawnMs.bareSeamOptions, spawnMs.bareIgnore)}`,
)
row(
  '  seam spawn + done, stdout/stderr ignore',
  `${spawnMs.seamIgnore.toFixed(3)} ms  ${ratio(spawnMs.seamIgnore, spawnMs.bareIgnore)} of bare (goal <= 1.15×), ${ratio(spawnMs.seamIgnore, spawnMs.bareSeamOptions)} of bare with the same options`,
)
row('  bare child_process.spawn, stdout/stderr pipes read', `${spawnMs.barePipes.toFixed(3)} ms`)
row(
  '  seam spawn + done, stdout/stderr collected',
  `${spawnMs.seamCollect.toFixed(3)} ms  ${ratio(spawnMs.seamCollect, spawnMs.barePipes)}`,
)

// 2. 1 GiB through collect mode.
const head = ['head', '-c', String(GiB), '/dev/zero']
const rates = { shell: [], bareNode: [], collect: [] }
let collectPeak = 0
let barePeak = 0
for (let round = 0; round < 3; round++) {
  let t = performance.now()
  await bareExit('sh', ['-c', `${head.join(' ')} | cat > /dev/null`], 'ignore')
  rates.shell.push(performance.now() - t)
  t = performance.now()
  const bare = await peakRssDuring(() => bareExit(head[0], head.slice(1), ['ignore', 'pipe', 'ignore']))
  rates.bareNode.push(performance.now() - t)
  barePeak = Math.max(barePeak, bare.peakGrowth)
  t = performance.now()
  const { result, peakGrowth } = await peakRssDuring(async () => {
    const handle = await seam.spawn({ ...base, argv: head, stdout: { maxBytes: 64000 }, stderr: { maxBytes: 64000 } })
    await handle.done
    return handle.collected.stdout.totalBytes
  })
  rates.collect.push(performance.now() - t)
  if (result !== GiB) throw new Error(`collect mode saw ${result} bytes`)
  collectPeak = Math.max(collectPeak, peakGrowth)
}
const gibPerS = (ms) => `${(GiB / 1048576 / 1024 / (ms / 1000)).toFixed(2)} GiB/s`
const shell = median(rates.shell),
  bareNode = median(rates.bareNode),
  collect = median(rates.collect)
console.log('\n1 GiB of /dev/zero (median of 3 rounds)')
row('  head | cat > /dev/null (physical limit, no Node)', `${shell.toFixed(0)} ms  ${gibPerS(shell)}`)
row(
  '  bare Node pipe, read and discarded',
  `${bareNode.toFixed(0)} ms  ${gibPerS(bareNode)}  throughput ${ratio(shell, bareNode)} of the limit`,
)
row(
  '  seam collect mode (64 000-byte tail)',
  `${collect.toFixed(0)} ms  ${gibPerS(collect)}  throughput ${ratio(shell, collect)} of the limit, ${ratio(bareNode, collect)} of bare Node`,
)
row('  bare Node pipe, peak RSS growth (worst round)', mib(barePeak))
row('  seam collect mode, peak RSS growth (worst round)', `${mib(collectPeak)} (goal < 64 MiB)`)

// 3. 256 MiB through collect mode with spill: the file writer must not buffer what the disk has not taken.
const SPILL = 256 * 1048576
let spillPeak = 0
const spillTimes = []
for (let round = 0; round < 3; round++) {
  const t = performance.now()
  const { result, peakGrowth } = await peakRssDuring(async () => {
    const handle = await seam.spawn({
      ...base,
      argv: ['head', '-c', String(SPILL), '/dev/zero'],
      stdout: { maxBytes: 64000, spill: { maxBytes: 2 * SPILL } },
      stderr: 'ignore',
    })
    await handle.done
    const path = handle.collected.stdout.spillPath
    await rm(path)
    return handle.collected.stdout.totalBytes
  })
  spillTimes.push(performance.now() - t)
  if (result !== SPILL) throw new Error(`spill mode saw ${result} bytes`)
  spillPeak = Math.max(spillPeak, peakGrowth)
}
console.log('\n256 MiB through collect mode with spill to a file (median of 3 rounds)')
row(
  '  seam collect + spill',
  `${median(spillTimes).toFixed(0)} ms  ${(256 / (median(spillTimes) / 1000)).toFixed(0)} MiB/s`,
)
row('  seam collect + spill, peak RSS growth (worst round)', `${mib(spillPeak)} (goal < 64 MiB)`)

await ctx.fiber.dispose()
await rm(spillRoot, { recursive: true, force: true })
