import fc from 'fast-check'
import { expect, test } from 'vitest'
import type { TaskRead as BashTaskRead } from '@deepseek-ai/dsh-tasks'
import { cutMarker, fitStream, layout, type StreamSource } from '../src/stream-text.ts'
import { renderRead } from '../src/bash-output-text.ts'

const whole = (text: string, more: Partial<StreamSource> = {}): StreamSource => ({
  name: 'stdout',
  head: text,
  tail: text,
  complete: true,
  totalBytes: Buffer.byteLength(text),
  totalLines: undefined,
  spillPath: '/s/out.log',
  numbered: true,
  ...more,
})

const numbered = (text: string) => `${Array.from({ length: Number(text) }, (_, i) => `line ${i + 1}`).join('\n')}\n`

test('the cut marker names the lines and bytes left out and the file, in each form', () => {
  const facts = {
    firstLine: 4,
    lastLine: 7,
    totalLines: 10,
    bytes: 1234,
    totalBytes: 5000,
    spillPath: '/s/1-2-stdout.log',
    numbered: true,
  }
  expect(cutMarker(facts)).toBe('[output cut: lines 4-7 of 10 (1234 bytes) left out; full output: /s/1-2-stdout.log]')
  expect(cutMarker({ ...facts, firstLine: 7 })).toBe(
    '[output cut: line 7 of 10 (1234 bytes) left out; full output: /s/1-2-stdout.log]',
  )
  expect(cutMarker({ ...facts, numbered: false })).toBe(
    '[output cut: 4 lines (1234 bytes) left out; full output: /s/1-2-stdout.log]',
  )
  expect(cutMarker({ ...facts, numbered: false, lastLine: 4, bytes: 1 })).toBe(
    '[output cut: 1 line (1 byte) left out; full output: /s/1-2-stdout.log]',
  )
  expect(cutMarker({ ...facts, totalLines: undefined })).toBe(
    '[output cut: 1234 bytes left out; full output: /s/1-2-stdout.log]',
  )
  expect(cutMarker({ ...facts, spillPath: undefined })).toBe(
    '[output cut: lines 4-7 of 10 (1234 bytes) left out; the full output (5000 bytes) was not kept: redirect it to a file to keep it]',
  )
})

test('a stream that fits is shown whole, without its final newline', () => {
  expect(fitStream(whole('a\nb\n'), 3)).toEqual({ lines: ['a\nb'], cut: false })
  expect(fitStream(whole('a\nb'), 3)).toEqual({ lines: ['a\nb'], cut: false })
})

test('a long stream: whole head lines, the marker, whole tail lines; the marker states exactly what is missing', () => {
  const text = numbered('1000') // 8893 bytes
  const { lines, cut } = fitStream(whole(text), 300)
  expect(cut).toBe(true)
  expect(lines.join('\n')).toBe(
    [
      'line 1\nline 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\nline 14',
      '[output cut: lines 15-988 of 1000 (8681 bytes) left out; full output: /s/out.log]',
      'line 989\nline 990\nline 991\nline 992\nline 993\nline 994\nline 995\nline 996\nline 997\nline 998\nline 999\nline 1000',
    ].join('\n'),
  )
})

test('one line longer than the room is cut inside on character boundaries, and the marker still comes before the tail', () => {
  const text = '🎉é'.repeat(100) // 600 bytes, one line
  const { lines } = fitStream(whole(text), 200)
  expect(lines).toHaveLength(3)
  const [head, marker, tail] = lines as [string, string, string]
  expect(marker).toMatch(/^\[output cut: line 1 of 1 \(\d+ bytes\) left out; full output: \/s\/out\.log\]$/)
  expect(text.startsWith(head)).toBe(true)
  expect(text.endsWith(tail)).toBe(true)
  expect(head + tail).not.toContain('\uFFFD')
  expect(Buffer.byteLength(lines.join('\n'))).toBeLessThanOrEqual(200)
})

test('a room smaller than the marker gives the marker alone: where the output is must survive', () => {
  expect(fitStream(whole(numbered('50')), 20)).toEqual({
    lines: ['[output cut: lines 1-50 of 50 (391 bytes) left out; full output: /s/out.log]'],
    cut: true,
  })
})

test('layout: fixed lines stay whole, a short stream keeps what it needs and the long one gets the rest', () => {
  const short = whole('short\n')
  const long = whole(numbered('200'), { name: 'stderr' })
  const { text, cut } = layout([short, '[stderr]', long, '[exit code: 1]'], 400)
  expect(cut).toEqual(['stderr'])
  expect(text.startsWith('short\n[stderr]\nline 1\n')).toBe(true)
  expect(text.endsWith('line 200\n[exit code: 1]')).toBe(true)
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(400)
})

