import { createSession, type ToolSession } from '@deepseek-ai/dsh-tools'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readdir, rm, symlink, truncate, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { homedir, tmpdir } from 'node:os'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import TimeoutPolicy from '@deepseek-ai/dsh-timeout-policy'
import Workspace from '@deepseek-ai/dsh-workspace'
import ToolFs, { type Config, type ReadPage } from '@deepseek-ai/dsh-tool-fs'

let t: TestContext
let dir: string
let session: ToolSession

async function setup(config: Partial<Config> = {}): Promise<void> {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(ToolFs, config))
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tool-fs-'))
  session = createSession({ id: 's', cwd: dir })
})
afterEach(async () => {
  await t.dispose()
  await rm(dir, { recursive: true, force: true })
})

async function read(
  args: Record<string, unknown>,
  options: { session?: typeof session; signal?: AbortSignal } = { session },
): Promise<ToolResult> {
  return t.ctx.tools.execute('read', args, options)
}
const text = (result: ToolResult) => result.content[0].text
async function file(name: string, content: string | Buffer): Promise<string> {
  await mkdir(dirname(join(dir, name)), { recursive: true })
  await writeFile(join(dir, name), content)
  return join(dir, name)
}

test('registers read and its prompt section at order 100 (beside apply_patch, write and edit)', async () => {
  await setup()
  expect(t.ctx.tools.schemas().map((s) => s.name)).toEqual(['apply_patch', 'edit', 'read', 'write'])
  expect(t.ctx.systemPrompt.list().map(({ id, order }) => ({ id, order }))).toEqual([
    { id: 'tool:read', order: 100 },
    { id: 'tool:write-edit', order: 110 },
  ])
})

test('rows are "N: <line>" and the footer says the file ended; the value holds the facts', async () => {
  await setup()
  await file('a.txt', 'alpha\nbeta\n\ngamma\n')
  const result = await read({ path: 'a.txt' })
  expect(result.isError).toBe(false)
  expect(text(result)).toBe('1: alpha\n2: beta\n3: \n4: gamma\n\n[end of file: 4 lines]')
  expect(result.value).toEqual({
    offset: 1,
    rows: [
      { line: 1, text: 'alpha', truncated: false },
      { line: 2, text: 'beta', truncated: false },
      { line: 3, text: '', truncated: false },
      { line: 4, text: 'gamma', truncated: false },
    ],
    end: { kind: 'eof', totalLines: 4 },
  } satisfies ReadPage)
})

test('a last line without a newline is a line', async () => {
  await setup()
  await file('a.txt', 'one\ntwo')
  expect(text(await read({ path: 'a.txt' }))).toBe('1: one\n2: two\n\n[end of file: 2 lines]')
  expect(text(await read({ path: 'a.txt', offset: 2 }))).toBe('2: two\n\n[end of file: 2 lines]')
})

test('CRLF: a \\r before a newline is stripped, any other \\r is kept', async () => {
  await setup()
  await file('a.txt', 'one\r\ntwo\rx\r\n\r\nlast\r')
  expect(text(await read({ path: 'a.txt' }))).toBe('1: one\n2: two\rx\n3: \n4: last\r\n\n[end of file: 4 lines]')
})

test('an empty file reads fine: just the footer; an offset past it is FS_NOT_FOUND', async () => {
  await setup()
  await file('empty.txt', '')
  expect(await read({ path: 'empty.txt' })).toEqual({
    content: [{ type: 'text', text: '[empty file]' }],
    isError: false,
    value: { offset: 1, rows: [], end: { kind: 'eof', totalLines: 0 } },
  })
  const past = await read({ path: 'empty.txt', offset: 2 })
  expect(past.error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_FOUND',
    message: `offset 2 is past the end of ${join(dir, 'empty.txt')}: the file is empty`,
  })
})

test('offset and limit choose the window; the footer gives the offset to continue with', async () => {
  await setup()
  await file('n.txt', `${Array.from({ length: 10 }, (_, i) => `L${i + 1}`).join('\n')}\n`)
  expect(text(await read({ path: 'n.txt', offset: 3, limit: 2 }))).toBe(
    '3: L3\n4: L4\n\n[more lines follow: continue with offset=5; the file has 10 lines]',
  )
  expect(text(await read({ path: 'n.txt', offset: 9, limit: 2 }))).toBe('9: L9\n10: L10\n\n[end of file: 10 lines]')
  expect(text(await read({ path: 'n.txt', offset: 10, limit: 5 }))).toBe('10: L10\n\n[end of file: 10 lines]')
})

