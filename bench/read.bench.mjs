// read at a far offset of a 1 GiB file, through the tool, side by side with sed on the same file.
// Builds bench/corpus/read-1gib.txt once (deterministic lines, git-ignored) and reuses it.
import { spawn } from 'node:child_process'
import { createWriteStream, existsSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { once } from 'node:events'
import { Context } from 'cordis'
import { createSession, ToolsService } from '@deepseek-ai/dsh-tools'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import { mib, peakRssDuring, ratio, row, sideBySide } from './lib.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const corpus = join(here, 'corpus', 'read-1gib.txt')
const stamp = `${corpus}.done`
const SIZE = 1024 ** 3
const OFFSET = 10_000_000
const LIMIT = 2000
const VERSION = 'v2'

/** Lines of 40–160 bytes of words (some multi-byte) picked by a fixed LCG: the same file on every machine. */
async function build() {
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === VERSION && statSync(corpus).size >= SIZE) return false
  mkdirSync(dirname(corpus), { recursive: true })
  const out = createWriteStream(corpus)
  const words = ['alpha', 'beta', 'gamma', 'delta', 'épsilon', 'zeta', 'ηta', 'theta', 'iota', 'kappa', '→', 'λambda']
  const wordBytes = words.map((w) => Buffer.byteLength(w) + 1)
  let seed = 42
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return (seed >>> 8) % n // the low bits of this LCG cycle quickly
  }
  let written = 0
  let n = 0
  while (written < SIZE) {
    const batch = []
    for (let i = 0; i < 10_000; i++) {
      const head = `${++n}:`
      const parts = [head]
      const target = 40 + next(121)
      for (let bytes = head.length; bytes < target; ) {
        const w = next(words.length)
        parts.push(words[w])
        bytes += wordBytes[w]
      }
      batch.push(parts.join(' '))
    }
    const bytes = Buffer.from(`${batch.join('\n')}\n`)
    written += bytes.length
    if (!out.write(bytes)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
  writeFileSync(stamp, VERSION)
  return true
}

function run(argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] })
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(new Error(`${argv[0]} exited ${code}`)),
    )
  })
}

/** The physical floor for the tool: read every byte up to the window's end, 1 MiB at a time, and do nothing with it. */
async function rawRead(bytes) {
  const handle = await open(corpus)
  const buffer = Buffer.allocUnsafe(1024 * 1024)
  try {
    for (let position = 0; position < bytes; ) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position)
      if (bytesRead === 0) break
      position += bytesRead
    }
  } finally {
    await handle.close()
  }
}

const started = performance.now()
const built = await build()
row(
  'corpus',
  `${corpus} (${mib(statSync(corpus).size)}${built ? `, built in ${((performance.now() - started) / 1000).toFixed(1)} s` : ', reused'})`,
)

/** A context with the read tool, under the given tool-fs config. */
async function readTool(config) {
  const ctx = new Context()
  await ctx.plugin(ToolsService)
  await ctx.plugin(SystemPromptService)
  await ctx.plugin(ToolFs, config)
  for (let i = 0; i < 1000 && !ctx.tools?.get('read'); i++) await new Promise((resolve) => setImmediate(resolve))
  const session = createSession({ id: 'bench', cwd: dirname(corpus) })
  return async () => {
    const result = await ctx.tools.execute('read', { path: corpus, offset: OFFSET, limit: LIMIT }, { session })
    if (result.isError) throw new Error(result.content[0].text)
    return result.content[0].text
  }
}
// Default caps stop the page at 51 200 bytes of rows; with the byte cap raised the window is sed's exactly.
const viaTool = await readTool({ maxBytes: 4 * 1024 * 1024, maxResultBytes: 4 * 1024 * 1024 + 4096 })
const viaToolDefault = await readTool({})
const viaSed = () => run(['sed', '-n', `${OFFSET},${OFFSET + LIMIT - 1}p`, corpus])
const viaSedQuit = () => run(['sed', '-n', `${OFFSET},${OFFSET + LIMIT - 1}p;${OFFSET + LIMIT - 1}q`, corpus])

const strip = (text) =>
  text
    .slice(0, text.lastIndexOf('\n\n'))
    .split('\n')
    .map((r) => r.slice(r.indexOf(': ') + 2))
const sedLines = (await viaSed()).split('\n').slice(0, -1)
const toolText = await viaTool()
const defaultText = await viaToolDefault()
if (strip(toolText).join('\n') !== sedLines.join('\n')) throw new Error('read and sed disagree on the window')
const defaultRows = strip(defaultText)
if (defaultRows.join('\n') !== sedLines.slice(0, defaultRows.length).join('\n'))
  throw new Error('read (default caps) and sed disagree')
const windowEnd = (await run(['sh', '-c', `head -n ${OFFSET + LIMIT - 1} '${corpus}' | wc -c`])).trim()
row(
  'window',
  `lines ${OFFSET}-${OFFSET + LIMIT - 1} (${mib(Buffer.byteLength(sedLines.join('\n')))}), ending at byte ${windowEnd} (${((Number(windowEnd) / statSync(corpus).size) * 100).toFixed(1)}% of the file)`,
)
row(
  'tool rows = sed lines',
  `${sedLines.length} (maxBytes and maxResultBytes 4 MiB); default caps: first ${defaultRows.length}, then`,
)
row('', defaultText.slice(defaultText.lastIndexOf('\n\n') + 2))

const times = await sideBySide(
  {
    tool: viaTool,
    toolDefault: viaToolDefault,
    sed: viaSed,
    sedQuit: viaSedQuit,
    rawRead: () => rawRead(Number(windowEnd)),
  },
  { rounds: 5, warmup: 1 },
)
row('read tool, 2000 rows (median of 5, warm page cache)', `${times.tool.toFixed(0)} ms`)
row('read tool, default caps', `${times.toolDefault.toFixed(0)} ms`)
row(`sed -n '${OFFSET},${OFFSET + LIMIT - 1}p'`, `${times.sed.toFixed(0)} ms`)
row(`sed -n '…p;${OFFSET + LIMIT - 1}q' (sed that stops early)`, `${times.sedQuit.toFixed(0)} ms`)
row('raw read of the bytes up to the window end (floor)', `${times.rawRead.toFixed(0)} ms`)
row('tool / sed', ratio(times.tool, times.sed))
row('tool / sed with q', ratio(times.tool, times.sedQuit))
row('tool / raw read floor', ratio(times.tool, times.rawRead))

const rss = []
for (let i = 0; i < 3; i++) rss.push((await peakRssDuring(viaTool, 2)).peakGrowth)
row(
  'tool peak RSS growth during one read, 2000 rows (max of 3)',
  `${mib(Math.max(...rss))} (file ${mib(statSync(corpus).size)})`,
)
