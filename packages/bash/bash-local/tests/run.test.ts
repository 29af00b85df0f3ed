import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import fc from 'fast-check'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { exists, fixture, pids, processRuns, rejection, until, type Fixture } from './helpers.ts'

let f: Fixture
afterEach(async () => {
  await f.cleanup()
})

test('a command that succeeds: stdout, empty stderr, exit 0, neither timed out nor aborted', async () => {
  f = await fixture()
  const result = await f.run('echo hello; echo world')
  expect(result).toEqual({
    exitCode: 0,
    signal: null,
    timedOut: false,
    aborted: false,
    timeoutMs: 120_000,
    stdout: { text: 'hello\nworld\n', truncated: false, totalBytes: 12, totalLines: 2 },
    stderr: { text: '', truncated: false, totalBytes: 0, totalLines: 0 },
    continuing: undefined,
    leftRunning: [],
  })
})

test('the child env sets PYTHONUNBUFFERED and drops the ssh session variables, so bash never sources ~/.bashrc', async () => {
  f = await fixture()
  const home = join(f.dir, 'home')
  mkdirSync(home)
  writeFileSync(join(home, '.bashrc'), 'echo SOURCED-BASHRC\n')
  // What sshd gives a session: bash sources ~/.bashrc for `bash -c` when SSH_CLIENT or SSH2_CLIENT is set (and SHLVL is not).
  const saved = {
    SSH_CLIENT: process.env.SSH_CLIENT,
    SSH_CONNECTION: process.env.SSH_CONNECTION,
    SSH2_CLIENT: process.env.SSH2_CLIENT,
  }
  process.env.SSH_CLIENT = '10.0.0.1 50000 22'
  process.env.SSH_CONNECTION = '10.0.0.1 50000 10.0.0.2 22'
  process.env.SSH2_CLIENT = '10.0.0.1 50000 22'
  try {
    const result = await f.run(
      'echo "[$PYTHONUNBUFFERED] [${SSH_CLIENT-unset}] [${SSH_CONNECTION-unset}] [${SSH2_CLIENT-unset}]"',
      { env: { HOME: home, SHLVL: undefined } },
    )
    expect(result.stdout.text).toBe('[1] [unset] [unset] [unset]\n')
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
  }
})

test('a non-zero exit resolves with its code and both streams', async () => {
  f = await fixture()
  const result = await f.run('echo out; echo err >&2; exit 7')
  expect(result.exitCode).toBe(7)
  expect(result.signal).toBeNull()
  expect(result.stdout.text).toBe('out\n')
  expect(result.stderr.text).toBe('err\n')
})

test('the command runs in bash, in the workdir, with the child env additions and the given stdin', async () => {
  f = await fixture()
  mkdirSync(join(f.dir, 'sub'))
  const result = await f.run(
    'echo "$BASH_VERSION" | cut -c1; pwd; echo "$NO_COLOR $TERM $PAGER $GIT_PAGER $EXTRA"; cat',
    {
      workdir: join(f.dir, 'sub'),
      stdin: 'from stdin',
      env: { EXTRA: 'x' },
    },
  )
  const [major, pwd, env, stdin] = result.stdout.text.split('\n')
  expect(Number(major)).toBeGreaterThanOrEqual(3)
  expect(pwd).toBe(join(f.dir, 'sub'))
  expect(env).toBe('1 dumb cat cat x')
  expect(stdin).toBe('from stdin')
})

test('stdin is empty when none is given: a command waiting for input ends at once', async () => {
  f = await fixture()
  const result = await f.run('read -r line; echo "status $?"')
  expect(result.stdout.text).toBe('status 1\n')
})

test('a command over its timeout is killed: timedOut, not aborted, killed by SIGTERM', async () => {
  f = await fixture()
  const result = await f.run('echo started; sleep 100', { timeoutMs: 300 })
  expect(result).toMatchObject({ timedOut: true, aborted: false, timeoutMs: 300, exitCode: null, signal: 'SIGTERM' })
  expect(result.stdout.text).toBe('started\n')
})

