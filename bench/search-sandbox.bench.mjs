// glob and grep under --sandbox (ripgrep inside the session's sandbox, docs/security.md#boundary) against the same calls without
// it, on the search corpus: the shipped composition (createDefaultContext) both ways, in-process and warm, each row
// the median of per-round ratios of paired runs (pairedRatios: the unsandboxed call is the floor). Goal 1.15×.
// Needs `npm run build` first (imports the built packages) and bubblewrap.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { rgPath } from '@vscode/ripgrep'
import { createDefaultContext, createSession } from 'dsh-agent-tools'
import { buildCorpus, tree } from './corpus.mjs'
import { loadAverage, pairedRatios, row, summaryRow } from './lib.mjs'

buildCorpus()

async function host(sandbox) {
  const host = await createDefaultContext({ sandbox, log: () => {} })
  const session = createSession({ id: `bench-${sandbox ? 'sandbox' : 'plain'}`, cwd: tree })
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
    { rounds: 11, warmup: 1 },
  )
  summaryRow({
    figure: `${label}: --sandbox / without`,
    value: result.tool.ratio,
    goal: 1.15,
    floor: 'same call without --sandbox',
  })
  row(`  ${same}`, `sandboxed ${result.tool.ms.toFixed(1)} ms, without ${result.floorMs.toFixed(1)} ms`)
}
// The floor of a namespace per call, in the same run: rg in a bare bubblewrap (the same namespaces, no masks, no
// seccomp, no wrapper) against rg alone. What a sandboxed call costs beyond the unsandboxed one, less this, is dsh's.
const exec = (argv) =>
  new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.resume()
    child.once('error', reject)
    child.once('close', resolve)
  })
const small = ['--files', '--', join(tree, 'node_modules', 'clsx')]
const bareNamespace = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--as-pid-1']
const floor = await pairedRatios(() => exec([rgPath, ...small]), {
  bwrap: () => exec(['bwrap', ...bareNamespace, '--', rgPath, ...small]),
})
row(
  'floor, no goal: rg --files (small subtree) in a bare bwrap / alone',
  `${floor.bwrap.ratio.toFixed(2)}× (${floor.bwrap.ms.toFixed(1)} ms vs ${floor.floorMs.toFixed(1)} ms: ${(floor.bwrap.ms - floor.floorMs).toFixed(1)} ms a call)`,
)
console.log(`# load average at end: ${loadAverage()}`)
await plain.host.dispose()
await sandboxed.host.dispose()
