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
import { GrepResults } from '../src/grep-results.ts'

/** A collector whose sink keeps every match in path order (a page without limit, no saved rows). */
function newCollector(root: ReturnType<typeof resolveRoot>, maxLineBytes: number) {
  const results = new GrepResults(Number.MAX_SAFE_INTEGER, undefined)
  return Object.assign(new GrepCollector(root, maxLineBytes, results), { files: () => results.files() })
}

let dir: string
let json: Buffer
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-records-'))
  writeFileSync(join(dir, 'b.txt'), 'one hit\nnothing\nhit hit hit\n')
  writeFileSync(join(dir, 'a.txt'), `crlf hit\r\n${'x'.repeat(50)}hit${'é'.repeat(40)}\nlast hit`)
  writeFileSync(
    Buffer.concat([Buffer.from(join(dir, 'n')), Buffer.from([0xff]), Buffer.from('.txt')]),
    Buffer.from([0x68, 0x69, 0x74, 0x20, 0xff, 0x0a]),
  )
  json = execFileSync(rgPath, ['--no-config', '--json', '--regexp=hit', '--', dir])
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function collect(chunks: Buffer[], maxLineBytes = 60) {
  const collector = newCollector(resolveRoot(dir, undefined), maxLineBytes)
  const splitter = new RecordSplitter(0x0a, collector.record)
  let maxPending = 0
  for (const chunk of chunks) {
    splitter.push(chunk)
    maxPending = Math.max(maxPending, splitter.pendingLength)
  }
  splitter.end()
  return { total: collector.total, files: collector.files(), maxPending }
}

