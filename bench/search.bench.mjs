// glob and grep through the tool (in-process, warm) against the identical ripgrep invocation spawned bare and read
// to the end — the physical limit — on a real tree of more than 50 000 files, plus peak RSS of a grep that hits
// the raw-output cap, plus the glob-ordering candidates (docs/decisions/2026-11-30-glob-ordering.md).
//
// The tree: a pinned set of npm packages installed into the git-ignored bench/corpus/tree (once; reused while the
// pin list is unchanged). Needs `npx tsc -b` first (imports the built packages).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import { rgPath } from '@vscode/ripgrep'
import { ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import FsSearch from '@deepseek-ai/dsh-tool-fs-search'
import { median, mib, peakRssDuring, ratio, row, sideBySide } from './lib.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const corpus = join(here, 'corpus')
const tree = join(corpus, 'tree')

// Every package npm hoists, at an exact version, so that the tree is the same on every machine.
const PINNED = [
  '@mui/icons-material@5.15.0', '@mui/material@5.15.0', 'date-fns@3.6.0', 'typescript@5.6.3', 'rxjs@7.8.1',
  'lodash@4.17.21', 'lodash-es@4.17.21', 'core-js@3.37.1',
  '@babel/runtime@7.29.15', '@emotion/cache@11.14.0', '@emotion/hash@0.9.2', '@emotion/memoize@0.9.0',
  '@emotion/serialize@1.3.3', '@emotion/sheet@1.4.0', '@emotion/unitless@0.10.0', '@emotion/utils@1.4.2',
  '@emotion/weak-memoize@0.4.0', '@floating-ui/core@1.8.0', '@floating-ui/dom@1.8.0', '@floating-ui/react-dom@2.1.9',
  '@floating-ui/utils@0.2.12', '@mui/base@5.0.0-beta.27', '@mui/core-downloads-tracker@5.18.0',
  '@mui/private-theming@5.17.1', '@mui/styled-engine@5.18.0', '@mui/system@5.18.0', '@mui/types@7.4.12',
  '@mui/utils@5.17.1', '@popperjs/core@2.11.8', '@types/prop-types@15.7.15', '@types/react-transition-group@4.4.12',
  'clsx@2.1.1', 'csstype@3.2.4', 'dom-helpers@5.2.1', 'js-tokens@4.0.0', 'loose-envify@1.4.0', 'object-assign@4.1.1',
  'prop-types@15.8.1', 'react-is@18.3.1', 'react-transition-group@4.4.5', 'stylis@4.2.0', 'tslib@2.9.1',
]
const MIN_FILES = 50_000
const VCS = ['.git', '.svn', '.hg', '.bzr', '.jj', '.sl']

function buildCorpus() {
  const marker = join(tree, '.dsh-corpus.json')
  const wanted = JSON.stringify(PINNED)
  if (existsSync(marker) && readFileSync(marker, 'utf8') === wanted) return
  rmSync(tree, { recursive: true, force: true })
  mkdirSync(tree, { recursive: true })
  writeFileSync(join(tree, 'package.json'), '{ "name": "dsh-bench-corpus", "private": true }\n')
  console.log(`building the corpus: npm install of ${PINNED.length} pinned packages into ${tree}`)
  // Its own prefix, no lockfile, no scripts: the workspace's lockfile and node_modules are never touched.
  execFileSync('npm', ['install', '--prefix', tree, '--no-package-lock', '--no-save', '--ignore-scripts', '--no-audit',
    '--no-fund', '--workspaces=false', '--legacy-peer-deps', ...PINNED], { cwd: tree, stdio: ['ignore', 'ignore', 'inherit'] })
  // An (empty) .git makes the tree a repository root of its own, so the workspace's .gitignore (which ignores
  // node_modules/ and bench/corpus/) does not hide it from grep's default visibility.
  mkdirSync(join(tree, '.git'), { recursive: true })
  writeFileSync(marker, wanted)
}

/** The identical rg invocation, spawned bare and read to the end. */
function bare(args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(rgPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let bytes = 0
    child.stdout.on('data', (chunk) => { bytes += chunk.length })
    child.stderr.resume()
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, bytes }))
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
  const session = { id: 'bench', cwd: tree }
  return {
    ctx,
    async run(tool, args, expectError) {
      const result = await ctx.tools.execute(tool, args, { session })
      if (result.isError !== Boolean(expectError)) throw new Error(`${tool} ${JSON.stringify(args)}: ${result.content[0].text.slice(0, 300)}`)
      return result
    },
  }
}

/** Median CPU time (user + system) of this process per call: what the tool adds, whatever else the machine runs. */
async function cpuPerCall(fn, rounds = 5) {
  const samples = []
  for (let i = 0; i < rounds; i++) {
    const start = process.cpuUsage()
    await fn()
    const used = process.cpuUsage(start)
    samples.push((used.user + used.system) / 1000)
  }
  return median(samples)
}

function countFiles() {
  const out = execFileSync(rgPath, ['--no-config', '--files', '--null', '--no-ignore', '--hidden', ...VCS.map((d) => `--glob=!${d}/`)], { cwd: tree, maxBuffer: 1 << 30 })
  return out.toString('latin1').split('\0').filter(Boolean).length
}

buildCorpus()
const files = countFiles()
row('corpus files (bench/corpus/tree)', String(files))
if (files < MIN_FILES) throw new Error(`the corpus has ${files} files, fewer than ${MIN_FILES}`)

const plain = await context()
const spilled = await context({ spill: true })

