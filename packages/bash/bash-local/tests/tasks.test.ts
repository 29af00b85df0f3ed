import { sessionFor } from '@deepseek-ai/dsh-testing'
import { readFileSync } from 'node:fs'
import type { Message } from 'cordis'
import { afterEach, expect, test } from 'vitest'
import type { TaskDoneEvent } from '@deepseek-ai/dsh-tasks'
import { fixture, type Fixture } from './helpers.ts'

let f: Fixture
afterEach(async () => {
  await f.cleanup()
})

/** A process of the local provider, registered as a task (as tool-bash does). */
const start = async (command: string, session?: string) => {
  const spec = f.t.ctx.bash.resolve({
    command,
    workdir: f.dir,
    ...(session === undefined ? {} : { session: sessionFor(session, f.dir) }),
  })
  return f.t.ctx.tasks.of(spec.session).add({ process: await f.t.ctx.bash.start(spec), command, workdir: spec.workdir })
}

/** Resolves with the done event of `taskId` (the `tasks/done` event on the root context). */
function doneEvent(taskId: string): Promise<TaskDoneEvent> {
  return new Promise((resolve) => {
    const seen = f.events.find((event) => event.taskId === taskId)
    if (seen) return resolve(seen)
    const dispose = f.t.ctx.on('tasks/done', (event) => {
      if (event.taskId !== taskId) return
      dispose()
      resolve(event)
    })
  })
}

test('start returns a running task with the next id: bash-1, bash-2, …', async () => {
  f = await fixture()
  const first = await start('sleep 100')
  const second = await start('true')
  expect(first).toEqual({
    id: 'bash-1',
    command: 'sleep 100',
    workdir: f.dir,
    status: { state: 'running' },
    startedAt: expect.any(Number),
    interactive: false,
    leftRunning: [],
    readToEnd: false,
  })
  expect(second.id).toBe('bash-2')
  expect(
    f.t.ctx.tasks
      .of(undefined)
      .list()
      .map((task) => task.id),
  ).toEqual(['bash-1', 'bash-2'])
  expect(f.t.ctx.tasks.of(undefined).get('bash-1')).toEqual(first)
  expect(f.t.ctx.tasks.of(undefined).get('bash-3')).toBeUndefined()
})

test('concurrent starts get distinct sequential ids', async () => {
  f = await fixture()
  const tasks = await Promise.all(Array.from({ length: 20 }, () => start('true')))
  expect(tasks.map((task) => task.id).sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))).toEqual(
    Array.from({ length: 20 }, (_, i) => `bash-${i + 1}`),
  )
})

test('a read that lost bytes from the tail is lossy and points at the spill file with everything', async () => {
  f = await fixture({ maxOutputBytes: 100 })
  const task = await start('seq 1 5000')
  await doneEvent(task.id)
  const read = f.t.ctx.tasks.of(undefined).readOutput(task.id)
  expect(read.stdout.lossy).toBe(true)
  expect(Buffer.byteLength(read.stdout.text)).toBeLessThanOrEqual(100)
  expect(readFileSync(read.stdout.spillPath!, 'utf8')).toBe(
    Array.from({ length: 5000 }, (_, i) => `${i + 1}\n`).join(''),
  )
  // Read to the end: the task is dropped from memory, its spill file kept.
  expect(f.t.ctx.tasks.of(undefined).readOutput(task.id).stdout).toEqual({ text: '', lossy: false })
  expect(readFileSync(read.stdout.spillPath!, 'utf8').endsWith('4999\n5000\n')).toBe(true)
})

test('a lossy read whose spill passed its cap has no file to point at', async () => {
  f = await fixture({ maxOutputBytes: 100, spillMaxBytes: 1000 })
  const task = await start('seq 1 5000')
  await doneEvent(task.id)
  const read = f.t.ctx.tasks.of(undefined).readOutput(task.id)
  expect(read.stdout).toEqual({ text: read.stdout.text, lossy: true })
  expect(read.stdout.text.endsWith('4999\n5000\n')).toBe(true)
})

test('kill of a task that already finished is false', async () => {
  f = await fixture()
  const task = await start('exit 0')
  await doneEvent(task.id)
  expect(await f.t.ctx.tasks.of(undefined).kill(task.id)).toBe(false)
  expect(f.t.ctx.tasks.of(undefined).get(task.id)?.status).toEqual({ state: 'completed', exitCode: 0 })
})

test('the done event fires once per task with the session, the status and the notice', async () => {
  f = await fixture()
  const a = await start('exit 2', 'session-a')
  const b = await start('sleep 100')
  await doneEvent(a.id)
  await f.t.ctx.tasks.of(undefined).kill(b.id)
  await doneEvent(b.id)
  expect(f.events).toEqual([
    {
      taskId: 'bash-1',
      session: sessionFor('session-a', f.dir),
      status: { state: 'completed', exitCode: 2 },
      notice: 'background task bash-1 finished [status: completed, exit code: 2]. Read its output with bash_output.',
      requested: false,
    },
    {
      taskId: 'bash-1',
      session: undefined,
      status: { state: 'killed', signal: 'SIGTERM' },
      notice: 'background task bash-1 finished [status: killed by SIGTERM]. Read its output with bash_output.',
      requested: true,
    },
  ])
})

test('onTaskDone listeners fire once per task; the returned disposer removes one', async () => {
  f = await fixture()
  const kept: string[] = []
  const removed: string[] = []
  f.t.ctx.tasks.onTaskDone((event) => kept.push(event.notice))
  const dispose = f.t.ctx.tasks.onTaskDone((event) => removed.push(event.taskId))
  const a = await start('true')
  await doneEvent(a.id)
  await dispose()
  const b = await start('true')
  await doneEvent(b.id)
  expect(kept).toEqual([
    'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.',
    'background task bash-2 finished [status: completed, exit code: 0]. Read its output with bash_output.',
  ])
  expect(removed).toEqual(['bash-1'])
})

test('an onTaskDone listener goes away with the plugin that registered it', async () => {
  f = await fixture()
  const seen: string[] = []
  const fiber = f.t.ctx.plugin({
    name: 'listener-plugin',
    inject: ['tasks'],
    apply: (ctx) => {
      ctx.tasks.onTaskDone((event) => seen.push(event.taskId))
    },
  })
  await f.t.active(fiber)
  const a = await start('true')
  await doneEvent(a.id)
  await fiber.dispose()
  const b = await start('true')
  await doneEvent(b.id)
  expect(seen).toEqual(['bash-1'])
})

test('a throwing listener is reported and does not stop the others', async () => {
  f = await fixture()
  const seen: string[] = []
  f.t.ctx.tasks.onTaskDone(() => {
    throw new Error('listener bug')
  })
  f.t.ctx.tasks.onTaskDone((event) => seen.push(event.taskId))
  const a = await start('true')
  await doneEvent(a.id)
  expect(seen).toEqual(['bash-1'])
  const warnings = (f.t.problems as Message[]).splice(0)
  expect(warnings.map((m) => m.args.map(String).join(' '))).toEqual(['an onTaskDone listener failed: %s listener bug'])
})
