import { execFileSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, test } from 'vitest'
import { rgPath } from '@vscode/ripgrep'
import TimeoutPolicy from '@deepseek-ai/dsh-timeout-policy'
import type { SpawnRequest, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import {
  alive,
  type Harness,
  harness,
  MemorySpillStore,
  RecordingSubprocess,
  Subprocess,
  until,
  write,
} from './helpers.ts'
import { globThreads } from '../src/argv.ts'

let h: Harness
beforeEach(() => RecordingSubprocess.reset())
afterEach(async () => {
  await h?.cleanup()
})

function lastHandle(): SubprocessHandle {
  const handle = RecordingSubprocess.handles.at(-1)
  if (!handle) throw new Error('nothing was spawned')
  return handle
}

function fifo(path: string): void {
  execFileSync('mkfifo', [path])
}

test('nothing is spawned at load; each call runs the packaged rg with --no-config first, stdin ignored, stdout and stderr piped, on the opened root (".", cwd its /proc fd path)', async () => {
  h = await harness({ subprocess: RecordingSubprocess })
  expect(RecordingSubprocess.requests).toEqual([])
  write(h.dir, { 'a.txt': 'x\n' })
  await h.text('grep', { pattern: '-x', include: '*.txt' })
  await h.text('glob', { pattern: '*.txt' })
  const [grep, glob] = RecordingSubprocess.requests as [SpawnRequest, SpawnRequest]
  const opened = new RegExp(`^/proc/${process.pid}/fd/\\d+$`)
  expect(grep).toMatchObject({
    argv: [rgPath, '--no-config', '--json', '--no-require-git', '--regexp=-x', '--glob=*.txt', '--', '.'],
    cwd: expect.stringMatching(opened),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    graceMs: 3000,
  })
  expect(glob.argv.slice(0, 6)).toEqual([
    rgPath,
    '--no-config',
    '--files',
    '--null',
    `--threads=${globThreads(availableParallelism())}`,
    '--glob=*.txt',
  ])
  expect(glob).toMatchObject({ cwd: expect.stringMatching(opened), stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
})

test('a RIPGREP_CONFIG_PATH that sets --pre has no effect', async () => {
  h = await harness()
  write(h.dir, { 'a.txt': 'hit\n' })
  const marker = join(h.dir, 'pre-ran')
  const pre = join(h.dir, 'pre.sh')
  writeFileSync(pre, `#!/bin/sh\ntouch '${marker}'\ncat "$1"\n`)
  chmodSync(pre, 0o755)
  writeFileSync(join(h.dir, 'rgrc'), `--pre=${pre}\n`)
  const saved = process.env.RIPGREP_CONFIG_PATH
  process.env.RIPGREP_CONFIG_PATH = join(h.dir, 'rgrc')
  try {
    // The control: the same config does run the preprocessor for a bare rg.
    execFileSync(rgPath, ['hit', join(h.dir, 'a.txt')], { env: process.env })
    expect(existsSync(marker)).toBe(true)
    execFileSync('rm', [marker])
    expect(await h.text('grep', { pattern: 'hit', path: 'a.txt' })).toBe('Found 1 match\n\na.txt\nLine 1: hit')
    expect(existsSync(marker)).toBe(false)
  } finally {
    if (saved === undefined) delete process.env.RIPGREP_CONFIG_PATH
    else process.env.RIPGREP_CONFIG_PATH = saved
  }
})

test('a broad grep whose raw output passes rawOutputMaxBytes is no error: the first page in path order, the exact total, the complete result saved', async () => {
  h = await harness({
    subprocess: RecordingSubprocess,
    spill: MemorySpillStore,
    config: { rawOutputMaxBytes: 200_000 },
  })
  MemorySpillStore.saved.length = 0
  write(
    h.dir,
    Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [`d${i % 4}/f${String(i).padStart(2, '0')}.txt`, 'hit here\n'.repeat(50)]),
    ),
  )
  const result = await h.call('grep', { pattern: 'hit' })
  expect(result.error).toBeUndefined()
  const text = result.content[0].text
  expect(text.startsWith('Found 250 of 2000 matches\n\nd0/f00.txt\nLine 1: hit here\n')).toBe(true)
  expect(
    text.endsWith(
      '[Showing 250 of 2000 matches. The complete result is saved at /memory/session-1/1-grep-results.txt. Page through it with read (offset, limit) or search it with grep.]',
    ),
  ).toBe(true)
  // The raw JSON did pass the bound; what was held (formatted rows) did not.
  expect((lastHandle().stdout as Socket).bytesRead).toBeGreaterThan(200_000)
  const saved = MemorySpillStore.saved[0]?.content.split('\n') ?? []
  expect(saved[0]).toBe('[grep "hit" in .: 2000 matching lines, one per line as <path>:<line>: <text>]')
  expect(saved.slice(1, 3)).toEqual(['d0/f00.txt:1: hit here', 'd0/f00.txt:2: hit here'])
  expect(saved.at(-2)).toBe('d3/f39.txt:50: hit here')
  expect(saved.length).toBe(2002)
})

test('a FIFO or a device named as path is refused at once, without opening it', async () => {
  h = await harness({ subprocess: RecordingSubprocess })
  fifo(join(h.dir, 'pipe'))
  for (const [path, kind] of [
    ['pipe', 'a FIFO'],
    ['/dev/zero', 'a character device'],
  ] as const) {
    const result = await h.call('grep', { pattern: 'x', path })
    expect(result.error).toEqual({
      code: 'INVALID_ARGS',
      name: 'HarnessError',
      message: `grep path ${path} is ${kind}, not a regular file or a directory; grep searches only those`,
    })
  }
  expect(RecordingSubprocess.requests).toEqual([])
})

test('a grep stalled by a FIFO .gitignore returns, at its time budget, the matches found so far with a note', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { timeoutMs: 2000 } })
  write(h.dir, { 'a.txt': 'x\n', 'sub/b.txt': 'x\n' })
  fifo(join(h.dir, 'sub', '.gitignore'))
  expect(await h.text('grep', { pattern: 'x' })).toBe(
    'Found 1 match\n\na.txt\nLine 1: x\n\n[The search was stopped after 1000 ms, its time budget, before ripgrep finished: these are the matches found until then, and more may exist. To search less, use a more specific pattern, a deeper path, or include.]',
  )
  expect(alive(lastHandle().pid)).toBe(false)
})

