// The workspace policy's cost to the file tools (docs/security.md#boundary): `read`, `grep` and `glob` through the tool
// pipeline with ctx.workspace loaded (open, then check the descriptor's real path, the identities of its
// directories, the hidden rules; rg run on the opened root) vs the same tools without it, in the same rounds.
// Goal: the policy must not make the file tools measurably slower (≤ 1.10×).
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import FsSearch from '@deepseek-ai/dsh-tool-fs-search'
import Workspace from '@deepseek-ai/dsh-workspace'
import { loadAverage, pairedRatios, row, summaryRow } from './lib.mjs'

const tree = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-bench-confined-')))
// A small project: files three levels deep (each read checks the identities of its directories up to the root).
const lines = Array.from({ length: 200 }, (_, i) => `export const value${i} = ${i} // line ${i}`).join('\n')
for (let d = 0; d < 20; d++) {
  mkdirSync(join(tree, 'src', `pkg${d}`, 'lib'), { recursive: true })
  for (let f = 0; f < 10; f++) writeFileSync(join(tree, 'src', `pkg${d}`, 'lib', `file${f}.ts`), `${lines}\n`)
}

async function context(confined) {
  const ctx = new Context()
  ctx.plugin(ToolsService)
  ctx.plugin(SystemPromptService)
  ctx.plugin(LocalSubprocess)
  if (confined) ctx.plugin(Workspace, { denyRead: ['secrets'] })
  ctx.plugin(ToolFs)
  ctx.plugin(FsSearch)
  for (
    let turn = 0;
    !ctx.get('tools')?.get('grep') || !ctx.get('tools')?.get('read') || (confined && !ctx.get('workspace'));
    turn++
  ) {
    if (turn > 10_000) throw new Error('the plugins never became active')
    await new Promise((resolve) => setImmediate(resolve))
  }
  const session = createSession({ id: 'bench', cwd: tree })
  return async (tool, args) => {
    const result = await ctx.tools.execute(tool, args, { session })
    if (result.isError) throw new Error(`${tool}: ${result.content[0].text.slice(0, 300)}`)
  }
}

const local = await context(false)
const confined = await context(true)
const READS = 100
const reads = (call) => async () => {
  for (let i = 0; i < READS; i++) await call('read', { path: `src/pkg${i % 20}/lib/file${i % 10}.ts`, limit: 50 })
}
const SEARCHES = 10
const searches = (call) => async () => {
  for (let i = 0; i < SEARCHES; i++) {
    await call('grep', { pattern: `value${i}7 ` })
    await call('glob', { pattern: '**/*.ts' })
  }
}

console.log(`load average ${loadAverage()}`)
// The read guard (tool-fs, loaded in both) copies or digests what was read after each call: settled between runs,
// so one run's deferred work is not timed in the next (the floor always runs first).
const settle = () => new Promise((resolve) => setTimeout(resolve, 50))
// `again`: the floor against itself, in the same rounds — how far this machine moves a ratio that should be 1.00.
const read = await pairedRatios(
  reads(local),
  { confined: reads(confined), again: reads(local) },
  { rounds: 25, warmup: 2, settle },
)
row(`read ×${READS}, no workspace (floor)`, `${read.floorMs.toFixed(1)} ms`)
row(`read ×${READS}, workspace policy`, `${read.confined.ms.toFixed(1)} ms`)
row('  noise, no goal: the floor against itself', `${read.again.ratio.toFixed(2)}×`)
summaryRow({
  figure: 'confined read (workspace policy)',
  value: read.confined.ratio,
  goal: 1.1,
  floor: 'read without workspace',
})
const search = await pairedRatios(searches(local), { confined: searches(confined) }, { rounds: 9, warmup: 1 })
row(`grep + glob ×${SEARCHES}, no workspace (floor)`, `${search.floorMs.toFixed(1)} ms`)
row(`grep + glob ×${SEARCHES}, workspace policy`, `${search.confined.ms.toFixed(1)} ms`)
summaryRow({
  figure: 'confined grep + glob (workspace policy)',
  value: search.confined.ratio,
  goal: 1.1,
  floor: 'grep + glob without workspace',
})
rmSync(tree, { recursive: true, force: true })
process.exit(0)
