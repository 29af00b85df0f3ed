import fc from 'fast-check'
import { expect, test } from 'vitest'
import { completeLength, countNewlines, cutPrefixLength, HeadBuffer, TailBuffer } from '../src/tail.ts'

const seed = 20261130

test('the tail holds exactly the last capacity bytes, whatever the chunking', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 30 }), fc.nat(700), fc.nat(10000), (chunks, capacity, offset) => {
      const tail = new TailBuffer(capacity)
      for (const chunk of chunks) tail.push(chunk)
      const all = Buffer.concat(chunks)
      const kept = all.subarray(Math.max(0, all.length - capacity))
      expect(tail.total).toBe(all.length)
      expect(tail.start).toBe(all.length - kept.length)
      expect(tail.bytesFrom(0).equals(kept)).toBe(true)
      const from = Math.min(offset, all.length)
      expect(tail.bytesFrom(from).equals(all.subarray(Math.max(from, tail.start)))).toBe(true)
    }),
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

test('completeLength keeps whole characters and holds back only a sequence that could still complete', () => {
  const euro = Buffer.from('€') // e2 82 ac
  const grin = Buffer.from('😀') // f0 9f 98 80
  expect(completeLength(Buffer.from('abc'))).toBe(3)
  expect(completeLength(Buffer.concat([Buffer.from('a'), euro]))).toBe(4)
  expect(completeLength(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).toBe(1)
  expect(completeLength(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]))).toBe(1)
  expect(completeLength(Buffer.concat([Buffer.from('a'), grin.subarray(0, 3)]))).toBe(1)
  expect(completeLength(grin)).toBe(4)
  // Not UTF-8 at all: nothing to wait for.
  expect(completeLength(Buffer.from([0x61, 0x80, 0x80]))).toBe(3)
  expect(completeLength(Buffer.from([0xff]))).toBe(1)
})

test('cutPrefixLength skips at most three continuation bytes', () => {
  expect(cutPrefixLength(Buffer.from('€').subarray(1))).toBe(2)
  expect(cutPrefixLength(Buffer.from('abc'))).toBe(0)
  expect(cutPrefixLength(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x61]))).toBe(3)
})

test('any split of valid UTF-8 decodes to a prefix of the text, whole characters only', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.nat(300), (text, at) => {
      const bytes = Buffer.from(text)
      const cut = bytes.subarray(0, Math.min(at, bytes.length))
      const decoded = cut.toString('utf8', 0, completeLength(cut))
      expect(text.startsWith(decoded)).toBe(true)
      expect(cut.length - Buffer.byteLength(decoded)).toBeLessThanOrEqual(3)
    }),
    { seed, numRuns: 500 },
  )
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

test('countNewlines counts every newline byte', () => {
  expect(countNewlines(Buffer.from(''))).toBe(0)
  expect(countNewlines(Buffer.from('a\nb\n\nc'))).toBe(3)
  expect(countNewlines(Buffer.alloc(1000, '\n'))).toBe(1000)
})