test("a timeout-policy budget shorter than the tool's own: grep stops rg within it and returns the matches found, not TOOL_TIMEOUT (stalled on a FIFO .gitignore)", async () => {
  // The tool's own timeoutMs stays 30 000; the policy gives grep 2000 ms, so rg is stopped at 1000 ms.
  h = await harness({
    subprocess: RecordingSubprocess,
    plugins: async (t) => {
      await t.active(t.ctx.plugin(TimeoutPolicy, { overrides: { grep: 2000 } }))
    },
  })
  write(h.dir, { 'a.txt': 'x\n', 'sub/b.txt': 'x\n' })
  fifo(join(h.dir, 'sub', '.gitignore'))
  const result = await h.call('grep', { pattern: 'x' })
  expect(result.error).toBeUndefined()
  expect(result.content[0].text).toBe(
    'Found 1 match\n\na.txt\nLine 1: x\n\n[The search was stopped after 1000 ms, its time budget, before ripgrep finished: these are the matches found until then, and more may exist. To search less, use a more specific pattern, a deeper path, or include.]',
  )
  expect(alive(lastHandle().pid)).toBe(false)
  expect(await lastHandle().done).toMatchObject({ signal: 'SIGTERM' })
})

test('a timeout-policy budget too short for rg to be stopped and awaited within it is still TOOL_TIMEOUT, and no rg is left', async () => {
  h = await harness({
    subprocess: RecordingSubprocess,
    plugins: async (t) => {
      await t.active(t.ctx.plugin(TimeoutPolicy, { overrides: { grep: 1 } }))
    },
  })
  fifo(join(h.dir, '.gitignore'))
  const result = await h.call('grep', { pattern: 'x' })
  expect(result.error?.code).toBe('TOOL_TIMEOUT')
  expect(result.content[0].text).toBe('Error: tool call timed out after 1ms')
  // The budget may run out before rg was even started (then nothing was spawned), or stop the rg it started.
  for (const handle of RecordingSubprocess.handles) expect(alive(handle.pid)).toBe(false)
})

test('a caller abort is SEARCH_ABORTED, with rg terminated and awaited', async () => {
  h = await harness({ subprocess: RecordingSubprocess })
  fifo(join(h.dir, '.gitignore'))
  const controller = new AbortController()
  const pending = h.call('grep', { pattern: 'x' }, { signal: controller.signal })
  await until(() => RecordingSubprocess.handles.length === 1, 'rg was spawned')
  controller.abort()
  const result = await pending
  expect(result.error).toEqual({
    code: 'SEARCH_ABORTED',
    name: 'SearchError',
    message: 'grep search aborted: the call was cancelled or ran out of time, and ripgrep was stopped',
  })
  expect(alive(lastHandle().pid)).toBe(false)
})

