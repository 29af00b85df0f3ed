import type { Context } from 'cordis'
import { afterEach, expect, test } from 'vitest'
import type { BashExecRequest, BashExecSpec, BashRunResult } from '@deepseek-ai/dsh-bash'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import { TaskBashExecutor, type TaskExit, type TaskProcess } from '../src/index.ts'

/**
 * Test-only provider with in-memory processes (no shell: these cases are about the table's bookkeeping, which real
 * processes are covered for by the contract suite). A task prints its command and ends when `end(id)` is called.
 */
class MemoryExecutor extends TaskBashExecutor {
  static readonly ends = new Map<string, (exit: TaskExit) => void>()

  constructor(ctx: Context, config: { maxFinishedTasks?: number; maxForgottenTasks?: number }) {
    super(ctx, config)
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return { command: request.command, workdir: '/', timeoutMs: 1, signal: request.signal, owner: request.owner, stdin: undefined, env: {} }
  }

  async run(): Promise<BashRunResult> {
    throw new Error('not used')
  }

  protected async spawnTask(spec: BashExecSpec): Promise<TaskProcess> {
    const text = `${spec.command}\n`
    let end!: (exit: TaskExit) => void
    const ended = new Promise<TaskExit>((resolve) => { end = resolve })
    MemoryExecutor.ends.set(spec.command, end)
    return {
      stdout: { readFrom: (offset) => ({ text: text.slice(offset), nextOffset: text.length, lossy: false, spillPath: `/spill/${spec.command}` }) },
      stderr: undefined,
      ended,
      // A "late" task ignores terminate() and ends when the test says, as a shell that exited by itself would.
      terminate: () => { if (!spec.command.startsWith('late')) end({ exitCode: null, signal: 'SIGTERM' }) },
      onOutput: () => () => {},
    }
  }
}

let t: TestContext
afterEach(async () => { await t.dispose() })

async function table(config: { maxFinishedTasks?: number; maxForgottenTasks?: number }) {
  t = await createTestContext()
  await t.active(t.ctx.plugin(MemoryExecutor, config))
  const bash = t.ctx.bash
  const finished = async (command: string) => {
    const task = await bash.start(bash.resolve({ command }))
    MemoryExecutor.ends.get(command)?.({ exitCode: 0, signal: null })
    await bash.waitFor(task.id, { timeoutMs: 10_000 })
    return task.id
  }
  return { bash, finished }
}

test('past maxFinishedTasks unread, the oldest finished task\'s output is dropped; its read says so and where it is', async () => {
  const { bash, finished } = await table({ maxFinishedTasks: 2 })
  const [a, b, c] = [await finished('a'), await finished('b'), await finished('c')]
  expect(bash.list().map((task) => task.id)).toEqual([b, c])
  expect(bash.readOutput(a)).toEqual({ stdout: { text: '', lossy: true, spillPath: '/spill/a' }, stderr: { text: '', lossy: false }, status: { state: 'completed', exitCode: 0 } })
  expect(bash.readOutput(a).stdout).toEqual({ text: '', lossy: false })
  expect(bash.readOutput(b).stdout.text).toBe('b\n')
})

test('past maxForgottenTasks, the oldest task read to its end becomes unknown', async () => {
  const { bash, finished } = await table({ maxForgottenTasks: 2 })
  const ids = [await finished('a'), await finished('b'), await finished('c')]
  for (const id of ids) bash.readOutput(id)
  expect(bash.get(ids[0] as string)).toBeUndefined()
  expect(() => bash.readOutput(ids[0] as string)).toThrow(expect.objectContaining({ code: 'BASH_UNKNOWN_TASK' }))
  expect(bash.get(ids[1] as string)?.status).toEqual({ state: 'completed', exitCode: 0 })
  expect(bash.list()).toEqual([])
})

test('a kill that meets a shell which already exited by itself still ends as killed (the texts never disagree)', async () => {
  const { bash } = await table({})
  const task = await bash.start(bash.resolve({ command: 'late' }))
  const killing = bash.kill(task.id)
  // The shell's own exit status (0) arrives after the kill was asked for: the kill wins.
  MemoryExecutor.ends.get('late')?.({ exitCode: 0, signal: null })
  expect(await killing).toBe(true)
  expect(bash.get(task.id)?.status).toEqual({ state: 'killed', signal: 'SIGTERM' })
})
