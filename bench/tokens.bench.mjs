// What grep's answer costs a model in tokens, beside bare ripgrep's own answer to the same question (docs/decisions/2026-12-04-grep-output-modes.md): for
// "which files mention X" dsh's files_with_matches beside `rg -l`, for "how many matches per file" its count beside
// `rg -c`, on the search corpus (corpus.mjs). Tokens are approximated as UTF-8 bytes / 4 (rounded up): both sides
// are the same kind of text (paths, digits), so the ratio hardly depends on the tokenizer. The content column shows
// what the same question cost before output_mode: every matching line.
//
// Needs `npx tsc -b` first (imports the built packages).
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { rgPath } from '@vscode/ripgrep'
import { ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import FsSearch from '@deepseek-ai/dsh-tool-fs-search'
import { buildCorpus, corpus, tree } from './corpus.mjs'
import { loadAverage, row, summaryRow } from './lib.mjs'

/** The approximation: a token per 4 UTF-8 bytes. */
const tokens = (text) => Math.ceil(Buffer.byteLength(text, 'utf8') / 4)

/** Bare ripgrep's answer, with grep's visibility (`--no-require-git`), run where the model's session is. */
function bare(flag, pattern, path) {
  const out = spawnSync(rgPath, ['--no-config', '--no-require-git', flag, `--regexp=${pattern}`, '--', path], {
    cwd: tree,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  })
  if (out.status !== 0) throw new Error(`rg ${flag} ${pattern}: exit ${out.status}: ${out.stderr}`)
  return out.stdout
}

buildCorpus()
const spillRoot = join(corpus, 'spill-tokens')
const ctx = new Context()
ctx.plugin(ToolsService)
ctx.plugin(SystemPromptService)
ctx.plugin(LocalSubprocess)
ctx.plugin(LocalSpillStore, { root: spillRoot })
ctx.plugin(FsSearch, {})
for (let turn = 0; !ctx.get('tools')?.get('grep') || !ctx.get('spillStore'); turn++) {
  if (turn > 10_000) throw new Error('the search plugin never became active')
  await new Promise((resolve) => setImmediate(resolve))
}
const session = { id: 'bench-tokens', cwd: tree }
async function dsh(args) {
  const result = await ctx.tools.execute('grep', args, { session })
  if (result.isError) throw new Error(`grep ${JSON.stringify(args)}: ${result.content[0].text.slice(0, 300)}`)
  return result.content[0].text
}

// Questions a model asks of a tree: a few files, tens of files, and more than a page holds.
const QUESTIONS = [
  { pattern: 'useSyncExternalStore', path: 'node_modules/@mui/material' },
  { pattern: 'useSyncExternalStore', path: 'node_modules' },
  { pattern: 'ownerDocument', path: 'node_modules/@mui/material' },
  { pattern: 'isPlainObject', path: 'node_modules' },
  { pattern: 'ownerDocument', path: 'node_modules' },
  { pattern: 'getOwnPropertySymbols', path: 'node_modules' },
]

console.log(`load average ${loadAverage()}; tokens = ceil(UTF-8 bytes / 4)`)
console.log('| question | X | path | rg | dsh | dsh / rg | dsh content (before) |')
console.log('|---|---|---|---|---|---|---|')
const ratios = { files: [], count: [] }
for (const { pattern, path } of QUESTIONS) {
  const content = tokens(await dsh({ pattern, path }))
  for (const [question, mode, flag] of [
    ['which files mention X', 'files_with_matches', '--files-with-matches'],
    ['matches per file', 'count', '--count'],
  ]) {
    const rg = tokens(bare(flag, pattern, path))
    const ours = tokens(await dsh({ pattern, path, output_mode: mode }))
    const ratio = ours / rg
    ratios[mode === 'count' ? 'count' : 'files'].push(ratio)
    console.log(`| ${question} | ${pattern} | ${path} | ${rg} | ${ours} | ${ratio.toFixed(2)}× | ${content} |`)
  }
}
rmSync(spillRoot, { recursive: true, force: true })
summaryRow({
  figure: 'grep files_with_matches tokens, worst question',
  value: Math.max(...ratios.files),
  goal: 1.1,
  floor: 'rg -l',
})
summaryRow({ figure: 'grep count tokens, worst question', value: Math.max(...ratios.count), goal: 1.1, floor: 'rg -c' })
row('tokens', 'approximated as UTF-8 bytes / 4')
