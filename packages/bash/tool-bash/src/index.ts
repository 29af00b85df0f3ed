import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@deepseek-ai/dsh-bash'
import type {} from '@deepseek-ai/dsh-tasks'
import type {} from '@deepseek-ai/dsh-system-prompt'
import { bash } from './bash.ts'
import {
  BASH_ALIASES,
  BASH_PROMPT,
  BASH_PROMPT_ID,
  BASH_PROMPT_ORDER,
  BashParameters,
  bashDescription,
  DEFAULT_BACKGROUND_AFTER_MS,
  DEFAULT_MAX_RESULT_BYTES,
  type BashArgs,
} from './bash-text.ts'
import { bashKill } from './bash-kill.ts'
import { BASH_KILL_DESCRIPTION } from './bash-kill-text.ts'
import { bashOutput } from './bash-output.ts'
import {
  BASH_OUTPUT_DESCRIPTION,
  BashOutputParameters,
  TASK_ID_ALIASES,
  TaskIdParameters,
  WAIT_ALIASES,
  type BashOutputArgs,
  type TaskIdArgs,
} from './bash-output-text.ts'
import { bashInput } from './bash-input.ts'
import { BASH_INPUT_DESCRIPTION, BashInputParameters, type BashInputArgs } from './bash-input-text.ts'
import { spillKeeper } from './keep.ts'
import { boundMethods } from './tasks.ts'

export const name = 'tool-bash'
export const inject = ['tools', 'systemPrompt', 'bash', 'tasks']

/** The result budget; the other limits (timeouts, output kept in memory) belong to the executor, e.g. `bash-local`. */
export interface Config {
  maxResultBytes: number
  backgroundAfterMs: number
}
export const Config: Schema<Partial<Config>, Config> = Schema.object({
  maxResultBytes: Schema.natural()
    .min(1024)
    .default(DEFAULT_MAX_RESULT_BYTES)
    .description(
      'Longest result text of bash and bash_output, in UTF-8 bytes; a longer stream shows its head and tail around one line saying what was left out.',
    ),
  backgroundAfterMs: Schema.natural()
    .default(DEFAULT_BACKGROUND_AFTER_MS)
    .description(
      'A foreground bash call without timeoutMs still running after this many ms returns its output so far and continues as a background task (under the 60 s request timeout of common MCP clients); 0: never, the call waits for the end or the timeout.',
    ),
})

export type { BashArgs, BashInputArgs, BashOutputArgs, TaskIdArgs }
export { BASH_PROMPT }

/**
 * Registers `bash`, `bash_output`, `bash_input` and `bash_kill` over whichever `ctx.bash` and `ctx.tasks` are loaded, and the `tool:bash` prompt
 * section. bash declares no `timeoutMs`: it owns its timeout, which the executor enforces.
 */
export function apply(ctx: Context, config: Config): void {
  const limits = {
    maxResultBytes: config.maxResultBytes,
    keep: spillKeeper(ctx),
    backgroundAfterMs: config.backgroundAfterMs,
  }
  // Looked up once: this plugin is restarted whenever ctx.bash or ctx.tasks is replaced (both are injected).
  const services = boundMethods(ctx.bash, ctx.tasks)
  const executor = services.bash
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
    description: bashDescription({ ...bounds, backgroundAfterMs: config.backgroundAfterMs }),
    parameters: BashParameters,
    aliases: BASH_ALIASES,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => bash(services, args, exec, limits),
  })
  ctx.tools.register<BashOutputArgs>({
    name: 'bash_output',
    title: 'Read background task output',
    // Changes nothing outside the server; each call moves the task's read position on (not idempotent).
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    description: BASH_OUTPUT_DESCRIPTION,
    parameters: BashOutputParameters,
    aliases: WAIT_ALIASES,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => bashOutput(services.tasks(exec.session), args, exec, limits),
  })
  ctx.tools.register<BashInputArgs>({
    name: 'bash_input',
    title: 'Type into an interactive task',
    // What is typed may make the program do anything (answer "y", run a statement in a REPL, a command over ssh).
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    description: BASH_INPUT_DESCRIPTION,
    parameters: BashInputParameters,
    aliases: WAIT_ALIASES,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => bashInput(services.tasks(exec.session), args, exec, limits),
  })
  ctx.tools.register<TaskIdArgs>({
    name: 'bash_kill',
    title: 'Stop a background task',
    // Ends a process tree the model started; a second kill of the same task changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    description: BASH_KILL_DESCRIPTION,
    parameters: TaskIdParameters,
    aliases: TASK_ID_ALIASES,
    maxResultBytes: config.maxResultBytes,
    execute: (args, exec) => bashKill(services.tasks(exec.session), args),
  })
  ctx.systemPrompt.register({ id: BASH_PROMPT_ID, order: BASH_PROMPT_ORDER, text: BASH_PROMPT })
}

export default { name, inject, Config, apply }
