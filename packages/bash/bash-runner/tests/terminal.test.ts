import fc from 'fast-check'
import { expect, test } from 'vitest'
import { cleanTerminal, terminalStream } from '../src/terminal.ts'

test('control sequences go, text stays: colours, OSC titles, cursor moves, \\r\\n and a lone \\r, BEL', () => {
  expect(cleanTerminal('\u001b[1;31mred\u001b[0m plain')).toBe('red plain')
  expect(cleanTerminal('\u001b]0;title\u0007after \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\')).toBe('after link')
  expect(cleanTerminal('a\u001b[2K\u001b[1Gb\u001b[?25l')).toBe('ab')
  expect(cleanTerminal('one\r\ntwo\r\r\nthree\rfour\u0007')).toBe('one\ntwo\nthree\nfour')
  expect(cleanTerminal('tab\tkept\n')).toBe('tab\tkept\n')
})

test('a read that ends inside a sequence stops before it; the next read sees it whole (offsets are the raw bytes)', () => {
  const raw = 'ab\u001b[31mred\u001b[0m\r\nend'
  let available = 0
  const stream = terminalStream({
    readFrom: (offset) => ({
      text: raw.slice(offset, available),
      nextOffset: Math.max(offset, available),
      lossy: false,
    }),
  })
  available = 4 // 'ab', ESC, '['
  const first = stream.readFrom(0)
  expect(first).toMatchObject({ text: 'ab', nextOffset: 2 })
  available = raw.length
  const rest = stream.readFrom(first.nextOffset)
  expect(first.text + rest.text).toBe('abred\nend')
})

test('whatever the chunking, the cleaned pieces join to the cleaned whole (property)', () => {
  const piece = fc.constantFrom(
    'a',
    'b',
    '\n',
    '\r\n',
    '\r',
    '\u001b[31m',
    '\u001b[0m',
    '\u001b]0;t\u0007',
    'é',
    '\u0007',
  )
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 30 }), fc.array(fc.nat(60), { maxLength: 8 }), (pieces, cuts) => {
      const raw = pieces.join('')
      let available = 0
      const stream = terminalStream({
        readFrom: (offset) => ({
          text: raw.slice(offset, Math.max(offset, available)),
          nextOffset: Math.max(offset, available),
          lossy: false,
        }),
      })
      let offset = 0
      let text = ''
      for (const cut of [...cuts.sort((x, y) => x - y), raw.length]) {
        available = Math.min(cut, raw.length)
        const read = stream.readFrom(offset)
        text += read.text
        offset = read.nextOffset
      }
      // What is held back at the very end is only trailing \r's and sequences: line ends at most.
      const whole = cleanTerminal(raw)
      expect(whole.startsWith(text)).toBe(true)
      expect(whole.slice(text.length)).toMatch(/^\n*$/)
    }),
    { seed: 28, numRuns: 300 },
  )
})
