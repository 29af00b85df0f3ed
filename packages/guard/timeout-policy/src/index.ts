import type { Context } from 'cordis'
import Schema from 'schemastery'
import { CoreErrorCode, errorResult, HarnessError, type ToolCall } from '@deepseek-ai/dsh-tools'
import { deadline, type Deadline } from '@deepseek-ai/dsh-timeout'

export const name = 'timeout-policy'
export const inject = ['tools']

export interface Config {
  /** Per-tool budgets that replace the tool's own `timeoutMs` (0 turns the budget off for that tool). */
  overrides: Record<string, number>
}

export const Config: Schema<Config> = Schema.object({
  overrides: Schema.dict(Schema.natural())
    .default({})
    .description("Per-tool budget in ms, replacing the tool's own timeoutMs; 0 disables it."),
})

/**
 * Gives every tool that declares `timeoutMs` a deadline signal. When the budget fired first, the result is
 * replaced by a TOOL_TIMEOUT error; a caller abort keeps its own result. The tool's promise is always awaited
 * by the pipeline (cooperative: nothing is raced), so no work is left running when `execute` returns.
 */
export function apply(ctx: Context, config: Config): void {
  const deadlines = new WeakMap<ToolCall, { deadline: Deadline; ms: number }>()

  ctx.on('tools/pre-execute', (call) => {
    const ms = config.overrides[call.definition.name] ?? call.definition.timeoutMs
    if (ms === undefined || ms <= 0) return
    const d = deadline(call.signal, ms, CoreErrorCode.TOOL_TIMEOUT)
    deadlines.set(call, { deadline: d, ms })
    call.signal = d.signal
    call.budgetMs = ms
  })

  ctx.on(
    'tools/post-execute',
    (call) => {
      const entry = deadlines.get(call)
      if (!entry) return
      deadlines.delete(call)
      entry.deadline.dispose()
      if (entry.deadline.expired) {
        call.result = errorResult(
          new HarnessError(`tool call timed out after ${entry.ms}ms`, { code: CoreErrorCode.TOOL_TIMEOUT }),
        )
      }
    },
    { prepend: true },
  )
}

export default { name, inject, Config, apply }
