import { resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { tildeHint } from '@deepseek-ai/dsh-text'
import { invalidArgs } from '@deepseek-ai/dsh-tools'
import type {} from '@deepseek-ai/dsh-workspace'
import { readPage } from './read.ts'
import { capsWithin, messages, READ_ALIASES, readDescription, readParameters, readPrompt, READ_PROMPT_ID, READ_PROMPT_ORDER, render, type ReadArgs } from './text.ts'

export { FsError, FsErrorCode } from './errors.ts'
export { readPage, type ReadRequest } from './read.ts'
export {
  capsWithin, messages, MAX_QUOTED_PATH_BYTES, quotePath, readDescription, readParameters, readPrompt, READ_PROMPT_ID, READ_PROMPT_ORDER,
  render, renderFooter, renderRow, TRUNCATED_MARK, type ReadArgs, type ReadCaps, type ReadEnd, type ReadPage, type ReadRow,
} from './text.ts'

export const name = 'tool-fs'
export const inject = ['tools', 'systemPrompt']

export interface Config {
  maxLines: number
  maxBytes: number
  maxLineChars: number
  maxResultBytes: number
  timeoutMs: number
}

export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxLines: Schema.natural().min(1).default(2000).description('Default and maximum lines per read.'),
  maxBytes: Schema.natural().min(256).default(51200).description('Most bytes of rows per read (each row with its newline).'),
  maxLineChars: Schema.natural().min(1).default(2000).description('Longer lines are cut to this many characters and marked "(line truncated)".'),
  maxResultBytes: Schema.natural().min(1024).default(30000).description('Longest result text in UTF-8 bytes, footer included; the page stops before it and the footer says where to continue.'),
  timeoutMs: Schema.natural().min(1).default(30_000).description('Time budget of one call, enforced by the timeout policy (TOOL_TIMEOUT): a read that scans far into a huge file ends.'),
})

export function apply(ctx: Context, config: Config): void {
  const caps = capsWithin(config)
  ctx.systemPrompt.register({ id: READ_PROMPT_ID, order: READ_PROMPT_ORDER, text: readPrompt(caps) })
  ctx.tools.register<ReadArgs>({
    name: 'read',
    title: 'Read a file',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    description: readDescription(caps),
    parameters: readParameters(caps),
    aliases: READ_ALIASES,
    maxResultBytes: config.maxResultBytes,
    timeoutMs: config.timeoutMs,
    async execute(args, exec) {
      if (args.path.includes('\0')) throw invalidArgs(messages.nulInPath())
      const cwd = exec.session?.cwd ?? process.cwd()
      const path = resolve(cwd, args.path)
      // Workspace roots (optional service): a path that resolves outside every root is refused before any open.
      await ctx.get('workspace')?.confine(path, { cwd, tool: 'read' })
      const page = await readPage({ path, offset: args.offset ?? 1, limit: args.limit ?? caps.maxLines, signal: exec.signal, notFoundHint: tildeHint(args.path) }, caps)
      return { text: render(page, caps), value: page }
    },
  })
}

export default { name, inject, Config, apply }