test('a page of a small file says how many lines the file has; a file over 1 MiB is not read through for it', async () => {
  await setup()
  await file('one-more.txt', 'a\nb\nno final newline')
  expect(text(await read({ path: 'one-more.txt', limit: 1 }))).toBe(
    '1: a\n\n[more lines follow: continue with offset=2; the file has 3 lines]',
  )
  await file('big.txt', 'x\n'.repeat(600_000))
  expect(text(await read({ path: 'big.txt', limit: 1 }))).toBe('1: x\n\n[more lines follow: continue with offset=2]')
  expect(text(await read({ path: 'big.txt', offset: 600_000 }))).toBe('600000: x\n\n[end of file: 600000 lines]')
})

test('a missing file names up to three files of the same name under the session root, shallowest first, none in node_modules', async () => {
  await setup()
  for (const name of ['lib/foo.ts', 'test/deep/foo.ts', 'a/b/c/d/foo.ts', 'z/foo.ts', 'node_modules/x/foo.ts'])
    await file(name, 'x\n')
  const result = await read({ path: 'src/foo.ts' })
  expect([result.error?.code, text(result)]).toEqual([
    'FS_NOT_FOUND',
    `Error: file not found: ${join(dir, 'src/foo.ts')}; did you mean lib/foo.ts, z/foo.ts or test/deep/foo.ts?`,
  ])
  expect(text(await read({ path: 'nothing-like-it.ts' }))).toBe(
    `Error: file not found: ${join(dir, 'nothing-like-it.ts')}`,
  )
})

test('with a workspace, did you mean leaves out hidden paths', async () => {
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(Workspace, { denyRead: [join(dir, 'secret')] }))
  await t.active(t.ctx.plugin(ToolFs, {}))
  await file('secret/id.txt', 'k\n')
  await file('docs/id.txt', 'd\n')
  expect(text(await read({ path: 'id.txt' }))).toBe(
    `Error: file not found: ${join(dir, 'id.txt')}; did you mean docs/id.txt?`,
  )
})

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(40, 7)])

