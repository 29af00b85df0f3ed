import { sessionFor } from '@deepseek-ai/dsh-testing'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { exists, harness, processRuns, until, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const run = (command: string, more: Record<string, unknown> = {}) => ({ command, description: 'test command', ...more })

test('stdout is the result; no output at all is "(no output)"', async () => {
  h = await harness()
  expect(await h.text('bash', run('echo hello; echo world'))).toBe('hello\nworld')
  expect(await h.text('bash', run('true'))).toBe('(no output)')
})

test('stderr gets a [stderr] section; a non-zero exit is a marker and not an error result', async () => {
  h = await harness()
  const result = await h.call('bash', run('echo out; echo err >&2; exit 3'))
  expect(result).toEqual({
    content: [{ type: 'text', text: 'out\n[stderr]\nerr\n[exit code: 3]' }],
    isError: false,
    value: expect.objectContaining({ exitCode: 3, timedOut: false, aborted: false }),
  })
})

test('a timeout is a result: the timeout marker, then the signal marker', async () => {
  h = await harness()
  const result = await h.call('bash', run('echo tick; sleep 100', { timeoutMs: 300 }))
  expect(result.isError).toBe(false)
  expect(result.content[0].text).toBe('tick\n[timed out after 300ms]\n[killed by signal: SIGTERM]')
})

test('a timeout over the maximum is clamped to it', async () => {
  h = await harness({ maxTimeoutMs: 250 })
  expect(await h.text('bash', run('sleep 100', { timeoutMs: 100_000_000 }))).toBe(
    '(no output)\n[timed out after 250ms]\n[killed by signal: SIGTERM]',
  )
})

test('a signal kill of the shell is a marker', async () => {
  h = await harness()
  expect(await h.text('bash', run('kill -KILL $$'))).toBe('(no output)\n[killed by signal: SIGKILL]')
})

const seqText = (n: number) => Array.from({ length: n }, (_, i) => `${i + 1}\n`).join('')
const MARKER = /^\[output cut: lines (\d+)-(\d+) of (\d+) \((\d+) bytes\) left out; full output: (\/.+)\]$/

/** Checks one cut stream block against the full text: head, one marker, tail, all exact. */
function checkCut(lines: string[], full: string) {
  const at = lines.findIndex((line) => line.startsWith('[output cut: '))
  const match = MARKER.exec(lines[at]!)
  expect(match).not.toBeNull()
  const [, first, last, total, bytes, path] = match!
  const all = full.replace(/\n$/, '').split('\n')
  expect(Number(total)).toBe(all.length)
  expect(lines.slice(0, at)).toEqual(all.slice(0, Number(first) - 1))
  expect(lines.slice(at + 1)).toEqual(all.slice(Number(last)))
  const shown = [...lines.slice(0, at), ...lines.slice(at + 1)].reduce(
    (sum, line) => sum + Buffer.byteLength(line) + 1,
    0,
  )
  expect(Number(bytes)).toBe(Buffer.byteLength(full) - shown)
  expect(readFileSync(path!, 'utf8')).toBe(full)
}

test('a 400 000-line stream shows whole head lines, one marker naming what was left out and the file, then whole tail lines', async () => {
  h = await harness()
  const text = await h.text('bash', run('seq 1 400000'))
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000)
  const lines = text.split('\n')
  expect(lines[0]).toBe('1')
  expect(lines.at(-1)).toBe('400000')
  expect(lines.filter((line) => line.startsWith('[output cut: '))).toHaveLength(1)
  checkCut(lines, seqText(400_000))
})

test('seq 1 200000; seq 1 200000 >&2: both streams cut at line boundaries fit the budget together', async () => {
  h = await harness()
  const result = await h.call('bash', run('seq 1 200000; seq 1 200000 >&2; exit 2'))
  const text = result.content[0].text
  expect(result.isError).toBe(false)
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(30_000)
  const lines = text.split('\n')
  expect(lines.at(-1)).toBe('[exit code: 2]')
  const stderrAt = lines.indexOf('[stderr]')
  checkCut(lines.slice(0, stderrAt), seqText(200_000))
  checkCut(lines.slice(stderrAt + 1, -1), seqText(200_000))
  // The streams share the budget evenly.
  const share = (part: string[]) => Buffer.byteLength(part.join('\n'))
  expect(Math.abs(share(lines.slice(0, stderrAt)) - share(lines.slice(stderrAt + 1, -1)))).toBeLessThan(100)
})

