import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { rgPath } from '@vscode/ripgrep'
import { cutUtf8 as truncateUtf8 } from '@deepseek-ai/dsh-text'
import { resolveRoot } from '../src/paths.ts'
import { GrepCollector, MalformedOutput, RecordSplitter } from '../src/records.ts'

let dir: string
let json: Buffer
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-records-'))
  writeFileSync(join(dir, 'b.txt'), 'one hit\nnothing\nhit hit hit\n')
  writeFileSync(join(dir, 'a.txt'), `crlf hit\r\n${'x'.repeat(50)}hit${'é'.repeat(40)}\nlast hit`)
  writeFileSync(Buffer.concat([Buffer.from(join(dir, 'n')), Buffer.from([0xff]), Buffer.from('.txt')]), Buffer.from([0x68, 0x69, 0x74, 0x20, 0xff, 0x0a]))
  json = execFileSync(rgPath, ['--no-config', '--json', '--regexp=hit', '--', dir])
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function collect(chunks: Buffer[], maxLineBytes = 60) {
  const collector = new GrepCollector(resolveRoot(dir, undefined), maxLineBytes)
  const splitter = new RecordSplitter(0x0a, collector.record)
  let maxPending = 0
  for (const chunk of chunks) {
    splitter.push(chunk)
    maxPending = Math.max(maxPending, splitter.pendingLength)
  }
  splitter.end()
  return { total: collector.total, files: collector.files().map(({ path, lines }) => ({ path, lines })), maxPending }
}

/** One record, as the splitter hands it over: in place inside a larger buffer. */
function feed(collector: GrepCollector, record: string): void {
  const bytes = Buffer.from(`xx${record}yy`)
  collector.record(bytes, 2, bytes.length - 2)
}

function chunked(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let start = 0
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, point))
    start = point
  }
  return chunks
}

describe('the rg --json parser', () => {
  test('reads real ripgrep output into files in path order with lines ascending, counting lines not hits', () => {
    const { total, files } = collect([json])
    expect(total).toBe(6)
    expect(files).toEqual([
      { path: 'a.txt', lines: [
        { line: 1, preview: 'crlf hit', truncated: false },
        { line: 2, preview: `${'x'.repeat(50)}hit${'é'.repeat(3)}`, truncated: true },
        { line: 3, preview: 'last hit', truncated: false },
      ] },
      { path: 'b.txt', lines: [{ line: 1, preview: 'one hit', truncated: false }, { line: 3, preview: 'hit hit hit', truncated: false }] },
      { path: 'n\ufffd.txt', lines: [{ line: 1, preview: null, truncated: false }] },
    ])
  })

  test('gives the same result however the stream is cut into chunks, even inside a UTF-8 character, holding at most one line (property, seeded)', () => {
    const whole = collect([json])
    const longestLine = Math.max(...json.toString('utf8').split('\n').map((l) => Buffer.byteLength(l)))
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
      const result = collect(chunked(json, cuts))
      expect(result.files).toEqual(whole.files)
      expect(result.total).toBe(whole.total)
      expect(result.maxPending).toBeLessThanOrEqual(longestLine)
    }), { seed: 42, numRuns: 200 })
  })

  test('holds no more than the unfinished line of a 20 MB stream fed in 64 KiB chunks', () => {
    const record = Buffer.from(`${JSON.stringify({ type: 'match', data: { path: { text: join(dir, 'big.txt') }, lines: { text: `${'y'.repeat(150)}\n` }, line_number: 1, absolute_offset: 0, submatches: [] } })}\n`)
    // One period of whole records, fed in 64 KiB chunks that end mid-record, twenty times over: a valid stream.
    const period = Buffer.concat(Array.from({ length: Math.ceil(1_000_000 / record.length) }, () => record))
    const collector = new GrepCollector(resolveRoot(dir, undefined), 2000)
    const splitter = new RecordSplitter(0x0a, collector.record)
    let maxPending = 0
    let fed = 0
    while (fed < 20_000_000) {
      for (let start = 0; start < period.length; start += 65536) {
        splitter.push(period.subarray(start, start + 65536))
        maxPending = Math.max(maxPending, splitter.pendingLength)
      }
      fed += period.length
    }
    splitter.end()
    expect(maxPending).toBeLessThan(record.length * 2)
    expect(collector.total).toBe(20 * (period.length / record.length))
  })

  test('reads any line exactly, escapes, quotes, backslashes and terminators included, cut like truncateUtf8 (property, seeded)', () => {
    const ending = fc.constantFrom('', '\n', '\r\n', '\\n', '\\\n', '\r')
    fc.assert(fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 30 }), ending, fc.integer({ min: 1, max: 60 }), (body, end, max) => {
      const collector = new GrepCollector(resolveRoot(dir, undefined), max)
      const text = body + end
      feed(collector, JSON.stringify({ type: 'match', data: { path: { text: join(dir, 'f') }, lines: { text }, line_number: 3, absolute_offset: 0, submatches: [] } }))
      const stripped = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
      const cut = truncateUtf8(stripped, max)
      expect(collector.files()).toEqual([{ path: 'f', key: 'f', lines: [{ line: 3, preview: cut.text, truncated: cut.truncated }] }])
    }), { seed: 5, numRuns: 600 })
  })

  test('a record that is not JSON is malformed output', () => {
    const collector = new GrepCollector(resolveRoot(dir, undefined), 100)
    expect(() => feed(collector, '--no-config --json')).toThrow(MalformedOutput)
    expect(() => feed(collector, '{"type":"match","data":{}}')).toThrow(MalformedOutput)
    expect(() => feed(collector, '{"type":"surprise"}')).toThrow(MalformedOutput)
  })

  test('a match outside the search root is malformed output', () => {
    const collector = new GrepCollector(resolveRoot(dir, 'sub'), 100)
    const record = { type: 'match', data: { path: { text: '/elsewhere/x' }, lines: { text: 'hit\n' }, line_number: 1 } }
    expect(() => feed(collector, JSON.stringify(record))).toThrow(/outside the search root/)
  })
})

describe('the record splitter', () => {
  test('splits NUL-separated names exactly, newlines and invalid UTF-8 included, and keeps a last unterminated one', () => {
    const records: string[] = []
    const splitter = new RecordSplitter(0x00, (bytes, start, end) => records.push(bytes.toString('latin1', start, end)))
    splitter.push(Buffer.from('a\nb\0c'))
    splitter.push(Buffer.from([0xff, 0, 0x64]))
    splitter.end()
    expect(records).toEqual(['a\nb', 'c\xff', 'd'])
  })
})
