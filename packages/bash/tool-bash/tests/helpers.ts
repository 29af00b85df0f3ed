export { until } from '@deepseek-ai/dsh-testing'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Fiber } from 'cordis'
import { createTestContext, type TestContext, sessionFor } from '@deepseek-ai/dsh-testing'
import { SystemPromptService } from '@deepseek-ai/dsh-system-prompt'
import LocalSubprocess, { processRuns } from '@deepseek-ai/dsh-subprocess-local'
import LocalBashExecutor, { type Config as LocalConfig } from '@deepseek-ai/dsh-bash-local'
import type { TaskDoneEvent as BashTaskDoneEvent } from '@deepseek-ai/dsh-tasks'
import LocalTaskService from '@deepseek-ai/dsh-tasks-local'
import type { ToolResult } from '@deepseek-ai/dsh-tools'
import LocalSpillStore from '@deepseek-ai/dsh-spill-local'
import ToolBash, { type Config as ToolConfig } from '../src/index.ts'

export { LocalBashExecutor, processRuns, ToolBash }

export type ToolName = 'bash' | 'bash_output' | 'bash_input' | 'bash_kill'

export interface CallOptions {
  /** Session id; `null` for a call without a session. Default `session-1`. */
  session?: string | null
  cwd?: string
  signal?: AbortSignal
}

export interface Harness extends TestContext {
  readonly dir: string
  readonly executor: Fiber
  readonly tool: Fiber
  readonly events: BashTaskDoneEvent[]
  call(tool: ToolName, args: Record<string, unknown>, options?: CallOptions): Promise<ToolResult>
  /** The text of a result that must not be an error. */
  text(tool: ToolName, args: Record<string, unknown>, options?: CallOptions): Promise<string>
  /** Resolves with the done event of `taskId`. */
  done(taskId: string): Promise<BashTaskDoneEvent>
  cleanup(): Promise<void>
}

export interface HarnessOptions {
  /** The bash tools' own config. */
  tool?: Partial<ToolConfig>
  /** Load the local spill store (root inside the temp dir), through which the tools keep output they cut. */
  spillStore?: boolean
}

/** Prompt service, the real local subprocess provider and executor, the bash tools, a temp dir as session cwd. */
export async function harness(config: Partial<LocalConfig> = {}, options: HarnessOptions = {}): Promise<Harness> {
  const t = await createTestContext()
  const dir = await mkdtemp(join(tmpdir(), 'dsh-tool-bash-'))
  await t.ctx.plugin(SystemPromptService)
  await t.active(t.ctx.plugin(LocalSubprocess, { spillDir: join(dir, '.spill') }))
  await t.active(t.ctx.plugin(LocalTaskService))
  const executor = t.ctx.plugin(LocalBashExecutor, { graceMs: 200, ...config })
  await t.active(executor)
  if (options.spillStore) await t.active(t.ctx.plugin(LocalSpillStore, { root: join(dir, '.saved') }))
  const tool = t.ctx.plugin(ToolBash, options.tool ?? {})
  await t.active(tool)
  const events: BashTaskDoneEvent[] = []
  t.ctx.on('tasks/done', (event) => {
    events.push(event)
  })
  const call: Harness['call'] = (name, args, o = {}) =>
    t.ctx.tools.execute(name, args, {
      ...(o.session === null ? {} : { session: sessionFor(o.session ?? 'session-1', o.cwd ?? dir) }),
      ...(o.signal ? { signal: o.signal } : {}),
    })
  return {
    ...t,
    dir,
    executor,
    tool,
    events,
    call,
    async text(name, args, o) {
      const result = await call(name, args, o)
      if (result.isError) throw new Error(`unexpected error result: ${result.content[0].text}`)
      return result.content[0].text
    },
    done(taskId) {
      return new Promise((resolve) => {
        const seen = events.find((event) => event.taskId === taskId)
        if (seen) return resolve(seen)
        const dispose = t.ctx.on('tasks/done', (event) => {
          if (event.taskId !== taskId) return
          dispose()
          resolve(event)
        })
      })
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

export const exists = (path: string) => existsSync(path)