console.log(`\n# load average at start: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')} (${(await import('node:os')).cpus().length} CPUs)`)
console.log('\n# grep: tool (in-process, warm) vs the identical bare rg read to the end')
for (const [label, pattern] of [['broad', 'React'], ['broad, one match per file', 'export default'], ['rare', 'queueMicrotask']]) {
  const argv = ['--no-config', '--json', `--regexp=${pattern}`, '--', tree]
  const sortedArgv = ['--no-config', '--json', '--sort=path', `--regexp=${pattern}`, '--', tree]
  const probe = await bare(argv, tree)
  const shown = (await plain.run('grep', { pattern })).content[0].text.split('\n')[0]
  const times = await sideBySide({
    bare: () => bare(argv, tree),
    tool: () => plain.run('grep', { pattern }),
    'tool + LocalSpillStore': () => spilled.run('grep', { pattern }),
    'bare --sort=path': () => bare(sortedArgv, tree),
  }, { rounds: 7, warmup: 1 })
  row(`grep ${label} "${pattern}" (${shown}; ${mib(probe.bytes)} raw)`, '')
  row('  bare rg', `${times.bare.toFixed(1)} ms`)
  row('  bare rg --sort=path (one thread; the ordering alternative)', `${times['bare --sort=path'].toFixed(1)} ms  ${ratio(times['bare --sort=path'], times.bare)}`)
  row('  tool, no spill store', `${times.tool.toFixed(1)} ms  ${ratio(times.tool, times.bare)}`)
  row('  tool + LocalSpillStore (complete result saved)', `${times['tool + LocalSpillStore'].toFixed(1)} ms  ${ratio(times['tool + LocalSpillStore'], times.bare)}`)
  const cpuBare = await cpuPerCall(() => bare(argv, tree))
  const cpuTool = await cpuPerCall(() => plain.run('grep', { pattern }))
  row('  CPU of this process per call: bare read / tool', `${cpuBare.toFixed(1)} ms / ${cpuTool.toFixed(1)} ms`)
}

console.log('\n# memory: a grep that hits the 20 MB raw-output cap')
for (const pattern of ['jsx', 'Object\\.defineProperty']) {
  const { result, peakGrowth } = await peakRssDuring(() => plain.run('grep', { pattern }, true))
  row(`grep "${pattern}" → ${result.error.code}`, `peak RSS growth ${mib(peakGrowth)}`)
}
{
  const { peakGrowth } = await peakRssDuring(() => plain.run('grep', { pattern: 'React' }))
  row('grep "React" (4 MB raw, under the cap), for comparison', `peak RSS growth ${mib(peakGrowth)}`)
}

console.log('\n# glob: ordering by modification time, ties by path')
const vcs = VCS.map((d) => `--glob=!${d}/`)
const globArgv = (pattern, sort) => ['--no-config', '--files', '--null', `--glob=${pattern}`, '--no-ignore', '--hidden', ...(sort ? ['--sort=modified'] : []), ...vcs, '--', tree]

async function listed(pattern, sort) {
  const chunks = []
  await new Promise((resolve, reject) => {
    const child = spawn(rgPath, globArgv(pattern, sort), { cwd: tree, stdio: ['ignore', 'pipe', 'ignore'] })
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.once('error', reject)
    child.once('close', resolve)
  })
  return Buffer.concat(chunks).toString('latin1').split('\0').filter(Boolean)
}

const key = (path) => path.replaceAll('/', '\0')
const byTimeThenPath = (a, b) => (a.t === b.t ? (a.k < b.k ? -1 : a.k > b.k ? 1 : 0) : a.t < b.t ? -1 : 1)

/** rg's single-threaded --sort=modified, then a stat of every file anyway, to break its ties by path. */
async function sortedThenStat(pattern) {
  const paths = await listed(pattern, true)
  const entries = paths.map((p) => ({ k: key(p), t: statSync(Buffer.from(p, 'latin1'), { throwIfNoEntry: false })?.mtimeMs ?? Infinity }))
  return entries.sort(byTimeThenPath)
}

/** The parallel listing with one promise per stat (64 in flight). */
async function parallelPromiseStat(pattern) {
  const paths = await listed(pattern, false)
  const entries = paths.map((p) => ({ p, k: key(p), t: undefined }))
  let next = 0
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < entries.length) {
      const entry = entries[next++]
      entry.t = (await stat(Buffer.from(entry.p, 'latin1')).catch(() => undefined))?.mtimeMs ?? Infinity
    }
  }))
  return entries.sort(byTimeThenPath)
}

for (const pattern of ['*', '**/*.d.ts']) {
  const count = (await listed(pattern, false)).length
  const times = await sideBySide({
    'bare rg --files (parallel, unordered)': () => bare(globArgv(pattern, false), tree),
    'bare rg --files --sort=modified (one thread, ties unbroken)': () => bare(globArgv(pattern, true), tree),
    'rg --sort=modified + stat all + tie sort': () => sortedThenStat(pattern),
    'parallel rg --files + promise stat (64) + sort': () => parallelPromiseStat(pattern),
    'tool (parallel rg --files, stat as listed, time groups + radix path sort)': () => plain.run('glob', { pattern }),
  }, { rounds: 5, warmup: 1 })
  const limit = times['bare rg --files --sort=modified (one thread, ties unbroken)']
  row(`glob "${pattern}" (${count} files)`, '')
  for (const [name, ms] of Object.entries(times)) row(`  ${name}`, `${ms.toFixed(1)} ms  ${ratio(ms, limit)}`)
}

await plain.ctx.fiber.dispose()
await spilled.ctx.fiber.dispose()
rmSync(join(corpus, 'spill'), { recursive: true, force: true })
