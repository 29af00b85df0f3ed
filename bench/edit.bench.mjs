// edit of one line in a 1 MB and a 20 MB file, through the tool, against a bare fs.readFile + writeFile + rename of
// the same file in the same run; the peak memory of the 20 MB edit; and the cost of the seen-before-changed guard on
// read (a page read with the guard following it against the same read without); first, in a process of its own, the
// peak memory of an edit of a file at tool-fs.editMaxBytes (64 MiB), the largest an edit takes.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, utimesSync } from 'node:fs'
import { open, readFile, rename, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from 'cordis'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import ToolFs, { capsWithin, readPage } from '@deepseek-ai/dsh-tool-fs'
// The guard is internal to tool-fs: the bench reaches into the build for it.
import { Observations } from '../packages/fs/tool-fs/dist/guard.js'
import { median, mib, pairedRatios, peakRssDuring, row, summaryRow, time } from './lib.mjs'

const dir = mkdtempSync(join(os.tmpdir(), 'dsh-edit-bench-'))
const session = createSession({ id: 'bench', cwd: dir })

/** `size` bytes of 100-byte source-like lines, one of them the marker the edits flip. */
function makeFile(name, size) {
  const lines = Array.from({ length: Math.floor(size / 100) }, (_, i) =>
    `    const value${String(i).padStart(8, '0')} = compute(${i}, 'some text to fill the line') // ${'x'.repeat(17)}`.slice(
      0,
      99,
    ),
  )
  lines[lines.length >> 1] = 'MARKER A'.padEnd(99, '.')
  const path = join(dir, name)
  writeFileSync(path, `${lines.join('\n')}\n`)
  const old = new Date(Date.now() - 60_000) // settled, like a file the model finds in a checkout
  utimesSync(path, old, old)
  return path
}

/** Bytes of tool-fs.editMaxBytes by default: the largest file an edit takes. */
const BOUND = 64 * 1048576

/**
 * One edit of a file at the bound, in a process of its own (`--bound`): RSS does not shrink back, so a process that
 * held a 20 MB file already would hide part of this one's growth.
 */
async function atTheBound(execute) {
  const path = makeFile('bound.txt', BOUND - 100)
  await execute('read', { path, limit: 10 })
  globalThis.gc?.()
  const { result, peakGrowth } = await peakRssDuring(() =>
    execute('edit', { path, old_string: 'MARKER A', new_string: 'MARKER B' }),
  )
  if (result.isError) throw new Error(result.content[0].text)
  row(`peak RSS growth during one edit of a ${mib(BOUND - 100)} file (the bound)`, mib(peakGrowth))
  summaryRow({
    figure: `peak RSS growth of an edit at the bound (${mib(BOUND - 100)} file)`,
    value: peakGrowth / 1048576,
    goal: (4 * BOUND) / 1048576,
    unit: 'MiB',
  })
}

async function main() {
  if (!process.argv.includes('--bound')) {
    const bound = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--bound'], {
      stdio: 'inherit',
    })
    if (bound.status !== 0) throw new Error(`the bound measurement exited ${bound.status ?? bound.signal}`)
  }
  const ctx = new Context()
  await ctx.plugin(ToolsService)
  await ctx.plugin(SystemPromptService)
  await ctx.plugin(ToolFs, {})
  await new Promise((resolve) => setTimeout(resolve, 50))
  const execute = (name, args) => ctx.tools.execute(name, args, { session })
  if (process.argv.includes('--bound')) {
    await atTheBound(execute)
    await ctx.fiber.dispose()
    return
  }

  for (const [label, size] of [
    ['20 MB', 20_000_000],
    ['1 MB', 1_000_000],
  ]) {
    const path = makeFile(`file-${size}.txt`, size)
    const bare = makeFile(`bare-${size}.txt`, size)
    await execute('read', { path, limit: 10 })
    let flip = 0
    const edit = async () => {
      const [from, to] = flip++ % 2 ? ['MARKER B', 'MARKER A'] : ['MARKER A', 'MARKER B']
      const result = await execute('edit', { path, old_string: from, new_string: to })
      if (result.isError) throw new Error(result.content[0].text)
    }
    // The floor: what any editor does at the least (no checks, no fsync), on a file of the same size.
    const floor = async () => {
      const text = await readFile(bare, 'utf8')
      await writeFile(
        `${bare}.tmp`,
        text.replace(flip % 2 ? 'MARKER B' : 'MARKER A', flip % 2 ? 'MARKER A' : 'MARKER B'),
      )
      await rename(`${bare}.tmp`, bare)
    }
    // The same with the fdatasync docs/model-surface.md#tools asks for (the tool's temp file is synced before the rename): where the time goes.
    const synced = async () => {
      const text = await readFile(bare, 'utf8')
      const out = await open(`${bare}.tmp`, 'w')
      await out.writeFile(text.replace(flip % 2 ? 'MARKER B' : 'MARKER A', flip % 2 ? 'MARKER A' : 'MARKER B'))
      await out.datasync()
      await out.close()
      await rename(`${bare}.tmp`, bare)
    }
    if (size > 5e6) {
      // Measured first, in a process that has not yet held a file this large (RSS does not shrink back).
      globalThis.gc?.()
      const { peakGrowth } = await peakRssDuring(edit)
      row(`peak RSS growth during one ${label} edit`, mib(peakGrowth))
      summaryRow({
        figure: `peak RSS growth during one ${label} edit`,
        value: peakGrowth / 1048576,
        goal: (4 * size) / 1048576,
        unit: 'MiB',
      }) // the bytes, the text, the new text, the new bytes
    }
    const result = await pairedRatios(floor, { edit, synced }, { rounds: size > 5e6 ? 9 : 15 })
    row(
      `edit of one line, ${label}: tool ${result.edit.ms.toFixed(1)} ms, bare ${result.floorMs.toFixed(1)} ms, bare + fdatasync ${result.synced.ms.toFixed(1)} ms`,
      '',
    )
    summaryRow({
      figure: `edit of one line in a ${label} file`,
      value: result.edit.ratio,
      goal: 1.5,
      floor: 'fs.readFile + writeFile + rename',
    })
    row(
      `  the same bare edit with an fdatasync before the rename: ${result.synced.ratio.toFixed(2)}× the bare one; the tool's median ${(result.edit.ms / result.synced.ms).toFixed(2)}× its median`,
      '',
    )
  }

  // The guard's cost on read: the same page, read with the guard following it (a session that has not seen the
  // file yet, so everything is gathered) and without.
  const caps = capsWithin({ maxLines: 2000, maxBytes: 51200, maxLineChars: 2000, maxResultBytes: 30000 })
  const signal = new AbortController().signal
  for (const [label, size] of [
    ['a 30 KB source file, read whole', 30_000],
    ['a 1 MB file, first page', 1_000_000],
  ]) {
    const path = makeFile(`read-${size}.txt`, size)
    let n = 0
    const guard = new Observations()
    const plain = () => readPage({ path, offset: 1, limit: 2000, signal }, caps)
    const guarded = async () => {
      const observer = guard.observeRead(`s${n++}`) // a new session each time: nothing known, all gathered
      await readPage({ path, offset: 1, limit: 2000, signal, observer }, caps)
      observer.done()
    }
    // Paired rounds; what the guard does after the call (completing a page into a digest) is timed apart, untimed
    // in the read: the call returns before it.
    const ratios = []
    const ms = { plain: [], guarded: [], after: [] }
    for (let round = 0; round < 105; round++) {
      // Alternate which runs first, so that neither always meets the page cache or the heap as the other left it.
      const first = round % 2 ? plain : guarded
      const firstMs = await time(first)
      const secondMs = await time(round % 2 ? guarded : plain)
      const [a, b] = round % 2 ? [firstMs, secondMs] : [secondMs, firstMs]
      const after = await time(() => guard.settled())
      if (round < 5) continue
      ratios.push(b / a)
      ms.plain.push(a)
      ms.guarded.push(b)
      ms.after.push(after)
    }
    row(
      `read of ${label}: with the guard ${(median(ms.guarded) * 1000).toFixed(0)} µs, without ${(median(ms.plain) * 1000).toFixed(0)} µs; after the call ${median(ms.after).toFixed(2)} ms`,
      '',
    )
    summaryRow({
      figure: `guard's cost on read (${label})`,
      value: median(ratios),
      goal: 1.05,
      floor: 'the same read without the guard',
    })
  }
  await ctx.fiber.dispose()
}

try {
  await main()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
