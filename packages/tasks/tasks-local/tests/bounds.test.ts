import { afterEach, expect, test } from 'vitest'
import type { TaskExit, TaskProcess } from '@deepseek-ai/dsh-tasks'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import LocalTaskService from '../src/index.ts'

/**
 * Test-only in-memory processes (no shell: these cases are about the table's bookkeeping, which real processes are
 * covered for by the task contract suite). A process prints its name and ends when the test says.
 */
const ends = new Map<string, (exit: TaskExit) => void>()
function memoryProcess(name: string): TaskProcess {
  const text = `${name}\n`
  let end!: (exit: TaskExit) => void
  const ended = new Promise<TaskExit>((resolve) => {
    end = resolve
  })
  ends.set(name, end)
  return {
    stdout: {
      readFrom: (offset) => ({
        text: text.slice(offset),
        nextOffset: text.length,
        lossy: false,
        spillPath: `/spill/${name}`,
      }),
    },
    stderr: undefined,
    ended,
    // A "late" process ignores terminate() and ends when the test says, as a shell that exited by itself would.
    terminate: () => {
      if (!name.startsWith('late')) end({ exitCode: null, signal: 'SIGTERM' })
    },
    onOutput: () => () => {},
  }
}

let t: TestContext
afterEach(async () => {
  await t.dispose()
})

async function table(config: { maxFinishedTasks?: number; maxForgottenTasks?: number }) {
  t = await createTestContext()
  const fiber = t.ctx.plugin(LocalTaskService, config)
  await t.active(fiber)
  const tasks = t.ctx.tasks.of(undefined)
  const add = (name: string) => tasks.add({ process: memoryProcess(name), command: name, workdir: '/' })
  const finished = async (name: string) => {
    const task = add(name)
    ends.get(name)?.({ exitCode: 0, signal: null })
    await tasks.waitFor(task.id, { timeoutMs: 10_000 })
    return task.id
  }
  return { tasks, add, finished, fiber }
}

test("past maxFinishedTasks unread, the oldest finished task's output is dropped; its read says so and where it is", async () => {
  const { tasks, finished } = await table({ maxFinishedTasks: 2 })
  const [a, b, c] = [await finished('a'), await finished('b'), await finished('c')]
  // Dropped unread, a stays listed as not read to its end until a read says what was lost.
  expect(tasks.list().map((task) => [task.id, task.readToEnd])).toEqual([
    [a, false],
    [b, false],
    [c, false],
  ])
  expect(tasks.readOutput(a)).toEqual({
    stdout: { text: '', lossy: true, spillPath: '/spill/a' },
    stderr: { text: '', lossy: false },
    status: { state: 'completed', exitCode: 0 },
  })
  expect(tasks.readOutput(a).stdout).toEqual({ text: '', lossy: false })
  expect(tasks.get(a)?.readToEnd).toBe(true)
  expect(tasks.readOutput(b).stdout.text).toBe('b\n')
})

test('past maxForgottenTasks, the oldest task read to its end becomes unknown', async () => {
  const { tasks, finished } = await table({ maxForgottenTasks: 2 })
  const ids = [await finished('a'), await finished('b'), await finished('c')]
  for (const id of ids) tasks.readOutput(id)
  expect(tasks.get(ids[0] as string)).toBeUndefined()
  expect(() => tasks.readOutput(ids[0] as string)).toThrow(expect.objectContaining({ code: 'BASH_UNKNOWN_TASK' }))
  expect(tasks.get(ids[1] as string)?.status).toEqual({ state: 'completed', exitCode: 0 })
  expect(tasks.list().map((task) => [task.id, task.readToEnd])).toEqual([
    [ids[1], true],
    [ids[2], true],
  ])
})

test('a kill that meets a shell which already exited by itself still ends as killed (the texts never disagree)', async () => {
  const { tasks, add } = await table({})
  const task = add('late')
  const killing = tasks.kill(task.id)
  // The shell's own exit status (0) arrives after the kill was asked for: the kill wins.
  ends.get('late')?.({ exitCode: 0, signal: null })
  expect(await killing).toBe(true)
  expect(tasks.get(task.id)?.status).toEqual({ state: 'killed', signal: 'SIGTERM' })
})

test('input: refused with its code for an unknown task, a task without input and one that ended; typed into a running one', async () => {
  const { tasks, add } = await table({})
  const plain = add('plain')
  await expect(tasks.write(plain.id, 'x')).rejects.toMatchObject({
    code: 'BASH_TASK_NOT_INTERACTIVE',
    message: `task ${plain.id} takes no input: it was not started with interactive: true (start a program that reads input with bash run_in_background: true, interactive: true)`,
  })
  await expect(tasks.write('bash-99', 'x')).rejects.toMatchObject({ code: 'BASH_UNKNOWN_TASK' })
  const typed: string[] = []
  const repl = tasks.add({
    process: {
      ...memoryProcess('repl'),
      write: async (text) => {
        typed.push(text)
      },
    },
    command: 'repl',
    workdir: '/',
  })
  expect(repl.interactive).toBe(true)
  expect(plain.interactive).toBe(false)
  await tasks.write(repl.id, 'print(1)\n')
  expect(typed).toEqual(['print(1)\n'])
  ends.get('repl')?.({ exitCode: 0, signal: null })
  await tasks.waitFor(repl.id, { timeoutMs: 10_000 })
  await expect(tasks.write(repl.id, 'more\n')).rejects.toMatchObject({
    code: 'BASH_TASK_ENDED',
    message: `task ${repl.id} has ended (completed, exit code 0): it takes no more input (read its output with bash_output)`,
  })
})

test('a process handed over after disposal is stopped and refused', async () => {
  const { tasks, fiber } = await table({})
  await fiber.dispose()
  let stopped = false
  const process = {
    ...memoryProcess('after'),
    terminate: () => {
      stopped = true
    },
  }
  expect(() => tasks.add({ process, command: 'after', workdir: '/' })).toThrow(
    expect.objectContaining({ code: 'TASKS_DISPOSED' }),
  )
  expect(stopped).toBe(true)
})
