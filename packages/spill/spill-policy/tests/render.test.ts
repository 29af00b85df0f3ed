import { expect, test } from 'vitest'
import fc from 'fast-check'
import { renderInline, renderNotice } from '@deepseek-ai/dsh-spill-policy'

const saved = { locator: '/spill/s/call-1-bash-output.txt', retrievalHint: 'Page it.' }

/** Lines as `read` counts them: split on \n, no phantom line after a final newline. */
function linesOf(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  if (text.endsWith('\n')) lines.pop()
  return lines
}

test('the notice names the cut lines, the total size and the locator, then the hint', () => {
  expect(renderNotice({ firstCut: 4, lastCut: 7, totalLines: 10, totalBytes: 1234, saved })).toBe(
    '[Output too long: lines 4-7 of 10 are cut here. The complete output (1234 bytes) is saved at /spill/s/call-1-bash-output.txt. Page it.]',
  )
  expect(renderNotice({ firstCut: 1, lastCut: 1, totalLines: 1, totalBytes: 99, saved })).toBe(
    '[Output too long: line 1 of 1 is cut here. The complete output (99 bytes) is saved at /spill/s/call-1-bash-output.txt. Page it.]',
  )
})

test('whole lines: head and tail are whole lines and the notice names exactly the lines between them', () => {
  const text = `${Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n')}\n`
  const page = renderInline(text, saved, { maxInlineBytes: 300, headRatio: 0.5 })
  expect(page).toBe(
    [
      'line 1',
      'line 2',
      'line 3',
      'line 4',
      'line 5',
      'line 6',
      'line 7',
      'line 8',
      'line 9',
      'line 10',
      'line 11',
      '[Output too long: lines 12-91 of 100 are cut here. The complete output (792 bytes) is saved at /spill/s/call-1-bash-output.txt. Page it.]',
      'line 92',
      'line 93',
      'line 94',
      'line 95',
      'line 96',
      'line 97',
      'line 98',
      'line 99',
      'line 100',
      '',
    ].join('\n'),
  )
  expect(Buffer.byteLength(page)).toBe(290)
})

test('headRatio gives the head its share first, and a part without a share shows no stray fragment', () => {
  const text = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n')
  const headOnly = renderInline(text, saved, { maxInlineBytes: 300, headRatio: 1 })
  const tailOnly = renderInline(text, saved, { maxInlineBytes: 300, headRatio: 0 })
  expect(headOnly).toMatch(
    /^line 1\nline 2\n(line \d+\n)+\[Output too long: lines \d+-100 of 100 are cut here\.[^\n]*\]$/,
  )
  // The head only gets whole lines from what the tail left over.
  expect(tailOnly).toMatch(/^(line \d+\n)*\[Output too long: lines \d+-\d+ of 100 are cut here\.[^\n]*\](\nline \d+)+$/)
  const around = (page: string) =>
    page.split(/\[Output too long[^\n]*\]/).map((part) => part.split('\n').filter(Boolean).length)
  const [headOnlyHead, headOnlyTail] = around(headOnly)
  const [tailOnlyHead, tailOnlyTail] = around(tailOnly)
  expect(headOnlyTail).toBe(0)
  expect(headOnlyHead).toBeGreaterThan(10)
  expect(tailOnlyTail).toBeGreaterThan(10)
  expect(tailOnlyHead).toBeLessThan(2)
})

test('one long line is cut inside the line on character boundaries, never splitting a character', () => {
  const text = '🎉é'.repeat(200) // 6 bytes per pair, no newline
  const page = renderInline(text, saved, { maxInlineBytes: 250, headRatio: 0.5 })
  expect(page).not.toContain('\uFFFD')
  const [head, notice, tail] = page.split('\n')
  expect(notice).toBe(
    '[Output too long: line 1 of 1 is cut here. The complete output (1200 bytes) is saved at /spill/s/call-1-bash-output.txt. Page it.]',
  )
  expect(text.startsWith(head!)).toBe(true)
  expect(text.endsWith(tail!)).toBe(true)
  expect(head!.length).toBeGreaterThan(0)
  expect(tail!.length).toBeGreaterThan(0)
  expect(Buffer.byteLength(page)).toBeLessThanOrEqual(250)
})

test('a cap smaller than the notice gives the notice alone, naming every line', () => {
  const page = renderInline('a\nb\nc\n'.repeat(50), saved, { maxInlineBytes: 20, headRatio: 0.5 })
  expect(page).toBe(
    '[Output too long: lines 1-150 of 150 are cut here. The complete output (300 bytes) is saved at /spill/s/call-1-bash-output.txt. Page it.]',
  )
})

const lineArb = fc
  .oneof(
    { weight: 5, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 100, maxLength: 800 }) },
  )
  .map((s) => s.replaceAll('\n', ''))

test('the page fits the cap, head and tail are exact, and the notice names exactly the lines not shown whole (property)', () => {
  fc.assert(
    fc.property(
      fc.array(lineArb, { minLength: 1, maxLength: 80 }),
      fc.boolean(),
      fc.integer({ min: 150, max: 2000 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (lines, finalNewline, maxInlineBytes, headRatio) => {
        const text = lines.join('\n') + (finalNewline ? '\n' : '')
        fc.pre(Buffer.from(text, 'utf8').toString('utf8') === text)
        fc.pre(Buffer.byteLength(text) > maxInlineBytes)
        const page = renderInline(text, saved, { maxInlineBytes, headRatio })
        expect(Buffer.byteLength(page)).toBeLessThanOrEqual(maxInlineBytes)
        const match =
          /(?:^|\n)\[Output too long: lines? (\d+)(?:-(\d+))? of (\d+) (?:is|are) cut here\. The complete output \((\d+) bytes\) is saved at [^\n]*\]/.exec(
            page,
          )
        expect(match).not.toBeNull()
        const [whole, first, last, total, bytes] = match!
        expect(Number(bytes)).toBe(Buffer.byteLength(text))
        const all = linesOf(text)
        expect(Number(total)).toBe(all.length)
        const firstCut = Number(first)
        const lastCut = Number(last ?? first)
        const head = page.slice(0, match!.index + (whole.startsWith('\n') ? 1 : 0))
        const tail = page.slice(match!.index + whole.length + 1)
        // Head: the lines before the cut, whole, then at most a piece of the first cut line.
        const headWhole = all
          .slice(0, firstCut - 1)
          .map((l) => `${l}\n`)
          .join('')
        expect(head.startsWith(headWhole)).toBe(true)
        expect(all[firstCut - 1]!.startsWith(head.slice(headWhole.length).replace(/\n$/, ''))).toBe(true)
        // Tail: at most a piece of the last cut line, then the lines after the cut, whole.
        expect(text.endsWith(tail)).toBe(true)
        const tailWhole = all.slice(lastCut).join('\n') + (lastCut < all.length && text.endsWith('\n') ? '\n' : '')
        expect(tail.endsWith(tailWhole)).toBe(true)
        expect(lastCut).toBeGreaterThanOrEqual(firstCut)
      },
    ),
    { seed: 5, numRuns: 1000 },
  )
})
