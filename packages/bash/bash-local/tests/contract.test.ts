import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bashExecutorContract, executorUnderTest, taskContract } from '@deepseek-ai/dsh-bash-testing'
import { createTestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import LocalBashExecutor from '../src/index.ts'

async function make() {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bash-contract-'))
  const t = await createTestContext()
  // Spill files outlive the provider by design: keep the test's own inside its temp dir.
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, '.spill') }))
  const tasks = t.ctx.plugin(LocalTaskService)
  await t.active(tasks)
  const fiber = t.ctx.plugin(LocalBashExecutor, { graceMs: 200 })
  await t.active(fiber)
  return executorUnderTest(t, dir, fiber, tasks)
}

bashExecutorContract('bash-local', make)
taskContract('bash-local processes in tasks-local', make)
