import { afterEach, expect, test } from 'vitest'
import { processesWith, uniqueSleep } from '@deepseek-ai/dsh-testing'
import { harness, until, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const interactive = (command: string) => ({
  command,
  description: 'interactive test',
  run_in_background: true,
  interactive: true,
})

test('a Python REPL on a terminal: print(6*7) typed in answers 42; Ctrl-D ends it', async () => {
  h = await harness()
  expect(await h.text('bash', interactive('python3 -i -q'))).toBe(
    'started interactive background task bash-1: type into it with bash_input, read it with bash_output',
  )
  await h.text('bash_output', { task_id: 'bash-1', wait_for: '>>> $' })
  const answer = await h.text('bash_input', { task_id: 'bash-1', text: 'print(6*7)\n', wait_for: '^42$' })
  expect(answer).toMatch(/^print\(6\*7\)\n42\n(>{1,3} ?\n)?\[wait_for matched\]\n\[status: running\]$/)
  await h.text('bash_input', { task_id: 'bash-1', text: '\u0004' })
  expect(await h.text('bash_output', { task_id: 'bash-1', timeout_ms: 20_000 })).toMatch(
    /\[status: completed, exit code: 0\]$/,
  )
})

test('a shell read -p prompt answered: the answer reaches the program, without wait_for the call returns once output pauses', async () => {
  h = await harness()
  await h.text('bash', interactive('read -p "Continue? [y/N] " answer; echo "answer: $answer"; sleep 100'))
  expect(await h.text('bash_output', { task_id: 'bash-1', wait_for: 'Continue\\? \\[y/N\\] $' })).toBe(
    'Continue? [y/N] \n[wait_for matched]\n[status: running]',
  )
  expect(await h.text('bash_input', { task_id: 'bash-1', text: 'y\n' })).toBe('y\nanswer: y\n[status: running]')
})

test('Ctrl-C stops a sleep in the foreground of the terminal; EOF ends cat', async () => {
  h = await harness()
  await h.text('bash', interactive('echo ready; sleep 100; echo after'))
  await h.text('bash_output', { task_id: 'bash-1', wait_for: 'ready' })
  const interrupted = await h.text('bash_input', { task_id: 'bash-1', text: '\u0003' })
  const end = await h.text('bash_output', { task_id: 'bash-1', timeout_ms: 20_000 })
  expect(interrupted).toMatch(/^\^C\n\[status: /)
  expect(end).toMatch(/\[status: (completed, exit code: 130|killed by SIGINT)\]$/)
  expect(interrupted + end).not.toContain('after')
  await h.text('bash', interactive('cat'))
  expect(await h.text('bash_input', { task_id: 'bash-2', text: 'hello\n', wait_for: 'hello\\n(.|\\n)*hello' })).toBe(
    'hello\nhello\n[wait_for matched]\n[status: running]',
  )
  await h.text('bash_input', { task_id: 'bash-2', text: '\u0004' })
  expect(await h.text('bash_output', { task_id: 'bash-2', timeout_ms: 20_000 })).toMatch(
    /\[status: completed, exit code: 0\]$/,
  )
})

test('colours and other terminal control sequences are removed from what the model reads; \\r\\n reads as \\n', async () => {
  h = await harness()
  await h.text('bash', interactive("printf '\\033[31mred\\033[0m plain \\033]0;title\\007done\\r\\n'; sleep 100"))
  expect(await h.text('bash_output', { task_id: 'bash-1', wait_for: 'done' })).toBe(
    'red plain done\n[wait_for matched]\n[status: running]',
  )
})

test('input is refused with its code: a task that is not interactive, one that ended, an unknown one; interactive needs run_in_background', async () => {
  h = await harness()
  await h.text('bash', { command: 'sleep 100', description: 'plain', run_in_background: true })
  const plain = await h.call('bash_input', { task_id: 'bash-1', text: 'x\n' })
  expect(plain.error?.code).toBe('BASH_TASK_NOT_INTERACTIVE')
  expect(plain.content[0].text).toBe(
    'Error: task bash-1 takes no input: it was not started with interactive: true (start a program that reads input with bash run_in_background: true, interactive: true)',
  )
  await h.text('bash', interactive('echo bye'))
  await h.done('bash-2')
  const ended = await h.call('bash_input', { task_id: 'bash-2', text: 'x\n' })
  expect(ended.error?.code).toBe('BASH_TASK_ENDED')
  expect(ended.content[0].text.split('\n')[0]).toBe(
    'Error: task bash-2 has ended (completed, exit code 0): it takes no more input (read its output with bash_output)',
  )
  expect((await h.call('bash_input', { task_id: 'bash-9', text: 'x' })).error?.code).toBe('BASH_UNKNOWN_TASK')
  expect((await h.call('bash_input', { task_id: 'bash-2', text: 'x' }, { session: 'other' })).error?.code).toBe(
    'BASH_UNKNOWN_TASK',
  )
  const foreground = await h.call('bash', { command: 'cat', description: 'x', interactive: true })
  expect(foreground.error?.code).toBe('INVALID_ARGS')
})

test('TERM=dumb and PAGER=cat still hold on the terminal; a non-interactive command keeps stdin at /dev/null', async () => {
  h = await harness()
  await h.text('bash', interactive('echo "$TERM $PAGER"; [ -t 0 ] && echo tty; sleep 100'))
  expect(await h.text('bash_output', { task_id: 'bash-1', wait_for: 'tty' })).toBe(
    'dumb cat\ntty\n[wait_for matched]\n[status: running]',
  )
  expect(
    await h.text('bash', { command: '[ -t 0 ] && echo tty; readlink /proc/self/fd/0', description: 'stdin' }),
  ).toBe('/dev/null')
})

test('bash_kill of an interactive task leaves nothing running (the program on the terminal dies with it)', async () => {
  h = await harness()
  const sleep = uniqueSleep()
  await h.text('bash', interactive(`echo up; ${sleep.command}`))
  await h.text('bash_output', { task_id: 'bash-1', wait_for: 'up' })
  await until(() => processesWith(sleep.marker).length === 1, 'the sleep runs')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
  await until(() => processesWith(sleep.marker).length === 0, 'no process is left')
})

test('bash_kill of an interactive task also stops what ignores the hang-up (nohup): nothing is left', async () => {
  h = await harness()
  const sleep = uniqueSleep()
  await h.text('bash', interactive(`nohup ${sleep.command} > /dev/null 2>&1 & echo up; sleep 100`))
  await h.text('bash_output', { task_id: 'bash-1', wait_for: 'up' })
  await until(() => processesWith(sleep.marker).length === 1, 'the nohup sleep runs')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
  await until(() => processesWith(sleep.marker).length === 0, 'no process is left')
})

test('an interactive task does not source ~/.bashrc, though its stdin is a socket and dsh was started without SHLVL', async () => {
  // bash sources ~/.bashrc when stdin is a socket and SHLVL is unset or 0; Node's stdin pipe is a socketpair.
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { tmpdir } = await import('node:os')
  const home = mkdtempSync(join(tmpdir(), 'dsh-rc-home-'))
  writeFileSync(join(home, '.bashrc'), 'echo RC-SOURCED\n')
  const saved = { HOME: process.env.HOME, SHLVL: process.env.SHLVL }
  process.env.HOME = home
  delete process.env.SHLVL
  try {
    h = await harness()
    await h.text('bash', interactive('echo started; sleep 100'))
    const text = await h.text('bash_output', { task_id: 'bash-1', wait_for: 'started' })
    expect(text).toBe('started\n[wait_for matched]\n[status: running]')
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    rmSync(home, { recursive: true, force: true })
  }
})
