// Runs every bench/*.bench.mjs (or those whose names contain an argument) one after another, each in its own
// Node process so that peak-RSS figures of one benchmark never include another's, then prints ONE table of the
// rows they reported with summaryRow() (lib.mjs): figure, now, goal, each ratio against a floor measured in the
// same run, with the load average.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { formatValue, loadAverage } from './lib.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.mjs'))
  .filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)))
  .sort()
const scratch = mkdtempSync(join(os.tmpdir(), 'dsh-bench-'))
const summary = join(scratch, 'rows.jsonl')
const loadAtStart = loadAverage()
let failed = 0
for (const file of files) {
  console.log(`\n## ${file}`)
  const result = spawnSync(process.execPath, ['--expose-gc', join(here, file)], {
    stdio: 'inherit',
    env: { ...process.env, DSH_BENCH_SUMMARY: summary },
  })
  if (result.status !== 0) {
    failed++
    console.log(`(${file} exited ${result.status ?? result.signal})`)
  }
}

let rows = []
try {
  rows = readFileSync(summary, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
} catch {}
rmSync(scratch, { recursive: true, force: true })

const cells = rows.map((r) => [
  r.figure,
  formatValue(r.value, r.unit),
  `≤ ${formatValue(r.goal, r.unit)}`,
  r.value <= r.goal ? 'met' : 'NOT met',
  r.floor || '—',
  r.load.toFixed(2),
])
const header = ['figure', 'now', 'goal', '', 'floor (same run)', 'load']
const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
const line = (c) => `| ${c.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`
console.log(
  `\n# Summary: ${rows.length} rows (ratios are medians of per-round ratios against the floor; load = 1-min load average when measured)`,
)
console.log(
  `load average ${loadAtStart} at start, ${loadAverage()} at end (${os.cpus().length} CPUs, Node ${process.version})\n`,
)
console.log(line(header))
console.log(line(widths.map((w) => '-'.repeat(w))))
for (const c of cells) console.log(line(c))
if (failed) console.log(`\n${failed} bench file(s) failed: their rows may be missing`)
process.exitCode = failed ? 1 : 0
