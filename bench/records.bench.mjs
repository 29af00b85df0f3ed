// grep's reader of `rg --json` (packages/fs/tool-fs-search/src/records.ts: a byte-level recogniser of match records)
// against the plain alternative, JSON.parse of every record, both producing the same previews into the same sink,
// on the same captured output (`rg --json function` over the corpus tree, ~38 MB), fed in 64 KiB chunks. CPU ms per
// pass, medians of interleaved passes (the recogniser stays only while it pays measurably;
// docs/decisions/2026-12-02-rg-json-reader.md).
//
// Builds the corpus of bench/corpus.mjs on first use; needs `npx tsc -b`.
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rgPath } from '@vscode/ripgrep'
import { cutUtf8 } from '@deepseek-ai/dsh-text'
import { buildCorpus } from './corpus.mjs'
import { median, row, summaryRow } from './lib.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const tree = join(here, 'corpus', 'tree')
const dist = join(here, '..', 'packages', 'fs', 'tool-fs-search', 'dist')
const { GrepCollector, RecordSplitter } = await import(join(dist, 'records.js'))
const { resolveRoot, relativeKey } = await import(join(dist, 'paths.js'))

buildCorpus()
const json = execFileSync(rgPath, ['--no-config', '--json', '--no-require-git', '--regexp=function', '--', tree], {
  maxBuffer: 1 << 30,
})
const root = resolveRoot(tree, undefined)
const MAX = 2000

/** A sink that only counts (what both readers hand over is the same; keeping it is another module's cost). */
function sink() {
  return {
    files: 0,
    lines: 0,
    chars: 0,
    file() {
      this.files++
    },
    line(line) {
      this.lines++
      this.chars += line.preview?.length ?? 0
    },
  }
}

function recogniser(out) {
  const collector = new GrepCollector(root, MAX, out)
  return new RecordSplitter(0x0a, collector.record)
}

/** The plain reader: each record JSON.parse'd, the same previews (head cut, or around the first match). */
function plain(out) {
  let last
  const rootKey = Buffer.from(root.absolute).toString('latin1')
  return new RecordSplitter(0x0a, (bytes, start, end) => {
    const record = JSON.parse(bytes.toString('utf8', start, end))
    if (record.type !== 'match') return
    const { path, lines, line_number: line, submatches } = record.data
    const printed = path.text ?? Buffer.from(path.bytes, 'base64').toString('latin1')
    const key = relativeKey(rootKey, printed)
    if (key !== last) {
      last = key
      out.file(key, key)
    }
    if (lines.text === undefined) return out.line({ line, preview: null, truncated: false })
    const text = lines.text.endsWith('\n') ? lines.text.slice(0, lines.text.endsWith('\r\n') ? -2 : -1) : lines.text
    const first = submatches[0]
    if (first !== undefined && first.end > MAX && Buffer.byteLength(text) > MAX) {
      const bytes = Buffer.from(text)
      const from = Math.max(0, first.start - MAX / 4)
      return out.line({ line, preview: `…${bytes.toString('utf8', from, from + MAX)}…`, truncated: true })
    }
    const cut = cutUtf8(text, MAX)
    out.line({ line, preview: cut.text, truncated: cut.truncated })
  })
}

function pass(make) {
  const out = sink()
  const splitter = make(out)
  const start = process.cpuUsage()
  for (let at = 0; at < json.length; at += 65536) splitter.push(json.subarray(at, at + 65536))
  splitter.end()
  const used = process.cpuUsage(start)
  return { ms: (used.user + used.system) / 1000, out }
}

const samples = { recogniser: [], plain: [] }
let check
for (let round = 0; round < 8; round++) {
  for (const [name, make] of [
    ['recogniser', recogniser],
    ['plain', plain],
  ]) {
    globalThis.gc?.()
    const { ms, out } = pass(make)
    if (round > 0) samples[name].push(ms)
    check ??= out.lines
    if (out.lines !== check) throw new Error(`${name} read ${out.lines} lines, not ${check}`)
  }
}
const recogniserMs = median(samples.recogniser)
const plainMs = median(samples.plain)
row(`rg --json function over the corpus: ${(json.length / 1048576).toFixed(1)} MiB, ${check} matching lines`, '')
row('  hand-written recogniser (records.ts), CPU per pass', `${recogniserMs.toFixed(0)} ms`)
row('  JSON.parse of every record, CPU per pass', `${plainMs.toFixed(0)} ms`)
summaryRow({
  figure: 'grep reader: records.ts CPU / JSON.parse per record CPU',
  value: recogniserMs / plainMs,
  goal: 0.75,
  floor: 'JSON.parse reader, same run',
})
