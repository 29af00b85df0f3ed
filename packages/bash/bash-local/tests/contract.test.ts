import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bashExecutorContract, executorUnderTest } from '@deepseek-ai/dsh-bash-testing'
import { createTestContext } from '@deepseek-ai/dsh-testing'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import LocalBashExecutor from '../src/index.ts'

bashExecutorContract('bash-local', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bash-contract-'))
  const t = await createTestContext()
  // Spill files outlive the provider by design: keep the test's own inside its temp dir.
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, '.spill') }))
  const fiber = t.ctx.plugin(LocalBashExecutor, { graceMs: 200 })
  await t.active(fiber)
  return executorUnderTest(t, dir, fiber)
})
