import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, test } from 'vitest'
import { createTestContext } from '@deepseek-ai/dsh-testing'
import type { SpawnRequest, SubprocessHandle } from '@deepseek-ai/dsh-subprocess'
import LocalSubprocess from '@deepseek-ai/dsh-subprocess-local'
import { exists, fixture, LocalBashExecutor, processRuns, until, type Fixture } from './helpers.ts'

let f: Fixture
afterEach(async () => {
  await f.cleanup()
})

test('disposal stops a foreground command in flight; its run resolves killed', async () => {
  f = await fixture({ graceMs: 200 })
  const pidFile = join(f.dir, 'pid')
  const running = f.run(`echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; sleep 1000; true`)
  await until(() => exists(pidFile), 'the command started')
  await f.fiber.dispose()
  const result = await running
  expect(result).toMatchObject({ timedOut: false, aborted: false, exitCode: null, signal: 'SIGTERM' })
})

/** Test-only provider (forced fault): the real local provider, but every spawn waits for a gate to open first. */
class GatedSubprocess extends LocalSubprocess {
  static readonly handles: SubprocessHandle[] = []
  static entered = 0
  static open: () => void = () => {}
  static readonly gate = new Promise<void>((resolve) => {
    GatedSubprocess.open = resolve
  })
  override async spawn(request: SpawnRequest): Promise<SubprocessHandle> {
    GatedSubprocess.entered++
    await GatedSubprocess.gate
    const handle = await super.spawn(request)
    GatedSubprocess.handles.push(handle)
    return handle
  }
}

test('tasks whose shell was still starting when disposal began are stopped too (forced: spawns held by a gate)', async () => {
  f = await fixture()
  const dir = await mkdtemp(join(tmpdir(), 'dsh-bash-test-'))
  const t = await createTestContext({ withTools: false })
  try {
    await t.active(t.ctx.plugin(GatedSubprocess, { spillDir: join(dir, '.spill') }))
    const fiber = t.ctx.plugin(LocalBashExecutor, { graceMs: 200 })
    await t.active(fiber)
    const bash = t.ctx.bash
    const starts = Array.from({ length: 5 }, () =>
      bash.start(bash.resolve({ command: "trap '' TERM; sleep 1000", workdir: dir })),
    )
    const settled = Promise.allSettled(starts)
    await until(() => GatedSubprocess.entered === 5, 'every spawn is in flight')
    const disposed = fiber.dispose()
    GatedSubprocess.open()
    await disposed
    expect(GatedSubprocess.handles).toHaveLength(5)
    for (const handle of GatedSubprocess.handles) expect(processRuns(handle.pid)).toBe(false)
    expect((await settled).map((s) => s.status)).toEqual(Array(5).fill('fulfilled'))
  } finally {
    await t.dispose()
    await rm(dir, { recursive: true, force: true })
  }
})