test('an aborted command resolves with aborted, and its whole tree is gone when run resolves', async () => {
  f = await fixture()
  const controller = new AbortController()
  const pidFile = join(f.dir, 'pids')
  const running = f.run(
    `sleep 100 & echo $! > ${pidFile}.tmp; echo $$ >> ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; wait`,
    { signal: controller.signal },
  )
  await until(() => exists(pidFile), 'the command wrote its pids')
  const tree = pids(readFileSync(pidFile, 'utf8'))
  expect(tree).toHaveLength(2)
  controller.abort()
  const result = await running
  expect(result).toMatchObject({ aborted: true, timedOut: false, exitCode: null, signal: 'SIGTERM' })
  for (const pid of tree) expect(processRuns(pid)).toBe(false)
})

test('timedOut and aborted are exclusive: the timeout fired first, so a later abort changes nothing', async () => {
  f = await fixture({ graceMs: 500 })
  const controller = new AbortController()
  const flag = join(f.dir, 'got-term')
  // Traps SIGTERM (so it outlives the timeout until the SIGKILL), says so in a file, then waits to be killed.
  const running = f.run(`trap 'touch ${flag}' TERM; while :; do sleep 0.05; done`, {
    timeoutMs: 200,
    signal: controller.signal,
  })
  await until(() => exists(flag), 'the timeout sent SIGTERM')
  controller.abort()
  const result = await running
  expect(result).toMatchObject({ timedOut: true, aborted: false, exitCode: null, signal: 'SIGKILL' })
})

test('timedOut and aborted are exclusive: the abort came first, so the timeout never counts', async () => {
  f = await fixture({ graceMs: 100 })
  const controller = new AbortController()
  const flag = join(f.dir, 'got-term')
  const running = f.run(`trap 'touch ${flag}; exit 3' TERM; touch ${flag}.ready; while :; do sleep 0.05; done`, {
    timeoutMs: 600_000,
    signal: controller.signal,
  })
  await until(() => exists(`${flag}.ready`), 'the command is running')
  controller.abort()
  const result = await running
  expect(result).toMatchObject({ timedOut: false, aborted: true })
})

test('a stream over maxOutputBytes keeps its tail; the spill file holds the complete stream', async () => {
  f = await fixture({ maxOutputBytes: 1000 })
  const result = await f.run('seq 1 20000; seq 1 3000 >&2')
  const complete = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join('')
  expect(result.stdout.truncated).toBe(true)
  expect(result.stdout.totalBytes).toBe(Buffer.byteLength(complete))
  expect(Buffer.byteLength(result.stdout.text)).toBeLessThanOrEqual(1000)
  expect(complete.endsWith(result.stdout.text)).toBe(true)
  expect(readFileSync(result.stdout.spillPath!, 'utf8')).toBe(complete)
  expect(result.stderr.truncated).toBe(true)
  expect(readFileSync(result.stderr.spillPath!, 'utf8')).toBe(
    Array.from({ length: 3000 }, (_, i) => `${i + 1}\n`).join(''),
  )
})

test('a stream over the spill cap keeps its head and tail and no file, and says how many bytes and lines it had', async () => {
  f = await fixture({ maxOutputBytes: 100, spillMaxBytes: 5000 })
  const result = await f.run('head -c 20000 /dev/zero | tr "\\0" a; seq 1 3')
  expect(result.stdout).toEqual({
    text: `${'a'.repeat(94)}1\n2\n3\n`,
    head: 'a'.repeat(100),
    truncated: true,
    totalBytes: 20006,
    totalLines: 3,
  })
})

test('a short stream has no spill file', async () => {
  f = await fixture({ maxOutputBytes: 100 })
  const result = await f.run('printf %100s x')
  expect(result.stdout).toEqual({ text: `${' '.repeat(99)}x`, truncated: false, totalBytes: 100, totalLines: 1 })
})

test('a workdir that does not exist is rejected before anything runs', async () => {
  f = await fixture()
  const missing = join(f.dir, 'missing')
  const error = await rejection(f.run('touch ran', { workdir: missing }))
  expect(error).toMatchObject({
    name: 'BashError',
    code: 'BASH_INVALID_WORKDIR',
    message: `working directory ${JSON.stringify(missing)} does not exist`,
  })
})

