import { readFileSync } from 'node:fs'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { fixture, type Fixture } from './helpers.ts'

let f: Fixture
beforeAll(async () => {
  f = await fixture()
})
afterAll(async () => {
  await f.cleanup()
})

const seed = 20261130

/** Sends `data` through a real child (`cat`) in collect mode. */
async function through(data: Uint8Array, maxBytes: number, spillMax?: number) {
  const stdout = spillMax === undefined ? { maxBytes } : { maxBytes, spill: { maxBytes: spillMax } }
  const handle = await f.spawn({ argv: ['cat'], stdin: { data }, stdout })
  await handle.done
  return handle.collected.stdout!
}

test('any UTF-8 text through collect mode: the tail text is a suffix of it, cut only at a character', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 400 }), fc.nat(600), async (text, maxBytes) => {
      const out = await through(Buffer.from(text), maxBytes)
      const bytes = Buffer.byteLength(text)
      const read = out.readFrom(0)
      expect(out.totalBytes).toBe(bytes)
      expect(read.nextOffset).toBe(bytes)
      expect(read.lossy).toBe(bytes > maxBytes)
      expect(text.endsWith(read.text)).toBe(true)
      const kept = Buffer.byteLength(read.text)
      expect(kept).toBeLessThanOrEqual(maxBytes)
      expect(kept).toBeGreaterThanOrEqual(Math.min(bytes, maxBytes) - 3)
    }),
    { seed, numRuns: 60 },
  )
})

test('any bytes through collect mode with spill: the file is the whole stream exactly when the tail overflowed', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 200000, size: 'max' }), fc.nat(70000), async (data, maxBytes) => {
      const out = await through(data, maxBytes, 1 << 20)
      expect(out.totalBytes).toBe(data.length)
      expect(out.truncated).toBe(data.length > maxBytes)
      if (data.length > maxBytes) expect(readFileSync(out.spillPath!).equals(data)).toBe(true)
      else expect(out.spillPath).toBeUndefined()
    }),
    { seed, numRuns: 40 },
  )
})

test('any bytes through collect mode with a head: head + tail reassemble the stream exactly when nothing was dropped', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ unit: 'binary', maxLength: 600 }),
      fc.nat(300),
      fc.nat(300),
      async (text, maxBytes, headBytes) => {
        const data = Buffer.from(text)
        const handle = await f.spawn({ argv: ['cat'], stdin: { data }, stdout: { maxBytes, headBytes } })
        await handle.done
        const out = handle.collected.stdout!
        expect(out.totalLines).toBe(text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0))
        expect(out.truncated).toBe(data.length > maxBytes + headBytes)
        const head = out.readHead()
        expect(text.startsWith(head.text)).toBe(true)
        expect(head.nextOffset).toBeGreaterThanOrEqual(Math.min(headBytes, data.length) - 3)
        if (!out.truncated) expect(out.readFrom(0)).toEqual({ text, nextOffset: data.length, lossy: false })
      },
    ),
    { seed, numRuns: 60 },
  )
})
