import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { rgPath } from '@vscode/ripgrep'
import { GrepResults } from '../src/grep-results.ts'
import { resolveRoot } from '../src/paths.ts'
import { GrepCollector, jsonStringBytes, RecordSplitter } from '../src/records.ts'

// The collector reads rg's match records from their bytes (a line without escapes is copied, one with escapes is
// decoded without a string); the same record with its keys in another order is not the shape it knows, so it is
// JSON.parse'd whole. Both must give the same page, count and saved bytes, whatever the text.

let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'dsh-fast-parse-'))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Outcome {
  total: number
  files: ReturnType<GrepResults['files']>
  saved: string
}

/** Feeds `stream` through a collector into results that keep the page and the saved rows. */
function read(
  stream: Buffer,
  options: { maxLineBytes: number; maxMatches: number; chunkBytes: number; multiline: boolean },
): Outcome {
  const results = new GrepResults(options.maxMatches, options.chunkBytes)
  const collector = new GrepCollector(resolveRoot(dir, undefined), options.maxLineBytes, results, options.multiline)
  const splitter = new RecordSplitter(0x0a, collector.record)
  // Cut into chunks of 97 bytes: records also arrive across chunks.
  for (let at = 0; at < stream.length; at += 97) splitter.push(stream.subarray(at, at + 97))
  splitter.end()
  const saved = Buffer.concat(Array.from(results.saved('[header]'), (part) => Buffer.from(part))).toString('latin1')
  const outcome = { total: collector.total, files: results.files(), saved }
  results[Symbol.dispose]()
  return outcome
}

/** A record the fast path does not know: the same fields, "type" last. JSON.parse reads it whole. */
function reordered(record: string): string {
  const { type, ...rest } = JSON.parse(record) as { type: string }
  return JSON.stringify({ ...rest, type })
}

function both(records: string[], options: Parameters<typeof read>[1]): { fast: Outcome; parsed: Outcome } {
  return {
    fast: read(Buffer.from(`${records.join('\n')}\n`), options),
    parsed: read(Buffer.from(`${records.map(reordered).join('\n')}\n`), options),
  }
}

/** JSON.stringify with ripgrep's key order: type first; path, lines, line_number, absolute_offset, submatches. */
function matchRecord(
  path: { text: string } | { bytes: string },
  lines: { text: string } | { bytes: string },
  line: number,
  submatches: { start: number; end: number }[],
): string {
  return JSON.stringify({
    type: 'match',
    data: {
      path,
      lines,
      line_number: line,
      absolute_offset: 0,
      submatches: submatches.map(({ start, end }) => ({ match: { text: 'x' }, start, end })),
    },
  })
}

// Text with what rg's JSON holds: escapes of controls and quotes, non-ASCII, DEL, C1 controls, line separators, and
// lone surrogates (which JSON.stringify writes as `\ud800`, and rg never does: the fast path leaves them to JSON.parse).
const special = fc.constantFrom(
  '\n',
  '\r\n',
  '\r',
  '\t',
  '"',
  '\\',
  '/',
  '\x00',
  '\x1b',
  '\x7f',
  '\x85',
  '\x9b',
  '\xa0',
  '\u2028',
  '\u2029',
  'é',
  '€',
  '😀',
  '\ud800',
  '\udfff',
  'hit',
)
const text = fc
  .array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), special, fc.string({ maxLength: 12 })), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''))
const terminator = fc.constantFrom('', '\n', '\r\n')
const pathName = fc.constantFrom('a.txt', 'b "q".txt', 'c\\d.txt', 'dir/é.txt', 'e\x7f.txt', 'f\u2028.txt')

