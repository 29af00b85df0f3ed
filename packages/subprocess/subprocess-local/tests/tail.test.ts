import fc from 'fast-check'
import { expect, test } from 'vitest'
import { countNewlines, HeadBuffer, TailBuffer } from '../src/tail.ts'

const seed = 20261130

test('the tail holds exactly the last capacity bytes, whatever the chunking', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 30 }),
      fc.nat(700),
      fc.nat(10000),
      (chunks, capacity, offset) => {
        const tail = new TailBuffer(capacity)
        for (const chunk of chunks) tail.push(chunk)
        const all = Buffer.concat(chunks)
        const kept = all.subarray(Math.max(0, all.length - capacity))
        expect(tail.total).toBe(all.length)
        expect(tail.start).toBe(all.length - kept.length)
        expect(tail.bytesFrom(0).equals(kept)).toBe(true)
        const from = Math.min(offset, all.length)
        expect(tail.bytesFrom(from).equals(all.subarray(Math.max(from, tail.start)))).toBe(true)
      },
    ),
    { seed, numRuns: 500 },
  )
})

test('the ring never grows past its capacity', () => {
  const tail = new TailBuffer(100000)
  for (let i = 0; i < 1000; i++) tail.push(Buffer.alloc(4096, i))
  expect((tail as unknown as { ring: Buffer }).ring.length).toBe(100000)
  const small = new TailBuffer(100000)
  small.push(Buffer.alloc(10))
  expect((small as unknown as { ring: Buffer }).ring.length).toBeLessThan(100000)
})

test('the head holds exactly the first capacity bytes, whatever the chunking', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 30 }), fc.nat(700), (chunks, capacity) => {
      const head = new HeadBuffer(capacity)
      for (const chunk of chunks) head.push(chunk)
      const all = Buffer.concat(chunks)
      expect(head.bytesFrom(0).equals(all.subarray(0, capacity))).toBe(true)
      expect(head.full).toBe(all.length >= capacity)
    }),
    { seed, numRuns: 500 },
  )
})

test('countNewlines counts every newline byte, sparse or dense, at any alignment (property)', () => {
  expect(countNewlines(Buffer.from(''))).toBe(0)
  expect(countNewlines(Buffer.from('a\nb\n\nc'))).toBe(3)
  expect(countNewlines(Buffer.alloc(1000, '\n'))).toBe(1000)
  expect(countNewlines(Buffer.from('1234567\n'.repeat(10_000)))).toBe(10_000)
  const naive = (bytes: Uint8Array) => bytes.reduce((n, byte) => n + (byte === 0x0a ? 1 : 0), 0)
  const byte = fc.oneof(fc.constant(0x0a), fc.constant(0x0b), fc.constant(0x8a), fc.integer({ min: 0, max: 255 }))
  fc.assert(
    fc.property(fc.array(byte, { maxLength: 2000 }), fc.nat(7), fc.nat(7), (values, front, back) => {
      const all = Uint8Array.from(values)
      const view = all.subarray(Math.min(front, all.length), Math.max(Math.min(front, all.length), all.length - back))
      expect(countNewlines(view)).toBe(naive(view))
    }),
    { seed, numRuns: 1000 },
  )
})
