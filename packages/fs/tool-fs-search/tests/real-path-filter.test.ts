import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import Workspace, { openDirectory, type OpenedDir } from '@deepseek-ai/dsh-workspace'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { RealPathFilter } from '../src/real-path-filter.ts'
import type { GrepLineValue } from '../src/values.ts'

/*
 * Without the sandbox ripgrep walks below the verified root by path, so a directory swapped for a link to a hidden
 * one while it walks makes it print a path such as `race/d/id_rsa` whose real path is the secret (docs/security.md#boundary). The
 * filter judges what ripgrep printed, against real files and the workspace's real policy: here the link stands still
 * where the race would have it at the moment ripgrep opened the file.
 */
let base: string
let project: string
let t: TestContext
let root: OpenedDir

beforeEach(async () => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'dsh-real-path-')))
  project = join(base, 'project')
  const secret = join(base, 'secret')
  mkdirSync(join(project, 'race/d'), { recursive: true })
  mkdirSync(secret)
  writeFileSync(join(secret, 'id_rsa'), 'CANARY\n')
  writeFileSync(join(project, 'race/d/ok.txt'), 'fine\n')
  mkdirSync(join(project, 'private/deep'), { recursive: true })
  writeFileSync(join(project, 'private/deep/key.txt'), 'CANARY\n')
  writeFileSync(join(base, 'outside.txt'), 'outside\n')
  symlinkSync(secret, join(project, 'race/l'))
  symlinkSync(base, join(project, 'up'))
  t = await createTestContext({ withTools: false })
  await t.ctx.plugin(Workspace, { denyRead: [secret, join(project, 'private')] })
  const policy = t.ctx.workspace.policy(project, 'grep', true)
  root = await openDirectory(project, { cwd: project, tool: 'grep', access: 'read', policy })
})
afterEach(async () => {
  await root?.close()
  await t?.dispose()
  rmSync(base, { recursive: true, force: true })
})

function filter(): RealPathFilter {
  const policy = t.ctx.workspace.policy(project, 'grep', true)
  return new RealPathFilter(root.fdPath, { cwd: project, tool: 'grep', access: 'read', policy })
}

test('a file whose real path is hidden, outside the roots or gone is refused; one inside the root is allowed', () => {
  const f = filter()
  expect(f.allows('race/l/id_rsa')).toBe(false)
  expect(f.allows('up/outside.txt')).toBe(false)
  expect(f.allows('gone/x.txt')).toBe(false)
  expect(f.allows('race/d/ok.txt')).toBe(true)
})

test('a file deep below a hidden directory inside the root is refused, whatever directory it is printed in', () => {
  const f = filter()
  expect(f.allows('private/deep/key.txt')).toBe(false)
  expect(f.allows('race/d/ok.txt')).toBe(true)
})

test('the filtered sink writes no row of a refused file, and every row of an allowed one', () => {
  const rows: string[] = []
  const sink = filter().sink({
    file: (key) => rows.push(`file ${key}`),
    line: (line: GrepLineValue) => rows.push(`line ${line.line}`),
  })
  const line = (n: number): GrepLineValue => ({ line: n, preview: 'x', truncated: false })
  sink.file('race/l/id_rsa', 'race/l/id_rsa')
  sink.line(line(1))
  sink.file('race/d/ok.txt', 'race/d/ok.txt')
  sink.line(line(2))
  sink.line(line(3))
  expect(rows).toEqual(['file race/d/ok.txt', 'line 2', 'line 3'])
})

test('the filtered sink hands on no line bytes of a refused file (the way plain lines take)', () => {
  const rows: string[] = []
  const sink = filter().sink({
    file: (key) => rows.push(`file ${key}`),
    line: (line: GrepLineValue) => rows.push(`line ${line.line}`),
    utf8Line: (line, bytes, start, end) => rows.push(`bytes ${line} ${bytes.toString('utf8', start, end)}`),
  })
  const text = Buffer.from('xxCANARYxx')
  sink.file('race/l/id_rsa', 'race/l/id_rsa')
  sink.utf8Line?.(1, text, 2, 8)
  sink.file('race/d/ok.txt', 'race/d/ok.txt')
  sink.utf8Line?.(2, Buffer.from('fine'), 0, 4)
  expect(rows).toEqual(['file race/d/ok.txt', 'bytes 2 fine'])
})
