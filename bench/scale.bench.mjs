// glob and grep at monorepo scale (docs/model-surface.md#budgets): x1, x4 and x10 copies of the search corpus (hard links,
// built on first use under the git-ignored bench/corpus/scale), each row the tool beside the bare rg floor in the same
// run — `rg --json function` read to the end, `rg --files --sort=modified` — with the peak RSS of the process that
// runs the tool. Each size and tool is measured in a fresh Node process (this file, run with --child), so that its
// peak RSS (getrusage maxrss) is that call's and nothing else's.
//
// Builds the corpus of bench/corpus.mjs on first use; needs `npx tsc -b`. DSH_SCALE_SIZES=1,4 limits the sizes (the x10 copies take a minute to link and ~1 min to measure).
import { createSession } from '@deepseek-ai/dsh-tools'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { buildCorpus, corpus, tree, VCS } from './corpus.mjs'
import { median, row, summaryRow } from './lib.mjs'

const scale = join(corpus, 'scale')

const GOALS = {
  grep: { ratio: 1.5, floor: 'bare rg --json function read to end' },
  glob: { ratio: 1.3, floor: 'bare rg --files --sort=modified' },
}
const RSS_GOAL_MIB = 160

/** `xN`: N hard-linked copies of the corpus tree side by side, an ignore rule that keeps node_modules searchable. */
function sizedTree(copies) {
  if (copies === 1) return tree
  const root = join(scale, `x${copies}`)
  const marker = join(root, '.dsh-scale.json')
  const wanted = readFileSync(join(tree, '.dsh-corpus.json'), 'utf8')
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return root
  rmSync(root, { recursive: true, force: true })
  mkdirSync(root, { recursive: true })
  console.log(`linking ${copies} copies of the corpus into ${root}`)
  for (let i = 0; i < copies; i++) execFileSync('cp', ['-al', tree, join(root, `copy-${i}`)])
  // Its own repository root (see search.bench.mjs): the workspace's node_modules/ rule must not hide the copies.
  mkdirSync(join(root, '.git'), { recursive: true })
  writeFileSync(join(root, '.gitignore'), '!node_modules/\n')
  writeFileSync(marker, wanted)
  return root
}

if (process.argv[2] === '--child') await child(process.argv[3], process.argv[4], Number(process.argv[5]))
else await main()

async function main() {
  buildCorpus()
  const sizes = (process.env.DSH_SCALE_SIZES ?? '1,4,10').split(',').map(Number)
  console.log(
    '\n# scale: the tool (fresh process per row, warm) vs the bare rg floor in the same process, paired medians',
  )
  for (const copies of sizes) {
    const root = sizedTree(copies)
    for (const tool of ['grep', 'glob']) {
      const rounds = copies >= 10 ? 2 : 3
      const result = spawnSync(
        process.execPath,
        ['--expose-gc', fileURLToPath(import.meta.url), '--child', tool, root, String(rounds)],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      )
      const line = result.stdout.trim().split('\n').at(-1) ?? ''
      if (result.status !== 0 || !line.startsWith('{')) {
        console.log(
          `x${copies} ${tool}: the child failed (${result.status ?? result.signal}): ${result.stdout.slice(-500)}`,
        )
        process.exitCode = 1
        continue
      }
      const m = JSON.parse(line)
      const what = tool === 'grep' ? 'grep "function" (broad)' : 'glob "**/*.js"'
      summaryRow({
        figure: `x${copies} ${what}: time`,
        value: m.ratio,
        goal: GOALS[tool].ratio,
        floor: GOALS[tool].floor,
      })
      summaryRow({
        figure: `x${copies} ${what}: peak RSS of the tool's process`,
        value: m.maxRssMiB,
        goal: RSS_GOAL_MIB,
        unit: 'MiB',
      })
      row(
        `  ${m.header}`,
        `tool ${m.toolMs.toFixed(0)} ms, floor ${m.floorMs.toFixed(0)} ms, ${m.files} files in the tree`,
      )
    }
  }
  rmSync(join(corpus, 'spill-scale'), { recursive: true, force: true })
}

/** Runs `rounds` paired rounds of one tool over `root` (floor, then tool), then prints one JSON line. */
async function child(tool, root, rounds) {
  const { Context } = await import('cordis')
  const { rgPath } = await import('@vscode/ripgrep')
  const { ToolsService } = await import('@deepseek-ai/dsh-tools')
  const { SystemPromptService } = await import('@deepseek-ai/dsh-system-prompt')
  const { default: LocalSubprocess } = await import('@deepseek-ai/dsh-subprocess-local')
  const { default: LocalSpillStore } = await import('@deepseek-ai/dsh-spill-local')
  const { default: FsSearch } = await import('@deepseek-ai/dsh-tool-fs-search')
  const ctx = new Context()
  ctx.plugin(ToolsService)
  ctx.plugin(SystemPromptService)
  ctx.plugin(LocalSubprocess)
  ctx.plugin(LocalSpillStore, { root: join(corpus, 'spill-scale') })
  ctx.plugin(FsSearch, {})
  while (!ctx.get('tools')?.get('grep') || !ctx.get('spillStore')) await new Promise((resolve) => setImmediate(resolve))
  const session = createSession({ id: 'bench-scale', cwd: root })
  const args = tool === 'grep' ? { pattern: 'function' } : { pattern: '**/*.js' }
  const call = async (callArgs) => {
    const result = await ctx.tools.execute(tool, callArgs, { session })
    if (result.isError) throw new Error(`${tool} ${JSON.stringify(callArgs)}: ${result.content[0].text.slice(0, 300)}`)
    return result.content[0].text
  }
  const floorArgv =
    tool === 'grep'
      ? ['--no-config', '--json', '--no-require-git', '--regexp=function', '--', root]
      : [
          '--no-config',
          '--files',
          '--null',
          '--glob=**/*.js',
          '--no-ignore',
          '--hidden',
          '--sort=modified',
          ...VCS.map((d) => `--glob=!${d}/`),
          '--',
          root,
        ]
  const floor = () =>
    new Promise((resolve, reject) => {
      const started = performance.now()
      const rg = spawn(rgPath, floorArgv, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
      rg.stdout.on('data', () => {})
      rg.once('error', reject)
      rg.once('close', () => resolve(performance.now() - started))
    })
  // Warm the code paths on a small subtree first (the x10 call itself is too long to repeat as a warm-up).
  await call({ ...args, path: join(tree, 'node_modules', '@mui', 'material') })
  const ratios = []
  const toolMs = []
  const floorMs = []
  let header = ''
  for (let round = 0; round < rounds; round++) {
    const base = await floor()
    const started = performance.now()
    const text = await call(args)
    const ms = performance.now() - started
    header = text.split('\n')[0]?.startsWith('Found')
      ? text.split('\n')[0]
      : (/\[Showing \d+ of \d+ files/.exec(text)?.[0] ?? '').slice(1)
    ratios.push(ms / base)
    toolMs.push(ms)
    floorMs.push(base)
  }
  // Before anything else allocates: the peak of the calls themselves.
  const maxRssMiB = process.resourceUsage().maxRSS / 1024
  const files = Number(
    execFileSync(rgPath, ['--no-config', '--files', '--no-ignore', '--hidden', '--null', '--', root], {
      maxBuffer: 1 << 30,
    })
      .toString('latin1')
      .split('\0').length - 1,
  )
  await ctx.fiber.dispose()
  console.log(
    JSON.stringify({
      ratio: median(ratios),
      toolMs: median(toolMs),
      floorMs: median(floorMs),
      maxRssMiB,
      header,
      files,
    }),
  )
}