test('read of a PNG, JPEG, GIF or WebP returns it as an image block after one line of text', async () => {
  await setup()
  const png = await file('shot.png', PNG)
  const result = await read({ path: 'shot.png' })
  expect(result.isError).toBe(false)
  expect(result.content).toEqual([
    { type: 'text', text: `Image ${png} (image/png, 48 bytes)` },
    { type: 'image', data: PNG.toString('base64'), mimeType: 'image/png' },
  ])
  const kinds: Array<[string, Buffer]> = [
    ['image/jpeg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0, 1])],
    ['image/gif', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00', 'latin1')],
    ['image/webp', Buffer.concat([Buffer.from('RIFF'), Buffer.from([4, 0, 0, 0]), Buffer.from('WEBPVP8 ')])],
  ]
  for (const [mimeType, bytes] of kinds) {
    await file('pic', bytes)
    expect((await read({ path: 'pic' })).content[1]).toEqual({
      type: 'image',
      data: bytes.toString('base64'),
      mimeType,
    })
  }
  // By content, not by name: a text file called .png is text, and other binaries stay FS_NOT_TEXT.
  await file('notes.png', 'just text\n')
  expect(text(await read({ path: 'notes.png' }))).toBe('1: just text\n\n[end of file: 1 line]')
  await file('blob.bin', Buffer.from([1, 0, 2]))
  expect((await read({ path: 'blob.bin' })).error?.code).toBe('FS_NOT_TEXT')
})

test('an image over maxImageBytes is FS_IMAGE_TOO_LARGE and says how to make it smaller', async () => {
  await setup({ maxImageBytes: 1024 })
  const big = await file('big.png', Buffer.concat([PNG, Buffer.alloc(2000)]))
  const result = await read({ path: 'big.png' })
  expect([result.error?.code, text(result)]).toEqual([
    'FS_IMAGE_TOO_LARGE',
    `Error: ${big} is a PNG image of 2048 bytes, more than read's limit of 1024 bytes for images; make a smaller copy (for instance with bash: convert <file> -resize 50% /tmp/smaller.png) and read that`,
  ])
})

test('an offset past the end is FS_NOT_FOUND and says how many lines the file has', async () => {
  await setup()
  await file('n.txt', 'a\nb\nc')
  const result = await read({ path: 'n.txt', offset: 4 })
  expect(result).toMatchObject({ isError: true, error: { code: 'FS_NOT_FOUND' } })
  expect(text(result)).toBe(`Error: offset 4 is past the end of ${join(dir, 'n.txt')}: the file has 3 lines`)
  await file('one.txt', 'a\n')
  expect(text(await read({ path: 'one.txt', offset: 2 }))).toBe(
    `Error: offset 2 is past the end of ${join(dir, 'one.txt')}: the file has 1 line`,
  )
})

test('limit is clamped to maxLines, which is also the default', async () => {
  await setup({ maxLines: 3 })
  await file('n.txt', 'a\nb\nc\nd\ne\n')
  expect(text(await read({ path: 'n.txt', limit: 100 }))).toBe(
    '1: a\n2: b\n3: c\n\n[more lines follow: continue with offset=4; the file has 5 lines]',
  )
  expect(text(await read({ path: 'n.txt', offset: 4 }))).toBe('4: d\n5: e\n\n[end of file: 5 lines]')
})

test('a page stops before the row that would pass maxBytes, and says so', async () => {
  await setup({ maxBytes: 1000 })
  const lines = Array.from({ length: 50 }, (_, i) => `${String(i + 1).padStart(2, '0')}${'x'.repeat(94)}`) // rows of 100-101 bytes
  await file('w.txt', `${lines.join('\n')}\n`)
  const result = await read({ path: 'w.txt' })
  const shown = text(result).split('\n\n')[0]!
  expect(Buffer.byteLength(shown) + 1).toBeLessThanOrEqual(1000)
  expect(shown.split('\n')).toHaveLength(9)
  expect(
    text(result).endsWith('\n\n[more lines follow; this read stopped at its 1000-byte limit: continue with offset=10]'),
  ).toBe(true)
  expect(text(await read({ path: 'w.txt', offset: 10, limit: 1 }))).toBe(
    `10: ${lines[9]}\n\n[more lines follow: continue with offset=11; the file has 50 lines]`,
  )
})

test('a single row larger than maxBytes is cut to fit, so every page makes progress', async () => {
  await setup({ maxBytes: 256 })
  await file('w.txt', `${'é'.repeat(1000)}\nnext\n`)
  const result = await read({ path: 'w.txt' })
  const [row, footer] = text(result).split('\n\n')
  expect(Buffer.byteLength(row!) + 1).toBeLessThanOrEqual(256)
  expect(row).toMatch(/^1: é+ \(line truncated\)$/)
  expect(footer).toBe('[more lines follow; this read stopped at its 256-byte limit: continue with offset=2]')
})

test('long lines are cut at maxLineChars characters, never inside a character, and marked', async () => {
  await setup()
  await file(
    'long.txt',
    ['a'.repeat(2000), 'b'.repeat(2001), `a${'😀'.repeat(3000)}`, 'é'.repeat(50_000), `${'x'.repeat(7999)}€€€`].join(
      '\n',
    ),
  )
  const result = await read({ path: 'long.txt' })
  const rows = text(result).split('\n\n')[0]!.split('\n')
  expect(rows[0]).toBe(`1: ${'a'.repeat(2000)}`)
  expect(rows[1]).toBe(`2: ${'b'.repeat(2000)} (line truncated)`)
  expect(rows[2]).toBe(`3: a${'😀'.repeat(1999)} (line truncated)`)
  expect(rows[3]).toBe(`4: ${'é'.repeat(2000)} (line truncated)`)
  expect(rows[4]).toBe(`5: ${'x'.repeat(2000)} (line truncated)`)
  expect(text(result)).not.toContain('\uFFFD')
})

test('a line is cut on a character boundary also when its kept bytes end inside a character', async () => {
  await setup({ maxLineChars: 3 }) // keeps 12 bytes: "ab" + 3 × "€" (3 bytes) + 1 byte of the 4th "€"
  await file('c.txt', `ab${'€'.repeat(10)}\n`)
  expect(text(await read({ path: 'c.txt' }))).toBe('1: ab€ (line truncated)\n\n[end of file: 1 line]')
})

test('missing files, and paths through a file, are FS_NOT_FOUND naming the resolved path', async () => {
  await setup()
  await file('f.txt', 'x')
  for (const path of ['missing.txt', 'f.txt/child', join(dir, 'nope', 'x')]) {
    const result = await read({ path })
    expect(result.error).toEqual({
      name: 'FsError',
      code: 'FS_NOT_FOUND',
      message: `file not found: ${join(dir, path.startsWith('/') ? path.slice(dir.length) : path)}`,
    })
  }
})

test('a missing path that starts with "~" says that ~ is not expanded and what to pass instead', async () => {
  await setup()
  const result = await read({ path: '~/.no-such-dsh-file' })
  expect(result.error?.code).toBe('FS_NOT_FOUND')
  expect(text(result)).toBe(
    `Error: file not found: ${join(dir, '~/.no-such-dsh-file')} (a leading "~" is not expanded; the home directory is ${homedir()}: pass ${homedir()}/.no-such-dsh-file)`,
  )
})

test('read declares its time budget (timeoutMs, default 30 000): under the timeout policy a scan past it is TOOL_TIMEOUT, not a call without end', async () => {
  await setup()
  expect(t.ctx.tools.get('read')?.timeoutMs).toBe(30_000)
  await t.dispose()
  t = await createTestContext()
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(TimeoutPolicy))
  await t.active(t.ctx.plugin(ToolFs, { timeoutMs: 1 }))
  // 64 MiB of short lines, read past its end: the scan counts every line, far longer than 1 ms.
  await file('big.txt', Buffer.alloc(64 * 1024 * 1024, 'a\n'))
  const result = await read({ path: 'big.txt', offset: 999_999_999 })
  expect(result.error?.code).toBe('TOOL_TIMEOUT')
  expect(text(result)).toBe('Error: tool call timed out after 1ms')
})

test('a directory is FS_NOT_REGULAR_FILE and points to glob', async () => {
  await setup()
  await mkdir(join(dir, 'sub'))
  expect((await read({ path: 'sub' })).error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_REGULAR_FILE',
    message: `${join(dir, 'sub')} is a directory, not a file; use glob to list the files in it`,
  })
})