test('a stream held whole in memory but longer than the budget is kept through the spill store, and the marker names that file', async () => {
  h = await harness({}, { spillStore: true, tool: { maxResultBytes: 2000 } })
  const text = await h.text('bash', run('seq 1 2000')) // 8893 bytes: within the 64 000-byte tail, so no file of the executor
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000)
  const lines = text.split('\n')
  checkCut(lines, seqText(2000))
  expect(
    MARKER.exec(lines.find((line) => line.startsWith('[output cut: '))!)![5]!.startsWith(
      `${join(h.dir, '.saved', sessionFor('session-1', h.dir).dirName)}/`,
    ),
  ).toBe(true)
})

test('without a spill store, a cut stream that no file holds says the full output was not kept', async () => {
  h = await harness({}, { tool: { maxResultBytes: 2000 } })
  const text = await h.text('bash', run('seq 1 2000'))
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(2000)
  expect(text).toMatch(
    /\n\[output cut: lines \d+-\d+ of 2000 \(\d+ bytes\) left out; the full output \(8893 bytes\) was not kept: redirect it to a file to keep it\]\n/,
  )
})

test('a cut stream whose complete copy passed the spill cap says it was not kept', async () => {
  h = await harness({ maxOutputBytes: 10, spillMaxBytes: 1000 })
  expect(await h.text('bash', run('head -c 5000 /dev/zero | tr "\\0" x; echo err >&2; exit 1'))).toBe(
    'xxxxxxxxxx\n[output cut: line 1 of 1 (4980 bytes) left out; the full output (5000 bytes) was not kept: redirect it to a file to keep it]\nxxxxxxxxxx\n[stderr]\nerr\n[exit code: 1]',
  )
})

test('the command runs in the session cwd; workdir is relative to it', async () => {
  h = await harness()
  mkdirSync(join(h.dir, 'sub', 'deeper'), { recursive: true })
  expect(await h.text('bash', run('pwd'))).toBe(h.dir)
  expect(await h.text('bash', run('pwd', { workdir: 'sub/deeper' }))).toBe(join(h.dir, 'sub', 'deeper'))
  expect(await h.text('bash', run('pwd', { workdir: join(h.dir, 'sub') }))).toBe(join(h.dir, 'sub'))
  expect(await h.text('bash', run('pwd', { workdir: 'deeper' }), { cwd: join(h.dir, 'sub') })).toBe(
    join(h.dir, 'sub', 'deeper'),
  )
})

test('a workdir that does not exist or is a file is INVALID_ARGS, saying which and why', async () => {
  h = await harness()
  writeFileSync(join(h.dir, 'file'), '')
  const missing = await h.call('bash', run('touch ran', { workdir: 'nope' }))
  expect(missing.error?.code).toBe('INVALID_ARGS')
  expect(missing.content[0].text).toBe(
    `Error: invalid workdir "nope": working directory ${JSON.stringify(join(h.dir, 'nope'))} does not exist; pass an existing directory, absolute or relative to the working directory`,
  )
  const file = await h.call('bash', run('touch ran', { workdir: 'file' }))
  expect(file.error?.code).toBe('INVALID_ARGS')
  expect(file.content[0].text).toBe(
    `Error: invalid workdir "file": working directory ${JSON.stringify(join(h.dir, 'file'))} is not a directory; pass an existing directory, absolute or relative to the working directory`,
  )
  expect(exists(join(h.dir, 'ran'))).toBe(false)
  const tilde = await h.call('bash', run('touch ran', { workdir: '~/no-such-dsh-dir' }))
  expect(tilde.content[0].text).toBe(
    `Error: invalid workdir "~/no-such-dsh-dir": working directory ${JSON.stringify(join(h.dir, '~/no-such-dsh-dir'))} does not exist (a leading "~" is not expanded; the home directory is ${homedir()}: pass ${homedir()}/no-such-dsh-dir); pass an existing directory, absolute or relative to the working directory`,
  )
})

test('bad arguments are INVALID_ARGS', async () => {
  h = await harness()
  const cases: [Record<string, unknown>, string][] = [
    [{ description: 'x' }, 'Error: invalid arguments: missing required property "command"'],
    [run('true', { cwd: '/' }), 'Error: invalid arguments: unexpected property "cwd"'],
    [
      run('true', { timeout: 5000 }),
      'Error: invalid arguments: unexpected property "timeout": pass "timeoutMs" instead (milliseconds)',
    ],
    [run('true', { timeoutMs: 0 }), 'Error: invalid arguments: property "timeoutMs" must be >= 1'],
    [run('true', { timeoutMs: 1.5 }), 'Error: invalid arguments: property "timeoutMs" must be an integer'],
    [
      run('true', { run_in_background: 'yes' }),
      'Error: invalid arguments: property "run_in_background" must be a boolean',
    ],
    [run(''), 'Error: invalid arguments: property "command" must not be shorter than 1 characters'],
    [run('echo a\0b'), 'Error: command contains a NUL byte, which no shell command can hold'],
  ]
  for (const [args, text] of cases) {
    const result = await h.call('bash', args)
    expect({ code: result.error?.code, text: result.content[0].text }).toEqual({ code: 'INVALID_ARGS', text })
  }
})

