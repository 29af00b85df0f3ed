// What refusing to be redirected costs: a spill save that walks root → session → file through descriptors on
// every call, a spill file created through the output directory's descriptor, and the start-up pruning — each
// paired with a floor measured in the same run (medians of per-call ratios), with the load average.
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { lstat, readdir, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Context } from 'cordis'
import { CREATE_FILE_FLAGS, openPrivateDir, prune } from '@deepseek-ai/dsh-private-dir'
import LocalSpillStore, { pruneSpillRoot } from '@deepseek-ai/dsh-spill-local'
import { median, row, summaryRow } from './lib.mjs'

const base = mkdtempSync(join(tmpdir(), 'dsh-private-dir-bench-'))
const DAY = 86_400_000
row(
  'load average (1, 5, 15 min)',
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', '),
)

/** Runs `a` and `b` alternately `n` times; the median of the per-pair ratios a/b and the medians of each. */
async function paired(n, a, b) {
  const ratios = []
  const as = []
  const bs = []
  for (let i = 0; i < n; i++) {
    let t = performance.now()
    await a(i)
    const ta = performance.now() - t
    t = performance.now()
    await b(i)
    const tb = performance.now() - t
    as.push(ta)
    bs.push(tb)
    ratios.push(ta / tb)
  }
  return { ratio: median(ratios), a: median(as), b: median(bs) }
}

// 1. A spill save vs a bare exclusive write of the same bytes into a directory made beforehand.
const ctx = new Context()
await ctx.plugin(LocalSpillStore, { root: join(base, 'spill'), pruneAfterDays: 0 })
for (let turn = 0; turn < 1000 && !ctx.get('spillStore'); turn++) await new Promise((resolve) => setImmediate(resolve))
const store = ctx.get('spillStore')
const floorDir = join(base, 'floor')
mkdirSync(floorDir, { mode: 0o700 })
for (const size of [2_000, 100_000]) {
  const content = `${'x'.repeat(size - 1)}\n`
  const request = (i) => ({
    owner: { sessionId: 'bench' },
    source: { toolName: 'bench', callId: `c${i}` },
    suggestedName: 'out.txt',
    content,
  })
  const r = await paired(
    600,
    (i) => store.saveText(request(i)),
    (i) => writeFile(join(floorDir, `${size}-${i}.txt`), content, { flag: 'wx', mode: 0o600 }),
  )
  row(
    `spill save ${size} B vs bare writeFile(wx) (600 pairs)`,
    `${r.a.toFixed(3)} ms vs ${r.b.toFixed(3)} ms: ${r.ratio.toFixed(3)}×`,
  )
  if (size === 2_000)
    summaryRow({
      figure: 'spill save, 2 000 B (descriptor walk every save)',
      value: r.ratio,
      goal: 2.5,
      floor: 'bare writeFile(wx)',
    })
}
await ctx.dispose?.()

// 2. A spill file as subprocess-local makes it (check and open the directory, create through its descriptor,
//    close the directory) vs openSync(path, 'wx') in a directory known beforehand.
{
  const path = join(base, 'out')
  openPrivateDir(path).close()
  let k = 0
  const r = await paired(
    5000,
    () => {
      const dir = openPrivateDir(path, { create: false })
      closeSync(openSync(dir.at(`a${++k}.log`), CREATE_FILE_FLAGS, 0o600))
      dir.close()
    },
    () => closeSync(openSync(join(path, `b${k}.log`), 'wx', 0o600)),
  )
  row(
    'create a spill file: checked + anchored vs by path (5000 pairs)',
    `${(r.a * 1000).toFixed(1)} µs vs ${(r.b * 1000).toFixed(1)} µs: ${r.ratio.toFixed(3)}×`,
  )
  summaryRow({
    figure: 'subprocess spill file, checked and anchored',
    value: r.ratio,
    goal: 2.0,
    floor: 'bare open(wx)',
  })
}

// 3. Start-up pruning of a root of 1000 sessions × 3 files: scan only (all recent), and removing all (all old),
//    vs a bare recursive readdir + lstat walk of the same tree (the floor: what any pruning must read).
function tree(root, age) {
  mkdirSync(root, { mode: 0o700 })
  const when = new Date(Date.now() - age)
  for (let s = 0; s < 1000; s++) {
    const session = join(root, `cli-${s}`)
    mkdirSync(session, { mode: 0o700 })
    for (let f = 0; f < 3; f++) {
      writeFileSync(join(session, `call-${f}-out.txt`), 'x'.repeat(200))
      utimesSync(join(session, `call-${f}-out.txt`), when, when)
    }
    utimesSync(session, when, when)
  }
}
async function walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const info = await lstat(join(dir, entry.name))
    if (info.isDirectory()) await walk(join(dir, entry.name))
  }
}
{
  const scans = []
  const walks = []
  for (let round = 0; round < 5; round++) {
    const root = join(base, `recent-${round}`)
    tree(root, DAY)
    let t = performance.now()
    const count = await pruneSpillRoot(root, Date.now() - 7 * DAY)
    scans.push(performance.now() - t)
    if (count.files !== 0) throw new Error('pruned a recent file')
    t = performance.now()
    await walk(root)
    walks.push(performance.now() - t)
  }
  row(
    'prune 1000 sessions × 3 recent files (scan only), median of 5',
    `${median(scans).toFixed(1)} ms vs bare walk ${median(walks).toFixed(1)} ms: ${(median(scans) / median(walks)).toFixed(3)}×`,
  )
  summaryRow({
    figure: 'prune scan, 1000 sessions × 3 recent files',
    value: median(scans) / median(walks),
    goal: 2.0,
    floor: 'bare readdir + lstat walk',
  })
  const removals = []
  for (let round = 0; round < 5; round++) {
    const root = join(base, `old-${round}`)
    tree(root, 9 * DAY)
    const t = performance.now()
    const dir = openPrivateDir(root, { create: false })
    const count = await prune(dir, { before: Date.now() - 7 * DAY })
    dir.close()
    removals.push(performance.now() - t)
    if (count.files !== 3000 || count.directories !== 1000) throw new Error(`pruned ${JSON.stringify(count)}`)
  }
  row('prune 1000 sessions × 3 old files (all removed), median of 5', `${median(removals).toFixed(1)} ms`)
}

rmSync(base, { recursive: true, force: true })
row(
  'load average after',
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', '),
)