test('a FIFO is refused without being opened (the call does not hang), as are devices and sockets', async () => {
  await setup()
  execFileSync('mkfifo', [join(dir, 'pipe')])
  expect((await read({ path: 'pipe' })).error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_REGULAR_FILE',
    message: `${join(dir, 'pipe')} is not a regular file (it is a FIFO); read only reads regular files`,
  })
  expect((await read({ path: '/dev/null' })).error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_REGULAR_FILE',
    message: '/dev/null is not a regular file (it is a character device); read only reads regular files',
  })
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(join(dir, 'sock'), resolve))
  try {
    expect(text(await read({ path: 'sock' }))).toBe(
      `Error: ${join(dir, 'sock')} is not a regular file (it is a socket); read only reads regular files`,
    )
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('a NUL byte in the first 8 KiB is FS_NOT_TEXT; one later on is shown', async () => {
  await setup()
  await file('bin', Buffer.concat([Buffer.from('text\n'.repeat(1000)), Buffer.from([0]), Buffer.from('\n')]))
  expect((await read({ path: 'bin', offset: 1000 })).error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_TEXT',
    message: `${join(dir, 'bin')} looks binary (a NUL byte in its first 8 KiB); read only shows text files`,
  })
  await file('late', Buffer.concat([Buffer.from('text\n'.repeat(2000)), Buffer.from('a\u0000b\n')]))
  expect(text(await read({ path: 'late', offset: 2001 }))).toBe('2001: a\u0000b\n\n[end of file: 2001 lines]')
})

