import { mkdtemp, readFile, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { GUARD_LIMITS, Observations, whatChanged } from '../src/seen-files.ts'

let dir: string
beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-guard-unit-')))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function put(name: string, content: string) {
  const path = join(dir, name)
  await writeFile(path, content)
  return { path, stats: await stat(path), bytes: await readFile(path) }
}

test('forced fault: other bytes under the very same identity (a second write within one timestamp tick) are stale while the record is not settled', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, settleMs: 60_000 })
  const { path, stats, bytes } = await put('racy.txt', 'aaaa\n')
  guard.recordBytes(path, stats, bytes)
  // The same dev/ino/size/mtime/ctime, other bytes: what a same-tick rewrite in place looks like.
  expect((await guard.check(path, stats, Buffer.from('bbbb\n'))).kind).toBe('stale')
  expect((await guard.check(path, stats, bytes)).kind).toBe('fresh')
})

test('a settled record trusts its identity: nothing is compared while it stays the same', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, settleMs: 0 })
  const { path, stats, bytes } = await put('old.txt', 'aaaa\n')
  await new Promise((resolve) => setTimeout(resolve, 5))
  guard.recordBytes(path, stats, bytes)
  expect((await guard.check(path, stats, Buffer.from('not even read'))).kind).toBe('fresh')
})

test('memory is bounded: past maxFiles the least recently seen file is forgotten (then it must be read again)', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, maxFiles: 2 })
  const files = await Promise.all(['a', 'b', 'c'].map((name) => put(name, `${name}\n`)))
  for (const file of files) guard.recordBytes(file.path, file.stats, file.bytes)
  const [a, b, c] = files
  expect((await guard.check(a!.path, a!.stats, a!.bytes)).kind).toBe('not-read')
  expect((await guard.check(b!.path, b!.stats, b!.bytes)).kind).toBe('fresh')
  expect((await guard.check(c!.path, c!.stats, c!.bytes)).kind).toBe('fresh')
})

test('past the copy budget, older copies become digests and still judge by content', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, keepTotal: 8, settleMs: 60_000 })
  const one = await put('one', 'first!\n')
  const two = await put('two', 'second\n')
  guard.recordBytes(one.path, one.stats, one.bytes)
  guard.recordBytes(two.path, two.stats, two.bytes)
  expect((await guard.check(one.path, one.stats, one.bytes)).kind).toBe('fresh')
  expect(await guard.check(one.path, one.stats, Buffer.from('other!\n'))).toEqual({
    kind: 'stale',
    facts: { kind: 'size', before: 7, after: 7 },
  })
})

test('what changed: the first differing lines as they are now, bounded', () => {
  expect(whatChanged(Buffer.from('a\nb\nc\n'), Buffer.from('a\nX\nY\nc\n'))).toEqual({
    kind: 'region',
    firstLine: 2,
    removed: 1,
    more: false,
    rows: [
      { line: 2, text: 'X', truncated: false },
      { line: 3, text: 'Y', truncated: false },
    ],
  })
  expect(whatChanged(Buffer.from('a\nb\nc\n'), Buffer.from('a\nc\n'))).toMatchObject({
    kind: 'region',
    firstLine: 2,
    removed: 1,
    rows: [],
  })
  const many = whatChanged(Buffer.from(''), Buffer.from(Array.from({ length: 100 }, (_, i) => `${i}`).join('\n')))
  expect(many).toMatchObject({ kind: 'region', more: true })
  expect(many.kind === 'region' && many.rows.length).toBe(12)
})

test('a file written just now and read in part is not stale when unchanged (its start is compared), and is when its start changed under the same identity (forced)', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, keepBytes: 16, completeBytes: 64, settleMs: 60_000 })
  const { path, stats, bytes } = await put('large.txt', `${'x'.repeat(100)}\n${'y'.repeat(99)}\n`)
  const observer = guard.observeRead()
  observer.opened(path, stats)
  observer.chunk(bytes.subarray(0, 120)) // a first page: read streamed part of the file
  observer.done()
  expect((await guard.check(path, stats, bytes)).kind).toBe('fresh')
  const other = Buffer.from(bytes)
  other[0] = 0x7a
  expect(await guard.check(path, stats, other)).toEqual({
    kind: 'stale',
    facts: { kind: 'size', before: 201, after: 201 },
  })
})

test('a settled file read in part, then touched, is not stale once its digest is in (a larger-than-kept file)', async () => {
  const guard = new Observations({ ...GUARD_LIMITS, keepBytes: 16, settleMs: 0 })
  const { path, stats, bytes } = await put('paged.txt', `${'z'.repeat(500)}\n`)
  await new Promise((resolve) => setTimeout(resolve, 5))
  const observer = guard.observeRead()
  observer.opened(path, stats)
  observer.chunk(bytes.subarray(0, 100))
  observer.done()
  await guard.settled() // the completion after the call: the file read whole and digested
  await utimes(path, new Date(2000, 1, 1), new Date(2000, 1, 1))
  expect((await guard.check(path, await stat(path), bytes)).kind).toBe('fresh')
})
