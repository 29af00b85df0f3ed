import type { ToolExecution, ToolOutput } from '@deepseek-ai/dsh-tools'
import type { TaskIdArgs } from './bash-output-text.ts'
import { renderKill } from './bash-kill-text.ts'
import { ownTask, type Executor } from './tasks.ts'

/** `bash_kill`: stops the task's whole process tree and returns once it is gone. */
export async function bashKill(executor: Executor, args: TaskIdArgs, exec: ToolExecution): Promise<ToolOutput<{ killed: boolean }>> {
  ownTask(executor, args.task_id, exec)
  const killed = await executor.kill(args.task_id)
  const leftRunning = executor.get(args.task_id)?.leftRunning ?? []
  return { text: renderKill(args.task_id, killed, leftRunning), value: { killed } }
}
