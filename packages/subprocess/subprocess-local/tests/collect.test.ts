import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { fixture, until, type Fixture } from './helpers.ts'

let f: Fixture
beforeEach(async () => {
  f = await fixture()
})
afterEach(async () => {
  await f.cleanup()
})

/** A child that writes exactly `data` to stdout (through cat, so no shell quoting is involved). */
async function collect(data: Buffer, maxBytes: number, spill?: { maxBytes: number }) {
  const handle = await f.spawn({ argv: ['cat'], stdin: { data }, stdout: spill ? { maxBytes, spill } : { maxBytes } })
  await handle.done
  return handle.collected.stdout!
}

test('collect keeps the exact byte tail of maxBytes', async () => {
  const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => `${i}\n`).join(''))
  const out = await collect(data, 100)
  expect(out.totalBytes).toBe(data.length)
  expect(out.truncated).toBe(true)
  expect(out.readFrom(0)).toEqual({
    text: data.subarray(data.length - 100).toString(),
    nextOffset: data.length,
    lossy: true,
  })
})

test('output of exactly maxBytes is not truncated', async () => {
  const data = Buffer.alloc(4096, 'a')
  const out = await collect(data, 4096)
  expect(out.truncated).toBe(false)
  expect(out.readFrom(0)).toEqual({ text: data.toString(), nextOffset: 4096, lossy: false })
})

test('a multi-byte character cut at the tail edge is dropped, never turned into garbage', async () => {
  // "€" is 3 bytes; a 4-byte tail of "a€€" holds the last 2 bytes of the first euro and the whole second one.
  const out = await collect(Buffer.from('a€€'), 4)
  expect(out.readFrom(0)).toEqual({ text: '€', nextOffset: 7, lossy: true })
})

test('readFrom is non-consuming and reads only what is new from nextOffset', async () => {
  const out = await collect(Buffer.from('hello world'), 64)
  expect(out.readFrom(0).text).toBe('hello world')
  expect(out.readFrom(0).text).toBe('hello world')
  expect(out.readFrom(6)).toEqual({ text: 'world', nextOffset: 11, lossy: false })
  expect(out.readFrom(11)).toEqual({ text: '', nextOffset: 11, lossy: false })
})

test('readFrom is lossy when the offset fell out of the tail', async () => {
  const out = await collect(Buffer.from('0123456789'), 4)
  expect(out.readFrom(2)).toEqual({ text: '6789', nextOffset: 10, lossy: true })
  expect(out.readFrom(6)).toEqual({ text: '6789', nextOffset: 10, lossy: false })
})

test('readFrom on a running process stops before an incomplete trailing character', async () => {
  // The child writes "a" and the first two bytes of "€", then waits for a line on stdin before the last byte.
  const handle = await f.spawn({ argv: ['sh', '-c', 'printf "a\\342\\202"; read x; printf "\\254"'], stdin: 'pipe' })
  const out = handle.collected.stdout!
  await until(() => out.totalBytes === 3, 'the first three bytes arrived')
  expect(out.readFrom(0)).toEqual({ text: 'a', nextOffset: 1, lossy: false })
  handle.stdin!.end('\n')
  await handle.done
  expect(out.readFrom(1)).toEqual({ text: '€', nextOffset: 4, lossy: false })
})

test('with spill, the file holds the complete stream byte for byte, 0600 in a 0700 directory', async () => {
  const data = Buffer.from(Array.from({ length: 50000 }, (_, i) => `line ${i} ✓\n`).join(''))
  const out = await collect(data, 1000, { maxBytes: 10 * 1048576 })
  const path = out.spillPath!
  expect(path).toBeDefined()
  expect(out.readFrom(0)).toMatchObject({ lossy: true, spillPath: path })
  expect(readFileSync(path).equals(data)).toBe(true)
  expect(statSync(path).mode & 0o777).toBe(0o600)
  expect(statSync(dirname(path)).mode & 0o777).toBe(0o700)
})

test('with spill, a stream that fits the tail makes no file', async () => {
  const out = await collect(Buffer.from('small'), 1000, { maxBytes: 10000 })
  expect(out.spillPath).toBeUndefined()
  expect(out.readFrom(0)).toEqual({ text: 'small', nextOffset: 5, lossy: false })
})

test('a stream over the spill cap discards its file', async () => {
  const handle = await f.spawn({
    argv: ['head', '-c', '200000', '/dev/zero'],
    stdout: { maxBytes: 1000, spill: { maxBytes: 100000 } },
  })
  await handle.done
  const out = handle.collected.stdout!
  expect(out.spillPath).toBeUndefined()
  expect(out.readFrom(0).spillPath).toBeUndefined()
  expect(out.totalBytes).toBe(200000)
  expect(out.readFrom(0).text).toBe('\0'.repeat(1000))
  // The file existed from the first overflow on; nothing of it is left.
  const spillRoot = join(f.dir, 'spill')
  const [privateDir] = readdirSync(spillRoot)
  expect(readdirSync(join(spillRoot, privateDir!))).toEqual([])
})

test('with headBytes, the head and the tail are both kept, and the line count covers the dropped middle', async () => {
  const data = Buffer.from(Array.from({ length: 400_000 }, (_, i) => `${i + 1}\n`).join(''))
  const handle = await f.spawn({ argv: ['seq', '1', '400000'], stdout: { maxBytes: 1000, headBytes: 500 } })
  await handle.done
  const out = handle.collected.stdout!
  expect(out.totalBytes).toBe(data.length)
  expect(out.totalLines).toBe(400_000)
  expect(out.truncated).toBe(true)
  expect(out.readHead()).toEqual({ text: data.subarray(0, 500).toString(), nextOffset: 500, lossy: false })
  expect(out.readFrom(0)).toEqual({
    text: data.subarray(data.length - 1000).toString(),
    nextOffset: data.length,
    lossy: true,
  })
})

test('with headBytes, a stream that head and tail together hold is read whole from any offset', async () => {
  const data = Buffer.from('0123456789\n'.repeat(10)) // 110 bytes: head 60 + tail 50 hold it exactly
  const out = await collectWith(data, { maxBytes: 50, headBytes: 60 })
  expect(out.truncated).toBe(false)
  expect(out.readFrom(0)).toEqual({ text: data.toString(), nextOffset: 110, lossy: false })
  expect(out.readFrom(55)).toEqual({ text: data.subarray(55).toString(), nextOffset: 110, lossy: false })
  const over = await collectWith(Buffer.concat([data, Buffer.from('x')]), { maxBytes: 50, headBytes: 60 })
  expect(over.truncated).toBe(true)
  expect(over.readFrom(0)).toMatchObject({ lossy: true, nextOffset: 111 })
  expect(over.readHead().text).toBe(data.subarray(0, 60).toString())
})

test('the head never ends inside a character, and the line count includes a last line without a newline', async () => {
  const out = await collectWith(Buffer.from('a€€b\nlast'), { maxBytes: 2, headBytes: 3 })
  expect(out.readHead()).toEqual({ text: 'a', nextOffset: 1, lossy: false })
  expect(out.totalLines).toBe(2)
  const empty = await collectWith(Buffer.alloc(0), { maxBytes: 2, headBytes: 3 })
  expect(empty.totalLines).toBe(0)
  expect(empty.readHead().text).toBe('')
})

async function collectWith(data: Buffer, stdout: { maxBytes: number; headBytes: number }) {
  const handle = await f.spawn({ argv: ['cat'], stdin: { data }, stdout })
  await handle.done
  return handle.collected.stdout!
}
