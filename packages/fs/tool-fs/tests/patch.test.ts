import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, sessionFor, type TestContext } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import Workspace from '@deepseek-ai/dsh-workspace'
import ToolFs from '@deepseek-ai/dsh-tool-fs'
import { forcedFaults } from '../src/replace.ts'

let t: TestContext
let dir: string

async function setup(workspace?: { denyRead?: string[]; readOnly?: string[] }): Promise<void> {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  if (workspace) await t.active(t.ctx.plugin(Workspace, workspace))
  await t.active(t.ctx.plugin(ToolFs, {}))
}

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-patch-')))
})
afterEach(async () => {
  delete forcedFaults.beforeRename
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

const call = (name: string, args: Record<string, unknown>) =>
  t.ctx.tools.execute(name, args, { session: sessionFor('s', dir) })
const text = (result: ToolResult) => result.content[0].text
const code = (result: ToolResult) => result.error?.code
const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n')
const content = (name: string) => readFile(join(dir, name), 'utf8')
async function file(name: string, body: string): Promise<void> {
  await mkdir(join(dir, name, '..'), { recursive: true })
  await writeFile(join(dir, name), body)
}
const numbered = (n: number, prefix = 'l') => `${Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`).join('\n')}\n`

test('apply_patch adds, updates, moves and deletes in one call and lists each file with its changed lines', async () => {
  await setup()
  await file('src/a.ts', numbered(12))
  await file('old/b.ts', 'export const b = 1\n')
  await file('gone.txt', 'bye\n')
  for (const name of ['src/a.ts', 'old/b.ts', 'gone.txt']) await call('read', { path: name })
  const result = await call('apply_patch', {
    patch: patch(
      '*** Add File: src/new.ts',
      '+export const n = 1',
      '+export const m = 2',
      '*** Update File: src/a.ts',
      '@@',
      ' l2',
      ' l3',
      '-l4',
      '+four',
      '+four and a half',
      ' l5',
      '@@ l9',
      ' l10',
      '-l11',
      ' l12',
      '*** End of File',
      '*** Update File: old/b.ts',
      '*** Move to: src/b.ts',
      '@@',
      '-export const b = 1',
      '+export const b = 2',
      '*** Delete File: gone.txt',
    ),
  })
  expect(text(result)).toBe(
    [
      'Applied the patch: 4 files changed',
      '',
      `Created ${dir}/src/new.ts (2 lines)`,
      '',
      `Updated ${dir}/src/a.ts`,
      '2: l2\n3: l3\n4: four\n5: four and a half\n6: l5\n7: l6\n…\n10: l9\n11: l10\n12: l12',
      '',
      `Moved ${dir}/old/b.ts to ${dir}/src/b.ts`,
      '1: export const b = 2',
      '',
      `Deleted ${dir}/gone.txt`,
    ].join('\n'),
  )
  expect(await content('src/new.ts')).toBe('export const n = 1\nexport const m = 2\n')
  expect(await content('src/a.ts')).toBe('l1\nl2\nl3\nfour\nfour and a half\nl5\nl6\nl7\nl8\nl9\nl10\nl12\n')
  expect(await content('src/b.ts')).toBe('export const b = 2\n')
  expect((await readdir(dir)).sort()).toEqual(['old', 'src'])
  expect(await readdir(join(dir, 'old'))).toEqual([])
  // What apply_patch wrote counts as seen: an edit goes through without a read.
  expect(code(await call('edit', { path: 'src/a.ts', old_string: 'l12', new_string: 'twelve' }))).toBeUndefined()
})

test('apply_patch keeps CRLF, BOM, a missing final newline and the mode; context matches ignoring trailing spaces', async () => {
  await setup()
  await file('w.txt', '\uFEFFone\r\ntwo  \r\nthree')
  await chmod(join(dir, 'w.txt'), 0o751)
  await call('read', { path: 'w.txt' })
  const result = await call('apply_patch', {
    patch: patch('*** Update File: w.txt', '@@', ' one', '-two', '+2', '+2.5', ' three'),
  })
  expect(result.isError).toBe(false)
  expect(await content('w.txt')).toBe('\uFEFFone\r\n2\r\n2.5\r\nthree')
  expect((await stat(join(dir, 'w.txt'))).mode & 0o7777).toBe(0o751)
})

test('a file the session has not read is FS_NOT_READ, and no file of the patch changes', async () => {
  await setup()
  await file('seen.txt', 'a\n')
  await file('unseen.txt', 'b\n')
  await call('read', { path: 'seen.txt' })
  const result = await call('apply_patch', {
    patch: patch(
      '*** Update File: seen.txt',
      '@@',
      '-a',
      '+A',
      '*** Add File: fresh.txt',
      '+x',
      '*** Delete File: unseen.txt',
    ),
  })
  expect([code(result), text(result)]).toEqual([
    'FS_NOT_READ',
    `Error: apply_patch refused: ${dir}/unseen.txt has not been read in this session; read it first (any page), so that you change what is there now`,
  ])
  expect([await content('seen.txt'), await content('unseen.txt')]).toEqual(['a\n', 'b\n'])
  expect((await readdir(dir)).sort()).toEqual(['seen.txt', 'unseen.txt'])
})

test('a malformed patch is FS_PATCH_INVALID naming the line and what the format expects', async () => {
  await setup()
  const format =
    '(the format is "*** Begin Patch", then for each file "*** Add File: <path>" with "+" lines, "*** Delete File: <path>", or "*** Update File: <path>" with "@@" hunks of " ", "-" and "+" lines, then "*** End Patch")'
  const cases: Array<[string, string]> = [
    [
      '--- a/x\n+++ b/x\n',
      `line 1 of the patch, "--- a/x", is not valid here: the patch must start with "*** Begin Patch"`,
    ],
    [
      '*** Begin Patch\n*** Add File: a\n+x\n',
      `line 3 of the patch, "+x", is not valid here: the patch must end with "*** End Patch"`,
    ],
    [
      patch('*** Update File: a', '@@', 'x'),
      'line 4 of the patch, "x", is not valid here: each line of a hunk must start with " " (unchanged), "-" (removed) or "+" (added)',
    ],
    [
      patch('*** Add File: a', 'x'),
      'line 3 of the patch, "x", is not valid here: each line of an added file must start with "+"',
    ],
    [
      patch('*** Edit File: a'),
      'line 2 of the patch, "*** Edit File: a", is not valid here: expected "*** Add File: <path>", "*** Delete File: <path>", "*** Update File: <path>" or "*** End Patch"',
    ],
    [
      patch('*** Update File: a'),
      'line 2 of the patch, "*** Update File: a", is not valid here: "*** Update File:" needs at least one "@@" hunk (or "*** Move to:")',
    ],
  ]
  for (const [given, message] of cases) {
    const result = await call('apply_patch', { patch: given })
    expect([code(result), text(result)]).toEqual([
      'FS_PATCH_INVALID',
      `Error: apply_patch refused: ${message}; nothing was changed ${format}`,
    ])
  }
  const twice = await call('apply_patch', { patch: patch('*** Add File: a', '+x', '*** Delete File: a') })
  expect(text(twice)).toBe(
    `Error: apply_patch refused: the patch changes ${dir}/a more than once; put all its changes in one "*** Update File" section; nothing was changed`,
  )
  expect(await readdir(dir)).toEqual([])
})

test('a hunk that does not match shows the closest region; a missing file says to add it; nothing changes', async () => {
  await setup()
  await file('m.ts', numbered(8))
  await file('ok.ts', 'ok\n')
  await call('read', { path: 'm.ts' })
  await call('read', { path: 'ok.ts' })
  const before = await content('m.ts')
  const result = await call('apply_patch', {
    patch: patch(
      '*** Update File: ok.ts',
      '@@',
      '-ok',
      '+OK',
      '*** Update File: m.ts',
      '@@',
      ' l4',
      '-l5 typo',
      '+five',
    ),
  })
  expect([code(result), text(result)]).toEqual([
    'FS_NO_MATCH',
    `Error: apply_patch refused: hunk 1 of ${dir}/m.ts (patch line 7) does not match the file: its context and "-" lines were not found. The closest region, lines 4-5:\n4: l4\n5: l5\ncopy the " " and "-" lines from the file exactly (read it again if unsure); nothing was changed`,
  ])
  const missing = await call('apply_patch', { patch: patch('*** Update File: nope.ts', '@@', '-a', '+b') })
  expect([code(missing), text(missing)]).toEqual([
    'FS_NOT_FOUND',
    `Error: file not found: ${dir}/nope.ts; to create a file, use "*** Add File: <path>"; nothing was changed`,
  ])
  expect([await content('m.ts'), await content('ok.ts')]).toEqual([before, 'ok\n'])
})

test('forced fault: a write failing part way puts back the files already written, and says so', async () => {
  await setup()
  await file('one.txt', 'one\n')
  await file('two.txt', 'two\n')
  await file('three.txt', 'three\n')
  for (const name of ['one.txt', 'two.txt', 'three.txt']) await call('read', { path: name })
  let renames = 0
  forcedFaults.beforeRename = () => {
    if (++renames === 3) throw Object.assign(new Error('no space'), { code: 'ENOSPC' })
  }
  const result = await call('apply_patch', {
    patch: patch(
      '*** Update File: one.txt',
      '@@',
      '-one',
      '+ONE',
      '*** Add File: made.txt',
      '+new',
      '*** Delete File: two.txt',
      '*** Update File: three.txt',
      '@@',
      '-three',
      '+THREE',
    ),
  })
  expect([code(result), text(result)]).toEqual([
    'FS_WRITE_FAILED',
    `Error: cannot write ${dir}/three.txt: no space; the file is unchanged (the files the patch had already changed were put back as they were)`,
  ])
  expect(await content('one.txt')).toBe('one\n')
  expect(await content('two.txt')).toBe('two\n')
  expect(await content('three.txt')).toBe('three\n')
  expect((await readdir(dir)).sort()).toEqual(['one.txt', 'three.txt', 'two.txt'])
})

test('with a workspace, a hidden or read-only path anywhere in the patch refuses it before any file is written', async () => {
  const ro = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-patch-ro-')))
  await setup({ denyRead: [join(dir, 'secret')], readOnly: [ro] })
  await file('a.txt', 'a\n')
  await file('secret/key', 'k\n')
  await writeFile(join(ro, 'r.txt'), 'r\n')
  await call('read', { path: 'a.txt' })
  await call('read', { path: join(ro, 'r.txt') })
  const hidden = await call('apply_patch', {
    patch: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Delete File: secret/key'),
  })
  expect(code(hidden)).toBe('WORKSPACE_HIDDEN')
  const readOnly = await call('apply_patch', {
    patch: patch('*** Update File: a.txt', '@@', '-a', '+A', `*** Delete File: ${ro}/r.txt`),
  })
  expect(code(readOnly)).toBe('WORKSPACE_READ_ONLY')
  const outside = await call('apply_patch', {
    patch: patch('*** Update File: a.txt', '@@', '-a', '+A', '*** Add File: ../escape.txt', '+x'),
  })
  expect(code(outside)).toBe('WORKSPACE_OUTSIDE_ROOTS')
  expect([await content('a.txt'), await content('secret/key'), await readdir(ro)]).toEqual(['a\n', 'k\n', ['r.txt']])
  await rm(ro, { recursive: true, force: true })
})

test('with a workspace, a symlink inside the root that leads out is refused for update, delete and move; nothing changes', async () => {
  const out = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-patch-out-')))
  await setup({})
  await writeFile(join(out, 'victim.txt'), 'keep\n')
  await symlink(join(out, 'victim.txt'), join(dir, 'link.txt'))
  await symlink(out, join(dir, 'linkdir'))
  await file('a.txt', 'a\n')
  await call('read', { path: 'a.txt' })
  const first = ['*** Update File: a.txt', '@@', '-a', '+b']
  for (const lines of [
    [...first, '*** Update File: link.txt', '@@', '-keep', '+PWNED'],
    [...first, '*** Delete File: link.txt'],
    [...first, '*** Add File: linkdir/planted.txt', '+PWNED'],
    ['*** Update File: a.txt', '*** Move to: linkdir/moved.txt', '@@', '-a', '+A'],
  ]) {
    const result = await call('apply_patch', { patch: patch(...lines) })
    expect(code(result), text(result)).toBe('WORKSPACE_OUTSIDE_ROOTS')
  }
  expect(await readFile(join(out, 'victim.txt'), 'utf8')).toBe('keep\n')
  expect(await readdir(out)).toEqual(['victim.txt'])
  expect(await content('a.txt')).toBe('a\n')
  await rm(out, { recursive: true, force: true })
})