/** One record, as the splitter hands it over: in place inside a larger buffer. */
function feed(collector: Pick<GrepCollector, 'record'>, record: string): void {
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
      {
        path: 'a.txt',
        lines: [
          { line: 1, preview: 'crlf hit', truncated: false },
          { line: 2, preview: `${'x'.repeat(50)}hit${'é'.repeat(3)}`, truncated: true },
          { line: 3, preview: 'last hit', truncated: false },
        ],
      },
      {
        path: 'b.txt',
        lines: [
          { line: 1, preview: 'one hit', truncated: false },
          { line: 3, preview: 'hit hit hit', truncated: false },
        ],
      },
      { path: 'n\ufffd.txt', lines: [{ line: 1, preview: null, truncated: false }] },
    ])
  })

  test('gives the same result however the stream is cut into chunks, even inside a UTF-8 character, holding at most one line (property, seeded)', () => {
    const whole = collect([json])
    const longestLine = Math.max(
      ...json
        .toString('utf8')
        .split('\n')
        .map((l) => Buffer.byteLength(l)),
    )
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        const result = collect(chunked(json, cuts))
        expect(result.files).toEqual(whole.files)
        expect(result.total).toBe(whole.total)
        expect(result.maxPending).toBeLessThanOrEqual(longestLine)
      }),
      { seed: 42, numRuns: 200 },
    )
  })

  test('holds no more than the unfinished line of a 20 MB stream fed in 64 KiB chunks', () => {
    const record = Buffer.from(
      `${JSON.stringify({ type: 'match', data: { path: { text: join(dir, 'big.txt') }, lines: { text: `${'y'.repeat(150)}\n` }, line_number: 1, absolute_offset: 0, submatches: [] } })}\n`,
    )
    // One period of whole records, fed in 64 KiB chunks that end mid-record, twenty times over: a valid stream.
    const period = Buffer.concat(Array.from({ length: Math.ceil(1_000_000 / record.length) }, () => record))
    const collector = newCollector(resolveRoot(dir, undefined), 2000)
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
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme-composite', maxLength: 30 }),
        ending,
        fc.integer({ min: 1, max: 60 }),
        (body, end, max) => {
          const collector = newCollector(resolveRoot(dir, undefined), max)
          const text = body + end
          feed(
            collector,
            JSON.stringify({
              type: 'match',
              data: {
                path: { text: join(dir, 'f') },
                lines: { text },
                line_number: 3,
                absolute_offset: 0,
                submatches: [],
              },
            }),
          )
          const stripped = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
          const cut = truncateUtf8(stripped, max)
          expect(collector.files()).toEqual([
            { path: 'f', lines: [{ line: 3, preview: cut.text, truncated: cut.truncated }] },
          ])
        },
      ),
      { seed: 5, numRuns: 600 },
    )
  })

  test('reads long lines full of escapes exactly, decoding only the shown part, cut like truncateUtf8 (property, seeded)', () => {
    // Characters that JSON escapes (quotes, backslashes, controls, a lone \r), multi-byte ones and surrogate pairs.
    const char = fc.constantFrom(
      'a',
      'Z',
      ' ',
      '"',
      '\\',
      '\t',
      '\r',
      '\x01',
      '\x1b',
      '\x7f',
      'é',
      '€',
      '\u2028',
      '😀',
      '\\n',
    )
    const ending = fc.constantFrom('', '\n', '\r\n', '\\n', '\r')
    fc.assert(
      fc.property(fc.array(char, { maxLength: 400 }), ending, fc.integer({ min: 1, max: 40 }), (chars, end, max) => {
        const collector = newCollector(resolveRoot(dir, undefined), max)
        const text = chars.join('') + end
        feed(
          collector,
          JSON.stringify({
            type: 'match',
            data: {
              path: { text: join(dir, 'f') },
              lines: { text },
              line_number: 7,
              absolute_offset: 0,
              submatches: [{ match: { text: '\\n"}' }, start: 0, end: 1 }],
            },
          }),
        )
        const stripped = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
        const cut = truncateUtf8(stripped, max)
        expect(collector.files()).toEqual([
          { path: 'f', lines: [{ line: 7, preview: cut.text, truncated: cut.truncated }] },
        ])
      }),
      { seed: 17, numRuns: 1500 },
    )
  })

  test('a stream of many files, long escaped lines and CRLF ones, cut at every byte boundary, reads like JSON.parse of each record', () => {
    const lines = [
      'plain hit\n',
      'tab\there "quoted" \\ hit\r\n',
      `${'x"\\'.repeat(300)}hit\n`,
      `${'é'.repeat(200)}\n`,
      'no terminator hit',
      `${'y'.repeat(90)}\n`,
    ]
    const records: string[] = []
    for (const [f, name] of ['a.txt', 'b "q".txt', 'c\\d.txt', 'dir/e.txt'].entries()) {
      const path = { text: join(dir, name) }
      records.push(JSON.stringify({ type: 'begin', data: { path } }))
      for (const [i, text] of lines.entries()) {
        if ((i + f) % 3 === 2) continue
        records.push(
          JSON.stringify({
            type: 'match',
            data: {
              path,
              lines: { text },
              line_number: i + 1,
              absolute_offset: 0,
              submatches: [{ match: { text: 'hit' }, start: 0, end: 3 }],
            },
          }),
        )
      }
      records.push(JSON.stringify({ type: 'end', data: { path, binary_offset: null, stats: {} } }))
    }
    records.push(JSON.stringify({ data: { elapsed_total: {} }, type: 'summary' }))
    const stream = Buffer.from(`${records.join('\n')}\n`)
    // The reference: every record parsed in full.
    const max = 50
    const expected = new Map<string, { line: number; preview: string | null; truncated: boolean }[]>()
    for (const record of records) {
      const value = JSON.parse(record)
      if (value.type !== 'match') continue
      const text: string = value.data.lines.text
      const stripped = text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text
      const cut = truncateUtf8(stripped, max)
      const path = value.data.path.text.slice(dir.length + 1)
      expected.set(path, [
        ...(expected.get(path) ?? []),
        { line: value.data.line_number, preview: cut.text, truncated: cut.truncated },
      ])
    }
    const want = [...expected].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, found]) => ({ path, lines: found }))
    expect(collect([stream], max).files).toEqual(want)
    for (let cut = 0; cut <= stream.length; cut++) {
      const result = collect([stream.subarray(0, cut), stream.subarray(cut)], max)
      if (JSON.stringify(result.files) !== JSON.stringify(want))
        expect({ cut, files: result.files }).toEqual({ cut, files: want })
    }
  })

  test('a file whose matches do not come one after another is still one file, its lines ascending', () => {
    const collector = newCollector(resolveRoot(dir, undefined), 100)
    const match = (name: string, line: number) =>
      JSON.stringify({
        type: 'match',
        data: {
          path: { text: join(dir, name) },
          lines: { text: `hit ${line}\n` },
          line_number: line,
          absolute_offset: 0,
          submatches: [],
        },
      })
    for (const [name, line] of [
      ['a', 5],
      ['b', 1],
      ['a', 2],
      ['c', 1],
      ['a', 9],
      ['b', 3],
    ] as const)
      feed(collector, match(name, line))
    const expected = [
      { path: 'a', lines: [2, 5, 9].map((line) => ({ line, preview: `hit ${line}`, truncated: false })) },
      { path: 'b', lines: [1, 3].map((line) => ({ line, preview: `hit ${line}`, truncated: false })) },
      { path: 'c', lines: [{ line: 1, preview: 'hit 1', truncated: false }] },
    ]
    expect(collector.total).toBe(6)
    expect(collector.files()).toEqual(expected)
    expect(collector.files()).toEqual(expected)
  })

  test('a record that is not JSON is malformed output', () => {
    const collector = newCollector(resolveRoot(dir, undefined), 100)
    expect(() => feed(collector, '--no-config --json')).toThrow(MalformedOutput)
    expect(() => feed(collector, '{"type":"match","data":{}}')).toThrow(MalformedOutput)
    expect(() => feed(collector, '{"type":"surprise"}')).toThrow(MalformedOutput)
  })

  test('a match outside the search root is malformed output', () => {
    const collector = newCollector(resolveRoot(dir, 'sub'), 100)
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