test('a command longer than one program argument can hold is INVALID_ARGS before anything runs, up to the byte; one that fits runs', async () => {
  h = await harness()
  // 131 071 bytes fit in one argument (Linux), and the shell gets the command as one: `bash -c <command>`.
  const touch = `touch ${join(h.dir, 'ran')} #`
  const fits = await h.call('bash', run(touch.padEnd(131_071, 'x')))
  expect({ isError: fits.isError, text: fits.content[0].text }).toEqual({ isError: false, text: '(no output)' })
  rmSync(join(h.dir, 'ran'))
  // "é" is two bytes: the limit counts UTF-8 bytes, not characters.
  const left = 131_072 - touch.length
  const long = await h.call('bash', run(`${touch}${'x'.repeat(left % 2)}${'é'.repeat(Math.floor(left / 2))}`))
  expect({ code: long.error?.code, text: long.content[0].text }).toEqual({
    code: 'INVALID_ARGS',
    text: 'Error: command is 131072 bytes long, but the shell takes at most 131071 bytes (one program argument): write long content to a file in parts, over several calls each under that size, then run it',
  })
  expect(exists(join(h.dir, 'ran'))).toBe(false)
})

test('a cancelled call kills the command and its children and ends with ABORTED; no process is left', async () => {
  h = await harness()
  const controller = new AbortController()
  const pidFile = join(h.dir, 'pids')
  const call = h.call(
    'bash',
    run(`sleep 100 & echo $! > ${pidFile}.tmp; echo $$ >> ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; wait`),
    { signal: controller.signal },
  )
  await until(() => exists(pidFile), 'the command wrote its pids')
  const pids = readFileSync(pidFile, 'utf8').trim().split('\n').map(Number)
  controller.abort()
  const result = await call
  expect(result.isError).toBe(true)
  expect(result.error).toEqual({
    name: 'HarnessError',
    code: 'ABORTED',
    message: 'bash command aborted: the call was cancelled and the command was killed',
  })
  expect(result.content[0].text).toBe('Error: bash command aborted: the call was cancelled and the command was killed')
  for (const pid of pids) expect(processRuns(pid)).toBe(false)
})

test('a cancelled `sleep 100` leaves no process', async () => {
  h = await harness()
  const controller = new AbortController()
  const pidFile = join(h.dir, 'pid')
  // The shell records its pid, then becomes `sleep 100` (same pid).
  const call = h.call('bash', run(`echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; exec sleep 100`), {
    signal: controller.signal,
  })
  await until(() => exists(pidFile), 'the command started')
  const pid = Number(readFileSync(pidFile, 'utf8'))
  expect(processRuns(pid)).toBe(true)
  controller.abort()
  expect((await call).error?.code).toBe('ABORTED')
  expect(processRuns(pid)).toBe(false)
})

test('without a session the command runs in the process cwd and its task has no owner', async () => {
  h = await harness()
  expect(await h.text('bash', run('pwd'), { session: null })).toBe(process.cwd())
  expect(await h.text('bash', run('true', { run_in_background: true }), { session: null })).toBe(
    'started background task bash-1',
  )
  expect(h.ctx.tasks.of(undefined).get('bash-1')?.status.state).toBe('running')
})

test('the result value carries the facts for library callers', async () => {
  h = await harness()
  const result = await h.call('bash', run('printf abc; exit 4'))
  expect(result.value).toEqual({
    exitCode: 4,
    signal: null,
    timedOut: false,
    aborted: false,
    timeoutMs: 120_000,
    stdout: { text: 'abc', truncated: false, totalBytes: 3, totalLines: 1 },
    stderr: { text: '', truncated: false, totalBytes: 0, totalLines: 0 },
    adoptedTaskId: undefined,
    leftRunning: [],
  })
})

test("a session cwd that does not exist is BASH_INVALID_WORKDIR (not the model's argument)", async () => {
  h = await harness()
  const gone = join(h.dir, 'gone')
  const result = await h.call('bash', run('true'), { cwd: gone })
  expect(result.error).toEqual({
    name: 'BashError',
    code: 'BASH_INVALID_WORKDIR',
    message: `working directory ${JSON.stringify(gone)} does not exist`,
  })
})

test('a shell that cannot start is BASH_SPAWN_FAILED, naming it', async () => {
  h = await harness({ shell: 'dsh-no-such-shell' })
  const result = await h.call('bash', run('true'))
  expect(result.error?.code).toBe('BASH_SPAWN_FAILED')
  expect(result.content[0].text).toMatch(/^Error: cannot start "dsh-no-such-shell": ENOENT/)
})
