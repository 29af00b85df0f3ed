// glob and grep through the tool (in-process, warm) against the identical ripgrep invocation spawned bare and read
// to the end — the floor, measured in the same run — on a real tree of more than 50 000 files: one row per query shape,
// each the median of per-call ratios of paired runs (pairedRatios: the floor, then the tool, in every round),
// with the goal beside it; plus the peak RSS growth of broad greps whose raw output passes rawOutputMaxBytes.
//
// The tree: a pinned set of npm packages installed into the git-ignored bench/corpus/tree (once; reused while the
// pin list is unchanged). Needs `npx tsc -b` first (imports the built packages).
import { execFileSync, spawn } from 'node:child_process'
import { rmSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { rgPath } from '@vscode/ripgrep'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import FsSearch from '@deepseek-ai/dsh-tool-fs-search'
import { buildCorpus, corpus, MIN_FILES, tree, VCS } from './corpus.mjs'
import { loadAverage, mib, pairedRatios, peakRssDuring, row, summaryRow } from './lib.mjs'

/** The identical rg invocation, spawned bare and read to the end. */
function bare(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let bytes = 0
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length
    })
    child.stderr.resume()
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, bytes }))
  })
}

/**
 * The simplest reader of docs/model-surface.md#tools's `rg --json`: the same rg, its output split into records and each one JSON.parse'd,
 * nothing kept. A reference for the broad rows, not a goal: the part of the tool's cost that any reader pays.
 */
function parsedBare(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let pending = ''
    let matches = 0
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (text) => {
      const records = (pending + text).split('\n')
      pending = records.pop()
      for (const record of records) if (JSON.parse(record).type === 'match') matches++
    })
    child.stderr.resume()
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, matches }))
  })
}

async function context({ spill = false, config = {} } = {}) {
  const ctx = new Context()
  ctx.plugin(ToolsService)
  ctx.plugin(SystemPromptService)
  ctx.plugin(LocalSubprocess)
  if (spill) ctx.plugin(LocalSpillStore, { root: join(corpus, 'spill') })
  ctx.plugin(FsSearch, config)
  for (let turn = 0; !ctx.get('tools')?.get('grep') || (spill && !ctx.get('spillStore')); turn++) {
    if (turn > 10_000) throw new Error('the search plugin never became active')
    await new Promise((resolve) => setImmediate(resolve))
  }
  const session = createSession({ id: 'bench', cwd: tree })
  return {
    ctx,
    async run(tool, args, expectError) {
      const result = await ctx.tools.execute(tool, args, { session })
      if (result.isError !== Boolean(expectError))
        throw new Error(`${tool} ${JSON.stringify(args)}: ${result.content[0].text.slice(0, 300)}`)
      return result
    },
  }
}

function countFiles() {
  const out = execFileSync(
    rgPath,
    ['--no-config', '--files', '--null', '--no-ignore', '--hidden', ...VCS.map((d) => `--glob=!${d}/`)],
    { cwd: tree, maxBuffer: 1 << 30 },
  )
  return out.toString('latin1').split('\0').filter(Boolean).length
}

/**
 * Tool vs floor as the paired median of per-call ratios (bench/lib.mjs), with the medians of each side; a
 * `reference` reader, when given, is timed in the same rounds.
 */
async function paired(candidate, floor, { rounds = 9, reference } = {}) {
  const result = await pairedRatios(
    floor,
    { tool: candidate, ...(reference ? { reference } : {}) },
    { rounds, warmup: 1 },
  )
  return { ratio: result.tool.ratio, tool: result.tool.ms, floor: result.floorMs, reference: result.reference }
}

const load = loadAverage

/** One row of the summary table (bench/lib.mjs summaryRow), then the medians behind it. */
function ratioRow(figure, floor, detail, { ratio, tool, floor: floorMs }, goal, cpu) {
  summaryRow({ figure, value: ratio, goal, floor })
  row(
    `  ${detail}`,
    `tool ${tool.toFixed(1)} ms, floor ${floorMs.toFixed(1)} ms${cpu === undefined ? '' : `, tool CPU ${cpu.toFixed(1)} ms`}`,
  )
}

/**
 * The CPU this process spends per call (process.cpuUsage: ripgrep is a child, so only the tool's own work and the
 * spawn), the median of `calls`: far steadier than wall time on a shared machine (docs/decisions/2026-12-01-search-cpu.md).
 */
async function cpuPerCall(fn, calls = 5) {
  const samples = []
  for (let i = 0; i < calls; i++) {
    const start = process.cpuUsage()
    await fn()
    const used = process.cpuUsage(start)
    samples.push((used.user + used.system) / 1000)
  }
  return samples.sort((a, b) => a - b)[samples.length >> 1]
}

buildCorpus()
const files = countFiles()
row('corpus files (bench/corpus/tree)', String(files))
if (files < MIN_FILES) throw new Error(`the corpus has ${files} files, fewer than ${MIN_FILES}`)

