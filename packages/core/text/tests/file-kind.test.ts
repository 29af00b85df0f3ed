import { execFileSync } from 'node:child_process'
import { lstatSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, expect, test } from 'vitest'
import { fileKind } from '../src/index.ts'

const dir = mkdtempSync(join(tmpdir(), 'dsh-text-kind-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('fileKind names each kind of file in the words every refusal uses', async () => {
  writeFileSync(join(dir, 'file'), 'x')
  symlinkSync('file', join(dir, 'link'))
  execFileSync('mkfifo', [join(dir, 'pipe')])
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(join(dir, 'sock'), resolve))
  try {
    expect(fileKind(lstatSync(join(dir, 'file')))).toBe('a regular file')
    expect(fileKind(lstatSync(dir))).toBe('a directory')
    expect(fileKind(lstatSync(join(dir, 'link')))).toBe('a symbolic link')
    expect(fileKind(lstatSync(join(dir, 'pipe')))).toBe('a FIFO')
    expect(fileKind(lstatSync(join(dir, 'sock')))).toBe('a socket')
    expect(fileKind(lstatSync('/dev/null'))).toBe('a character device')
  } finally {
    server.close()
  }
})
