import fc from 'fast-check'
import { expect, test } from 'vitest'
import { LineSplitter } from '@deepseek-ai/dsh-mcp-wire'

test('the splitter gives every line up to the bound whole, and each longer one once as too long, however the stream is cut (property)', () => {
  const MAX = 8
  fc.assert(
    fc.property(
      fc.array(fc.string({ unit: fc.constantFrom('a', 'b', 'é'), maxLength: 14 }), { maxLength: 12 }),
      fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
      (lines, cuts) => {
        const stream = Buffer.from(lines.map((line) => `${line}\n`).join(''))
        const got: string[] = []
        const tooLong: string[] = []
        const splitter = new LineSplitter(
          MAX,
          (line) => got.push(line.toString()),
          (head) => tooLong.push(head.toString('latin1').slice(0, 1)),
        )
        for (let at = 0, i = 0; at < stream.length; i++) {
          const size = cuts[i % cuts.length]!
          splitter.push(stream.subarray(at, at + size))
          at += size
        }
        expect(got).toEqual(lines.filter((line) => Buffer.byteLength(line) <= MAX))
        expect(tooLong.length).toBe(lines.filter((line) => Buffer.byteLength(line) > MAX).length)
      },
    ),
    { seed: Number(process.env.DSH_FUZZ_SEED ?? 20261201) },
  )
})

test('a part kept for a line that is not finished is copied, so the stream may reuse its chunk', () => {
  const lines: string[] = []
  const splitter = new LineSplitter(
    100,
    (line) => lines.push(line.toString()),
    () => {},
  )
  const chunk = Buffer.from('abc')
  splitter.push(chunk)
  chunk.write('xyz')
  splitter.push(Buffer.from('d\n'))
  expect(lines).toEqual(['abcd'])
})
