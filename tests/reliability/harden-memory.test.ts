import { sessionFor } from '@deepseek-ai/dsh-testing'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { host, peakRssMiB, temp, textOf, type Temp } from './helpers.ts'

/*
 * Issue 33 row 3 (docs/security.md#boundary): one call's memory is bounded. bash makes a text file past tool-fs.editMaxBytes, read
 * shows its first line, and edit of its last line is refused with FS_TOO_LARGE before the file is read: the peak RSS
 * of this process (which hosts dsh) does not grow by the file's size. (On the old code the edit read the whole file
 * and held it several times over.) The file is sparse: 256 MiB on paper, a few KiB of disk.
 */
let ws: Temp
beforeAll(() => {
  ws = temp('harden-memory')
})
afterAll(() => ws?.cleanup())

const MiB = 1024 * 1024

test('edit of the last line of a text file past editMaxBytes is FS_TOO_LARGE, and the heap does not take the file', async () => {
  const dsh = await host({ 'tool-fs': { editMaxBytes: 64 * MiB } })
  const session = sessionFor('big', ws.dir)
  try {
    const made = await dsh.ctx.tools.execute(
      'bash',
      {
        command:
          "yes 'first lines of a text file' | head -c 8192 > big.txt && truncate -s 256M big.txt && echo 'the last line' >> big.txt && echo made",
        description: 'make a large file',
      },
      { session },
    )
    expect(textOf(made)).toContain('made')
    const size = statSync(join(ws.dir, 'big.txt')).size
    expect(size).toBeGreaterThan(256 * MiB)
    const read = await dsh.ctx.tools.execute('read', { path: 'big.txt', limit: 1 }, { session })
    expect(textOf(read)).toContain('1: first lines of a text file')
    const before = peakRssMiB()
    const edit = await dsh.ctx.tools.execute(
      'edit',
      { path: 'big.txt', old_string: 'the last line', new_string: 'the new last line' },
      { session },
    )
    const grown = peakRssMiB() - before
    expect(edit.isError).toBe(true)
    expect(edit.error?.code).toBe('FS_TOO_LARGE')
    expect(textOf(edit)).toMatch(
      /^Error: edit refused: \S+big\.txt is 256 MiB, more than the 64 MiB that edit handles \(tool-fs\.editMaxBytes\); change it with bash instead \(e\.g\. sed -i 's\/old\/new\/' on it\), or split it into smaller files$/,
    )
    // The refusal comes from a stat: nothing near the file's size (nor the bound's) reached the heap.
    expect(grown).toBeLessThan(64)
    expect(statSync(join(ws.dir, 'big.txt')).size).toBe(size)
  } finally {
    await dsh.dispose()
  }
}, 120_000)

test('write of content past editMaxBytes is FS_TOO_LARGE and creates nothing; an edit that would grow past it too', async () => {
  const dsh = await host({ 'tool-fs': { editMaxBytes: 1024 } })
  const session = sessionFor('small', ws.dir)
  try {
    const write = await dsh.ctx.tools.execute('write', { path: 'new.txt', content: 'x'.repeat(2000) }, { session })
    expect(write.error?.code).toBe('FS_TOO_LARGE')
    expect(textOf(write)).toContain('the new content of')
    expect(textOf(write)).toContain('would be 2000 bytes, more than the 1024 bytes that write handles')
    expect(statSync(join(ws.dir, 'new.txt'), { throwIfNoEntry: false })).toBeUndefined()
    const made = await dsh.ctx.tools.execute('write', { path: 'grow.txt', content: 'a\nb\n' }, { session })
    expect(made.isError).toBeFalsy()
    const edit = await dsh.ctx.tools.execute(
      'edit',
      { path: 'grow.txt', old_string: 'b', new_string: 'y'.repeat(1500) },
      { session },
    )
    expect(edit.error?.code).toBe('FS_TOO_LARGE')
    expect(statSync(join(ws.dir, 'grow.txt')).size).toBe(4)
  } finally {
    await dsh.dispose()
  }
}, 60_000)