describe('the fast rg --json match parser', () => {
  test('gives the page, count and saved bytes that JSON.parse of every record gives, for any text (property, seeded)', () => {
    const record = fc.record({
      name: pathName,
      bytesPath: fc.boolean(),
      lines: fc.oneof(
        { weight: 5, arbitrary: fc.tuple(text, terminator).map(([body, end]) => ({ text: body + end })) },
        {
          weight: 1,
          arbitrary: fc.uint8Array({ maxLength: 20 }).map((b) => ({ bytes: Buffer.from(b).toString('base64') })),
        },
      ),
      line: fc.integer({ min: 1, max: 40 }),
      submatches: fc.array(fc.record({ start: fc.nat(80), end: fc.nat(120) }), { maxLength: 2 }),
    })
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 400 }),
        fc.boolean(),
        (records, maxLineBytes, maxMatches, chunkBytes, multiline) => {
          // Line numbers ascend through the stream, so within each file too, as ripgrep sends them.
          let line = 0
          const lines = records.map((r) => {
            const path = join(dir, r.name)
            line += r.line
            return matchRecord(
              r.bytesPath ? { bytes: Buffer.from(path).toString('base64') } : { text: path },
              r.lines,
              line,
              r.submatches,
            )
          })
          const { fast, parsed } = both(lines, { maxLineBytes, maxMatches, chunkBytes, multiline })
          expect(fast).toEqual(parsed)
        },
      ),
      { seed: 32, numRuns: 1500 },
    )
  })

  test('gives what JSON.parse gives for long escaped lines cut at the cap, around a match past it too (property, seeded)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(special, fc.string({ maxLength: 20 })), { minLength: 20, maxLength: 200 }),
        terminator,
        fc.integer({ min: 1, max: 60 }),
        fc.nat(600),
        (parts, end, maxLineBytes, matchAt) => {
          const body = parts.join('') + end
          const records = [
            matchRecord({ text: join(dir, 'long.txt') }, { text: body }, 3, [{ start: matchAt, end: matchAt + 3 }]),
          ]
          const { fast, parsed } = both(records, { maxLineBytes, maxMatches: 5, chunkBytes: 1 << 16, multiline: false })
          expect(fast).toEqual(parsed)
        },
      ),
      { seed: 33, numRuns: 800 },
    )
  })

  test('decodes a JSON string body to the UTF-8 bytes of JSON.parse, every escape form, or leaves a lone surrogate to it (property, seeded)', () => {
    const raw = fc.string({ unit: 'grapheme', maxLength: 4 }).map((s) => s.replace(/["\\\x00-\x1f]/g, ''))
    const escape = fc.oneof(
      fc.constantFrom('\\n', '\\t', '\\r', '\\b', '\\f', '\\/', '\\\\', '\\"'),
      fc.tuple(fc.integer({ min: 0, max: 0xffff }), fc.boolean()).map(([code, upper]) => {
        const hex = code.toString(16).padStart(4, '0')
        return `\\u${upper ? hex.toUpperCase() : hex}`
      }),
      fc.constantFrom('\\ud83d\\ude00', '\\uD83D\\uDE00', '\\ud800', '\\udc00x'),
    )
    fc.assert(
      fc.property(
        fc.array(fc.oneof(raw, escape), { maxLength: 20 }),
        fc.integer({ min: 0, max: 80 }),
        (parts, limit) => {
          const json = parts.join('')
          const bytes = Buffer.from(`xx"${json}"yy`)
          const close = bytes.length - 3
          const value = JSON.parse(`"${json}"`) as string
          const out = Buffer.alloc(bytes.length + 4)
          const whole = jsonStringBytes(bytes, 3, close, out, bytes.length)
          const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value)
          if (lone) {
            expect(whole).toBeUndefined()
            return
          }
          const expected = Buffer.from(value, 'utf8')
          expect(whole).toEqual({ length: expected.length, complete: true })
          expect(out.subarray(0, expected.length)).toEqual(expected)
          // With a limit: at least that many bytes, the same ones, complete only when it is all.
          const part = Buffer.alloc(bytes.length + 4)
          const cut = jsonStringBytes(bytes, 3, close, part, limit) as { length: number; complete: boolean }
          expect(cut.length).toBeGreaterThanOrEqual(Math.min(limit, expected.length))
          expect(part.subarray(0, cut.length)).toEqual(expected.subarray(0, cut.length))
          expect(cut.complete).toBe(cut.length === expected.length)
        },
      ),
      { seed: 34, numRuns: 2000 },
    )
  })

  test('leaves to JSON.parse what is not JSON: a raw control character or quote, an unknown escape, an escaped closing quote', () => {
    for (const body of ['a\x01b', 'a"b', 'a\\qb', 'a\\u12g4', 'ab\\']) {
      const bytes = Buffer.from(`"${body}"`)
      expect(jsonStringBytes(bytes, 1, bytes.length - 1, Buffer.alloc(64), 64)).toBeUndefined()
    }
  })

  describe('on real ripgrep output', () => {
    let stream: Buffer
    beforeAll(() => {
      const long = `${'const s = "\\t";\t'.repeat(300)}hit at the end\n`
      writeFileSync(join(dir, 'code.js'), `const a = "hit";\n\tindented hit\r\n${long}plain hit\nlast hit`)
      writeFileSync(
        join(dir, 'controls.txt'),
        'del\x7f hit\nesc\x1b[31m hit\nc1 \u009b hit\nsep \u2028 hit\nnbsp\u00a0hit\n',
      )
      writeFileSync(join(dir, 'unicode é.txt'), 'é hit 😀\n€ hit\n')
      writeFileSync(join(dir, 'latin1.txt'), Buffer.from([0x68, 0x69, 0x74, 0x20, 0xe9, 0x0a, 0x68, 0x69, 0x74, 0x0a]))
      writeFileSync(join(dir, 'min.js'), `${'x'.repeat(5000)}"hit"${'y'.repeat(100)}\n`)
      stream = execFileSync(rgPath, ['--no-config', '--json', '--regexp=hit', '--', dir])
    })

    test('reads it as JSON.parse of every record would, page, count and saved bytes', () => {
      const records = stream.toString('utf8').split('\n').filter(Boolean)
      for (const maxLineBytes of [8, 40, 2000]) {
        const { fast, parsed } = both(records, { maxLineBytes, maxMatches: 6, chunkBytes: 300, multiline: false })
        expect(fast).toEqual(parsed)
        expect(fast.total).toBe(15)
      }
    })

    test('reads its match records of plain and escaped lines without JSON.parse (observed with a spy)', () => {
      const spy = vi.spyOn(JSON, 'parse')
      try {
        const outcome = read(stream, { maxLineBytes: 2000, maxMatches: 100, chunkBytes: 1 << 16, multiline: false })
        expect(outcome.total).toBe(15)
        // Only the summary record, whose "type" comes last, is parsed in full.
        expect(spy.mock.calls.map(([record]) => String(record).slice(-20))).toEqual([
          expect.stringContaining('"type":"summary"}'),
        ])
      } finally {
        spy.mockRestore()
      }
    })
  })
})
