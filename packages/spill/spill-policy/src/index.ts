import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-spill'
import type { ToolCall, ToolResult } from '@deepseek-ai/dsh-tools'
import { renderInline } from './render.ts'

export { renderInline, renderNotice, type InlineCaps, type NoticeFacts, type SpilledAt } from './render.ts'

export const name = 'spill-policy'
export const inject = ['tools']

export interface Config {
  /** Results longer than this many UTF-8 bytes are spilled; unset turns the policy off. */
  maxInlineBytes?: number
  /** Share of the inline room given to the head first. */
  headRatio: number
  /** Tools whose results are never spilled. */
  exclude: string[]
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxInlineBytes: Schema.natural()
    .min(1)
    .description(
      'Largest inline result in UTF-8 bytes, notice included; longer results are saved to the spill store and shown as head + notice + tail. Unset: off.',
    ),
  headRatio: Schema.number()
    .min(0)
    .max(1)
    .default(0.5)
    .description('Share of the inline room given to the head first (0…1); the tail gets the rest.'),
  exclude: Schema.array(String)
    .default(['read'])
    .description(
      'Tools whose results are never spilled (read: it pages itself, and reading a spill file must not spill again).',
    ),
})

/**
 * Spills oversized plain-text results. Best effort: without a store, a session or a successful save the result is
 * left exactly as it was, and the call never becomes an error because of this policy.
 */
export function apply(ctx: Context, config: Config): void {
  const maxInlineBytes = config.maxInlineBytes
  if (maxInlineBytes === undefined) return
  const excluded = new Set(config.exclude)
  const logger = ctx.logger('spill-policy')

  ctx.on('tools/post-execute', async (call) => {
    const result = call.result
    if (!spillable(call, result, excluded)) return
    const text = result.content[0].text
    if (Buffer.byteLength(text, 'utf8') <= maxInlineBytes) return
    const store = ctx.get('spillStore')
    if (!store) return logger.debug('%s result kept inline: no spill store is loaded', call.definition.name)
    if (!call.session) return logger.debug('%s result kept inline: the call has no session', call.definition.name)
    let saved
    try {
      saved = await store.saveText({
        owner: call.session,
        source: { toolName: call.definition.name, callId: call.callId },
        suggestedName: `${call.definition.name}-output.txt`,
        content: text,
      })
    } catch (error) {
      return logger.debug(
        '%s result kept inline: saving failed: %s',
        call.definition.name,
        (error as Error)?.message ?? String(error),
      )
    }
    call.result = {
      ...result,
      content: [{ type: 'text', text: renderInline(text, saved, { maxInlineBytes, headRatio: config.headRatio }) }],
    }
  })
}

function spillable(call: ToolCall, result: ToolResult, excluded: ReadonlySet<string>): boolean {
  return (
    !result.isError &&
    !excluded.has(call.definition.name) &&
    result.content.length === 1 &&
    result.content[0].type === 'text'
  )
}

export default { name, inject, Config, apply }