test('invalid UTF-8 is FS_NOT_TEXT naming the line; lines before the offset are not decoded', async () => {
  await setup()
  await file('latin1', Buffer.concat([Buffer.from('ok\nok\ncaf'), Buffer.from([0xe9]), Buffer.from('\nafter\n')]))
  expect((await read({ path: 'latin1' })).error).toEqual({
    name: 'FsError',
    code: 'FS_NOT_TEXT',
    message: `${join(dir, 'latin1')} is not valid UTF-8 text (line 3); read only shows UTF-8 text files`,
  })
  expect(text(await read({ path: 'latin1', offset: 4 }))).toBe('4: after\n\n[end of file: 4 lines]')
  await file('split', Buffer.concat([Buffer.from('€'.repeat(5)), Buffer.from([0xe2, 0x82])])) // ends inside a character
  expect((await read({ path: 'split' })).error?.code).toBe('FS_NOT_TEXT')
})

test('paths resolve against the session cwd, else the process cwd; absolute paths and symlinks work', async () => {
  await setup()
  await mkdir(join(dir, 'sub'))
  await file('sub/x.txt', 'in sub\n')
  await symlink(join(dir, 'sub', 'x.txt'), join(dir, 'link'))
  expect(text(await read({ path: 'x.txt' }, { session: sessionFor('s', join(dir, 'sub')) }))).toBe(
    '1: in sub\n\n[end of file: 1 line]',
  )
  expect(text(await read({ path: join(dir, 'sub', 'x.txt') }))).toBe('1: in sub\n\n[end of file: 1 line]')
  expect(text(await read({ path: 'link' }))).toBe('1: in sub\n\n[end of file: 1 line]')
  const fromProcessCwd = relative(process.cwd(), join(dir, 'sub', 'x.txt'))
  expect(isAbsolute(fromProcessCwd)).toBe(false)
  expect(text(await read({ path: fromProcessCwd }, {}))).toBe('1: in sub\n\n[end of file: 1 line]')
})

test('a symlink loop is FS_READ_FAILED with the cause', async () => {
  await setup()
  await symlink(join(dir, 'loop'), join(dir, 'loop'))
  const result = await read({ path: 'loop' })
  expect(result.error?.code).toBe('FS_READ_FAILED')
  expect(text(result)).toMatch(new RegExp(`^Error: cannot read ${join(dir, 'loop')}: ELOOP`))
})

test('a regular file whose read fails (EIO from /proc/self/mem) is FS_READ_FAILED with the cause', async () => {
  await setup()
  const result = await read({ path: '/proc/self/mem' })
  expect(result.error?.code).toBe('FS_READ_FAILED')
  expect(text(result)).toBe('Error: cannot read /proc/self/mem: EIO (i/o error)')
})

test('bad arguments are INVALID_ARGS that say what to fix', async () => {
  await setup()
  await file('a.txt', 'a\n')
  const cases: [Record<string, unknown>, string][] = [
    [{ path: 'a.txt', offset: 0 }, 'invalid arguments: property "offset" must be >= 1'],
    [{ path: 'a.txt', limit: 0 }, 'invalid arguments: property "limit" must be >= 1'],
    [{ path: 'a.txt', offset: 1.5 }, 'invalid arguments: property "offset" must be an integer'],
    [{ path: 'a.txt', limit: '3' }, 'invalid arguments: property "limit" must be an integer'],
    [{ path: '' }, 'invalid arguments: property "path" must not be shorter than 1 characters'],
    [{}, 'invalid arguments: missing required property "path"'],
    [{ path: 'a.txt', lines: 3 }, 'invalid arguments: unexpected property "lines"'],
    // Another client's name for path is taken as it (docs/model-surface.md#tools), but not beside a different path.
    [
      { path: 'a.txt', file_path: 'b.txt' },
      'invalid arguments: "path" and "file_path" name the same argument but differ: pass only "path"',
    ],
    [{ path: 'a\u0000b' }, 'path must not contain a NUL character'],
  ]
  for (const [args, message] of cases) {
    expect((await read(args)).error).toMatchObject({ code: 'INVALID_ARGS', message })
  }
})

