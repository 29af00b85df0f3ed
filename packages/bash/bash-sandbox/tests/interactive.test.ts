import { sessionFor } from '@deepseek-ai/dsh-testing'
import { afterEach, expect, test } from 'vitest'
import { fixture, processesWith, uniqueSleep, until, type Fixture } from './helpers.ts'

/** docs/seams.md#tasks: interactive tasks inside the sandbox, on the namespace's own devpts (bwrap --dev /dev). */
let f: Fixture
afterEach(async () => {
  await f?.cleanup()
})

async function tool(name: string, args: Record<string, unknown>): Promise<string> {
  const result = await f.t.ctx.tools.execute(name, args, { session: sessionFor('s1', f.root) })
  if (result.isError) throw new Error(`unexpected error result: ${result.content[0].text}`)
  return result.content[0].text
}

const interactive = { run_in_background: true, interactive: true }

test('under the sandbox: a Python REPL answers 42, a read -p prompt is answered, colours are removed', async () => {
  f = await fixture()
  expect(await f.text('python3 -i -q', interactive)).toBe(
    'started interactive background task bash-1: type into it with bash_input, read it with bash_output',
  )
  await tool('bash_output', { task_id: 'bash-1', wait_for: '>>> $' })
  expect(await tool('bash_input', { task_id: 'bash-1', text: 'print(6*7)\n', wait_for: '^42$' })).toMatch(
    /^print\(6\*7\)\n42\n(>{1,3} ?\n)?\[wait_for matched\]\n\[status: running\]$/,
  )
  await f.text(
    'read -p "Continue? [y/N] " answer; printf "\\033[32manswer: %s\\033[0m\\n" "$answer"; sleep 100',
    interactive,
  )
  await tool('bash_output', { task_id: 'bash-2', wait_for: '\\[y/N\\] $' })
  expect(await tool('bash_input', { task_id: 'bash-2', text: 'y\n', wait_for: 'answer' })).toBe(
    'y\nanswer: y\n[wait_for matched]\n[status: running]',
  )
})

test('under the sandbox: Ctrl-C stops sleep, EOF ends cat, a killed interactive task leaves nothing', async () => {
  f = await fixture()
  await f.text('echo ready; sleep 100; echo after', interactive)
  await tool('bash_output', { task_id: 'bash-1', wait_for: 'ready' })
  const interrupted = await tool('bash_input', { task_id: 'bash-1', text: '\u0003' })
  const end = await tool('bash_output', { task_id: 'bash-1', timeout_ms: 20_000 })
  expect(interrupted).toMatch(/^\^C\n\[status: /)
  expect(end).toMatch(/\[status: (completed, exit code: 130|killed by SIGINT)\]$/)
  expect(interrupted + end).not.toContain('after')
  await f.text('cat', interactive)
  expect(await tool('bash_input', { task_id: 'bash-2', text: 'hello\n', wait_for: 'hello\\n(.|\\n)*hello' })).toBe(
    'hello\nhello\n[wait_for matched]\n[status: running]',
  )
  await tool('bash_input', { task_id: 'bash-2', text: '\u0004' })
  expect(await tool('bash_output', { task_id: 'bash-2', timeout_ms: 20_000 })).toMatch(
    /\[status: completed, exit code: 0\]$/,
  )
  const sleep = uniqueSleep()
  await f.text(`echo up; ${sleep.command}`, interactive)
  await tool('bash_output', { task_id: 'bash-3', wait_for: 'up' })
  expect(await tool('bash_kill', { task_id: 'bash-3' })).toBe('killed background task bash-3')
  await until(() => processesWith(sleep.marker).length === 0, 'no process is left')
})

test('under the sandbox: input to a task that is not interactive is refused with its code', async () => {
  f = await fixture()
  await f.text('sleep 100', { run_in_background: true })
  const result = await f.t.ctx.tools.execute(
    'bash_input',
    { task_id: 'bash-1', text: 'x\n' },
    { session: sessionFor('s1', f.root) },
  )
  expect(result.error?.code).toBe('BASH_TASK_NOT_INTERACTIVE')
})
