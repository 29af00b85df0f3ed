// glob and grep under --sandbox (ripgrep inside the session's sandbox, docs/security.md#boundary) against the same calls without
// it, on the search corpus: the shipped composition (createDefaultContext) both ways, in-process and warm, each row
// the median of per-round ratios of paired runs (pairedRatios: the unsandboxed call is the floor). Goal 1.15×.
// Needs `npm run build` first (imports the built packages) and bubblewrap.
import { join } from 'node:path'
import { createDefaultContext } from 'dsh-agent-tools'
import { buildCorpus, tree } from './corpus.mjs'
import { loadAverage, pairedRatios, row, summaryRow } from './lib.mjs'

buildCorpus()

async function host(sandbox) {
  const host = await createDefaultContext({ sandbox, log: () => {} })
  const session = { id: `bench-${sandbox ? 'sandbox' : 'plain'}`, cwd: tree }
  return {
    host,
    run: async (tool, args) => {
      const result = await host.ctx.tools.execute(tool, args, { session })
      if (result.isError) throw new Error(`${tool} ${JSON.stringify(args)}: ${result.content[0].text.slice(0, 300)}`)
      return result
    },
  }
}

const plain = await host(false)
const sandboxed = await host(true)
console.log(`\n# sandboxed vs unsandboxed search on the corpus; load average at start: ${loadAverage()}`)

const subtree = join(tree, 'node_modules', '@mui', 'material')
const rows = [
  ['grep broad under a subtree', 'grep', { pattern: 'React', path: subtree }],
  ['grep rare', 'grep', { pattern: 'queueMicrotask' }],
  ['grep regex', 'grep', { pattern: 'use[A-Z]\\w+Effect\\(' }],
  ['glob small subtree', 'glob', { pattern: '*', path: join(tree, 'node_modules', 'clsx') }],
  ['glob **/*.ts over the whole tree', 'glob', { pattern: '**/*.ts' }],
]
for (const [label, tool, args] of rows) {
  const same = (await plain.run(tool, args)).content[0].text.split('\n')[0]
  const confined = (await sandboxed.run(tool, args)).content[0].text.split('\n')[0]
  if (same !== confined) throw new Error(`${label}: "${same}" unsandboxed, "${confined}" sandboxed`)
  const result = await pairedRatios(
    () => plain.run(tool, args),
    { tool: () => sandboxed.run(tool, args) },
    { rounds: 7, warmup: 1 },
  )
  summaryRow({
    figure: `${label}: --sandbox / without`,
    value: result.tool.ratio,
    goal: 1.15,
    floor: 'same call without --sandbox',
  })
  row(`  ${same}`, `sandboxed ${result.tool.ms.toFixed(1)} ms, without ${result.floorMs.toFixed(1)} ms`)
}
console.log(`# load average at end: ${loadAverage()}`)
await plain.host.dispose()
await sandboxed.host.dispose()