test('concurrent reads of one file and of several files each get their own page', async () => {
  await setup({ maxLines: 50 })
  const lines = Array.from({ length: 3000 }, (_, i) => `line ${i + 1} ${'·'.repeat(i % 13)}`)
  await file('big.txt', lines.join('\n'))
  await file('other.txt', 'other\n')
  const offsets = Array.from({ length: 30 }, (_, i) => 1 + i * 97)
  const results = await Promise.all([
    ...offsets.map((offset) => read({ path: 'big.txt', offset })),
    read({ path: 'other.txt' }),
  ])
  for (const [i, offset] of offsets.entries()) {
    const expected = lines
      .slice(offset - 1, offset + 49)
      .map((l, k) => `${offset + k}: ${l}`)
      .join('\n')
    expect(text(results[i]!)).toBe(
      `${expected}\n\n[more lines follow: continue with offset=${offset + 50}; the file has ${lines.length} lines]`,
    )
  }
  expect(text(results.at(-1)!)).toBe('1: other\n\n[end of file: 1 line]')
})

test('reading stops once the page is complete: lines of a 1 TiB sparse file come back at once', async () => {
  await setup()
  const lines = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`)
  const path = await file('huge', `${lines.join('\n')}\n`)
  await truncate(path, 2 ** 40)
  // Line 1001 is ~1 TiB of NUL bytes (past the 8 KiB sniff): reading it whole would never finish within the test.
  expect(text(await read({ path: 'huge', limit: 2 }))).toBe(
    '1: line 1\n2: line 2\n\n[more lines follow: continue with offset=3]',
  )
  expect(text(await read({ path: 'huge', offset: 999, limit: 2 }))).toBe(
    '999: line 999\n1000: line 1000\n\n[more lines follow: continue with offset=1001]',
  )
})

test('a cancelled read stops with ABORTED and leaves no descriptor open', async () => {
  await setup()
  await file('big.txt', 'x\n'.repeat(1_000_000))
  const fds = (await readdir('/proc/self/fd')).length
  const controller = new AbortController()
  const pending = read({ path: 'big.txt', offset: 900_000 }, { session, signal: controller.signal })
  controller.abort() // after dispatch, before the tool's first chunk
  expect((await pending).error?.code).toBe('ABORTED')
  expect((await readdir('/proc/self/fd')).length).toBe(fds)
})

test('no descriptor is left open after successes and every kind of error', async () => {
  await setup()
  await file('ok.txt', 'a\nb\n')
  await file('bin', Buffer.from([0, 1, 2]))
  await file('bad', Buffer.from([0xff, 0x0a]))
  execFileSync('mkfifo', [join(dir, 'pipe')])
  const fds = (await readdir('/proc/self/fd')).length
  for (let i = 0; i < 20; i++) {
    await Promise.all([
      read({ path: 'ok.txt' }),
      read({ path: 'ok.txt', offset: 9 }),
      read({ path: 'bin' }),
      read({ path: 'bad' }),
      read({ path: 'pipe' }),
      read({ path: 'missing' }),
      read({ path: '.' }),
    ])
  }
  expect((await readdir('/proc/self/fd')).length).toBe(fds)
})

test('the result limit wins over maxBytes: pages of long lines stay within 30 000 bytes and the footer says how to go on', async () => {
  await setup()
  const lines = Array.from({ length: 100 }, (_, i) => `${i + 1} ${'é'.repeat(1500)}`) // rows of ~3 000 bytes
  const path = await file('wide.txt', `${lines.join('\n')}\n`)
  let offset = 1
  const seen: string[] = []
  for (;;) {
    const result = await read({ path, offset })
    const page = text(result)
    expect(Buffer.byteLength(page)).toBeLessThanOrEqual(30_000)
    const [rows, footer] = page.split('\n\n')
    seen.push(...rows!.split('\n').map((row) => row.replace(/^\d+: /, '')))
    const next = /continue with offset=(\d+); the file has 100 lines\]$/.exec(footer!)
    if (!next) {
      expect(footer).toBe('[end of file: 100 lines]')
      break
    }
    expect(footer).toBe(
      `[more lines follow; this read stopped at its 30000-byte limit: continue with offset=${next[1]}; the file has 100 lines]`,
    )
    offset = Number(next[1])
  }
  expect(seen).toEqual(lines)
})

test('a huge path is named once, in part, and the error stays short', async () => {
  await setup()
  const huge = 'x'.repeat(100_000)
  const result = await read({ path: huge })
  expect(result.error?.code).toBe('FS_READ_FAILED')
  expect(Buffer.byteLength(text(result))).toBeLessThan(400)
  expect(text(result)).toMatch(/^Error: cannot read \/[^\n]*x…: ENAMETOOLONG \(name too long\)$/)
})
