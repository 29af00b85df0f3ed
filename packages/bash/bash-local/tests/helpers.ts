export { rejection, until } from '@deepseek-ai/dsh-testing'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fiber } from 'cordis'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess, { processRuns } from '@deepseek-ai/dsh-subprocess-local'
import type { BashExecRequest, BashRunResult } from '@deepseek-ai/dsh-bash'
import type { TaskDoneEvent } from '@deepseek-ai/dsh-tasks'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import LocalBashExecutor, { type Config } from '../src/index.ts'

export { processRuns }

export interface Fixture {
  t: TestContext
  /** A fresh temp dir (the default workdir), removed afterwards. */
  dir: string
  /** The executor's fiber: dispose it to dispose the executor alone. */
  fiber: Fiber
  /** Every `tasks/done` event seen on the root context. */
  events: TaskDoneEvent[]
  run(command: string, request?: Omit<BashExecRequest, 'command'>): Promise<BashRunResult>
  cleanup(): Promise<void>
}

export async function fixture(config: Partial<Config> = {}): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bash-test-'))
  const t = await createTestContext({ withTools: false })
  // Spill files outlive the provider by design: keep the test's own inside its temp dir.
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, '.spill') }))
  await t.active(t.ctx.plugin(LocalTaskService))
  const fiber = t.ctx.plugin(LocalBashExecutor, { graceMs: 200, ...config })
  await t.active(fiber)
  const events: TaskDoneEvent[] = []
  t.ctx.on('tasks/done', (event) => {
    events.push(event)
  })
  return {
    t,
    dir,
    fiber,
    events,
    run: (command, request = {}) => t.ctx.bash.run(t.ctx.bash.resolve({ workdir: dir, ...request, command })),
    async cleanup() {
      try {
        await t.dispose()
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  }
}

export const exists = (path: string) => existsSync(path)

/** The pids a command printed, one per line, once there are `count` of them. */
export function pids(text: string): number[] {
  return text
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number)
}

export { LocalBashExecutor }
