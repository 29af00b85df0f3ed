import fc from 'fast-check'
import { expect, test } from 'vitest'
import { FrameReader } from '../src/warm.ts'

/** A frame as the runner writes it: kind, run id, payload length, payload. */
function encode(kind: number, id: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9)
  head[0] = kind
  head.writeUInt32BE(id, 1)
  head.writeUInt32BE(payload.length, 5)
  return Buffer.concat([head, payload])
}

const frame = fc.oneof(
  fc.record({
    kind: fc.constant(2),
    id: fc.integer({ min: 1, max: 5 }),
    payload: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  }),
  fc.record({
    kind: fc.constantFrom(3, 4),
    id: fc.integer({ min: 1, max: 5 }),
    payload: fc.constantFrom('{"pid":2}', '{"code":0,"signal":null}', '{"error":"spawn ENOENT"}').map(Buffer.from),
  }),
)

test('the frames read back whole, however the pipe cuts them: stderr in order per run, events whole', () => {
  fc.assert(
    fc.property(fc.array(frame, { maxLength: 20 }), fc.array(fc.integer({ min: 1, max: 64 })), (frames, cuts) => {
      const bytes = Buffer.concat(frames.map((item) => encode(item.kind, item.id, item.payload)))
      const seen: string[] = []
      const output = new Map<string, Buffer[]>()
      const reader = new FrameReader(
        (id, part) => {
          const key = `2:${id}`
          output.set(key, [...(output.get(key) ?? []), Buffer.from(part)])
          if (seen.at(-1) !== key) seen.push(key)
        },
        (kind, id, text) => seen.push(`${kind}:${id}:${text}`),
      )
      let at = 0
      for (const cut of cuts) {
        reader.push(bytes.subarray(at, at + cut))
        at = Math.min(bytes.length, at + cut)
      }
      reader.push(bytes.subarray(at))
      const expected = new Map<string, Buffer[]>()
      const order: string[] = []
      for (const item of frames) {
        const key = `${item.kind}:${item.id}`
        if (item.kind <= 2) {
          expected.set(key, [...(expected.get(key) ?? []), item.payload])
          if (order.at(-1) !== key) order.push(key)
        } else order.push(`${key}:${item.payload.toString()}`)
      }
      expect(seen).toEqual(order)
      for (const [key, parts] of expected) expect(Buffer.concat(output.get(key) ?? [])).toEqual(Buffer.concat(parts))
    }),
  )
})