test('a workdir that is a file is rejected, saying so', async () => {
  f = await fixture()
  const file = join(f.dir, 'file')
  writeFileSync(file, '')
  const error = await rejection(f.run('touch ran', { workdir: file }))
  expect(error).toMatchObject({
    code: 'BASH_INVALID_WORKDIR',
    message: `working directory ${JSON.stringify(file)} is not a directory`,
  })
})

test('a shell that cannot be started is rejected, naming it', async () => {
  f = await fixture({ shell: 'dsh-no-such-shell' })
  const error = await rejection(f.run('true'))
  expect(error.code).toBe('BASH_SPAWN_FAILED')
  expect(error.message).toMatch(/"dsh-no-such-shell".*ENOENT/)
})

test('an already-aborted signal is rejected and nothing runs', async () => {
  f = await fixture()
  const controller = new AbortController()
  controller.abort()
  const error = await rejection(f.run('touch ran', { signal: controller.signal }))
  expect(error).toMatchObject({ code: 'BASH_ABORTED', message: 'command not started: the signal was already aborted' })
  expect(exists(join(f.dir, 'ran'))).toBe(false)
})

test('a NUL byte in the command is rejected', async () => {
  f = await fixture()
  const error = await rejection(f.run('echo a\0b'))
  expect(error).toMatchObject({ code: 'BASH_INVALID_REQUEST', message: 'command contains a NUL byte' })
})

test('a run after disposal is rejected', async () => {
  f = await fixture()
  const bash = f.t.ctx.bash
  const spec = bash.resolve({ command: 'true', workdir: f.dir })
  await f.fiber.dispose()
  const error = await rejection(bash.run(spec))
  expect(error).toMatchObject({ code: 'BASH_DISPOSED', message: 'the bash executor was disposed' })
})

test('a command that starts with "-" is run as a command, never read as a shell option', async () => {
  f = await fixture()
  const result = await f.run('--version')
  expect(result.exitCode).toBe(127)
  expect(result.stderr.text).toMatch(/--version: command not found/)
})

test('output that is not UTF-8 is shown with U+FFFD; the bytes themselves are kept in the spill file', async () => {
  f = await fixture({ maxOutputBytes: 4 })
  const result = await f.run("printf 'a\\377b\\376c'")
  // 5 bytes: the 4-byte head and the 4-byte tail hold them all, and the tail's overflow started the file.
  expect(result.stdout).toMatchObject({ text: 'a\uFFFDb\uFFFDc', truncated: false })
  expect(readFileSync(result.stdout.spillPath!)).toEqual(Buffer.from([0x61, 0xff, 0x62, 0xfe, 0x63]))
})

test('runs leave no file descriptor open', async () => {
  f = await fixture({ maxOutputBytes: 100 })
  const fds = () => readdirSync('/proc/self/fd').length
  await f.run('true')
  const before = fds()
  for (let i = 0; i < 20; i++) await f.run('seq 1 1000; seq 1 1000 >&2; exit 1', { stdin: 'x' })
  await Promise.all(Array.from({ length: 10 }, () => f.run('sleep 100', { timeoutMs: 50 })))
  // Descriptors are closed asynchronously (a pipe's close, a spill file's flush) after the run resolves: wait,
  // bounded, for the count to come back; a leak never does.
  await until(() => fds() <= before, `open descriptors return to ${before} (now ${fds()})`, 300)
})

test('whatever text goes in on stdin comes back out of `cat` unchanged (property, seeded)', async () => {
  f = await fixture()
  const text = fc.string({ unit: 'grapheme', maxLength: 300 }).filter((s) => !s.includes('\0'))
  await fc.assert(
    fc.asyncProperty(text, async (input) => {
      const result = await f.run('cat', { stdin: input })
      expect(result.stdout.text).toBe(input)
      expect(result.stdout.totalBytes).toBe(Buffer.byteLength(input))
    }),
    { seed: 4242, numRuns: 40 },
  )
})
