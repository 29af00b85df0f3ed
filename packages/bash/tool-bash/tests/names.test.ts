import { afterEach, describe, expect, test } from 'vitest'
import { harness, type Harness } from './helpers.ts'

// docs/model-surface.md#tools: a model trained on another client passes that client's names and shapes; where they mean exactly
// what ours mean, the call runs as if it had used ours. Only a name whose meaning differs gets a hint.
let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const run = (command: unknown, more: Record<string, unknown> = {}) => ({ command, description: 'test', ...more })

describe('timeoutMs and timeout_ms on every tool that takes a timeout', () => {
  test('bash takes timeout_ms as its timeoutMs', async () => {
    h = await harness()
    expect(await h.text('bash', run('echo tick; sleep 100', { timeout_ms: 300 }))).toBe(
      'tick\n[timed out after 300ms]\n[killed by signal: SIGTERM]',
    )
  })

  test('bash_output takes timeoutMs as its timeout_ms, and bash_id as its task_id', async () => {
    h = await harness()
    await h.text('bash', run('sleep 100', { run_in_background: true }))
    expect(await h.text('bash_output', { bash_id: 'bash-1', timeoutMs: 200 })).toBe(
      '(no new output)\n[still running after waiting 200ms]\n[status: running]',
    )
    expect(await h.text('bash_kill', { shell_id: 'bash-1' })).toBe('killed background task bash-1')
  })

  test('bash_input takes timeoutMs as its timeout_ms, and shell_id as its task_id', async () => {
    h = await harness()
    await h.text('bash', run('cat >/dev/null', { run_in_background: true, interactive: true }))
    expect(await h.text('bash_input', { shell_id: 'bash-1', text: '', timeoutMs: 200 })).toBe(
      '(no new output)\n[no output within 200ms]\n[status: running]',
    )
  })

  test('both names with different values are INVALID_ARGS naming the one to keep; the same value is taken once', async () => {
    h = await harness()
    expect((await h.call('bash', run('true', { timeoutMs: 100, timeout_ms: 200 }))).content[0].text).toBe(
      'Error: invalid arguments: "timeoutMs" and "timeout_ms" name the same argument but differ: pass only "timeoutMs"',
    )
    expect(await h.text('bash', run('echo ok', { timeoutMs: 5000, timeout_ms: 5000 }))).toBe('ok')
    const output = await h.call('bash_output', { task_id: 'bash-1', bash_id: 'bash-2' })
    expect(output.content[0].text).toBe(
      'Error: invalid arguments: "task_id" and "bash_id" name the same argument but differ: pass only "task_id"',
    )
  })

  test('timeout (seconds in some clients) is refused with the name to pass', async () => {
    h = await harness()
    expect((await h.call('bash', run('true', { timeout: 5 }))).content[0].text).toBe(
      'Error: invalid arguments: unexpected property "timeout": pass "timeoutMs" instead (milliseconds)',
    )
    expect((await h.call('bash_output', { task_id: 'bash-1', timeout: 5 })).content[0].text).toBe(
      'Error: invalid arguments: unexpected property "timeout": pass "timeout_ms" instead (milliseconds)',
    )
    expect((await h.call('bash_input', { task_id: 'bash-1', text: 'x', timeout: 5 })).content[0].text).toBe(
      'Error: invalid arguments: unexpected property "timeout": pass "timeout_ms" instead (milliseconds)',
    )
  })

  test('a renamed argument of the wrong type is named as the caller passed it', async () => {
    h = await harness()
    expect((await h.call('bash', run('true', { timeout_ms: '5' }))).content[0].text).toBe(
      'Error: invalid arguments: property "timeoutMs" (passed as "timeout_ms") must be an integer',
    )
  })
})

describe('bash description is optional', () => {
  test('a command without description runs', async () => {
    h = await harness()
    expect(await h.text('bash', { command: 'echo hi' })).toBe('hi')
  })
})

describe('a Codex-style command array runs as that argv', () => {
  test('each word reaches the program as is: spaces, quotes and $ are not the shell’s', async () => {
    h = await harness()
    expect(await h.text('bash', run(['printf', '%s|', 'a b', "it's", '$HOME', '*', '', 'x=1']))).toBe(
      "a b|it's|$HOME|*||x=1|",
    )
  })

  test('a first word that is a shell keyword or an assignment still names a program', async () => {
    h = await harness()
    const time = await h.call('bash', run(['time', '--version']))
    expect(time.content[0].text).not.toContain('real')
    expect(await h.text('bash', run(['FOO=1', 'true']))).toContain('FOO=1: command not found')
  })

  test('["bash", "-lc", script] and ["sh", "-c", script] run the script as a string command would', async () => {
    h = await harness()
    expect(await h.text('bash', run(['bash', '-lc', 'echo "$0" && echo two']))).toBe('bash\ntwo')
    expect(await h.text('bash', run(['sh', '-c', 'echo "$0"']))).toBe('bash')
    // Any other argv of a shell runs as that argv: here a second shell whose $0 is "sh".
    expect(await h.text('bash', run(['sh', '-c', 'echo "$0 $1"', 'sh', 'one']))).toBe('sh one')
  })

  test('the task list shows the command as it ran', async () => {
    h = await harness()
    await h.text('bash', run(['bash', '-lc', 'sleep 100'], { run_in_background: true }))
    await h.text('bash', run(['sleep', '100'], { run_in_background: true }))
    expect(await h.text('bash_output', {})).toMatch(
      /^2 background tasks in this session:\nbash-1 \[status: running\] \d+s: sleep 100\nbash-2 \[status: running\] \d+s: sleep 100$/,
    )
  })

  test('an empty array, a word that is not a string, and a NUL in a word are INVALID_ARGS', async () => {
    h = await harness()
    expect((await h.call('bash', run([]))).content[0].text).toBe(
      'Error: invalid arguments: property "command" must not have fewer than 1 items',
    )
    expect((await h.call('bash', run(['ls', 3]))).content[0].text).toBe(
      'Error: invalid arguments: property "command.1" must be a string',
    )
    expect((await h.call('bash', run(3))).content[0].text).toBe(
      'Error: invalid arguments: property "command" must be a non-empty string or a non-empty array of strings',
    )
    expect((await h.call('bash', run(['echo', 'a\u0000b']))).content[0].text).toBe(
      'Error: command contains a NUL byte, which no shell command can hold',
    )
  })
})
