import { createSession, type ToolSession } from '@deepseek-ai/dsh-tools'
import { execFileSync, spawn } from 'node:child_process'
import { renameSync, symlinkSync } from 'node:fs'
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import Workspace from '@deepseek-ai/dsh-workspace'
import ToolFs, { type Config } from '@deepseek-ai/dsh-tool-fs'
import { forcedFaults } from '../src/replace.ts'

let t: TestContext
let dir: string
let session: ToolSession

async function setup(
  workspace?: { roots?: string[]; readOnly?: string[]; denyRead?: string[] },
  config: Partial<Config> = {},
): Promise<void> {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  if (workspace) await t.active(t.ctx.plugin(Workspace, workspace))
  await t.active(t.ctx.plugin(ToolFs, config))
}

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-change-')))
  session = sessionFor('s', dir)
})
afterEach(async () => {
  delete forcedFaults.beforeRename
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

const call = (name: string, args: Record<string, unknown>, as = session) =>
  t.ctx.tools.execute(name, args, { session: as })
const text = (result: ToolResult) => result.content[0].text
const code = (result: ToolResult) => result.error?.code
async function file(name: string, content: string | Buffer): Promise<string> {
  await mkdir(join(dir, name, '..'), { recursive: true })
  await writeFile(join(dir, name), content)
  return join(dir, name)
}
const bytes = (name: string) => readFile(join(dir, name))

test("registers read, write, edit and apply_patch, and the prompt guidance after read's", async () => {
  await setup()
  expect(t.ctx.tools.schemas().map((s) => [s.name, s.title, s.annotations])).toEqual([
    [
      'apply_patch',
      'Apply a patch to files',
      { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    ],
    [
      'edit',
      'Edit a file',
      { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    ],
    ['read', 'Read a file', { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }],
    [
      'write',
      'Create or replace a file',
      { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    ],
  ])
  expect(t.ctx.systemPrompt.list().map(({ id, order }) => ({ id, order }))).toEqual([
    { id: 'tool:read', order: 100 },
    { id: 'tool:write-edit', order: 110 },
  ])
})

test('write creates a file and its missing parent directories; a new file needs no read', async () => {
  await setup()
  const result = await call('write', { path: 'a/b/c.txt', content: 'one\ntwo\n' })
  expect(text(result)).toBe(`Created ${dir}/a/b/c.txt (2 lines)`)
  expect(result.value).toEqual({ path: `${dir}/a/b/c.txt`, created: true, lines: 2 })
  expect((await bytes('a/b/c.txt')).toString()).toBe('one\ntwo\n')
  expect((await stat(join(dir, 'a/b/c.txt'))).mode & 0o777).toBe(0o666 & ~process.umask())
  expect(await readdir(join(dir, 'a/b'))).toEqual(['c.txt']) // no temporary file left behind
})

test('write over a file this session never read is FS_NOT_READ and leaves it as it was', async () => {
  await setup()
  await file('a.txt', 'keep\n')
  const result = await call('write', { path: 'a.txt', content: 'new\n' })
  expect(code(result)).toBe('FS_NOT_READ')
  expect(text(result)).toBe(
    `Error: write refused: ${dir}/a.txt has not been read in this session; read it first (any page), so that you change what is there now`,
  )
  expect((await bytes('a.txt')).toString()).toBe('keep\n')
})

test('write over a read file keeps its CRLF, BOM, missing final newline and mode', async () => {
  await setup()
  await file('w.txt', '\uFEFFa\r\nb')
  await chmod(join(dir, 'w.txt'), 0o751)
  await call('read', { path: 'w.txt', limit: 1 })
  const result = await call('write', { path: 'w.txt', content: 'x\ny\nz\n' })
  expect(text(result)).toBe(`Updated ${dir}/w.txt (3 lines)`)
  expect((await bytes('w.txt')).toString()).toBe('\uFEFFx\r\ny\r\nz')
  expect((await stat(join(dir, 'w.txt'))).mode & 0o7777).toBe(0o751)
})

test('edit replaces one occurrence and shows the changed lines with two lines of context, numbered as the file is now', async () => {
  await setup()
  await file('e.ts', `${['l1', 'l2', 'l3', 'l4', 'target', 'l6', 'l7', 'l8'].join('\n')}\n`)
  await call('read', { path: 'e.ts' })
  const result = await call('edit', { path: 'e.ts', old_string: 'target', new_string: 'first\nsecond' })
  expect(result.isError).toBe(false)
  expect(text(result)).toBe(
    `Updated ${dir}/e.ts: replaced 1 occurrence\n\n3: l3\n4: l4\n5: first\n6: second\n7: l6\n8: l7`,
  )
  expect((await bytes('e.ts')).toString()).toBe('l1\nl2\nl3\nl4\nfirst\nsecond\nl6\nl7\nl8\n')
})

test('edit in a CRLF file writes new_string with CRLF and leaves every other byte alone', async () => {
  await setup()
  await file('c.txt', '\uFEFFa\r\nb\r\nc')
  await call('read', { path: 'c.txt' })
  const result = await call('edit', { path: 'c.txt', old_string: 'b\n', new_string: 'B\nBB\n' })
  expect(text(result)).toBe(
    `Updated ${dir}/c.txt: replaced 1 occurrence\n\n1: \uFEFFa\n2: B\n3: BB\n4: c`.replace('1: \uFEFFa', '1: a'),
  )
  expect((await bytes('c.txt')).toString()).toBe('\uFEFFa\r\nB\r\nBB\r\nc')
})

test('edit with read\'s "N: " prefixes still works and says to leave them out', async () => {
  await setup()
  await file('p.txt', 'alpha\nbeta\ngamma\n')
  await call('read', { path: 'p.txt' })
  const result = await call('edit', { path: 'p.txt', old_string: '2: beta', new_string: '2: BETA' })
  expect(text(result)).toContain('replaced 1 occurrence\n(old_string matched once the "N: " line-number prefixes')
  expect((await bytes('p.txt')).toString()).toBe('alpha\nBETA\ngamma\n')
})

test('edit that matches nothing shows the closest region; several matches are counted; the file is unchanged', async () => {
  await setup()
  await file('m.ts', 'function a() {\n  return 1\n}\nfunction b() {\n  return 1\n}\n')
  await call('read', { path: 'm.ts' })
  const none = await call('edit', { path: 'm.ts', old_string: 'function b() {\n  return 2\n}', new_string: 'x' })
  expect(code(none)).toBe('FS_NO_MATCH')
  expect(text(none)).toBe(
    `Error: old_string was not found in ${dir}/m.ts (nor with other line endings or without "N: " prefixes). The closest region, lines 4-6:\n4: function b() {\n5:   return 1\n6: }\nCopy old_string from the file exactly (what follows each "N: "), or read the file again`,
  )
  const many = await call('edit', { path: 'm.ts', old_string: 'return 1', new_string: 'return 2' })
  expect(code(many)).toBe('FS_MANY_MATCHES')
  expect(text(many)).toBe(
    `Error: old_string occurs 2 times in ${dir}/m.ts (at lines 2, 5); include more surrounding lines to make it unique, or pass replace_all: true to replace every one`,
  )
  expect((await bytes('m.ts')).toString()).toBe('function a() {\n  return 1\n}\nfunction b() {\n  return 1\n}\n')
  const all = await call('edit', { path: 'm.ts', old_string: 'return 1', new_string: 'return 2', replace_all: true })
  expect(text(all)).toBe(
    `Updated ${dir}/m.ts: replaced 2 occurrences\n\n1: function a() {\n2:   return 2\n3: }\n4: function b() {\n5:   return 2\n6: }`,
  )
})

test('old_string equal to new_string, or empty, is INVALID_ARGS', async () => {
  await setup()
  await file('s.txt', 'x\n')
  expect(text(await call('edit', { path: 's.txt', old_string: 'x', new_string: 'x' }))).toBe(
    'Error: old_string and new_string are the same, so the edit would change nothing; pass the text you want in new_string',
  )
  expect(code(await call('edit', { path: 's.txt', old_string: '', new_string: 'y' }))).toBe('INVALID_ARGS')
  expect(text(await call('write', { path: 'n.txt', content: 'a\ud800b' }))).toBe(
    'Error: content holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not text; pass whole characters',
  )
  expect(code(await call('edit', { path: 's.txt', old_string: 'x', new_string: '\udc00' }))).toBe('INVALID_ARGS')
  expect((await bytes('s.txt')).toString()).toBe('x\n')
})

test('a change by anyone else since the read is FS_STALE and says what changed; a touch or the same bytes is not', async () => {
  await setup()
  await file('g.txt', 'a\nb\nc\n')
  await call('read', { path: 'g.txt' })
  // A touch and a rewrite with the same bytes: not stale.
  await utimes(join(dir, 'g.txt'), new Date(2001, 1, 1), new Date(2001, 1, 1))
  await writeFile(join(dir, 'g.txt'), 'a\nb\nc\n')
  expect(text(await call('edit', { path: 'g.txt', old_string: 'a', new_string: 'A' }))).toContain(
    'replaced 1 occurrence',
  )
  // The session's own edit refreshed what it saw: a second edit needs no read.
  expect(text(await call('edit', { path: 'g.txt', old_string: 'b', new_string: 'B' }))).toContain(
    'replaced 1 occurrence',
  )
  await writeFile(join(dir, 'g.txt'), 'A\nB\nchanged by bash\n')
  const stale = await call('edit', { path: 'g.txt', old_string: 'A', new_string: 'x' })
  expect(code(stale)).toBe('FS_STALE')
  expect(text(stale)).toBe(
    `Error: edit refused: ${dir}/g.txt changed since you last read it; read it again, then retry. What changed: line 3 is now:\n3: changed by bash`,
  )
  expect((await bytes('g.txt')).toString()).toBe('A\nB\nchanged by bash\n')
  await call('read', { path: 'g.txt', offset: 3 })
  expect(text(await call('edit', { path: 'g.txt', old_string: 'A', new_string: 'x' }))).toContain(
    'replaced 1 occurrence',
  )
})

test('after an FS_STALE that showed every changed line the next edit goes through; one that showed part does not', async () => {
  await setup()
  await file('g.txt', 'alpha\nbeta\ngamma\n')
  await call('read', { path: 'g.txt' })
  await writeFile(join(dir, 'g.txt'), 'alpha\nbeta\nchanged by bash\n')
  expect(code(await call('edit', { path: 'g.txt', old_string: 'alpha', new_string: 'ALPHA' }))).toBe('FS_STALE')
  expect(text(await call('edit', { path: 'g.txt', old_string: 'alpha', new_string: 'ALPHA' }))).toContain(
    'replaced 1 occurrence',
  )
  expect((await bytes('g.txt')).toString()).toBe('ALPHA\nbeta\nchanged by bash\n')
  // Lines removed only: the refusal says where, which is all there is to see.
  await writeFile(join(dir, 'g.txt'), 'ALPHA\nbeta\n')
  expect(text(await call('edit', { path: 'g.txt', old_string: 'beta', new_string: 'BETA' }))).toContain(
    '1 line was removed at line 3',
  )
  expect(code(await call('edit', { path: 'g.txt', old_string: 'beta', new_string: 'BETA' }))).toBeUndefined()
  // Twenty new lines: the refusal shows twelve, so the session has not seen the rest and must read.
  await writeFile(join(dir, 'g.txt'), `ALPHA\nBETA\n${'new\n'.repeat(20)}`)
  const part = await call('edit', { path: 'g.txt', old_string: 'ALPHA', new_string: 'x' })
  expect([code(part), text(part).includes('(and more below)')]).toEqual(['FS_STALE', true])
  expect(code(await call('edit', { path: 'g.txt', old_string: 'ALPHA', new_string: 'x' }))).toBe('FS_STALE')
  expect((await bytes('g.txt')).toString()).toBe(`ALPHA\nBETA\n${'new\n'.repeat(20)}`)
})

test('what one session saw does not count for another, and a session that ended is forgotten', async () => {
  await setup()
  await file('o.txt', 'x\n')
  await call('read', { path: 'o.txt' })
  expect(code(await call('edit', { path: 'o.txt', old_string: 'x', new_string: 'y' }, sessionFor('other', dir)))).toBe(
    'FS_NOT_READ',
  )
  await session.dispose()
  session = createSession({ id: 's', cwd: dir })
  expect(code(await call('edit', { path: 'o.txt', old_string: 'x', new_string: 'y' }))).toBe('FS_NOT_READ')
})

test('binary and invalid UTF-8 are FS_NOT_TEXT; a missing file is FS_NOT_FOUND and says to use write', async () => {
  await setup()
  await file('bin', Buffer.from([1, 0, 2]))
  await file('latin', Buffer.from('caf\xe9\n', 'latin1'))
  expect(text(await call('edit', { path: 'bin', old_string: 'a', new_string: 'b' }))).toBe(
    `Error: ${dir}/bin looks binary (a NUL byte in its first 8 KiB); edit only changes UTF-8 text files`,
  )
  expect(text(await call('write', { path: 'latin', content: 'x' }))).toBe(
    `Error: ${dir}/latin is not valid UTF-8 text (line 1); write only changes UTF-8 text files`,
  )
  const missing = await call('edit', { path: 'nope.txt', old_string: 'a', new_string: 'b' })
  expect([code(missing), text(missing)]).toEqual([
    'FS_NOT_FOUND',
    `Error: file not found: ${dir}/nope.txt; to create a file, use write`,
  ])
  expect(await readdir(dir)).toEqual(['bin', 'latin'])
})

test('directories, FIFOs and devices are FS_NOT_REGULAR_FILE (a FIFO is never opened)', async () => {
  await setup()
  await mkdir(join(dir, 'd'))
  execFileSync('mkfifo', [join(dir, 'fifo')])
  expect(text(await call('write', { path: 'd', content: 'x' }))).toBe(
    `Error: ${dir}/d is a directory, not a file; write only changes files (use glob to list the files in it)`,
  )
  expect(text(await call('edit', { path: 'fifo', old_string: 'a', new_string: 'b' }))).toBe(
    `Error: ${dir}/fifo is not a regular file (it is a FIFO); edit only changes regular files`,
  )
  expect(code(await call('write', { path: '/dev/null', content: 'x' }))).toBe('FS_NOT_REGULAR_FILE')
  expect((await lstat(join(dir, 'fifo'))).isFIFO()).toBe(true)
})

test('a forced fault before the rename leaves the file byte for byte as it was and no temporary file behind', async () => {
  await setup()
  const original = Buffer.from('\uFEFFline 1\r\nline 2\r\n')
  await file('f.txt', original)
  await call('read', { path: 'f.txt' })
  forcedFaults.beforeRename = () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), {
      code: 'ENOSPC',
      errno: -28,
      syscall: 'write',
    })
  }
  const result = await call('edit', { path: 'f.txt', old_string: 'line 2', new_string: 'LINE 2' })
  expect([code(result), text(result)]).toEqual([
    'FS_WRITE_FAILED',
    `Error: cannot write ${dir}/f.txt: ENOSPC (no space left on device); the file is unchanged`,
  ])
  expect((await bytes('f.txt')).equals(original)).toBe(true)
  expect(await readdir(dir)).toEqual(['f.txt'])
  // The failed call changed nothing the guard knows: the next edit goes through.
  delete forcedFaults.beforeRename
  expect(text(await call('edit', { path: 'f.txt', old_string: 'line 2', new_string: 'LINE 2' }))).toContain(
    'replaced 1 occurrence',
  )
})

test('forced fault: a call cancelled just before its rename is ABORTED and leaves the file as it was', async () => {
  await setup()
  await file('c.txt', 'keep\n')
  await call('read', { path: 'c.txt' })
  const controller = new AbortController()
  forcedFaults.beforeRename = () => controller.abort()
  const result = await t.ctx.tools.execute(
    'edit',
    { path: 'c.txt', old_string: 'keep', new_string: 'lost' },
    { session, signal: controller.signal },
  )
  expect(code(result)).toBe('ABORTED')
  expect((await bytes('c.txt')).toString()).toBe('keep\n')
  expect(await readdir(dir)).toEqual(['c.txt'])
})

test('a symlink is edited at its target, and stays a symlink', async () => {
  await setup({})
  await file('real/target.txt', 'old\n')
  await symlink('real/target.txt', join(dir, 'link.txt'))
  await call('read', { path: 'link.txt' })
  expect(text(await call('edit', { path: 'link.txt', old_string: 'old', new_string: 'new' }))).toBe(
    `Updated ${dir}/link.txt: replaced 1 occurrence\n\n1: new`,
  )
  expect(await readlink(join(dir, 'link.txt'))).toBe('real/target.txt')
  expect((await bytes('real/target.txt')).toString()).toBe('new\n')
})

test('with a workspace, a symlink leading out of the writable roots, a path outside them and a read-only root are refused; nothing is written', async () => {
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-outside-')))
  const readOnly = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-ro-')))
  try {
    await writeFile(join(outside, 'secret.txt'), 'secret\n')
    await writeFile(join(readOnly, 'ro.txt'), 'ro\n')
    await setup({ readOnly: [readOnly] })
    await symlink(join(outside, 'secret.txt'), join(dir, 'out.txt'))
    await symlink(join(readOnly, 'ro.txt'), join(dir, 'ro-link.txt'))
    expect(code(await call('write', { path: 'out.txt', content: 'pwned' }))).toBe('WORKSPACE_OUTSIDE_ROOTS')
    expect(code(await call('write', { path: join(outside, 'new.txt'), content: 'pwned' }))).toBe(
      'WORKSPACE_OUTSIDE_ROOTS',
    )
    expect(code(await call('write', { path: join(outside, 'deep/er/new.txt'), content: 'pwned' }))).toBe(
      'WORKSPACE_OUTSIDE_ROOTS',
    )
    await call('read', { path: join(readOnly, 'ro.txt') })
    expect(code(await call('edit', { path: join(readOnly, 'ro.txt'), old_string: 'ro', new_string: 'rw' }))).toBe(
      'WORKSPACE_READ_ONLY',
    )
    expect(code(await call('edit', { path: 'ro-link.txt', old_string: 'ro', new_string: 'rw' }))).toBe(
      'WORKSPACE_READ_ONLY',
    )
    expect((await readFile(join(outside, 'secret.txt'))).toString()).toBe('secret\n')
    expect(await readdir(outside)).toEqual(['secret.txt'])
    expect((await readFile(join(readOnly, 'ro.txt'))).toString()).toBe('ro\n')
  } finally {
    await rm(outside, { recursive: true, force: true })
    await rm(readOnly, { recursive: true, force: true })
  }
})

test('twenty edits of one file at once in one session are applied one after another, none lost', async () => {
  await setup()
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`)
  await file('many.txt', `${lines.join('\n')}\n`)
  await call('read', { path: 'many.txt' })
  const results = await Promise.all(
    lines.map((line, i) => call('edit', { path: 'many.txt', old_string: `${line}\n`, new_string: `edited ${i}\n` })),
  )
  expect(results.map((r) => r.isError)).toEqual(lines.map(() => false))
  expect((await bytes('many.txt')).toString()).toBe(`${lines.map((_, i) => `edited ${i}`).join('\n')}\n`)
})

test('a reader never sees half a file during 20 replacements of a 2 MB file', async () => {
  await setup()
  const size = 2_000_000
  const versions = ['a', 'b'].map((c) => `${c.repeat(99)}\n`.repeat(size / 100))
  await file('big.txt', versions[0]!)
  // Another process reads the file as fast as it can and reports any content that is neither version, whole.
  const reader = spawn(
    process.execPath,
    [
      '-e',
      `
    const fs = require('fs'); const [a, b] = [${JSON.stringify(versions[0]!.slice(0, 100))}, ${JSON.stringify(versions[1]!.slice(0, 100))}]
    let reads = 0, torn = 0
    const stop = () => fs.existsSync(process.argv[1] + '.stop')
    while (!stop()) {
      const text = fs.readFileSync(process.argv[1], 'utf8'); reads++
      const whole = text.length === ${size} && (text === a.repeat(${size / 100}) || text === b.repeat(${size / 100}))
      if (!whole) torn++
    }
    process.stdout.write(JSON.stringify({ reads, torn }))
  `,
      join(dir, 'big.txt'),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  reader.stdout.on('data', (chunk: Buffer) => {
    out += chunk
  })
  const exited = new Promise<number | null>((resolve) => reader.on('exit', resolve))
  await call('read', { path: 'big.txt', limit: 1 })
  for (let i = 1; i <= 20; i++) {
    const result = await call('write', { path: 'big.txt', content: versions[i % 2]! })
    expect(result.isError).toBe(false)
  }
  await writeFile(join(dir, 'big.txt.stop'), '')
  expect(await exited).toBe(0)
  const { reads, torn } = JSON.parse(out) as { reads: number; torn: number }
  expect(reads).toBeGreaterThan(0)
  expect(torn).toBe(0)
})

test('hidden paths stay hidden from write and edit: directly, through a symlink, as a new file below, and after a rename of the hidden directory', async () => {
  await file('secrets/key', 'secret\n')
  await file('ok.txt', 'ok\n')
  await setup({ denyRead: ['secrets'] })
  await symlink(join(dir, 'secrets/key'), join(dir, 'lnk'))
  expect(code(await call('write', { path: 'secrets/key', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(code(await call('write', { path: 'secrets/new.txt', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(code(await call('write', { path: 'secrets/deeper/new.txt', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(code(await call('edit', { path: 'lnk', old_string: 'secret', new_string: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(code(await call('write', { path: 'lnk', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  // A command renames the hidden directory; the next calls must still not reach into it.
  await call('read', { path: 'ok.txt' })
  await rename(join(dir, 'secrets'), join(dir, 'moved'))
  expect(code(await call('write', { path: 'moved/key', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(code(await call('write', { path: 'moved/new.txt', content: 'pwned' }))).toBe('WORKSPACE_HIDDEN')
  expect(await readdir(join(dir, 'moved'))).toEqual(['key'])
  expect((await readFile(join(dir, 'moved/key'))).toString()).toBe('secret\n')
})

test('a parent directory swapped for a symlink out of the roots between calls cannot redirect a write', async () => {
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-swap-')))
  try {
    await setup({})
    await file('sub/a.txt', 'a\n')
    await call('read', { path: 'sub/a.txt' })
    await rename(join(dir, 'sub'), join(dir, 'sub.old'))
    await writeFile(join(outside, 'a.txt'), 'a\n')
    await symlink(outside, join(dir, 'sub'))
    const result = await call('write', { path: 'sub/a.txt', content: 'pwned' })
    expect(code(result)).toBe('WORKSPACE_OUTSIDE_ROOTS')
    const created = await call('write', { path: 'sub/b.txt', content: 'pwned' })
    expect(code(created)).toBe('WORKSPACE_OUTSIDE_ROOTS')
    expect(await readdir(outside)).toEqual(['a.txt'])
    expect((await readFile(join(outside, 'a.txt'))).toString()).toBe('a\n')
  } finally {
    await rm(outside, { recursive: true, force: true })
  }
})

test('forced fault: the parent swapped for a symlink out of the roots just before the rename, the write still lands in the directory that was checked', async () => {
  const outside = await realpath(await mkdtemp(join(tmpdir(), 'tool-fs-race-')))
  try {
    await setup({})
    await file('sub/a.txt', 'a\n')
    await writeFile(join(outside, 'a.txt'), 'outside\n')
    await call('read', { path: 'sub/a.txt' })
    forcedFaults.beforeRename = () => {
      renameSync(join(dir, 'sub'), join(dir, 'sub.old'))
      symlinkSync(outside, join(dir, 'sub'))
    }
    const result = await call('edit', { path: 'sub/a.txt', old_string: 'a', new_string: 'b' })
    expect(result.isError).toBe(false)
    expect((await readFile(join(outside, 'a.txt'))).toString()).toBe('outside\n')
    expect(await readdir(outside)).toEqual(['a.txt'])
    expect((await readFile(join(dir, 'sub.old/a.txt'))).toString()).toBe('b\n')
  } finally {
    await rm(outside, { recursive: true, force: true })
  }
})

test("an edit's result keeps within the result budget: as many changed rows as fit, then where to read on", async () => {
  await setup(undefined, { maxResultBytes: 1024 })
  await file('wide.txt', `${Array.from({ length: 400 }, (_, i) => `row ${i} old`).join('\n')}\n`)
  await call('read', { path: 'wide.txt' })
  const result = await call('edit', { path: 'wide.txt', old_string: 'old', new_string: 'new ✓', replace_all: true })
  expect(Buffer.byteLength(text(result))).toBeLessThanOrEqual(1024)
  expect(text(result)).toMatch(
    /^Updated \S+: replaced 400 occurrences\n\n1: row 0 new ✓\n2: row 1 new ✓\n[^]*\n\[more changed lines follow; read from offset=(\d+) to see them\]$/,
  )
  const cut = Number(/offset=(\d+)/.exec(text(result))![1])
  expect(
    text(result)
      .split('\n')
      .filter((line) => /^\d+: /.test(line)),
  ).toHaveLength(cut - 1)
})