test('rg killed by a signal from outside is SEARCH_FAILED naming the signal (fault forced with kill -9)', async () => {
  h = await harness({ subprocess: RecordingSubprocess })
  fifo(join(h.dir, '.gitignore'))
  const pending = h.call('grep', { pattern: 'x' })
  await until(() => RecordingSubprocess.handles.length === 1, 'rg was spawned')
  process.kill(lastHandle().pid, 'SIGKILL')
  expect((await pending).error).toEqual({
    code: 'SEARCH_FAILED',
    name: 'SearchError',
    message: 'grep search failed: ripgrep was killed by SIGKILL',
  })
})

test('an invalid regex of ~69 KB is SEARCH_INVALID_PATTERN with rg\'s leading "regex parse error" and its reason, the pattern quoted once and bounded', async () => {
  h = await harness()
  const pattern = `${'(a|b)'.repeat(14_000)}(`
  const result = await h.call('grep', { pattern })
  expect(result.error?.code).toBe('SEARCH_INVALID_PATTERN')
  expect(result.content[0].text).toBe(
    `Error: invalid grep pattern "${pattern.slice(0, 297)}…": regex parse error: unclosed group. To match ( literally, escape it with a backslash; the whole pattern as literal text is ${pattern.replace(/[()|]/g, '\\$&').slice(0, 297)}…`,
  )
})

test('a binary that cannot be started is SEARCH_FAILED naming it and the cause (config rgPath override)', async () => {
  h = await harness({ config: { rgPath: join('/nonexistent', 'rg') } })
  const result = await h.call('grep', { pattern: 'x' })
  expect(result.error?.code).toBe('SEARCH_FAILED')
  expect(result.content[0].text).toMatch(
    /^Error: grep search failed: could not start ripgrep \(\/nonexistent\/rg\): .*ENOENT/,
  )
  const glob = await h.call('glob', { pattern: '*' })
  expect(glob.content[0].text).toMatch(
    /^Error: glob search failed: could not start ripgrep \(\/nonexistent\/rg\): .*ENOENT/,
  )
})

test("output that is not ripgrep's is SEARCH_FAILED as malformed (config rgPath pointing at echo)", async () => {
  h = await harness({ config: { rgPath: '/bin/echo' } })
  const grep = await h.call('grep', { pattern: 'x' })
  expect(grep.error?.code).toBe('SEARCH_FAILED')
  expect(grep.content[0].text).toBe(
    `Error: grep search failed: could not read ripgrep's output (a record that is not JSON: "--no-config --json --no-require-git --regexp=x -- .")`,
  )
  const glob = await h.call('glob', { pattern: '*' })
  expect(glob.error?.code).toBe('SEARCH_FAILED')
  expect(glob.content[0].text).toMatch(
    /^Error: glob search failed: could not read ripgrep's output \(a path outside the search root: --no-config --files/,
  )
})

test('a config rgPath naming the real binary is used as is', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rgPath } })
  write(h.dir, { 'a.txt': 'hit\n' })
  expect(await h.text('grep', { pattern: 'hit' })).toBe('Found 1 match\n\na.txt\nLine 1: hit')
  expect(RecordingSubprocess.requests[0]?.argv[0]).toBe(rgPath)
})

/**
 * Test-only provider: runs every program as `nobody` (setpriv) when the tests run as root, for whom no file is
 * unreadable; an ordinary user needs no help.
 */
class UnprivilegedSubprocess extends Subprocess {
  override spawn(request: SpawnRequest): Promise<SubprocessHandle> {
    if (process.getuid?.() !== 0) return super.spawn(request)
    return super.spawn({
      ...request,
      argv: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--', ...request.argv],
    })
  }
}

/** A harness whose ripgrep runs unprivileged, from a copy it can run wherever the checkout lives; returns that copy's directory. */
async function unprivilegedHarness(): Promise<string> {
  const bin = mkdtempSync(join(tmpdir(), 'dsh-rg-'))
  chmodSync(bin, 0o755)
  copyFileSync(rgPath, join(bin, 'rg'))
  chmodSync(join(bin, 'rg'), 0o755)
  h = await harness({ subprocess: UnprivilegedSubprocess, config: { rgPath: join(bin, 'rg') } })
  chmodSync(h.dir, 0o755)
  return bin
}

