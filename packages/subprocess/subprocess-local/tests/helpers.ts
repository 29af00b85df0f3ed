export { rejection, until } from '@deepseek-ai/dsh-testing'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createTestContext, type TestContext } from '@deepseek-ai/dsh-testing'
import type { SpawnRequest, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import LocalSubprocess, { type Config } from '../src/index.ts'

export interface Fixture {
  t: TestContext
  /** A fresh temp dir, removed afterwards. */
  dir: string
  spawn(request: Partial<SpawnRequest> & Pick<SpawnRequest, 'argv'>): Promise<SubprocessHandle>
  /** Spawns with both streams collected (64 KiB tails), waits for `done`, returns the texts. */
  run(
    argv: string[],
    request?: Partial<SpawnRequest>,
  ): Promise<{ exitCode: number | null; signal: string | null; stdout: string; stderr: string }>
  cleanup(): Promise<void>
}

export async function fixture(config: Config = {}): Promise<Fixture> {
  const dir = await mkdtemp(join(tmpdir(), 'dsh-subprocess-test-'))
  const t = await createTestContext({ withTools: false })
  // Spill files outlive the provider by design: keep the test's own inside its temp dir.
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, 'spill'), ...config }))
  const spawn: Fixture['spawn'] = (request) =>
    t.ctx.subprocess.spawn({
      cwd: dir,
      stdin: 'ignore',
      stdout: { maxBytes: 65536 },
      stderr: { maxBytes: 65536 },
      graceMs: 2000,
      ...request,
    })
  return {
    t,
    dir,
    spawn,
    async run(argv, request = {}) {
      const handle = await spawn({ argv, ...request })
      const { exitCode, signal } = await handle.done
      return {
        exitCode,
        signal,
        stdout: handle.collected.stdout?.readFrom(0).text ?? '',
        stderr: handle.collected.stderr?.readFrom(0).text ?? '',
      }
    },
    async cleanup() {
      try {
        await t.dispose()
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    },
  }
}
