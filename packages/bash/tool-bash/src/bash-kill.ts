import type { Context } from 'cordis'
import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import type { TaskIdArgs } from './bash-output-text.ts'
import { renderKill } from './bash-kill-text.ts'
import { ownTask } from './tasks.ts'

/** `bash_kill`: stops the task's whole process tree and returns once it is gone. */
export async function bashKill(ctx: Context, args: TaskIdArgs, exec: ToolExecution): Promise<ToolOutput<{ killed: boolean }>> {
  ownTask(ctx, args.task_id, exec)
  const killed = await ctx.bash.kill(args.task_id)
  return { text: renderKill(args.task_id, killed), value: { killed } }
}