const inc = (text: string, spillPath?: string) => ({ text, lossy: false, ...(spillPath ? { spillPath } : {}) })
const read = (more: Partial<BashTaskRead> = {}): BashTaskRead => ({
  stdout: inc(''),
  stderr: inc(''),
  status: { state: 'running' },
  ...more,
})

test('bash_output: a long increment shows head and tail, the marker counting the lines left out', () => {
  expect(renderRead(read({ stdout: inc(numbered('100'), '/s/3-9-stdout.log') }), 200)).toBe(
    [
      'line 1',
      'line 2',
      'line 3',
      'line 4',
      'line 5',
      'line 6',
      'line 7',
      '[output cut: 87 lines (694 bytes) left out; full output: /s/3-9-stdout.log]',
      'line 95',
      'line 96',
      'line 97',
      'line 98',
      'line 99',
      'line 100',
      '[status: running]',
    ].join('\n'),
  )
})

const lineArb = fc
  .oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 100, maxLength: 900 }) },
  )
  .map((s) => s.replaceAll('\n', ''))

const MARKER =
  /^\[output cut: (?:lines? (\d+)(?:-(\d+))? of (\d+) )?\(?(\d+) bytes?\)? left out; full output: \/s\/out\.log\]$/

test('fitStream: within the room, head and tail exact, the marker naming exactly the lines and bytes not shown (property)', () => {
  fc.assert(
    fc.property(
      fc.array(lineArb, { minLength: 1, maxLength: 80 }),
      fc.boolean(),
      fc.integer({ min: 150, max: 3000 }),
      (parts, finalNewline, room) => {
        const text = parts.join('\n') + (finalNewline ? '\n' : '')
        fc.pre(Buffer.from(text, 'utf8').toString('utf8') === text)
        const { lines, cut } = fitStream(whole(text), room)
        const shown = lines.join('\n')
        expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(room)
        if (!cut) {
          expect(shown).toBe(text.replace(/\n$/, ''))
          return
        }
        const at = lines.findIndex((line) => line.startsWith('[output cut: '))
        const match = MARKER.exec(lines[at]!)
        expect(match).not.toBeNull()
        const all = text.replace(/\n$/, '').split('\n')
        const [, first, last, total, bytes] = match!
        expect(Number(total)).toBe(all.length)
        const firstLine = Number(first)
        const lastLine = Number(last ?? first)
        const head = lines.slice(0, at).join('\n')
        const tail = lines.slice(at + 1).join('\n')
        // The head: the lines before the cut, whole, then at most a piece of the first line cut.
        const headWhole = all.slice(0, firstLine - 1).join('\n')
        expect(head.startsWith(headWhole)).toBe(true)
        expect(all[firstLine - 1]!.startsWith(head.slice(headWhole.length).replace(/^\n/, ''))).toBe(true)
        // The tail: at most a piece of the last line cut, then the lines after it, whole.
        expect(text.replace(/\n$/, '').endsWith(tail)).toBe(true)
        expect(tail.endsWith(all.slice(lastLine).join('\n'))).toBe(true)
        // Every byte is either shown or counted as left out.
        // (A shown part dropped its final newline: the line break after it comes from the join.)
        const headBytes = Buffer.byteLength(head) + (at > 0 && firstLine > 1 && head === headWhole ? 1 : 0)
        const tailBytes = Buffer.byteLength(tail) + (at < lines.length - 1 && text.endsWith('\n') ? 1 : 0)
        expect(Number(bytes)).toBe(Buffer.byteLength(text) - headBytes - tailBytes)
      },
    ),
    { seed: 12, numRuns: 1000 },
  )
})

test('renderRead and layout never pass the budget, whatever the increments (property)', () => {
  const text = fc.array(lineArb, { maxLength: 60 }).map((ls) => ls.join('\n'))
  fc.assert(
    fc.property(text, text, fc.boolean(), fc.integer({ min: 1024, max: 5000 }), (stdout, stderr, lossy, budget) => {
      const rendered = renderRead(
        read({ stdout: { text: stdout, lossy, spillPath: '/s/x' }, stderr: inc(stderr) }),
        budget,
      )
      expect(Buffer.byteLength(rendered)).toBeLessThanOrEqual(budget)
      expect(rendered.endsWith('\n[status: running]')).toBe(true)
    }),
    { seed: 13, numRuns: 500 },
  )
})