test('rg exit 2 with matches (an unreadable directory, rg run unprivileged) returns the results with a short note', async () => {
  const bin = await unprivilegedHarness()
  write(h.dir, { 'open/a.txt': 'hit\n', 'closed/b.txt': 'hit\n' })
  chmodSync(join(h.dir, 'closed'), 0o000)
  try {
    const note = `[Some paths could not be searched, so the results may be incomplete: rg: ${join(h.dir, 'closed')}: Permission denied (os error 13)]`
    expect(await h.text('grep', { pattern: 'hit' })).toBe(`Found 1 match\n\nopen/a.txt\nLine 1: hit\n\n${note}`)
    // ripgrep words it longer when it walks on one thread (glob does on two CPUs): either way its own words.
    const closed = join(h.dir, 'closed')
    const oneThread = `[Some paths could not be searched, so the results may be incomplete: rg: ${closed}: IO error for operation on ${closed}: Permission denied (os error 13)]`
    expect(await h.text('glob', { pattern: '*.txt' })).toBe(
      `open/a.txt\n\n${globThreads(availableParallelism()) === 1 ? oneThread : note}`,
    )
  } finally {
    chmodSync(join(h.dir, 'closed'), 0o755)
    rmSync(bin, { recursive: true, force: true })
  }
})

test('rg exit 2 without matches (an unreadable directory in the walk) is an empty result with the note; an unreadable root is SEARCH_FAILED', async () => {
  const bin = await unprivilegedHarness()
  write(h.dir, { 'open/a.txt': 'nothing here\n', 'closed/b.txt': 'hit\n', 'sealed.txt': 'hit\n' })
  chmodSync(join(h.dir, 'closed'), 0o000)
  chmodSync(join(h.dir, 'sealed.txt'), 0o000)
  try {
    const closed = join(h.dir, 'closed')
    const grep = await h.call('grep', { pattern: 'hit' })
    expect(grep.isError).toBe(false)
    const text = grep.content[0].text
    expect(
      text.startsWith('No matches found\n\n[Some paths could not be searched, so the results may be incomplete: rg: '),
    ).toBe(true)
    expect(text).toContain(`rg: ${closed}: `)
    expect(text).toContain(`rg: ${join(h.dir, 'sealed.txt')}: Permission denied (os error 13)`)
    const glob = await h.call('glob', { pattern: '*.md' })
    expect(glob.isError).toBe(false)
    expect(glob.content[0].text).toMatch(
      /^No files found\n\n\[Some paths could not be searched, so the results may be incomplete: rg: /,
    )
    // Nothing was searched at all: an unreadable file or directory named as path is still a failure.
    expect((await h.call('grep', { pattern: 'hit', path: 'sealed.txt' })).error?.code).toBe('SEARCH_FAILED')
    expect((await h.call('grep', { pattern: 'hit', path: 'closed' })).error?.code).toBe('SEARCH_FAILED')
  } finally {
    chmodSync(join(h.dir, 'closed'), 0o755)
    chmodSync(join(h.dir, 'sealed.txt'), 0o644)
    rmSync(bin, { recursive: true, force: true })
  }
})

test('calls leave no file descriptor and no process behind, whatever their outcome', async () => {
  h = await harness({ subprocess: RecordingSubprocess, config: { rawOutputMaxBytes: 1000 } })
  write(h.dir, { 'a.txt': 'hit\n'.repeat(1000), 'sub/b.txt': 'x\n' })
  fifo(join(h.dir, 'sub', '.gitignore'))
  await h.call('grep', { pattern: 'hit', path: 'a.txt' })
  const before = readdirSync('/proc/self/fd').length
  for (let i = 0; i < 5; i++) {
    await h.call('grep', { pattern: 'hit', path: 'a.txt' }) // overflow
    await h.call('grep', { pattern: 'nothing', path: 'a.txt' })
    await h.call('glob', { pattern: '*' })
    await h.call('grep', { pattern: 'a(' })
    const controller = new AbortController()
    const pending = h.call('grep', { pattern: 'x', path: 'sub' }, { signal: controller.signal })
    const spawned = RecordingSubprocess.handles.length
    await until(() => RecordingSubprocess.handles.length > spawned, 'rg was spawned again')
    controller.abort()
    await pending
  }
  // Pipes close asynchronously after a call resolves: wait, bounded, for the count to come back; a leak never does.
  const open = () => readdirSync('/proc/self/fd').length
  await until(() => open() <= before, `open descriptors return to ${before} (now ${open()})`, 300)
  expect(RecordingSubprocess.handles.filter((handle) => alive(handle.pid))).toEqual([])
})