const plain = await context()
const spilled = await context({ spill: true })

// The tool's own grep argv without the prlimit prefix: the identical rg, bare.
const grepArgv = (pattern, root, include) => [
  '--no-config',
  '--json',
  '--no-require-git',
  `--regexp=${pattern}`,
  ...(include ? [`--glob=${include}`] : []),
  '--',
  root,
]
const vcs = VCS.map((d) => `--glob=!${d}/`)
const globArgv = (pattern, root) => [
  '--no-config',
  '--files',
  '--null',
  `--glob=${pattern}`,
  '--no-ignore',
  '--hidden',
  '--sort=modified',
  ...vcs,
  '--',
  root,
]

console.log(`\n# load average at start: ${load()} (${cpus().length} CPUs)`)
console.log('\n# rows: tool (in-process, warm) vs bare rg read to the end, paired medians of per-call ratios')

const subtree = join(tree, 'node_modules', '@mui', 'material')
const grepRows = [
  ['grep broad under a subtree', { pattern: 'React', path: subtree }, 1.2],
  ['grep broad over the whole tree (include *.js)', { pattern: 'function', include: '*.js' }, 1.25],
  ['grep rare', { pattern: 'queueMicrotask' }, 1.05],
  ['grep regex', { pattern: 'use[A-Z]\\w+Effect\\(' }, 1.05],
  ['grep include', { pattern: 'createTheme', include: '*.d.ts' }, 1.05],
]
for (const [label, args, goal] of grepRows) {
  const root = args.path ?? tree
  const argv = grepArgv(args.pattern, root, args.include)
  const probe = await bare(argv, tree)
  const header = (await spilled.run('grep', args)).content[0].text.split('\n')[0]
  const reference = label.includes('broad') ? () => parsedBare(argv, tree) : undefined
  const result = await paired(
    () => spilled.run('grep', args),
    () => bare(argv, tree),
    { rounds: label.includes('whole') ? 5 : 9, reference },
  )
  const cpu = await cpuPerCall(() => spilled.run('grep', args), label.includes('whole') ? 3 : 5)
  ratioRow(label, 'bare rg --json read to end', `${header}, ${mib(probe.bytes)} raw JSON`, result, goal, cpu)
  if (result.reference)
    row(
      "  reference, no goal: the same rg, each record JSON.parse'd",
      `${result.reference.ratio.toFixed(2)}× (${result.reference.ms.toFixed(1)} ms)`,
    )
}

const globRows = [
  ['glob small subtree', { pattern: '*', path: join(tree, 'node_modules', 'clsx') }, 1.05],
  ['glob **/*.ts over the whole tree', { pattern: '**/*.ts' }, 1.0],
]
for (const [label, args, goal] of globRows) {
  const root = args.path ?? tree
  const argv = globArgv(args.pattern, root)
  const count = (await spilled.run('glob', args)).content[0].text
  const shown = /\[Showing \d+ of (\d+) files/.exec(count)?.[1] ?? String(count.split('\n').length)
  const result = await paired(
    () => spilled.run('glob', args),
    () => bare(argv, root),
    { rounds: 9 },
  )
  const cpu = await cpuPerCall(() => spilled.run('glob', args))
  ratioRow(label, 'bare rg --files --sort=modified', `${shown} files`, result, goal, cpu)
}

console.log(`\n# memory: broad greps past rawOutputMaxBytes (20 MB of raw JSON), answered; load average ${load()}`)
for (const args of [
  { pattern: 'function', include: '*.js' },
  { pattern: 'jsx' },
  { pattern: 'Object\\.defineProperty' },
]) {
  const argv = grepArgv(args.pattern, tree, args.include)
  const probe = await bare(argv, tree)
  const { result, peakGrowth } = await peakRssDuring(() => spilled.run('grep', args))
  const header = result.content[0].text.split('\n')[0]
  const timing = await paired(
    () => spilled.run('grep', args),
    () => bare(argv, tree),
    { rounds: 3 },
  )
  const what = `grep "${args.pattern}"${args.include ? ` include ${args.include}` : ''} past rawOutputMaxBytes`
  summaryRow({ figure: `${what}: peak RSS growth`, value: peakGrowth / 1048576, goal: 64, unit: 'MiB' })
  summaryRow({ figure: `${what}: time`, value: timing.ratio, goal: 1.25, floor: 'bare rg --json read to end' })
  row(
    `  ${header}, ${mib(probe.bytes)} raw JSON`,
    `tool ${timing.tool.toFixed(0)} ms, floor ${timing.floor.toFixed(0)} ms`,
  )
}
console.log(`# load average at end: ${load()}`)

await plain.ctx.fiber.dispose()
await spilled.ctx.fiber.dispose()
rmSync(join(corpus, 'spill'), { recursive: true, force: true })
