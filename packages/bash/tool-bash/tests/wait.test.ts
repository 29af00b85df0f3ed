import { afterEach, expect, test } from 'vitest'
import { harness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

const background = (command: string) => ({ command, description: 'wait test', run_in_background: true })

test('wait_for returns as soon as new output matches, with the output and "[wait_for matched]"', async () => {
  h = await harness()
  await h.text('bash', background('echo booting; until [ -e go ]; do sleep 0.01; done; echo READY; sleep 100'))
  const waiting = h.text('bash_output', { task_id: 'bash-1', wait_for: '^READY$' })
  await h.text('bash', { command: 'touch go', description: 'open the gate' })
  expect(await waiting).toBe('booting\nREADY\n[wait_for matched]\n[status: running]')
})

test('wait_for on a task that never prints it: the timeout, said as such', async () => {
  h = await harness()
  await h.text('bash', background('echo starting; sleep 100'))
  expect(await h.text('bash_output', { task_id: 'bash-1', wait_for: 'READY', timeout_ms: 300 })).toBe(
    'starting\n[no match for wait_for within 300ms]\n[status: running]',
  )
})

test('wait_for on a task that exits first: its end, said as such, with the final status', async () => {
  h = await harness()
  await h.text('bash', background('until [ -e go ]; do sleep 0.01; done; echo bye; exit 3'))
  const waiting = h.text('bash_output', { task_id: 'bash-1', wait_for: 'READY' })
  await h.text('bash', { command: 'touch go', description: 'open the gate' })
  expect(await waiting).toBe('bye\n[the task ended without a match for wait_for]\n[status: completed, exit code: 3]')
})

test('timeout_ms alone waits for the end of the task; a task still running at the timeout says so', async () => {
  h = await harness()
  await h.text('bash', background('until [ -e go ]; do sleep 0.01; done; echo done'))
  await h.text('bash', background('sleep 100'))
  const waiting = h.text('bash_output', { task_id: 'bash-1', timeout_ms: 60_000 })
  await h.text('bash', { command: 'touch go', description: 'open the gate' })
  expect(await waiting).toBe('done\n[status: completed, exit code: 0]')
  expect(await h.text('bash_output', { task_id: 'bash-2', timeout_ms: 200 })).toBe(
    '(no new output)\n[still running after waiting 200ms]\n[status: running]',
  )
})

test('a cancelled wait is an ABORTED error and leaves the task running', async () => {
  h = await harness()
  await h.text('bash', background('sleep 100'))
  const controller = new AbortController()
  const waiting = h.call('bash_output', { task_id: 'bash-1', wait_for: 'x' }, { signal: controller.signal })
  setImmediate(() => controller.abort())
  expect((await waiting).error?.code).toBe('ABORTED')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: running]')
})

test('argument errors: wait_for or timeout_ms without task_id, a wait_for that is no regular expression', async () => {
  h = await harness()
  await h.text('bash', background('sleep 100'))
  const noTask = await h.call('bash_output', { wait_for: 'x' })
  expect(noTask.error?.code).toBe('INVALID_ARGS')
  expect(noTask.content[0].text).toBe(
    'Error: wait_for and timeout_ms need a task_id: pass the id of the task to wait for (bash_output without any argument lists the tasks)',
  )
  expect((await h.call('bash_output', { timeout_ms: 5 })).error?.code).toBe('INVALID_ARGS')
  const bad = await h.call('bash_output', { task_id: 'bash-1', wait_for: '(' })
  expect(bad.error?.code).toBe('INVALID_ARGS')
  expect(bad.content[0].text).toMatch(
    /^Error: invalid wait_for "\(": .+; pass a JavaScript regular expression, e.g. "Listening on\|ready"$/,
  )
  expect((await h.call('bash_output', { task_id: 'bash-1', timeout_ms: 0 })).error?.code).toBe('INVALID_ARGS')
})

test('bash_output without task_id lists every task of this session and only those; one read to its end comes last, marked', async () => {
  h = await harness()
  expect(await h.text('bash_output', {})).toBe('no background tasks in this session')
  await h.text('bash', background('sleep 100'))
  await h.text('bash', background('sleep 100'), { session: 'other' })
  await h.text('bash', background('exit 0'))
  await h.done('bash-2')
  const list = await h.text('bash_output', {})
  expect(list.split('\n\n')[0]).toMatch(
    /^2 background tasks in this session:\nbash-1 \[status: running\] \d+s: sleep 100\nbash-2 \[status: completed, exit code: 0\] \d+s: exit 0$/,
  )
  await h.text('bash_output', { task_id: 'bash-2' })
  expect(await h.text('bash_output', {})).toMatch(
    /^2 background tasks in this session:\nbash-1 \[status: running\] \d+s: sleep 100\nbash-2 \[status: completed, exit code: 0\] \d+s \(output read\): exit 0$/,
  )
})

test('bash_output {} never says there are no tasks while the session has some: every one finished and read is listed', async () => {
  h = await harness()
  for (const code of [0, 1, 2]) {
    await h.text('bash', background(`exit ${code}`))
    await h.done(`bash-${code + 1}`)
    await h.text('bash_output', { task_id: `bash-${code + 1}` })
  }
  expect(await h.text('bash_output', {})).toMatch(
    /^3 background tasks in this session:\nbash-1 \[status: completed, exit code: 0\] \d+s \(output read\): exit 0\nbash-2 \[status: completed, exit code: 1\] \d+s \(output read\): exit 1\nbash-3 \[status: completed, exit code: 2\] \d+s \(output read\): exit 2$/,
  )
})

test('a wait_for that backtracks without end is given up: the output comes with a line that says so, and the server stays responsive', async () => {
  h = await harness()
  await h.text('bash', background("printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; sleep 100"))
  const waiting = h.text('bash_output', { task_id: 'bash-1', wait_for: '^(a+)+$', timeout_ms: 60_000 })
  // Another call is served while the pattern is tested (on a worker thread, not this event loop).
  expect(await h.text('bash', { command: 'echo meanwhile', description: 'another call' })).toBe('meanwhile')
  expect(await waiting).toBe(
    'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n[wait_for given up: testing the pattern against the output took too long (nested repetition such as (a+)+ backtracks without end); wait again with a simpler pattern]\n[status: running]',
  )
})

test("attack: catastrophic wait_for patterns of one session never delay another session's wait", async () => {
  h = await harness()
  await h.text('bash', background("printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\\n'; sleep 100"), {
    session: 'attacker',
  })
  await h.text('bash', background('echo ready; sleep 100'), { session: 'victim' })
  let attackerSettled = 0
  const attacks = Array.from({ length: 8 }, () =>
    h
      .call('bash_output', { task_id: 'bash-1', wait_for: '^(a+)+$', timeout_ms: 60_000 }, { session: 'attacker' })
      .finally(() => {
        attackerSettled++
      }),
  )
  // Each attack pattern holds a pattern test for its whole time bound; the victim's test must not queue behind them.
  const victim = await h.text('bash_output', { task_id: 'bash-1', wait_for: '^ready$' }, { session: 'victim' })
  expect(victim).toBe('ready\n[wait_for matched]\n[status: running]')
  expect(attackerSettled).toBe(0)
  await Promise.all(attacks)
})
