import { mkdtemp, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { bashExecutorContract, executorUnderTest, taskContract } from '@deepseek-ai/dsh-bash-testing'
import { createTestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import Workspace from '@deepseek-ai/dsh-workspace'
import SandboxBashExecutor from '../src/index.ts'

// Under /var/tmp: inside the sandbox the host's /tmp is replaced by the private one. The case directory is a
// workspace root (the contract's calls carry no session the workspace has seen), so commands may write there.
// network "host": one case reaches a dev server from the host (network "none" is tested in executor.test.ts).
async function make() {
  const dir = await realpath(await mkdtemp('/var/tmp/dsh-sandbox-contract-'))
  const t = await createTestContext()
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, '.spill') }))
  await t.active(t.ctx.plugin(Workspace, { roots: [dir] }))
  const tasks = t.ctx.plugin(LocalTaskService)
  await t.active(tasks)
  const fiber = t.ctx.plugin(SandboxBashExecutor, { graceMs: 200, network: 'host' })
  await t.active(fiber)
  return executorUnderTest(t, dir, fiber, tasks)
}

bashExecutorContract('bash-sandbox', make, { confinesStrays: true })
taskContract('bash-sandbox processes in tasks-local', make, { confinesStrays: true })
