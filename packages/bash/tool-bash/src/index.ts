import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-bash'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { bash } from './bash.ts'
import { BASH_PROMPT, BASH_PROMPT_ID, BASH_PROMPT_ORDER, BashParameters, bashDescription, type BashArgs } from './bash-text.ts'
import { bashKill } from './bash-kill.ts'
import { BASH_KILL_DESCRIPTION } from './bash-kill-text.ts'
import { bashOutput } from './bash-output.ts'
import { BASH_OUTPUT_DESCRIPTION, BashOutputParameters, TaskIdParameters, type BashOutputArgs, type TaskIdArgs } from './bash-output-text.ts'

export const name = 'tool-bash'
export const inject = ['tools', 'systemPrompt', 'bash']

/** No options: limits (timeouts, output tails) belong to the executor, e.g. `bash-local`. */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Config {}
export const Config: Schema<Config> = Schema.object({})

export type { BashArgs, BashOutputArgs, TaskIdArgs }
export { BASH_PROMPT }

/**
 * Registers `bash`, `bash_output` and `bash_kill` over whichever `ctx.bash` is loaded, and the `tool:bash` prompt
 * section. bash declares no `timeoutMs`: it owns its timeout, which the executor enforces.
 */
export function apply(ctx: Context): void {
  // Looked up once: this plugin is restarted whenever ctx.bash is replaced (it is injected).
  const executor = ctx.bash
  // The description states the executor's own bounds: ask it for the default and for what a huge request becomes.
  const bounds = {
    defaultMs: executor.resolve({ command: '' }).timeoutMs,
    maxMs: executor.resolve({ command: '', timeoutMs: Number.MAX_SAFE_INTEGER }).timeoutMs,
  }
  ctx.tools.register<BashArgs>({
    name: 'bash',
    title: 'Run a shell command',
    // Anything may happen: writes, deletions, network. Clients should ask (or sandbox) before running it.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description: bashDescription(bounds),
    parameters: BashParameters,
    execute: (args, exec) => bash(executor, args, exec),
  })
  ctx.tools.register<BashOutputArgs>({
    name: 'bash_output',
    title: 'Read background task output',
    // Changes nothing outside the server; each call moves the task's read position on (not idempotent).
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description: BASH_OUTPUT_DESCRIPTION,
    parameters: BashOutputParameters,
    execute: (args, exec) => bashOutput(executor, args, exec),
  })
  ctx.tools.register<TaskIdArgs>({
    name: 'bash_kill',
    title: 'Stop a background task',
    // Ends a process tree the model started; a second kill of the same task changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description: BASH_KILL_DESCRIPTION,
    parameters: TaskIdParameters,
    execute: (args, exec) => bashKill(executor, args, exec),
  })
  ctx.systemPrompt.register({ id: BASH_PROMPT_ID, order: BASH_PROMPT_ORDER, text: BASH_PROMPT })
}

export default { name, inject, Config, apply }
