import type { Context } from 'cordis'
import { afterEach, expect, test } from 'vitest'
import {
  BashError, BashErrorCode, BashExecutor,
  type BashExecRequest, type BashExecSpec, type BashRunResult, type BashTask, type BashTaskDoneListener, type BashTaskRead,
} from '@deepseek-ai/dsh-bash'
import { harness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => { await h?.cleanup() })

/** Test-only provider: runs nothing, answers from memory. Proves that the tools depend on ctx.bash alone. */
class EchoExecutor extends BashExecutor {
  private readonly tasks = new Map<string, BashTask>()

  constructor(ctx: Context) {
    super(ctx)
  }

  resolve(request: BashExecRequest): BashExecSpec {
    return {
      command: request.command, workdir: request.workdir ?? '/', timeoutMs: Math.min(request.timeoutMs ?? 1000, 2000),
      signal: request.signal, owner: request.owner, stdin: request.stdin, env: request.env ?? {},
    }
  }

  async run(spec: BashExecSpec): Promise<BashRunResult> {
    const text = `echo executor: ${spec.command} in ${spec.workdir}\n`
    return {
      exitCode: 0, signal: null, timedOut: false, aborted: false, timeoutMs: spec.timeoutMs,
      stdout: { text, truncated: false, totalBytes: text.length }, stderr: { text: '', truncated: false, totalBytes: 0 },
    }
  }

  async start(spec: BashExecSpec): Promise<BashTask> {
    const task: BashTask = { id: `bash-${this.tasks.size + 1}`, command: spec.command, workdir: spec.workdir, owner: spec.owner, status: { state: 'completed', exitCode: 0 } }
    this.tasks.set(task.id, task)
    return task
  }

  get(id: string): BashTask | undefined {
    return this.tasks.get(id)
  }

  list(): BashTask[] {
    return [...this.tasks.values()]
  }

  ownerOf(id: string): string | undefined {
    return this.tasks.get(id)?.owner
  }

  readOutput(id: string): BashTaskRead {
    const task = this.tasks.get(id)
    if (!task) throw new BashError(`unknown bash task ${id}`, { code: BashErrorCode.BASH_UNKNOWN_TASK })
    return { stdout: { text: `output of ${task.command}\n`, lossy: false }, stderr: { text: '', lossy: false }, status: task.status }
  }

  async kill(): Promise<boolean> {
    return false
  }

  onTaskDone(_listener: BashTaskDoneListener): () => Promise<void> {
    return async () => {}
  }
}

test('provider swap: dispose LocalBashExecutor, load another executor, and the same tools serve again', async () => {
  h = await harness()
  expect(await h.text('bash', { command: 'echo real bash', description: 'echo' })).toBe('real bash')
  await h.executor.dispose()
  expect(h.ctx.tools.get('bash')).toBeUndefined()

  await h.ctx.plugin(EchoExecutor)
  await h.active(h.tool)
  expect(await h.text('bash', { command: 'echo hi', description: 'echo' })).toBe(`echo executor: echo hi in ${h.dir}`)
  expect(h.ctx.tools.get('bash')?.description).toContain('(default 1000, at most 2000;')
  expect(await h.text('bash', { command: 'make', description: 'build', run_in_background: true })).toBe('started background task bash-1')
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('output of make\n[status: completed, exit code: 0]')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('task bash-1 had already finished')
  expect((await h.call('bash_output', { task_id: 'bash-1' }, { session: 'other' })).error?.code).toBe('BASH_TASK_FORBIDDEN')
})
