import { afterEach, expect, test } from 'vitest'
import { BashExecutor, type BashExecRequest, type BashExecSpec, type BashRunResult } from '@deepseek-ai/dsh-bash'
import type { TaskExit, TaskProcess } from '@deepseek-ai/dsh-tasks'
import type { SessionNotice } from '@deepseek-ai/dsh-tools'
import { harness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.cleanup()
})

/**
 * Test-only provider: runs nothing, answers from memory. It implements resolve, run and start — all a provider does
 * — which proves that the tools depend on ctx.bash alone and that ctx.tasks gives any provider's processes ids,
 * reads, kills and notices.
 */
class EchoExecutor extends BashExecutor {
  /** Ends every process started so far (as exit 0). */
  static finishAll: () => void = () => {}

  resolve(request: BashExecRequest): BashExecSpec {
    return {
      command: request.command,
      workdir: request.workdir ?? '/',
      timeoutMs: Math.min(request.timeoutMs ?? 1000, 2000),
      backgroundAfterMs: undefined,
      interactive: false,
      signal: request.signal,
      session: request.session,
      stdin: request.stdin,
      env: request.env ?? {},
    }
  }

  async run(spec: BashExecSpec): Promise<BashRunResult> {
    const text = `echo executor: ${spec.command} in ${spec.workdir}\n`
    return {
      exitCode: 0,
      signal: null,
      timedOut: false,
      aborted: false,
      timeoutMs: spec.timeoutMs,
      stdout: { text, truncated: false, totalBytes: text.length },
      stderr: { text: '', truncated: false, totalBytes: 0 },
      continuing: undefined,
      leftRunning: [],
    }
  }

  async start(spec: BashExecSpec): Promise<TaskProcess> {
    const text = `output of ${spec.command}\n`
    let end!: (exit: TaskExit) => void
    const ended = new Promise<TaskExit>((resolve) => {
      end = resolve
    })
    const previous = EchoExecutor.finishAll
    EchoExecutor.finishAll = () => {
      previous()
      end({ exitCode: 0, signal: null })
    }
    return {
      stdout: { readFrom: (offset) => ({ text: text.slice(offset), nextOffset: text.length, lossy: false }) },
      stderr: undefined,
      ended,
      terminate: () => end({ exitCode: null, signal: 'SIGTERM' }),
      onOutput: () => () => {},
    }
  }
}

test('provider swap: dispose LocalBashExecutor, load another executor, and the same tools serve again', async () => {
  h = await harness()
  expect(await h.text('bash', { command: 'echo real bash', description: 'echo' })).toBe('real bash')
  await h.executor.dispose()
  expect(h.ctx.tools.get('bash')).toBeUndefined()

  await h.ctx.plugin(EchoExecutor)
  await h.active(h.tool)
  const notices: SessionNotice[] = []
  h.ctx.on('tools/session-notice', (notice) => void notices.push(notice))
  expect(await h.text('bash', { command: 'echo hi', description: 'echo' })).toBe(`echo executor: echo hi in ${h.dir}`)
  expect(h.ctx.tools.get('bash')?.description).toContain('(default 1000, at most 2000;')
  expect(await h.text('bash', { command: 'make', description: 'build', run_in_background: true })).toBe(
    'started background task bash-1',
  )
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('output of make\n[status: running]')
  EchoExecutor.finishAll()
  await h.done('bash-1')
  // The swapped provider's completion notice travels on the generic session channel, which every host forwards.
  expect(notices.map(({ session, ...rest }) => ({ session: session.id, ...rest }))).toEqual([
    {
      session: 'session-1',
      key: 'bash-1',
      text: 'background task bash-1 finished [status: completed, exit code: 0]. Read its output with bash_output.',
    },
  ])
  expect((await h.call('bash_output', { task_id: 'bash-1' }, { session: 'other' })).error?.code).toBe(
    'BASH_UNKNOWN_TASK',
  )
  expect(await h.text('bash_output', { task_id: 'bash-1' })).toBe('(no new output)\n[status: completed, exit code: 0]')
  expect(await h.text('bash_kill', { task_id: 'bash-1' })).toBe('task bash-1 had already finished')
  expect(await h.text('bash', { command: 'serve', description: 'serve', run_in_background: true })).toBe(
    'started background task bash-2',
  )
  expect(await h.text('bash_kill', { task_id: 'bash-2' })).toBe('killed background task bash-2')
  expect(notices).toHaveLength(1)
})
