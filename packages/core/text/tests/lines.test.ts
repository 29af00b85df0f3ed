import fc from 'fast-check'
import { expect, test } from 'vitest'
import { headCut, tailCut } from '@deepseek-ai/dsh-text'

const b = (text: string) => Buffer.from(text, 'utf8')

test('headCut ends after the last whole line that fits, else on a character, else at 0', () => {
  expect(headCut(b('ab\ncd\nef'), 6, false)).toBe(6)
  expect(headCut(b('ab\ncd\nef'), 5, false)).toBe(3)
  expect(headCut(b('abcdef'), 4, false)).toBe(0)
  expect(headCut(b('ab€cd'), 4, true)).toBe(2) // never inside the 3-byte €
  expect(headCut(b('ab\n'), 99, false)).toBe(3)
  expect(headCut(b('ab'), 0, true)).toBe(0)
})

test('tailCut starts at the first whole line that fits, else on a character, else at the end', () => {
  expect(tailCut(b('ab\ncd\nef'), 5, false)).toBe(3)
  expect(tailCut(b('ab\ncd\nef\n'), 3, false)).toBe(6)
  expect(tailCut(b('abcdef'), 4, false)).toBe(6)
  expect(tailCut(b('ab€cd'), 4, true)).toBe(5) // skips the rest of the €
  expect(tailCut(b('ab\ncd'), 99, false)).toBe(0)
  // A kept tail whose first line may have begun earlier: that line is never taken as whole.
  expect(tailCut(b('ab\ncd'), 99, false, false)).toBe(3)
})

test('head and tail cuts keep whole lines and whole characters within the room (property)', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.nat(250), fc.boolean(), (text, room, partial) => {
      const bytes = b(text)
      const head = headCut(bytes, room, partial)
      const tail = tailCut(bytes, room, partial)
      expect(head).toBeLessThanOrEqual(Math.min(room, bytes.length))
      expect(bytes.length - tail).toBeLessThanOrEqual(Math.max(room, 0))
      expect(text.startsWith(bytes.toString('utf8', 0, head))).toBe(true)
      expect(text.endsWith(bytes.toString('utf8', tail))).toBe(true)
      const headPiece = bytes.subarray(0, head)
      if (!partial && head > 0) expect(headPiece.at(-1)).toBe(0x0a)
      if (!partial && tail > 0 && tail < bytes.length) expect(bytes[tail - 1]).toBe(0x0a)
    }),
    { seed: 7, numRuns: 1000 },
  )
})
