import type { Context } from 'cordis'
import type {} from '@deepseek-ai/dsh-spill'
import type { ToolExecution } from '@deepseek-ai/dsh-tools'

/** Saves a whole text the result cannot show whole; resolves with where it is, or undefined when it was not kept. */
export type Keep = (exec: ToolExecution, suggestedName: string, content: string) => Promise<string | undefined>

/**
 * Keeps through the optional `ctx.spillStore` (looked up per call; never injected), owned by the calling session.
 * Best effort: no store, no session or a failed save keeps nothing, and the result says the output was not kept.
 */
export function spillKeeper(ctx: Context): Keep {
  return async (exec, suggestedName, content) => {
    const store = ctx.get('spillStore')
    if (!store || !exec.session) return undefined
    try {
      const saved = await store.saveText({
        owner: exec.session,
        source: { toolName: exec.name, callId: exec.callId },
        suggestedName,
        content,
      })
      return saved.locator
    } catch (error) {
      ctx.logger('tool-bash').debug('%s output not kept: %s', exec.name, (error as Error)?.message ?? String(error))
      return undefined
    }
  }
}
