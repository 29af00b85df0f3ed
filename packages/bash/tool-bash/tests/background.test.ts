import { sessionFor } from '@deepseek-ai/dsh-testing'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { unknownTaskMessage } from '../src/common-text.ts'
import { harness, until, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const background = (command: string) => ({ command, description: 'background test', run_in_background: true })

test('run_in_background starts a task and says its id; ids count up', async () => {
  h = await harness()
  expect(await h.text('bash', background('sleep 100'))).toBe('started background task bash-1')
  expect(await h.text('bash', background('sleep 100'))).toBe('started background task bash-2')
  expect(
    h.ctx.tasks
      .of(sessionFor('session-1', h.dir))
      .list()
      .map((task) => task.id),
  ).toEqual(['bash-1', 'bash-2'])
})

test('bash_output: new output with the running status, then "(no new output)", then the rest with the exit status', async () => {
  h = await harness()
  const go = join(h.dir, 'go')
  await h.text(
    'bash',
    background(`echo first; until [ -e ${go} ]; do sleep 0.01; done; echo second; echo oops >&2; exit 5`),
  )
  let first = ''
  await until(async () => {
    first = await h.text('bash_output', { task_id: 'bash-1' })
    return first !== '(no new output)\n[status: running]'
  }, 'the first line arrived')
  expect(first).toBe('first\n[status: running]')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: running]')
  writeFileSync(go, '')
  await h.done('bash-1')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe(
    'second\n[stderr]\noops\n[status: completed, exit code: 5]',
  )
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: completed, exit code: 5]')
})

test('bash_output adds a newline before the status when the output does not end with one', async () => {
  h = await harness()
  await h.text('bash', background('printf "no newline"'))
  await h.done('bash-1')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('no newline\n[status: completed, exit code: 0]')
})

test('bash_kill: "killed background task", then "had already finished"; the status says killed', async () => {
  h = await harness()
  await h.text('bash', background('sleep 100'))
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('killed background task bash-1')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('task bash-1 had already finished')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: killed by SIGTERM]')
  await h.text('bash', background('exit 0'))
  await h.done('bash-2')
  // The task ended by itself: its completion notice rides on the session's next result, this one.
  expect(await h.text('bash_kill', { task_id: 'bash-2' })).toBe(
    'task bash-2 had already finished\n\nbackground task bash-2 finished [status: completed, exit code: 0]. Read its output with bash_output.',
  )
})

test("another session's task is simply unknown to bash_output and bash_kill, and stays untouched", async () => {
  h = await harness()
  await h.text('bash', background('echo mine; sleep 100'), { session: 'owner' })
  for (const tool of ['bash_output', 'bash_kill'] as const) {
    const result = await h.call(tool, { task_id: 'bash-1' }, { session: 'intruder' })
    expect(result.error).toEqual({
      name: 'TaskError',
      code: 'BASH_UNKNOWN_TASK',
      message: unknownTaskMessage('bash-1'),
    })
    const anonymous = await h.call(tool, { task_id: 'bash-1' }, { session: null })
    expect(anonymous.error?.code).toBe('BASH_UNKNOWN_TASK')
  }
  expect(h.ctx.tasks.of(sessionFor('owner', h.dir)).get('bash-1')?.status).toEqual({ state: 'running' })
  expect(await h.text('bash_kill', { task_id: 'bash-1' }, { session: 'owner' })).toBe('killed background task bash-1')
})

test('an unknown task id is BASH_UNKNOWN_TASK', async () => {
  h = await harness()
  for (const tool of ['bash_output', 'bash_kill'] as const) {
    const result = await h.call(tool, { task_id: 'bash-42' })
    expect(result.error?.code).toBe('BASH_UNKNOWN_TASK')
    expect(result.content[0].text).toBe(`Error: ${unknownTaskMessage('bash-42')}`)
  }
})

test('bash_output and bash_kill reject bad arguments as INVALID_ARGS', async () => {
  h = await harness()
  expect((await h.call('bash_kill', {})).content[0].text).toBe(
    'Error: invalid arguments: missing required property "task_id"',
  )
  for (const tool of ['bash_output', 'bash_kill'] as const) {
    expect((await h.call(tool, { task_id: 1 })).error?.code).toBe('INVALID_ARGS')
    expect((await h.call(tool, { task_id: 'bash-1', extra: true })).content[0].text).toBe(
      'Error: invalid arguments: unexpected property "extra"',
    )
    // Other clients' names for the task id are taken as it (docs/model-surface.md#tools): here, an unknown one.
    for (const alias of ['bash_id', 'shell_id']) {
      expect((await h.call(tool, { [alias]: 'bash-1' })).error?.code).toBe('BASH_UNKNOWN_TASK')
    }
  }
})

test('a finished task sends a completion notice for its owner', async () => {
  h = await harness()
  await h.text('bash', background('exit 2'), { session: 'session-9' })
  expect(await h.done('bash-1')).toEqual({
    taskId: 'bash-1',
    session: sessionFor('session-9', h.dir),
    status: { state: 'completed', exitCode: 2 },
    notice: 'background task bash-1 finished [status: completed, exit code: 2]. Read its output with bash_output.',
    requested: false,
  })
})

test("a background task ignores the call's signal: it outlives a cancelled call", async () => {
  h = await harness()
  const controller = new AbortController()
  await h.call('bash', background('sleep 100'), { signal: controller.signal })
  controller.abort()
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: running]')
})

test('dropped output is announced in bash_output with the file holding everything', async () => {
  h = await harness({ maxOutputBytes: 50 })
  await h.text('bash', background('seq 1 1000'))
  await h.done('bash-1')
  const text = await h.text('bash_output', { task_id: 'bash-1' })
  expect(text).toMatch(/^\[earlier output was dropped; full output: \/.+-stdout\.log\]\n/)
  expect(text.endsWith('999\n1000\n[status: completed, exit code: 0]')).toBe(true)
})
